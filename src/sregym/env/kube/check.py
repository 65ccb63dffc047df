"""`sregym check --backend kube`: the check protocol on a cluster reached by kubeconfig.

What carries over from the twin's protocol (`problems/check.py`): after injection `must_fix`
fails and the noop agent fails mitigation; recovery restores the configuration and `must_fix`
passes again; the gold solution, made with the agent's real ServiceAccount credential, passes
every check; the gold diagnosis earns the diagnosis. What does not: "same seed, identical
telemetry" (a real cluster is not deterministic), so those steps are not run. One install serves
the noop and the gold run (recovery restored it in between); cleanup always runs.
"""

from __future__ import annotations

import os
import time

from sregym.env.kube.attempt import KubeAttempt
from sregym.env.kube.target import ClusterNotReady, KubeTarget
from sregym.problems.check import CheckReport, noop_protocol
from sregym.problems.gold_diagnosis import score_gold_diagnosis
from sregym.problems.model import Problem
from sregym.problems.run import ProblemRun

WARMUP_S = 30.0


def check_on_cluster(problem: Problem, seed: int, target: KubeTarget) -> CheckReport:
    """Run the protocol's cluster-independent steps on `target`; never raises for the cluster."""
    started = time.perf_counter()
    report = CheckReport(problem.id, seed)
    attempt = None
    run = None
    access = None
    try:
        attempt = KubeAttempt(target, problem, f"check-{problem.id}-s{seed}-p{os.getpid()}")
        attempt.check_prerequisites(noise="none")
        run = ProblemRun(problem, attempt.cluster, seed=seed, noise="none")
        attempt.install(run)
        run.advance(WARMUP_S)
        for name, passed, detail in noop_protocol(run):
            report.add(name, passed, detail)
        access = attempt.grant()  # the gold solution acts with the agent's credential
        run.record_baseline()
        run.inject()
        run.advance(problem.settle_s)
        run.apply_gold()
        score = run.verify()
        report.add("gold passes every check", score.passed,
                   "; ".join(f"{c.name}: {c.detail}" for c in score.failed()))
    except ClusterNotReady as exc:
        report.add("the cluster is ready", False, str(exc))
    except Exception as exc:  # a crashing problem is a failed one, with the reason
        report.add("the protocol runs", False, f"{type(exc).__name__}: {exc}")
    finally:
        if access is not None:
            access.close()
        failed = attempt.cleanup(run) if attempt is not None else []
        if failed:
            report.add("cleanup removes what the check created", False, "; ".join(failed))
    passed, detail = score_gold_diagnosis(problem)[:2]
    report.add("gold diagnosis passes the diagnosis oracle", passed, detail)
    report.wall_s = time.perf_counter() - started
    return report


__all__ = ["check_on_cluster"]
