"""The check protocol and the isolation sweep for a group of problems, run in one child process.

Under pytest-xdist every worker runs a receiver thread, so `check_problem` may not fork from a
warm start there (`problems/warm.py`) and deploys the app three times per problem. The noop run
also ranks what the injectors wrote among what the agent can list at the page (`churn_probe.py`,
reported as "at_page"). A child process started for a group of problems is single-threaded: it
builds one warm start per app and forks every run of every problem in the group from it, as
`sregym check --all` does, which makes the per-problem suites about half as expensive. The
results are the ones a per-problem run gives (the warm start is checked for determinism inside
the protocol). The second gold run (step 4, same seed → same telemetry and scores) and the
isolation sweep run once per fault mechanism and at least once per app (`isolation_sample`):
problems built from the same faults run the same code paths and write the same kind of traces,
and the batch is the largest part of the suite. The sweep reads the agent's whole view at the end
of the noop run's verification window (the faults in place for `settle_s` plus the window, at
least 180 s), so it costs no run of its own; the first problem of each app is also swept once
under the high noise profile (`noisy_sample`), in a run of its own. The warm-up's own
determinism (built twice, compared) is checked in the first group of each app only: every group
of an app builds the same prefix.

`group_of(problem_id)` names a problem's group; tests mark themselves with
`pytest.mark.xdist_group(group_of(id))` (and the suite runs with `--dist loadgroup`) so a group's
tests share one worker, and `batch_result(problem_id)` runs the group's child once per worker and
caches what it reports.

Run as a script: `python problem_batch.py OUT.json SEED [--verify-warmup] ID...` writes {id: {"check": [[step,
passed, detail], ...], "at_page": {"rank": ...}, "isolation": {...}, "isolation_noisy": {...}}}.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SEED = 5
GROUP_SIZE = 10  # problems per child: small enough to spread over workers, large enough to share warm starts

# What the isolation sweep reads with the agent credential.
READABLE = ("Pod", "Deployment", "ReplicaSet", "Service", "Endpoints", "ConfigMap", "Secret", "Event",
            "ResourceQuota", "Namespace", "Node", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
            "NetworkPolicy", "DaemonSet", "StatefulSet",
            # Chaos Mesh's kinds: a team's experiments are the agent's to read, the benchmark's never show.
            "Schedule", "NetworkChaos", "PodChaos", "StressChaos", "HTTPChaos", "JVMChaos")
CHAOS_READABLE = frozenset({"Schedule", "NetworkChaos", "PodChaos", "StressChaos", "HTTPChaos", "JVMChaos"})
# Long enough for the high profile's opening burst (its first minute) and its first periodic
# disturbances (every ~2 minutes) to land while the fault holds; every registered problem pays it.
ISOLATION_AFTER_S = 150.0

_RESULTS: dict[str, dict[str, Any]] = {}


@functools.cache
def groups() -> dict[str, list[str]]:
    """Problems partitioned into groups of one app each (so a group shares one warm start), in a
    stable order: `<app>-<n>` → ids."""
    from sregym.problems import all_problem_ids

    by_app: dict[str, list[str]] = {}
    for problem_id in all_problem_ids():
        by_app.setdefault(problem_id.split("/", 1)[0], []).append(problem_id)
    out: dict[str, list[str]] = {}
    for app, ids in sorted(by_app.items()):
        count = max(1, round(len(ids) / GROUP_SIZE))
        for n in range(count):
            out[f"problems-{app}-{n}"] = ids[n::count]
    return out


@functools.cache
def isolation_sample() -> frozenset[str]:
    """The problems the isolation sweep and the second gold run cover: the first problem that uses
    each fault mechanism, and the first of each app.

    What an agent could read about an incident is what its faults write (objects, annotations,
    names, log lines), and that is the fault code's doing whatever the app or the other faults of
    the problem, so the problems that use a fault leave the same kind of traces and run the same
    injection code paths; a problem with several faults leaves the union of theirs. The first
    problem of each app keeps every app's data plane under the determinism check. Sweeping one
    problem per mechanism keeps the registry-wide batch affordable as the catalogue grows (each
    sweep runs the fault for minutes under high noise, and each second gold run repeats a whole
    run): keyed by the combination of faults instead, it took 69 of 196 problems, keyed by each
    fault 48."""
    from sregym.problems import all_problem_ids, get_problem

    first: dict[object, str] = {}
    for problem_id in all_problem_ids():
        problem = get_problem(problem_id)
        for write in (*problem.faults, *problem.changes):  # a control's benign changes leave traces too
            first.setdefault(write.fault, problem_id)
        first.setdefault(("app", problem.app), problem_id)
    return frozenset(first.values())


@functools.cache
def noisy_sample() -> frozenset[str]:
    """The problems whose agent view is also read under the high noise profile: the first of each
    app. What the noise writes (restarted pods, warnings, error lines) is the noise's own doing on
    the app's workloads, whatever the fault, and it never touches the root cause's path; the
    faults' own traces are read on every problem of `isolation_sample`."""
    from sregym.problems import all_problem_ids

    first: dict[str, str] = {}
    for problem_id in all_problem_ids():
        first.setdefault(problem_id.split("/", 1)[0], problem_id)
    return frozenset(first.values())


def verifies_warmup(group: str) -> bool:
    """Whether `group`'s child builds its app's warm start twice and compares them: the first
    group of each app does, for all of them."""
    return group.endswith("-0")


def group_of(problem_id: str) -> str:
    return next(name for name, ids in groups().items() if problem_id in ids)


def batch_result(problem_id: str) -> dict[str, Any]:
    """What the child reported for `problem_id`, running its group's child on first use."""
    if problem_id not in _RESULTS:
        ids = groups()[group_of(problem_id)]
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "results.json"
            flag = ["--verify-warmup"] if verifies_warmup(group_of(problem_id)) else []
            proc = subprocess.run([sys.executable, __file__, str(out), str(SEED), *flag, *ids],
                                  capture_output=True, text=True, timeout=3600)
            if proc.returncode != 0 or not out.exists():
                raise RuntimeError(f"problem batch failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
            _RESULTS.update(json.loads(out.read_text()))
    return _RESULTS[problem_id]


# ------------------------------------------------------------------------- the child's side
def agent_view(run: Any) -> dict[str, Any]:
    """Everything the agent credential can read on `run` now (every READABLE kind, the app's logs),
    searched for identifiers of faults or of the problem; whether the chaos namespace shows, and
    what listing chaos objects there says."""
    from sregym.faults import FAULTS

    problem = run.problem
    agent = run.cluster.as_user("agent")
    text = []
    for kind in READABLE:
        # A Chaos Mesh object's status is Chaos Mesh's own vocabulary (records "Injected",
        # `injectedCount`), the same on every cluster; its name, labels and spec are scanned.
        text.extend(json.dumps({k: v for k, v in o.items() if not (kind in CHAOS_READABLE and k == "status")},
                               sort_keys=True) for o in agent.list(kind))
    for pod in agent.list("Pod", problem.namespace):
        if (pod.get("status") or {}).get("phase") == "Running":
            for c in pod["spec"]["containers"]:
                text.append(agent.logs(problem.namespace, pod["metadata"]["name"], c["name"]))
    blob = "\n".join(text).lower()
    forbidden = {problem.id.lower(), problem.id.split("/")[1].lower(), "fault", "faults", "inject",
                 "injected", "injection", "sregym", *(name.lower() for name in FAULTS.names())}
    # Whole words only ("default" is not "fault").
    found = sorted(w for w in forbidden if re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", blob))
    try:
        agent.list("PodChaos", "chaos-mesh")
        chaos_listing = "allowed"
    except Exception as exc:  # the refusal's text is what the test checks
        chaos_listing = str(exc)
    return {"found": found, "namespaces": sorted(n["metadata"]["name"] for n in agent.list("Namespace")),
            "chaos_listing": chaos_listing}


def _noisy_view(problem_id: str, seed: int) -> dict[str, Any]:
    """The agent's view after the fault took hold under the high noise profile (`agent_view`)."""
    from sregym.problems import get_problem
    from sregym.problems.warm import in_fork, warm_start

    problem = get_problem(problem_id).model_copy(update={"noise": "high"})
    warm = warm_start(problem, seed, verify=False)  # the check protocol verified it where it had to

    def sweep() -> dict[str, Any]:
        run = warm.run_for(problem)
        run.record_baseline()
        run.start_noise()
        run.inject()
        run.advance(problem.settle_s + ISOLATION_AFTER_S)
        return agent_view(run)

    return in_fork(sweep)


def _run(ids: list[str], seed: int, verify_warmup: bool) -> dict[str, dict[str, Any]]:
    from churn_probe import rank_injected  # this script's folder is on the path

    from sregym.problems import get_problem
    from sregym.problems.check import check_problem

    results: dict[str, dict[str, Any]] = {}
    for problem_id in ids:
        entry: dict[str, Any] = {}
        try:
            # Determinism (the second gold run) is proven once per app and fault mechanism, like
            # the isolation sweep: the other problems of a set run the same code paths.
            sampled = problem_id in isolation_sample()
            report = check_problem(get_problem(problem_id), seed=seed, replicate=sampled,
                                   verify_warmup=verify_warmup, probe=rank_injected,
                                   window_probe=agent_view if sampled else None)
            entry["check"] = [[s.name, s.passed, s.detail] for s in report.steps]
            entry["at_page"] = report.at_page
            if sampled:
                entry["isolation"] = report.after_window
        except Exception as exc:  # a crashing problem is a failed check, with the reason
            entry["check"] = [["the protocol runs", False, f"{type(exc).__name__}: {exc}"]]
            entry["isolation"] = {"error": f"{type(exc).__name__}: {exc}"}
        if problem_id in noisy_sample():
            try:
                entry["isolation_noisy"] = _noisy_view(problem_id, seed)
            except Exception as exc:
                entry["isolation_noisy"] = {"error": f"{type(exc).__name__}: {exc}"}
        results[problem_id] = entry
    return results


if __name__ == "__main__":
    from sregym.gcpolicy import tune_for_simulation

    tune_for_simulation()  # rarer young-generation collections: results do not depend on them
    out_path, seed_text, *rest = sys.argv[1:]
    verify = "--verify-warmup" in rest
    Path(out_path).write_text(json.dumps(_run([r for r in rest if r != "--verify-warmup"], int(seed_text), verify)))
