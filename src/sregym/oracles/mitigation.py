"""The mitigation oracle: run the workload for a verification window, then judge with checks.

After the agent says it is done, the cluster keeps running (noise paused) for `window_s`
simulated seconds. `must_keep` checks are sampled through the judged part of the window — its
second half, moved later (by at most the SLO window) when the system converges late, so a valid
fix whose own transient (a retrying ReplicaSet, a restarted database) lasts a while is judged on
the steady state after it (`oracles.steady_state`) — and must hold at every sample (a fix that
flaps, or an SLO that recovers only at the last second, fails); `must_fix` checks are evaluated
at the end. Durability checks then disturb the cluster (recreate a pod, replay a trigger) and
the `must_fix` checks must still pass afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sregym.oracles.checks import CHECKS, CheckContext
from sregym.oracles.steady_state import JudgedPart, converged
from sregym.types import CheckResult, CheckRole, MitigationScore

if TYPE_CHECKING:
    from sregym.problems.model import CheckSpec

SAMPLE_EVERY_S = 30.0


def run_check(ctx: CheckContext, spec: CheckSpec, role: CheckRole) -> CheckResult:
    fn = CHECKS.get(spec.check)
    try:
        passed, detail = fn(ctx, **spec.params)
    except Exception as exc:  # a check that cannot run is a failed check, with the reason
        passed, detail = False, f"check error: {type(exc).__name__}: {exc}"
    if passed is not True and passed is not False:  # NaN, None, numbers: not a verdict, so not a pass
        passed, detail = False, f"check error: the check returned {passed!r}, not a verdict ({detail})"
    return CheckResult(name=spec.check, role=role, passed=passed, detail=detail)


def evaluate(ctx: CheckContext, specs: Sequence[CheckSpec], role: CheckRole) -> list[CheckResult]:
    return [run_check(ctx, spec, role) for spec in specs]


def verify(ctx: CheckContext, *, must_fix: Sequence[CheckSpec], must_keep: Sequence[CheckSpec],
           durability: Sequence[CheckSpec] = (), window_s: float = 300.0,
           stop_at_failure: bool = False) -> MitigationScore:
    """Advance through the window (watching for convergence), sample the judged part, then run
    durability and re-check must_fix.

    With `stop_at_failure` the window ends at the first failed `must_keep` sample: from there the
    verdict is a failure whatever the rest of the window holds (a failed sample is never taken
    back), so a caller that needs only the verdict of a run expected to fail (the check
    protocol's noop step) does not pay for the rest. The score then has the `must_keep` results
    of that sample and the `must_fix` results at that moment, no durability checks, and
    `window_s` is the time actually run."""
    elapsed = 0.0
    keep_failures: dict[int, CheckResult] = {}
    last_keep: list[CheckResult] = []
    converged_at = 0.0 if converged(ctx)[0] else None
    part = JudgedPart.plan(window_s, ctx.slo_window_s, converged_at)
    while elapsed < part.end_s:
        step = min(SAMPLE_EVERY_S, part.end_s - elapsed)
        ctx.cluster.advance(step)
        elapsed += step
        if converged_at is None and elapsed <= part.converge_by_s:
            if converged(ctx)[0]:
                converged_at = elapsed
            part = JudgedPart.plan(window_s, ctx.slo_window_s, converged_at)
        if elapsed >= part.start_s:
            last_keep = evaluate(ctx, must_keep, "must_keep")
            for index, result in enumerate(last_keep):
                if not result.passed and index not in keep_failures:
                    keep_failures[index] = result
            if stop_at_failure and keep_failures:
                fix = evaluate(ctx, must_fix, "must_fix")
                return MitigationScore(passed=False, checks=(*fix, *last_keep), window_s=elapsed)
    if not last_keep:
        last_keep = evaluate(ctx, must_keep, "must_keep")
    keep = [keep_failures.get(i, r) for i, r in enumerate(last_keep)]
    fix = evaluate(ctx, must_fix, "must_fix")
    results = [*fix, *keep]
    if durability:
        results.extend(evaluate(ctx, durability, "durability"))
        again = evaluate(ctx, must_fix, "must_fix")
        results.extend(CheckResult(name=f"{r.name} (after durability)", role="durability", passed=r.passed,
                                   detail=r.detail) for r in again)
    return MitigationScore(passed=all(r.passed for r in results), checks=tuple(results), window_s=part.end_s)
