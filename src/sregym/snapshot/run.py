"""`sregym snapshot run`: agents on read-only copies of a dataset's snapshots, N repeats each.

For every task of `index.json` and every repeat, the task's snapshot directory (and only it: the
ground truth stays in the dataset, whose path no agent is given) is copied to a fresh temporary
directory, made read-only, handed to the agent and removed afterwards. What each repeat leaves
is the contract's `OUT/<task>/repeat-<k>/{output.json, trajectory.jsonl, status.json}`, plus
`OUT/run.json` for the whole run; `sregym snapshot score` reads them.

Agents:
- `noop` answers `{"entities": []}` (scores 0: the control);
- `baseline` replays the snapshot as a frozen cluster and runs the live runbook agent on it
  (`sregym.snapshot.replay.run_baseline`);
- `command` (and its presets `claude-code`, `codex`, and any other `CommandAgent` subclass) runs
  a program with the copy as its working directory, `SREGYM_SNAPSHOT`, `SREGYM_OUTPUT` (where to
  write the answer, outside the copy) and `SREGYM_INSTRUCTIONS` (the task text, the README
  pointer, the output schema and an example), under a time limit; with namespaces available it
  also gets a read-only mount of the copy and the dataset and output directories hidden;
- `react` is the live tool-calling loop with the snapshot tools of `file_tools.py`.
Each family has its driver module (`driver` holds the interface, `noop` and the choice of driver;
`baseline_driver`, `command_driver`, `react_driver`); `task_text` writes what they are told. This
module only schedules repeats, keeps their results and resumes.

An agent that crashes, times out or never answers leaves `status.json` with `ok: false` and the
error and no `output.json` (the repeat scores 0); the run goes on. An answer that does not
validate is kept as written (the scorer reports why it scores 0) and marked `ok: false`.
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sregym.snapshot import layout
from sregym.snapshot.baseline_driver import BaselineDriver
from sregym.snapshot.command_driver import CommandDriver
from sregym.snapshot.driver import AgentResult, Driver, NoopDriver, Trajectory, make_driver
from sregym.snapshot.index import DatasetError, DatasetTask, index_fingerprint, read_index
from sregym.snapshot.jsonfile import read_json, write_json
from sregym.snapshot.layout import RUN_FORMAT
from sregym.snapshot.output import OutputError, load_output
from sregym.snapshot.react_driver import REACT_OVERRIDES, REACT_TOOL_OPTIONS, ReactDriver, SnapshotReactAgent
from sregym.snapshot.sandbox import Workspace, kill_running
from sregym.snapshot.task_text import EXAMPLE_OUTPUT, instructions_text, overview

DEFAULT_TIME_LIMIT_S = {"noop": None, "baseline": BaselineDriver.default_time_limit_s,
                        "react": ReactDriver.default_time_limit_s}
Task = DatasetTask  # a task of the dataset: `name` and its `snapshot` directory


@dataclass(frozen=True)
class Outcome:
    """What one repeat came to (also written as its `status.json`)."""

    task: str
    repeat: int
    ok: bool
    error: str | None
    wall_s: float
    tool_calls: int

    def status(self) -> dict[str, Any]:
        return {"ok": self.ok, "error": self.error, "wall_s": round(self.wall_s, 3), "tool_calls": self.tool_calls}


@dataclass(frozen=True)
class RunSummary:
    out: Path
    attempts: int  # tasks × repeats
    ran: int
    skipped: int  # already done (resume)
    ok: int
    failed: int
    wall_s: float


# ====================================================================== the run
def run_dataset(dataset: Path, agent: str, repeats: int, out: Path, *, options: dict[str, Any] | None = None,
                jobs: int = 1, progress: Callable[[str], None] | None = None, time_limit_s: float | None = None,
                resume: bool = False) -> RunSummary:
    """Run `agent` `repeats` times on every task of `dataset`, writing the run outputs to `out`.

    `options` are the agent's (`--model`, `-o KEY=VALUE`, ...); `time_limit_s` is the wall time
    of one repeat (default: the agent's own). `jobs` repeats run in parallel threads. With
    `resume`, `out` must hold an earlier run of the same agent on the same dataset; repeats that
    have a `status.json` are kept and the others run. Progress lines go to `progress` (default:
    stderr)."""
    started = time.monotonic()
    dataset = Path(dataset).resolve()
    out = Path(out).resolve()
    if int(repeats) < 1:
        raise ValueError("repeats must be at least 1")
    if int(jobs) < 1:
        raise ValueError("jobs must be at least 1")
    tasks = load_tasks(dataset)
    driver = make_driver(agent, dict(options or {}), time_limit_s=time_limit_s, hide=(dataset, out))
    run_info = {"format": RUN_FORMAT, "agent": agent, "repeats": int(repeats), "dataset": str(dataset),
                "index_sha256": index_fingerprint(dataset),
                "options": _public_options(driver.recorded_options()), "time_limit_s": driver.time_limit_s}
    _prepare_out(out, run_info, resume=resume)
    say = progress or _stderr
    lock = threading.Lock()
    plan = [(task, k) for task in tasks for k in range(1, int(repeats) + 1)]
    todo = [(t, k) for t, k in plan if not (resume and (_repeat_path(out, t, k) / layout.STATUS_JSON).is_file())]
    if len(todo) < len(plan):
        say(f"[sregym] resume: {len(plan) - len(todo)} of {len(plan)} repeats already done")
    outcomes: list[Outcome] = []
    stop = threading.Event()
    driver.cancelled = stop.is_set

    def one(task: Task, k: int) -> Outcome | None:
        if stop.is_set():
            return None
        outcome = run_repeat(driver, task, k, _repeat_path(out, task, k), cancelled=stop.is_set)
        if outcome is None:
            return None
        with lock:
            outcomes.append(outcome)
            done = len(outcomes)
            detail = "ok" if outcome.ok else f"FAILED: {_one_line(outcome.error)}"
            seed = "" if task.seed is None else f" seed {task.seed}"
            say(f"[sregym] {done}/{len(todo)} {task.name}{seed} repeat {k}/{repeats}: {detail} "
                f"({outcome.wall_s:.1f}s, {outcome.tool_calls} tool calls)")
        return outcome

    pool = ThreadPoolExecutor(max_workers=int(jobs), thread_name_prefix="sregym-snap") if int(jobs) > 1 else None
    futures: list[Future[Outcome | None]] = []
    try:
        if pool is None:
            for task, k in todo:
                one(task, k)
        else:
            futures = [pool.submit(one, t, k) for t, k in todo]
            for future in as_completed(futures):
                future.result()
    except BaseException:
        # Interrupted (Ctrl-C) or broken: stop everything now; the repeats that did not finish
        # leave no status.json, so `--resume` runs them again. A worker may start its program
        # just after a kill, hence the loop.
        stop.set()
        for future in futures:
            future.cancel()
        kill_running()
        while any(f.running() for f in futures):
            time.sleep(0.1)
            kill_running()
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    ok = sum(o.ok for o in outcomes)
    return RunSummary(out=out, attempts=len(plan), ran=len(outcomes), skipped=len(plan) - len(todo), ok=ok,
                      failed=len(outcomes) - ok, wall_s=time.monotonic() - started)


def run_repeat(driver: Driver, task: Task, repeat: int, dest: Path,
               cancelled: Callable[[], bool] = lambda: False) -> Outcome | None:
    """One repeat: fresh read-only copy, the agent, then `dest/{output.json,trajectory.jsonl,
    status.json}`. Never raises for an agent failure (only for our own I/O errors). Returns None
    (and writes no status) if the run was cancelled meanwhile: the repeat did not really end."""
    if dest.exists():
        shutil.rmtree(dest)  # a half-written repeat of an interrupted run
    dest.mkdir(parents=True)
    trajectory = Trajectory(dest / layout.TRAJECTORY_JSONL)
    started = time.monotonic()
    tool_calls = 0
    with Workspace(task.snapshot) as ws:
        answer = ws.work / layout.OUTPUT_JSON
        try:
            result = driver.run(ws, answer, trajectory)
            tool_calls, error = result.tool_calls, result.error
        except Exception as exc:  # an agent crash is a result, not the end of the run
            error = f"{type(exc).__name__}: {exc}"
            trajectory.write({"event": "crash", "error": error})
        if cancelled():
            return None
        ok = error is None
        if ok:
            error = _keep_answer(answer, dest / layout.OUTPUT_JSON)
            ok = error is None
    outcome = Outcome(task=task.name, repeat=repeat, ok=ok, error=error, wall_s=time.monotonic() - started,
                      tool_calls=tool_calls)
    write_json(dest / layout.STATUS_JSON, outcome.status())
    return outcome


def _repeat_path(out: Path, task: Task, repeat: int) -> Path:
    return out / task.name / layout.repeat_dir(repeat)


def _keep_answer(answer: Path, dest: Path) -> str | None:
    """Copy the agent's answer into the run outputs; None if it is there and valid, else why
    not. An invalid file is kept as written so the scorer can say what is wrong with it."""
    if not answer.is_file():
        return f"the agent wrote no answer ({answer.name} is missing)"
    shutil.copyfile(answer, dest)
    try:
        load_output(dest)
    except OutputError as exc:
        return str(exc)
    return None


# ====================================================================== dataset
def load_tasks(dataset: Path) -> list[Task]:
    """The tasks of `dataset/index.json` (`index.read_index`: inside the dataset, uniquely named),
    each snapshot checked to exist and to hold no ground-truth file (copying it whole must never
    hand the answer over). Raises `DatasetError`."""
    index = read_index(dataset)
    truths = [t.ground_truth for t in index.tasks if t.ground_truth is not None]
    for task in index.tasks:
        if not task.snapshot.is_dir():
            raise DatasetError(f"the snapshot directory of {task.name} is missing: {task.snapshot}; the dataset "
                               "is incomplete (build it again with `sregym snapshot dataset`)")
        if any(t.is_relative_to(task.snapshot) for t in truths):
            raise DatasetError(f"{index.root / layout.INDEX_JSON}: the snapshot of {task.name} contains a "
                               "ground-truth file; refusing to hand it to an agent")
    return list(index.tasks)


@dataclass(frozen=True)
class StoredRun:
    """What a run was started with, from its `run.json`: everything `--resume DIR` needs."""

    dataset: Path
    agent: str
    repeats: int
    options: dict[str, Any]
    time_limit_s: float | None
    unstored: tuple[str, ...]  # options whose values were not written (they may hold secrets)


def stored_run(out: Path) -> StoredRun:
    """The settings of the run in `out`, so that `sregym snapshot run --resume DIR` finishes it
    exactly as it was started (like `sregym run --resume DIR`). Raises `FileNotFoundError` when
    `out` holds no run and `ValueError` when its `run.json` is not one this version writes."""
    run_json = Path(out) / layout.RUN_JSON
    if not run_json.is_file():
        raise FileNotFoundError(f"nothing to resume: {run_json} does not exist (start a run there with "
                                "--dataset, --agent and --out)")
    info = read_json(run_json, "run description")
    if not isinstance(info, dict) or info.get("format") != RUN_FORMAT:
        raise ValueError(f"{run_json} is not a run description of this sregym version ({RUN_FORMAT})")
    try:
        options = dict(info.get("options") or {})
        env = options.get("env")
        unstored = ("env",) if isinstance(env, dict) and env and set(env.values()) == {"***"} else ()
        limit = info.get("time_limit_s")
        return StoredRun(dataset=Path(info["dataset"]), agent=str(info["agent"]), repeats=int(info["repeats"]),
                         options=options, time_limit_s=None if limit is None else float(limit), unstored=unstored)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{run_json} is incomplete ({type(exc).__name__}: {exc}); start a new run") from None


def _prepare_out(out: Path, run_info: dict[str, Any], *, resume: bool) -> None:
    run_json = out / layout.RUN_JSON
    if resume:
        if not run_json.is_file():
            raise FileNotFoundError(f"nothing to resume: {run_json} does not exist (start a new run there with "
                                    "--out instead)")
        old = read_json(run_json, "run description")
        old = old if isinstance(old, dict) else {}
        for key in ("agent", "repeats", "dataset"):
            if old.get(key) != run_info[key]:
                raise ValueError(f"cannot resume {out}: it was run with {key}={old.get(key)!r}, "
                                 f"not {run_info[key]!r}; resume with the same --{key}, or pick a new --out")
        if old.get("index_sha256", run_info["index_sha256"]) != run_info["index_sha256"]:
            raise ValueError(f"cannot resume {out}: the dataset changed since (it was built again); start a new "
                             "run with another --out")
        return
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out} is a file, not a directory: pick a new --out")
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty: pick a new --out, or finish the run in it with --resume {out}")
    out.mkdir(parents=True, exist_ok=True)
    write_json(run_json, run_info)


# ====================================================================== helpers
def _public_options(options: dict[str, Any]) -> dict[str, Any]:
    """Options as recorded in run.json: JSON-safe, and never a secret (keys are named by their
    environment variable, never passed as values, but `env` may hold anything)."""
    out: dict[str, Any] = {}
    for key, value in sorted(options.items()):
        if key == "env" and isinstance(value, dict):
            value = {k: "***" for k in sorted(value)}
        try:
            json.dumps(value)
        except TypeError:
            value = str(value)
        out[key] = value
    return out


def _one_line(text: str | None) -> str:
    first = (text or "").strip().splitlines()
    return (first[0][:200] if first else "?")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# The drivers and the task text live in their own modules; their names stay importable from here.
__all__ = ["DEFAULT_TIME_LIMIT_S", "EXAMPLE_OUTPUT", "REACT_OVERRIDES", "REACT_TOOL_OPTIONS", "RUN_FORMAT",
           "AgentResult", "BaselineDriver", "CommandDriver", "Driver", "NoopDriver", "Outcome", "ReactDriver",
           "RunSummary", "SnapshotReactAgent", "StoredRun", "Task", "Trajectory", "instructions_text", "load_tasks",
           "make_driver", "overview", "run_dataset", "run_repeat", "stored_run"]
