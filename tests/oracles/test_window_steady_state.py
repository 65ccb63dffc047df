"""The mitigation window judges the steady state after convergence: a valid fix whose own
transient lasts a while passes, a fix that holds only briefly fails (docs/problems.md, the
verification window)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.problem_runs import deployed

from sregym.oracles.mitigation import verify
from sregym.oracles.steady_state import JudgedPart


@pytest.mark.parametrize(("window", "converged_at", "start", "end"), [
    (180.0, 0.0, 90.0, 180.0),     # converged at once: the second half, as it always was
    (180.0, 30.0, 90.0, 180.0),    # converged within W/2 - S: unchanged
    (180.0, 60.0, 120.0, 210.0),   # late: the judged part starts S after convergence
    (300.0, 150.0, 210.0, 360.0),  # at the bound
    (300.0, None, 210.0, 360.0),   # never: judged from the bound, at most S later
    (300.0, 90.0, 150.0, 300.0),
])
def test_judged_part_starts_an_slo_window_after_convergence(window: float, converged_at: float | None,
                                                            start: float, end: float) -> None:
    part = JudgedPart.plan(window, 60.0, converged_at)
    assert (part.start_s, part.end_s) == (start, end)
    assert part.end_s - part.start_s == window / 2  # a fix must hold as long, whenever it converges


def test_a_fix_the_replicaset_picks_up_late_passes() -> None:
    """ResourceQuota blocking pod creation, fixed after a long investigation: the ReplicaSet's
    back-off has grown, so its pods come back ~2 minutes into the window. Valid; must pass."""
    cluster, run = deployed("hotel-reservation/resourcequota-blocks-recreation-v1")
    run.inject()
    run.advance(510)  # the ReplicaSet's next retry is ~125 s after the fix
    run.apply_gold()
    assert not cluster.get("Deployment", "hotel-reservation", "search")["status"].get("readyReplicas")
    score = run.verify()
    assert score.passed, [(c.name, c.detail) for c in score.failed()]
    assert score.window_s > run.problem.mitigation.window_s  # judged after the late convergence


class _BreaksAgain:
    """The admin cluster, with the fault put back `at_s` seconds into the verification window."""

    def __init__(self, cluster: Any, at_s: float, rebreak: Any) -> None:
        self._cluster, self._at, self._rebreak, self._elapsed = cluster, at_s, rebreak, 0.0

    def advance(self, seconds: float) -> None:
        self._cluster.advance(seconds)
        before, self._elapsed = self._elapsed, self._elapsed + seconds
        if before < self._at <= self._elapsed:
            self._rebreak()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cluster, name)


def test_a_fix_that_holds_only_briefly_fails() -> None:
    """Gold fixes the Service selector; 120 s into the window it is broken again (a controller
    reverting the fix, say). Converged at once, judged from 90 s: the break must be caught."""
    cluster, run = deployed("hotel-reservation/service-selector-nothing-v1")
    run.inject()
    run.advance(run.problem.settle_s)
    run.apply_gold()
    ctx = run.check_context()
    ctx.cluster = _BreaksAgain(cluster, 120.0, run.inject)  # type: ignore[assignment]
    m = run.problem.mitigation
    score = verify(ctx, must_fix=m.must_fix, must_keep=m.must_keep, window_s=m.window_s)
    assert not score.passed
    failed = {c.name for c in score.failed()}
    assert "service_serves" in failed and "entry_slo" in failed, failed


def test_stop_at_failure_ends_the_window_at_the_first_failed_sample_with_the_same_verdict() -> None:
    """The check protocol's noop step needs only the verdict of a run that should fail: with
    `stop_at_failure` the window ends at the first failed must_keep sample (the verdict cannot
    change after it), and the same fix that breaks again fails either way; a run that keeps
    passing still runs, and is judged over, the whole window."""
    cluster, run = deployed("hotel-reservation/service-selector-nothing-v1")
    run.inject()
    run.advance(run.problem.settle_s)
    m = run.problem.mitigation
    start = cluster.now()
    stopped = verify(run.check_context(), must_fix=m.must_fix, must_keep=m.must_keep, window_s=m.window_s,
                     stop_at_failure=True)
    assert not stopped.passed
    assert stopped.window_s < m.window_s and cluster.now() - start == pytest.approx(stopped.window_s)
    assert "service_serves" in {c.name for c in stopped.failed()}
    full = verify(run.check_context(), must_fix=m.must_fix, must_keep=m.must_keep, window_s=m.window_s)
    assert not full.passed and full.window_s >= m.window_s
    run.apply_gold()
    fixed = verify(run.check_context(), must_fix=m.must_fix, must_keep=m.must_keep, window_s=m.window_s,
                   stop_at_failure=True)
    assert fixed.passed and fixed.window_s >= m.window_s
