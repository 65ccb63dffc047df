"""A dataset: many snapshots (problems × seeds) with an index, a dataset card and the ground truth
kept beside, never inside, the task directories.

Tasks are numbered in a fixed order (problems as given, then seed), each is exported by
`write_snapshot` in its own directory, and the index and card hold no wall-clock data, so the
result is byte-identical whatever the number of worker processes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from sregym.snapshot import layout
from sregym.snapshot.export import SnapshotError, resolve_problem, write_snapshot
from sregym.snapshot.jsonfile import write_json
from sregym.snapshot.layout import DATASET_MD, GROUND_TRUTH_DIR, INDEX_JSON, TASKS_DIR, task_name


def build_dataset(problems: list[str], out: Path, *, seeds: int = 1, noise: str = "none", window_s: float = 900.0,
                  jobs: int = 1, progress: Callable[[str], None] | None = None, baseline_s: float = 300.0,
                  force: bool = False, problems_dirs: Sequence[Path] = ()) -> Path:
    """Export every (problem, seed) with seeds 0..seeds-1 into `out`; return `out`.

    Refuses a non-empty `out` unless `force` (then its index, card, tasks and ground truth are
    replaced). `problems_dirs` are loaded in every worker too."""
    out = Path(out)
    if seeds < 1:
        raise ValueError(f"seeds must be at least 1, got {seeds}")
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if not problems:
        raise ValueError("no problems given")
    specs = [resolve_problem(p) for p in problems]  # unknown ids fail here, before any work
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out} is a file, not a directory: pick another --out")
    if out.exists() and any(out.iterdir()):
        if not force:
            raise FileExistsError(f"{out} is not empty: pick another --out, or --force to replace the dataset in it")
        _clear(out)
    out.mkdir(parents=True, exist_ok=True)
    say = progress or (lambda _m: None)
    tasks = [{"task": task_name(i + 1), "snapshot": f"{TASKS_DIR}/{task_name(i + 1)}",
              "ground_truth": f"{GROUND_TRUTH_DIR}/{task_name(i + 1)}.json", "problem": spec.id, "seed": seed}
             for i, (spec, seed) in enumerate((s, n) for s in specs for n in range(seeds))]
    work = [(str(out), t["problem"], t["seed"], t["snapshot"], t["ground_truth"], noise, float(window_s),
             float(baseline_s), [str(d) for d in problems_dirs]) for t in tasks]
    total = len(work)
    if jobs == 1:
        for done, item in enumerate(work, start=1):
            say(_line(done, total, *_export_one(item)))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:  # reported as they finish, not in task order
            for done, future in enumerate(as_completed([pool.submit(_export_one, item) for item in work]), start=1):
                say(_line(done, total, *future.result()))
    write_json(out / INDEX_JSON, {"format": layout.DATASET_FORMAT, "noise": noise, "window_s": float(window_s),
                                  "baseline_s": float(baseline_s), "seeds": list(range(seeds)), "tasks": tasks})
    (out / DATASET_MD).write_text(dataset_card(specs, seeds, noise, window_s, tasks), encoding="utf-8",
                                  newline="\n")
    return out


def _clear(out: Path) -> None:
    import shutil

    for name in (TASKS_DIR, GROUND_TRUTH_DIR):
        if (out / name).exists():
            shutil.rmtree(out / name)
    for name in (INDEX_JSON, DATASET_MD):
        (out / name).unlink(missing_ok=True)


def _export_one(item: tuple[Any, ...]) -> tuple[str, int, str, float]:
    root, problem_id, seed, snapshot, ground_truth, noise, window_s, baseline_s, dirs = item
    if dirs:
        from sregym.problems import load_problems_dir

        for d in dirs:
            load_problems_dir(d)
    from sregym.problems.warm_prefix import run_forked

    start = time.perf_counter()  # progress only: never written to the dataset

    def export() -> Path:
        return write_snapshot(problem_id, Path(root) / snapshot, Path(root) / ground_truth, seed=seed, noise=noise,
                              window_s=window_s, baseline_s=baseline_s)

    # Tasks of one app and seed share their deploy and baseline: forked from one prefix where possible.
    if run_forked(resolve_problem(problem_id), seed, baseline_s, export) is not None:
        return snapshot, seed, problem_id, time.perf_counter() - start
    try:
        export()
    except SnapshotError:
        raise
    except Exception as exc:  # say which task failed; the pool would only show the traceback
        raise SnapshotError(f"{problem_id} seed {seed}: {type(exc).__name__}: {exc}") from exc
    return snapshot, seed, problem_id, time.perf_counter() - start


def _line(done: int, total: int, snapshot: str, seed: int, problem_id: str, wall: float) -> str:
    return f"[{done}/{total}] {snapshot}: {problem_id} seed {seed} ({wall:.1f}s)"


def dataset_card(specs: list[Any], seeds: int, noise: str, window_s: float, tasks: list[dict[str, Any]]) -> str:
    """DATASET.md: what is in the dataset and how to use it (no answers: those are in ground_truth/)."""
    layers: dict[str, int] = {}
    for spec in specs:
        for layer in spec.tags.layers:
            layers[layer] = layers.get(layer, 0) + seeds
    apps = sorted({spec.app for spec in specs})
    lines = [
        "# sregym incident dataset", "",
        f"Format `{layout.DATASET_FORMAT}`: {len(tasks)} tasks = {len(specs)} problems × {seeds} seed(s) "
        f"({', '.join(str(s) for s in range(seeds))}); noise `{noise}`; observation window {window_s:g} s "
        f"(metrics, logs and traces reach back up to {max(window_s, layout.HISTORY_S):g} s); "
        f"apps: {', '.join(apps)}.", "",
        "Each `tasks/task-NNNN/` is an incident snapshot (its `README.md` documents every file). The answers are "
        "in `ground_truth/task-NNNN.json`: never give that directory to an agent. `index.json` maps tasks to "
        "problems and seeds.", "",
        "## Tasks per layer", "",
        "| layer | tasks |", "|---|---|",
        *(f"| {layer} | {count} |" for layer, count in sorted(layers.items())), "",
        "## Problems", "",
        "| problem | layers | difficulty | tasks |", "|---|---|---|---|",
    ]
    by_problem: dict[str, list[str]] = {}
    for t in tasks:
        by_problem.setdefault(t["problem"], []).append(t["task"])
    for spec in specs:
        names = by_problem.get(spec.id, [])
        span = names[0] if len(names) == 1 else f"{names[0]} … {names[-1]}"
        lines.append(f"| {spec.id} | {', '.join(spec.tags.layers)} | {spec.tags.difficulty} | {span} |")
    lines += [
        "", "## The task", "",
        "An agent gets one task directory (read-only) and must write `output.json`:",
        '`{"entities": [{"kind": "Deployment", "namespace": "hotel-reservation", "name": "geo"}], '
        '"explanation": "optional"}` — the minimal set of root-cause Kubernetes entities.', "",
        "## Run and score", "",
        "```",
        "sregym snapshot run --dataset DIR --agent baseline --repeats 3 --out runs/offline",
        "sregym snapshot score --dataset DIR --outputs runs/offline",
        "```", "",
        "Score: per repeat, 0 if any root cause is missing, else precision (correct / submitted, aliases "
        "honoured); task score = mean over repeats; dataset score = mean over tasks.", "",
    ]
    return "\n".join(lines)


__all__ = ["DATASET_MD", "GROUND_TRUTH_DIR", "INDEX_JSON", "TASKS_DIR", "build_dataset", "dataset_card", "task_name"]
