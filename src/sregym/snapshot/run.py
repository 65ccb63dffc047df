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

An agent that crashes, times out or never answers leaves `status.json` with `ok: false` and the
error and no `output.json` (the repeat scores 0); the run goes on. An answer that does not
validate is kept as written (the scorer reports why it scores 0) and marked `ok: false`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sregym.agents import prompts
from sregym.agents.command import CommandAgent
from sregym.agents.react import AgentBudgetExceeded, ReactAgent
from sregym.agents.registry import get_agent
from sregym.snapshot.file_tools import SnapshotToolSession, dumps_entry
from sregym.snapshot.output import AgentOutput, OutputError, json_schema, load_output, write_output
from sregym.snapshot.sandbox import (
    ConfinedShell,
    SandboxError,
    Workspace,
    confine_argv,
    kill_running,
    namespace_problem,
    run_process,
)
from sregym.tools.output import compact

RUN_FORMAT = "sregym-snapshot-run/1"
# Options of the snapshot tools, taken out before the react agent sees its own options.
REACT_TOOL_OPTIONS: dict[str, Any] = {"allow_network": False, "shell_time_limit_s": 30.0,
                                      "shell_output_chars": 10_000}
REACT_OVERRIDES: dict[str, Any] = {"max_steps": 100}  # turns, like ITBench-AA's agent
DEFAULT_TIME_LIMIT_S = {"noop": None, "baseline": 300.0, "react": 1800.0}
EXAMPLE_OUTPUT: dict[str, Any] = {
    "entities": [{"kind": "<Kind, e.g. Deployment>", "namespace": "<namespace>", "name": "<object name>"}],
    "explanation": "<what is wrong with it, the concrete change, the evidence>",
}
# Variables of a live attempt that must not leak into an offline one.
_LIVE_ENV = ("KUBECONFIG", "PROMETHEUS_URL", "LOKI_URL", "JAEGER_URL", "SREGYM_AGENT_TOKEN", "SREGYM_SUBMIT_URL",
             "SREGYM_SUBMIT_TOKEN", "SREGYM_MCP_CONFIG", "SREGYM_NAMESPACE", "SREGYM_SNAPSHOT", "SREGYM_OUTPUT",
             "SREGYM_INSTRUCTIONS")


@dataclass(frozen=True)
class Task:
    name: str
    snapshot: Path


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
                "options": _public_options(driver.recorded_options()), "time_limit_s": driver.time_limit_s}
    _prepare_out(out, run_info, resume=resume)
    say = progress or _stderr
    lock = threading.Lock()
    plan = [(task, k) for task in tasks for k in range(1, int(repeats) + 1)]
    todo = [(t, k) for t, k in plan if not (resume and (out / t.name / f"repeat-{k}" / "status.json").is_file())]
    if len(todo) < len(plan):
        say(f"[sregym] resume: {len(plan) - len(todo)} of {len(plan)} repeats already done")
    outcomes: list[Outcome] = []
    stop = threading.Event()
    driver.cancelled = stop.is_set

    def one(task: Task, k: int) -> Outcome | None:
        if stop.is_set():
            return None
        outcome = run_repeat(driver, task, k, out / task.name / f"repeat-{k}", cancelled=stop.is_set)
        if outcome is None:
            return None
        with lock:
            outcomes.append(outcome)
            done = len(outcomes)
            detail = "ok" if outcome.ok else f"FAILED: {_one_line(outcome.error)}"
            say(f"[sregym] {done}/{len(todo)} {task.name} repeat {k}/{repeats}: {detail} "
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
    trajectory = Trajectory(dest / "trajectory.jsonl")
    started = time.monotonic()
    tool_calls = 0
    with Workspace(task.snapshot) as ws:
        answer = ws.work / "output.json"
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
            error = _keep_answer(answer, dest / "output.json")
            ok = error is None
    outcome = Outcome(task=task.name, repeat=repeat, ok=ok, error=error, wall_s=time.monotonic() - started,
                      tool_calls=tool_calls)
    _write_json(dest / "status.json", outcome.status())
    return outcome


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
    """The tasks of `dataset/index.json`, each snapshot checked to lie inside the dataset and to
    hold no ground-truth file (copying it whole must never hand the answer over)."""
    index_path = dataset / "index.json"
    if not index_path.is_file():
        raise FileNotFoundError(f"{dataset} is not a dataset: no index.json (make one with "
                                f"`sregym snapshot dataset ... --out DIR`)")
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{index_path} is not valid JSON: {exc}") from None
    entries = index.get("tasks") if isinstance(index, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{index_path} lists no tasks")
    root = dataset.resolve()
    truths = [(root / str(e.get("ground_truth", ""))).resolve() for e in entries if isinstance(e, dict)]
    tasks: list[Task] = []
    for entry in entries:
        name = str(entry.get("task", "")) if isinstance(entry, dict) else ""
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"{index_path}: bad task entry {entry!r}")
        snapshot = (root / str(entry.get("snapshot", f"tasks/{name}"))).resolve()
        if not snapshot.is_relative_to(root) or snapshot == root:
            raise ValueError(f"{index_path}: the snapshot of {name} must be a directory inside the dataset")
        if not snapshot.is_dir():
            raise FileNotFoundError(f"snapshot directory of {name} is missing: {snapshot}")
        if any(t.is_relative_to(snapshot) for t in truths):
            raise ValueError(f"{index_path}: the snapshot of {name} contains a ground-truth file; refusing to "
                             "hand it to an agent")
        tasks.append(Task(name=name, snapshot=snapshot))
    return tasks


def _prepare_out(out: Path, run_info: dict[str, Any], *, resume: bool) -> None:
    run_json = out / "run.json"
    if resume:
        if not run_json.is_file():
            raise FileNotFoundError(f"nothing to resume: {run_json} does not exist")
        old = json.loads(run_json.read_text(encoding="utf-8"))
        for key in ("agent", "repeats", "dataset"):
            if old.get(key) != run_info[key]:
                raise ValueError(f"cannot resume {out}: it was run with {key}={old.get(key)!r}, "
                                 f"not {run_info[key]!r}")
        return
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty: pick a new --out, or --resume to finish that run")
    out.mkdir(parents=True, exist_ok=True)
    _write_json(run_json, run_info)


# ====================================================================== agents
@dataclass(frozen=True)
class AgentResult:
    error: str | None  # None: the agent finished and should have written its answer
    tool_calls: int = 0


class Driver:
    """How one kind of agent is run on a workspace. Built (and its options checked) once,
    before any repeat, so a bad option fails the command instead of every repeat."""

    def __init__(self, agent: str, options: dict[str, Any], time_limit_s: float | None,
                 hide: tuple[Path, ...]) -> None:
        self.cancelled: Callable[[], bool] = lambda: False  # set by run_dataset
        self.agent = agent
        self.options = options
        self.time_limit_s = time_limit_s
        self.hide = hide

    def recorded_options(self) -> dict[str, Any]:
        return dict(self.options)

    def run(self, ws: Workspace, answer: Path, trajectory: Trajectory) -> AgentResult:
        raise NotImplementedError


class NoopDriver(Driver):
    def run(self, ws: Workspace, answer: Path, trajectory: Trajectory) -> AgentResult:
        write_output(answer, AgentOutput(entities=()))
        trajectory.write({"event": "noop", "output": {"entities": []}})
        return AgentResult(None)


class BaselineDriver(Driver):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        if self.options:
            raise ValueError(f"the baseline agent takes no options (got {', '.join(sorted(self.options))})")
        if self.time_limit_s is None:
            self.time_limit_s = DEFAULT_TIME_LIMIT_S["baseline"]
        from sregym.snapshot.replay import run_baseline  # fails early if the replay is unavailable

        self._run_baseline = run_baseline

    def run(self, ws: Workspace, answer: Path, trajectory: Trajectory) -> AgentResult:
        result = self._run_baseline(ws.snapshot, answer, trajectory.path, time_limit_s=float(self.time_limit_s or 300))
        ok = bool(result.get("ok"))
        error = None if ok else str(result.get("error") or "the baseline agent failed")
        return AgentResult(error, int(result.get("tool_calls") or 0))


class CommandDriver(Driver):
    """A `CommandAgent` (or preset): its own option checks and command line, our workspace."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        cls = get_agent(self.agent)
        options = dict(self.options)
        if self.time_limit_s is not None:
            options["time_limit_s"] = float(self.time_limit_s)
        for live_only in ("workdir", "mcp"):
            if options.get(live_only) not in (None, True, False):
                raise ValueError(f"option {live_only} has no meaning on a snapshot")
        self.program: CommandAgent = cls(**options)  # type: ignore[assignment]
        self.time_limit_s = float(self.program.options["time_limit_s"])
        self.isolation = namespace_problem(network=True)
        if self.isolation is not None:
            print(f"[sregym] note: {self.isolation}; the {self.agent} program runs without its own mount "
                  "namespace (the copy is read-only by permissions only)", file=sys.stderr)

    def run(self, ws: Workspace, answer: Path, trajectory: Trajectory) -> AgentResult:
        instructions = instructions_text(ws.snapshot, answer, self.time_limit_s or 0)
        files = {"instructions": ws.work / "instructions.md", "mcp": ws.work / "mcp.json",
                 "bin": ws.work / "bin"}
        files["instructions"].write_text(instructions, encoding="utf-8")
        files["mcp"].write_text('{"mcpServers": {}}\n', encoding="utf-8")
        command = self.program.argv(instructions, files)
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        shown = command if isinstance(command, str) else " ".join(argv)
        if not argv:
            raise ValueError("empty command")
        env = {k: v for k, v in os.environ.items() if k not in _LIVE_ENV}
        env.update({"SREGYM_SNAPSHOT": str(ws.snapshot), "SREGYM_OUTPUT": str(answer),
                    "SREGYM_INSTRUCTIONS": str(files["instructions"])})
        env.update({str(k): str(v) for k, v in dict(self.program.options["env"] or {}).items()})
        if self.isolation is None:
            argv = confine_argv(argv, ws.snapshot, network=True, hide=self.hide)
            # The program is uid 0 inside its user namespace; Claude Code then refuses to skip its
            # permission prompts unless told it is sandboxed — which, here, it really is.
            env.setdefault("IS_SANDBOX", "1")
        limit = int(self.program.options["output_chars"])
        result = run_process(argv, cwd=ws.snapshot, env=env, time_limit_s=float(self.time_limit_s or 0),
                             max_bytes=limit)
        if result.timed_out:
            status = f"killed: time limit of {self.time_limit_s:g}s reached"
        else:
            status = f"exited with code {result.exit_code}"
        trajectory.write({"index": 1, "tool": "command", "args": {"command": compact(shown, 2_000)},
                          "exit_code": result.exit_code, "status": status, "is_error": status != "exited with code 0",
                          "wall_s": round(result.wall_s, 3),
                          "observation": f"--- stdout ---\n{compact(result.stdout, limit)}\n"
                                         f"--- stderr ---\n{compact(result.stderr, limit)}"})
        if result.timed_out or result.exit_code != 0:
            return AgentResult(f"the program {status}", 0)
        return AgentResult(None, 0)


class ReactDriver(Driver):
    """The live `react` loop over `SnapshotToolSession`."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        options = dict(self.options)
        self.tool_options = {k: options.pop(k, v) for k, v in REACT_TOOL_OPTIONS.items()}
        self.tool_options["allow_network"] = _truthy(self.tool_options["allow_network"])
        self.agent_options = {**REACT_OVERRIDES, **options}
        if self.time_limit_s is None:
            self.time_limit_s = DEFAULT_TIME_LIMIT_S["react"]
        SnapshotReactAgent(**self.agent_options)  # checks the model, key and options now
        problem = namespace_problem(network=self.tool_options["allow_network"])
        if problem is not None and not self.tool_options["allow_network"]:
            raise SandboxError(
                f"the react agent's shell cannot be cut off the network here: {problem}. It needs unprivileged "
                "user namespaces (`unshare -rn true` must work). Pass -o allow_network=1 to run the shell "
                "without that isolation.")

    def recorded_options(self) -> dict[str, Any]:
        return {**self.agent_options, **self.tool_options}

    def run(self, ws: Workspace, answer: Path, trajectory: Trajectory) -> AgentResult:
        shell = ConfinedShell(ws.snapshot, scratch=ws.scratch,
                              time_limit_s=float(self.tool_options["shell_time_limit_s"]),
                              max_output_chars=int(self.tool_options["shell_output_chars"]),
                              allow_network=bool(self.tool_options["allow_network"]),
                              hide=(*self.hide, ws.work))
        session = SnapshotToolSession(ws.snapshot, answer, shell=shell, record=trajectory.write,
                                      time_limit_s=self.time_limit_s, cancelled=self.cancelled)
        model = SnapshotReactAgent(**self.agent_options)
        from sregym.env.models import Brief

        brief = Brief(text=overview(ws.snapshot), app=_app_name(ws.snapshot), namespaces=(),
                      phases=("diagnosis",), started_at="")
        crash: str | None = None
        try:
            model.run(session, brief)  # type: ignore[arg-type]
        except Exception as exc:  # the endpoint failed for good: a result, with the calls made so far
            crash = f"{type(exc).__name__}: {exc}"
        trajectory.write({"event": "end", "steps": session.steps, "tokens_in": session.tokens_in,
                          "tokens_out": session.tokens_out, "stop_reason": model.stop_reason, "error": crash})
        if crash is not None and not session.submitted:
            return AgentResult(crash, session.tool_calls)
        if session.submitted:
            return AgentResult(None, session.tool_calls)
        return AgentResult(model.stop_reason or "the agent stopped without calling submit_root_causes",
                           session.tool_calls)


class SnapshotReactAgent(ReactAgent):
    """`react` with the snapshot prompts: one phase (diagnosis), answered by submit_root_causes."""

    def run(self, session: Any, brief: Any) -> None:
        client = self._client()
        try:
            messages = [{"role": "system", "content": prompts.SNAPSHOT_SYSTEM_PROMPT},
                        {"role": "user", "content": prompts.SNAPSHOT_TASK.format(overview=brief.text)}]
            self._phase_loop(client, session, messages, "diagnosis")
        except AgentBudgetExceeded as exc:
            self.stop_reason = str(exc)
            print(f"[sregym] react: {exc}; stopping", file=sys.stderr)
        finally:
            client.close()


def make_driver(agent: str, options: dict[str, Any], *, time_limit_s: float | None = None,
                hide: tuple[Path, ...] = ()) -> Driver:
    """The driver of a registered agent that can work offline, options checked."""
    if agent == "noop":
        return NoopDriver(agent, options, time_limit_s, hide)
    if agent == "baseline":
        return BaselineDriver(agent, options, time_limit_s, hide)
    cls = get_agent(agent)  # KeyError with the known names for an unknown agent
    if issubclass(cls, CommandAgent):
        return CommandDriver(agent, options, time_limit_s, hide)
    if issubclass(cls, ReactAgent):
        return ReactDriver(agent, options, time_limit_s, hide)
    raise ValueError(f"the {agent} agent cannot run on snapshots; offline agents: noop, baseline, command "
                     f"(and its presets claude-code, codex), react")


# ====================================================================== task text
def overview(snapshot: Path) -> str:
    """What the agent is told up front: the app, the time window and the alerts at snapshot
    time — the offline version of the live incident page."""
    from sregym.tools import render

    meta = _read_json(snapshot / "snapshot.json") or {}
    app = _read_json(snapshot / "app.json") or {}
    window = meta.get("window") or {}
    lines = [f"INCIDENT SNAPSHOT taken at {meta.get('snapshot_time', '?')} "
             f"(data from {window.get('start', '?')} to {window.get('end', '?')}, UTC)"]
    alert_files = sorted((snapshot / "alerts").glob("alerts_*.json")) if (snapshot / "alerts").is_dir() else []
    alerts = _read_json(alert_files[-1]) if alert_files else None
    if isinstance(alerts, list) and alerts:
        lines.append("Alerts at snapshot time:\n" + render.alerts({"data": {"alerts": alerts}}))
    else:
        lines.append("Users report that the application is misbehaving (no alert was pending or firing at "
                     "snapshot time).")
    name = app.get("app") or meta.get("app") or "?"
    namespaces = app.get("namespaces") or meta.get("namespaces") or []
    lines.append(f"Application: {name}\nNamespace(s): {', '.join(map(str, namespaces))}")
    if app.get("description"):
        lines.append(str(app["description"]).strip())
    entry = app.get("entry_point")
    if isinstance(entry, dict) and entry.get("service"):
        lines.append(f"Entry point: service {entry['service']}, port {entry.get('port', '?')}")
    return "\n\n".join(lines)


def instructions_text(snapshot: Path, answer: Path, time_limit_s: float) -> str:
    """The `SREGYM_INSTRUCTIONS` file of a command agent (also the preset CLIs' prompt)."""
    indent = lambda text: "\n".join("    " + line for line in text.splitlines())  # noqa: E731
    return prompts.SNAPSHOT_INSTRUCTIONS.format(
        overview=overview(snapshot), snapshot=snapshot, output=answer,
        example=indent(json.dumps(EXAMPLE_OUTPUT, indent=2)),
        schema=indent(json.dumps(json_schema(), indent=2, sort_keys=True)), time_limit=f"{time_limit_s:g}")


# ====================================================================== files
class Trajectory:
    """`trajectory.jsonl`, appended one JSON line per entry as the agent works (so a crash keeps
    what happened before it). Thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def write(self, entry: dict[str, Any]) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(dumps_entry(entry) + "\n")


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, sort_keys=True, indent=2) + "\n", encoding="utf-8")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _app_name(snapshot: Path) -> str:
    meta = _read_json(snapshot / "snapshot.json") or {}
    return str(meta.get("app") or "?")


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


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _one_line(text: str | None) -> str:
    first = (text or "").strip().splitlines()
    return (first[0][:200] if first else "?")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


__all__ = ["REACT_TOOL_OPTIONS", "AgentResult", "Driver", "Outcome", "RunSummary", "SnapshotReactAgent", "Task",
           "Trajectory", "instructions_text", "load_tasks", "make_driver", "overview", "run_dataset", "run_repeat"]
