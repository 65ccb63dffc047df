"""The `check` protocol: proves a problem is well-formed by running it, not by reading it.

For one problem and seed, on fresh twins:
1. noop — after injection every `must_fix` check fails, and doing nothing fails mitigation;
2. gold — the reference solution (agent credential) makes every check pass;
3. recover — the faults' `recover` returns the app's configuration to the pre-fault baseline;
4. determinism — a second gold run with the same seed has identical telemetry and scores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sregym.cluster.twin import TwinCluster
from sregym.problems.model import Problem
from sregym.problems.run import ProblemRun


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

    @property
    def passed(self) -> bool:
        return bool(self.steps) and all(s.passed for s in self.steps)

    def add(self, name: str, passed: bool, detail: str = "") -> None:
        self.steps.append(Step(name, bool(passed), detail))


ClusterFactory = Callable[[int], TwinCluster]
RECOVERY_WAIT_S = 360.0


def _gold_run(problem: Problem, seed: int, factory: ClusterFactory) -> tuple[str, str, bool, str]:
    cluster = factory(seed)
    run = ProblemRun(problem, cluster, seed=seed)
    run.setup()
    run.apply_gold()
    score = run.verify()
    detail = "; ".join(f"{c.name}: {c.detail}" for c in score.failed())
    return cluster.fingerprint(), score.model_dump_json(), score.passed, detail


def check_problem(problem: Problem, seed: int = 0, *,
                  factory: ClusterFactory = TwinCluster.new) -> CheckReport:
    report = CheckReport(problem.id, seed)

    # 1. noop: the fault is observable and doing nothing fails; then 3. recover restores the
    # baseline, in the same run (noise off: noise is not part of the fault and would change the
    # state being compared). One run instead of two keeps `check --all` affordable.
    run = ProblemRun(problem, factory(seed), seed=seed, noise="none")
    run.deploy()
    run.advance(30)
    run.record_baseline()
    before = run.state_view()
    run.inject()
    run.advance(problem.settle_s)
    fix = run.must_fix_now()
    still_ok = [r for r in fix if r.passed]
    report.add("must_fix fail after injection", not still_ok,
               "; ".join(f"{r.name} passed: {r.detail}" for r in still_ok))
    noop = run.verify()
    report.add("noop fails mitigation", not noop.passed)
    run.recover()
    # Controllers retry failed work with back-off (a ReplicaSet blocked for the whole window waits
    # up to 5 minutes before its next create), so give recovery up to that long.
    waited = 0.0
    healthy = run.must_fix_now()
    while waited < RECOVERY_WAIT_S and not (waited >= 120 and all(r.passed for r in healthy)):
        run.advance(10)
        waited += 10
        healthy = run.must_fix_now()
    after = run.state_view()
    report.add("recover restores the baseline", before == after, _diff(before, after))
    report.add("must_fix pass after recover", all(r.passed for r in healthy),
               "; ".join(f"{r.name}: {r.detail}" for r in healthy if not r.passed))

    # 2. gold passes (with the problem's noise), 4. twice with identical results.
    first = _gold_run(problem, seed, factory)
    report.add("gold passes every check", first[2], first[3])
    second = _gold_run(problem, seed, factory)
    report.add("same seed, identical telemetry", first[0] == second[0])
    report.add("same seed, identical scores", first[1] == second[1])
    return report


def _diff(before: str, after: str) -> str:
    if before == after:
        return ""
    import json

    a = {(i["kind"], i["name"]): i for i in json.loads(before)}
    b = {(i["kind"], i["name"]): i for i in json.loads(after)}
    changed = sorted({k for k in a.keys() | b.keys() if a.get(k) != b.get(k)})
    return "changed: " + ", ".join(f"{k}/{n}" for k, n in changed)
