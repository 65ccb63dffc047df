"""The `check` protocol: proves a problem is well-formed by running it, not by reading it.

For one problem and seed, on fresh twins:
1. noop — after injection every `must_fix` check fails, and doing nothing fails mitigation;
2. gold — the reference solution (agent credential) makes every check pass;
3. recover — the faults' `recover` returns the app's configuration to the pre-fault baseline;
4. determinism — a second gold run with the same seed has identical telemetry and scores;
5. gold diagnosis — the diagnosis the gold agent submits (written from the ground truth) passes the
   diagnosis oracle the runner scores with, so an inconsistent ground truth fails here, not only
   in a full run (no cluster needed: `problems/gold_diagnosis.py`).

A no-incident control (`kind="control"`) has nothing to break or fix, so steps 1 and 3 read the
other way: doing nothing passes mitigation (its must_keep checks hold through the noise and the
benign change), and `recover` is a no-op (the change is the desired state and stays). Steps 2, 4
and 5 are the same: the empty gold solution passes, twice identically, and the gold diagnosis
(no root cause) passes.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sregym.cluster.twin import TwinCluster
from sregym.problems.gold_diagnosis import score_gold_diagnosis
from sregym.problems.model import Problem
from sregym.problems.run import ProblemRun
from sregym.problems.warm import can_fork, in_fork, prepare, warm_start


@dataclass
class Step:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class CheckReport:
    problem_id: str
    seed: int
    steps: list[Step] = field(default_factory=list)
    wall_s: float = 0.0  # how long the protocol took (progress lines only; never compared)
    # sha256 of the first gold run's telemetry fingerprint and score: two code versions that give a
    # problem the same value ran it identically (refactors compare them; see benchmarks/check_all.py).
    gold_digest: str = ""
    at_page: Any = None  # what a `PageProbe` returned, if one was given
    after_window: Any = None  # what a `WindowProbe` returned, if one was given

    @property
    def passed(self) -> bool:
        return bool(self.steps) and all(s.passed for s in self.steps)

    def add(self, name: str, passed: bool, detail: str = "") -> None:
        self.steps.append(Step(name, bool(passed), detail))


ClusterFactory = Callable[[int], TwinCluster]
RECOVERY_WAIT_S = 360.0
# Recovery is judged no earlier than this, so a check passing for a moment mid-rollout is not enough.
RECOVERY_MIN_S = 30.0
# (passed, detail) of the noop+recover run's steps, in report order.
NoopOutcome = list[tuple[str, bool, str]]
# (telemetry fingerprint, score JSON, passed, failure detail) of a gold run.
GoldOutcome = tuple[str, str, bool, str]
# A look at the noop run at the moment an agent would be paged (faults injected and settled,
# nothing judged yet): called with the run just before injection, it returns the function to call
# at that moment, whose picklable result becomes `CheckReport.at_page`. The test suite ranks what
# the injectors wrote there (`tests/problems/test_churn_rank.py`) rather than run every problem
# once more for it.
PageProbe = Callable[[ProblemRun], Callable[[], Any]]
# A look at the noop run at the end of its verification window, the faults still in place and
# nothing undone: its picklable result becomes `CheckReport.after_window`. The test suite reads
# the agent's whole view there for words that would name the fault or the problem
# (`tests/problems/test_isolation.py`): the noop run has no digest a read could disturb.
WindowProbe = Callable[[ProblemRun], Any]


def _noop_and_recover(run: ProblemRun, probe: PageProbe | None = None,
                      window_probe: WindowProbe | None = None) -> tuple[NoopOutcome, Any, Any]:
    """Steps 1 and 3 on a deployed, warmed-up run (noise off: noise is not part of the fault and
    would change the state being compared), what `probe` saw at the page and what `window_probe`
    saw at the end of the window. One run instead of two keeps `check --all` affordable."""
    problem = run.problem
    steps: NoopOutcome = []
    run.record_baseline()
    before = run.state_view()
    at_page = probe(run) if probe is not None else None
    run.inject()
    run.advance(problem.settle_s)
    page = at_page() if at_page is not None else None
    fix = run.must_fix_now()
    still_ok = [r for r in fix if r.passed]
    steps.append(("must_fix fail after injection", not still_ok,
                  "; ".join(f"{r.name} passed: {r.detail}" for r in still_ok)))
    # Only the verdict matters here, and a failed must_keep sample settles it: the window stops
    # there, unless the probe must look at the end of the whole window.
    noop = run.verify(stop_at_failure=window_probe is None)
    steps.append(("noop fails mitigation", not noop.passed, ""))
    after_window = window_probe(run) if window_probe is not None else None
    run.recover()
    # Controllers retry failed work with back-off (a ReplicaSet blocked for the whole window waits
    # up to 5 minutes before its next create), so give recovery up to that long.
    waited = 0.0
    healthy = run.must_fix_now()
    while waited < RECOVERY_WAIT_S and not (waited >= RECOVERY_MIN_S and all(r.passed for r in healthy)):
        run.advance(10)
        waited += 10
        healthy = run.must_fix_now()
    after = run.state_view()
    steps.append(("recover restores the baseline", before == after, _diff(before, after)))
    steps.append(("must_fix pass after recover", all(r.passed for r in healthy),
                  "; ".join(f"{r.name}: {r.detail}" for r in healthy if not r.passed)))
    return steps, page, after_window


def noop_protocol(run: ProblemRun) -> NoopOutcome:
    """Steps 1 and 3 (noop fails, recover restores the baseline; for a control: noop passes,
    recover is a no-op) on a deployed, warmed-up run, on any cluster (`--backend kube` too)."""
    return (_control_noop_and_recover if run.problem.is_control else _noop_and_recover)(run)[0]


def _control_noop_and_recover(run: ProblemRun, probe: PageProbe | None = None,
                              window_probe: WindowProbe | None = None) -> tuple[NoopOutcome, Any, Any]:
    """Steps 1 and 3 for a no-incident control: nothing to fix, nothing to undo."""
    run.record_baseline()
    at_page = probe(run) if probe is not None else None
    run.inject()
    run.advance(run.problem.settle_s)
    page = at_page() if at_page is not None else None
    noop = run.verify()
    steps: NoopOutcome = [("noop passes mitigation (nothing is broken)", noop.passed,
                           "; ".join(f"{c.name}: {c.detail}" for c in noop.failed()))]
    after_window = window_probe(run) if window_probe is not None else None
    before = run.state_view()
    run.recover()
    run.advance(RECOVERY_MIN_S)
    after = run.state_view()
    steps.append(("recover is a no-op", before == after, _diff(before, after)))
    return steps, page, after_window


def _gold_after_warmup(run: ProblemRun) -> GoldOutcome:
    """Step 2 on a deployed, warmed-up run (with the problem's noise)."""
    run.record_baseline()
    run.start_noise()
    run.inject()
    run.advance(run.problem.settle_s)
    run.apply_gold()
    score = run.verify()
    detail = "; ".join(f"{c.name}: {c.detail}" for c in score.failed())
    return run.cluster.fingerprint(), score.model_dump_json(), score.passed, detail  # type: ignore[attr-defined]


def _gold_run(problem: Problem, seed: int, factory: ClusterFactory) -> GoldOutcome:
    return _gold_after_warmup(prepare(problem, factory(seed), seed, noise=None))


def check_problem(problem: Problem, seed: int = 0, *, factory: ClusterFactory | None = None,
                  fork: bool | None = None, replicate: bool = True,
                  verify_warmup: bool | None = None, probe: PageProbe | None = None,
                  window_probe: WindowProbe | None = None) -> CheckReport:
    """Run the protocol. With `fork` (default: whenever it is safe and no custom `factory` is
    given) the three runs continue from one warm start of the app (`problems/warm.py`) instead of
    deploying it three times; the results are the same, only cheaper. `replicate=False` skips
    step 4 (the second gold run and its two "same seed" steps): for a caller that proves
    determinism on other problems built from the same faults, such as the test suite's
    registry-wide batch; `sregym check` always replicates. `verify_warmup` (default: `replicate`)
    builds the warm start twice and compares the two ("same seed, identical warm-up"); a caller
    that proves it once per app passes False, and the step is left out unless this process has
    already made it. `probe` looks at the noop run when the agent would be paged (`PageProbe`),
    `window_probe` at the end of its verification window (`WindowProbe`)."""
    if fork is None:
        fork = factory is None and can_fork()
    report = CheckReport(problem.id, seed)
    noop_steps_of = _control_noop_and_recover if problem.is_control else _noop_and_recover
    if fork:
        warm = warm_start(problem, seed, verify=replicate if verify_warmup is None else verify_warmup)
        if warm.deterministic is not None:
            report.add("same seed, identical warm-up", warm.deterministic)
        noop_steps, report.at_page, report.after_window = in_fork(
            lambda: noop_steps_of(warm.run_for(problem, noise="none"), probe, window_probe))
        first = in_fork(lambda: _gold_after_warmup(warm.run_for(problem)))
        second = in_fork(lambda: _gold_after_warmup(warm.run_for(problem))) if replicate else None
    else:
        make = factory or TwinCluster.new
        noop_steps, report.at_page, report.after_window = noop_steps_of(prepare(problem, make(seed), seed), probe,
                                                                        window_probe)
        first = _gold_run(problem, seed, make)
        second = _gold_run(problem, seed, make) if replicate else None
    for name, passed, detail in noop_steps:
        report.add(name, passed, detail)
    # 2. gold passes (with the problem's noise), 4. twice with identical results.
    report.add("gold passes every check", first[2], first[3])
    report.gold_digest = hashlib.sha256(f"{first[0]}\n{first[1]}".encode()).hexdigest()
    if second is not None:
        report.add("same seed, identical telemetry", first[0] == second[0])
        report.add("same seed, identical scores", first[1] == second[1])
    # 5. the gold diagnosis earns the diagnosis.
    passed, detail = score_gold_diagnosis(problem)[:2]
    report.add("gold diagnosis passes the diagnosis oracle", passed, detail)
    return report


def _diff(before: str, after: str) -> str:
    if before == after:
        return ""
    import json

    a = {(i["kind"], i["name"]): i for i in json.loads(before)}
    b = {(i["kind"], i["name"]): i for i in json.loads(after)}
    changed = sorted({k for k in a.keys() | b.keys() if a.get(k) != b.get(k)})
    return "changed: " + ", ".join(f"{k}/{n}" for k, n in changed)


def _check_by_id(args: tuple[str, int]) -> CheckReport:
    from sregym.problems.registry import get_problem

    problem_id, seed = args
    started = time.perf_counter()
    try:
        report = check_problem(get_problem(problem_id), seed)
    except Exception as exc:  # a crashing problem is a failed one, with the reason
        report = CheckReport(problem_id, seed)
        report.add("the protocol runs", False, f"{type(exc).__name__}: {exc}")
    report.wall_s = time.perf_counter() - started
    return report


def expected_cost(problem: Problem) -> float:
    """Simulated seconds the protocol runs for `problem` (noop+recover, then gold twice): used to
    start the longest checks first so parallel workers finish together."""
    window = problem.mitigation.window_s
    return (problem.settle_s + window + RECOVERY_MIN_S) + 2 * (problem.settle_s + window)


def check_many(problems: list[Problem], seed: int = 0, *, jobs: int = 1,
               on_report: Callable[[CheckReport], None] | None = None) -> list[CheckReport]:
    """Check several problems with `jobs` worker processes (longest first); reports come back in
    the order of `problems`, and `on_report` sees each as soon as it is done."""
    order = sorted(problems, key=lambda p: (-expected_cost(p), p.id))
    done: dict[str, CheckReport] = {}
    if jobs <= 1 or len(problems) <= 1:
        for problem in order:
            done[problem.id] = _check_by_id((problem.id, seed))
            if on_report is not None:
                on_report(done[problem.id])
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        # Fork: workers inherit problems registered from --problems-dir and entry points.
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=min(jobs, len(problems)), mp_context=context) as pool:
            futures = [pool.submit(_check_by_id, (p.id, seed)) for p in order]
            for future in as_completed(futures):
                report = future.result()
                done[report.problem_id] = report
                if on_report is not None:
                    on_report(report)
    return [done[p.id] for p in problems]
