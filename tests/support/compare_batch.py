"""The live-versus-offline baseline comparison (`snapshot.replay_compare`) for a group of lite
problems, run in one child process that forks every attempt from one warm prefix.

Each comparison runs the app's deploy and 300 s of healthy baseline twice (the live conductor,
then the export), and that prefix is the same for every problem of an app and seed. A child
started for a group is single-threaded (an xdist worker is not: it runs a receiver thread, and
forking is unsafe there), so it builds the prefix once (`problems.warm_prefix.share`) and runs
each side of each comparison in its own fork (`problems.warm.in_fork`), where the conductor and
the exporter continue from it instead of deploying. What they compute from there on is what a
fresh run computes: the twin is deterministic and the prefix does not depend on the problem.

`group_of(problem_id)` names a problem's group (tests mark themselves with
`pytest.mark.xdist_group`), and `comparison(problem_id)` runs the group's child on first use in a
worker and returns the problem's `Comparison` as JSON plus the directory its offline run wrote.

Run as a script: `python compare_batch.py OUT_DIR SEED ID...` writes OUT_DIR/results.json.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SEED = 0
NOISE = "none"
GROUP_SIZE = 8  # problems per child: a few groups to spread over workers, each sharing one prefix

_RESULTS: dict[str, tuple[dict[str, Any], Path]] = {}


@functools.cache
def lite() -> list[str]:
    from sregym.problems import select

    return [p.id for p in select(suite="lite")]


@functools.cache
def groups() -> dict[str, list[str]]:
    """Lite problems partitioned into groups of one app each, in a stable order."""
    from sregym.problems import get_problem

    by_app: dict[str, list[str]] = {}
    for problem_id in lite():
        by_app.setdefault(get_problem(problem_id).app, []).append(problem_id)
    out: dict[str, list[str]] = {}
    for app, ids in sorted(by_app.items()):
        count = max(1, round(len(ids) / GROUP_SIZE))
        for n in range(count):
            out[f"compare-{app}-{n}"] = ids[n::count]
    return out


def group_of(problem_id: str) -> str:
    return next(name for name, ids in groups().items() if problem_id in ids)


@functools.cache
def _workdir() -> Path:
    root = Path(tempfile.mkdtemp(prefix="compare-batch-"))
    atexit.register(shutil.rmtree, root, True)
    return root


def comparison(problem_id: str) -> tuple[dict[str, Any], Path]:
    """(the `Comparison` as JSON, the problem's work directory) — the group's child runs on first use."""
    if problem_id not in _RESULTS:
        name = group_of(problem_id)
        out = _workdir() / name
        proc = subprocess.run([sys.executable, __file__, str(out), str(SEED), *groups()[name]],
                              capture_output=True, text=True, timeout=3600)
        results = out / "results.json"
        if proc.returncode != 0 or not results.exists():
            raise RuntimeError(f"comparison batch failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        for pid, result in json.loads(results.read_text()).items():
            _RESULTS[pid] = (result, out / _slug(pid))
    return _RESULTS[problem_id]


def _slug(problem_id: str) -> str:
    return problem_id.replace("/", "__")


# ------------------------------------------------------------------------- the child's side
def _compare(problem_id: str, workdir: Path, seed: int) -> dict[str, Any]:
    from sregym.problems import get_problem
    from sregym.problems.warm import can_fork, in_fork
    from sregym.problems.warm_prefix import share
    from sregym.snapshot.replay_compare import LIVE_BASELINE_S, Comparison, live_score, offline_score

    if not can_fork():  # no fork, no sharing: the plain comparison
        from sregym.snapshot.replay_compare import compare

        return compare(problem_id, workdir, seed=seed, noise=NOISE).to_json()
    share(get_problem(problem_id), seed, LIVE_BASELINE_S)
    live, live_wall = in_fork(lambda: live_score(problem_id, seed=seed, noise=NOISE))
    offline, valid, reason, entities, export_wall, offline_wall = in_fork(
        lambda: offline_score(problem_id, workdir, seed=seed, noise=NOISE))
    return Comparison(problem=problem_id, live=live, offline=offline, valid=valid, reason=reason,
                      live_wall_s=round(live_wall, 3), export_wall_s=round(export_wall, 3),
                      offline_wall_s=round(offline_wall, 3), offline_entities=tuple(entities)).to_json()


def _run(out: Path, seed: int, ids: list[str]) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for problem_id in ids:
        workdir = out / _slug(problem_id)
        workdir.mkdir(parents=True, exist_ok=True)
        results[problem_id] = _compare(problem_id, workdir, seed)
    return results


if __name__ == "__main__":
    from sregym.gcpolicy import tune_for_simulation

    tune_for_simulation()  # rarer young-generation collections: results do not depend on them
    out_dir, seed_text, *problem_ids = sys.argv[1:]
    target = Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    (target / "results.json").write_text(json.dumps(_run(target, int(seed_text), problem_ids)))
