"""One attempt, start to end, in whatever process runs it.

A worker process is spawned (not forked), so it starts from a clean interpreter: the extra
problem and agent directories of the run are loaded again here, and nothing an earlier attempt
left in module state can leak into the next one through a shared parent. Every attempt builds
its own twin from its own seed, which is what makes results independent of `-j` and of the order
in which attempts run; the deploy and healthy-baseline prefix of that twin is built once per worker
and each attempt is forked from it where it can be (`problems.warm_prefix`), which computes the same twin.

A crash of the environment (the twin, the app failing to come up, a bug in a fault) and a
machine that is not set up for the agent (`SetupError`: a program or extra missing) are recorded
as environment failures with their reason, which `--resume` re-runs; an agent that raises
anything else is the agent's failure: the attempt is scored as it stands, with `agent_error`
saying what it raised. Nothing is printed here: the parent reports what matters.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, InstanceOf, model_serializer, model_validator

from sregym.env.config import FIELDS, AttemptConfig
from sregym.runner.plan import AttemptSpec, load_problem_dirs

# Attempt settings no flag of `sregym run` sets: stored in `run.json` only when they differ from
# the default, so the file keeps the fields it always had.
_STORED_WHEN_SET = ("baseline_s", "realtime_speed", "verify_window_s", "kube")


class WorkerConfig(BaseModel):
    """Everything about a run that is the same for each of its attempts: the agent, how each
    attempt runs (`attempt`), where extra problems and agents come from. Picklable, and stored in
    `run.json` (the attempt's fields beside the run's, flat) so that `--resume` runs the same
    configuration."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str
    agent_options: dict[str, Any] = Field(default_factory=dict)
    attempt: InstanceOf[AttemptConfig] = Field(default_factory=AttemptConfig)
    problems_dirs: tuple[str, ...] = ()
    agents_dirs: tuple[str, ...] = ()
    attempt_timeout_s: float | None = None  # wall seconds before the watchdog stops an attempt
    judge: dict[str, Any] = Field(default_factory=dict)  # `JudgeChoice.to_json()`; {} is the deterministic judge

    @model_validator(mode="before")
    @classmethod
    def _read_flat(cls, data: Any) -> Any:
        """`run.json` (and the JSON sent to workers) holds the attempt's fields flat."""
        if isinstance(data, dict) and "attempt" not in data:
            data = dict(data)
            data["attempt"] = AttemptConfig.from_json({k: data.pop(k) for k in FIELDS if k in data})
        return data

    @model_serializer(mode="plain")
    def _write_flat(self) -> dict[str, Any]:
        attempt = self.attempt.to_json()
        for name in _STORED_WHEN_SET:
            if attempt[name] == AttemptConfig.default(name):
                del attempt[name]
        return {"agent": self.agent, "agent_options": dict(self.agent_options), **attempt,
                "problems_dirs": list(self.problems_dirs), "agents_dirs": list(self.agents_dirs),
                "attempt_timeout_s": self.attempt_timeout_s, **({"judge": dict(self.judge)} if self.judge else {})}


class AttemptOutcome(BaseModel):
    """What a worker hands back: the result line and the trajectory."""

    model_config = ConfigDict(extra="forbid")

    spec: AttemptSpec
    result: dict[str, Any]
    trajectory: list[dict[str, Any]]


_prepared: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()


def prepare(config: WorkerConfig) -> None:
    """Load the run's extra problem and agent directories (once per process)."""
    key = (config.problems_dirs, config.agents_dirs)
    if key in _prepared:
        return
    load_problem_dirs(config.problems_dirs)
    if config.agents_dirs:
        from sregym.agents import load_agents_dir

        for d in config.agents_dirs:
            load_agents_dir(d)
    _prepared.add(key)


def make_agent(name: str, options: dict[str, Any]) -> Any:
    from sregym.agents import make_agent as build

    return build(name, **options)


def run_attempt(config: WorkerConfig, spec: AttemptSpec) -> AttemptOutcome:
    """Run one attempt; never raises for an environment or agent failure."""
    from sregym.env import Conductor, EnvironmentFailure
    from sregym.errors import SetupError
    from sregym.oracles.judge_choice import JudgeChoice

    prepare(config)
    started = time.perf_counter()
    reason = _backend_cannot_run(config, spec)
    if reason:
        return AttemptOutcome(spec=spec, result=skipped(config, spec, reason), trajectory=[])
    conductor = None
    try:
        agent = make_agent(config.agent, config.agent_options)  # options were checked before the run
        # An agent may require a clock (external programs need `realtime`); otherwise the run's.
        clock = getattr(agent, "clock", None) or config.attempt.clock
        judge, judge_name, judge_model = JudgeChoice.from_json(config.judge).build()
        conductor = Conductor(spec.problem_id, config.attempt.replace(clock=clock), seed=spec.seed,
                              agent_name=config.agent, judge=judge, judge_name=judge_name, judge_model=judge_model,
                              model=getattr(agent, "model", None) or config.agent_options.get("model"))
        try:
            brief = conductor.start()
        except EnvironmentFailure:
            brief = None  # the conductor's result says why
        agent_error = None
        if brief is not None and not conductor.finished:
            try:
                conductor.run_agent(agent, brief)  # with what its class declares, nothing more
            except SetupError:
                raise  # the machine, not the agent: an environment failure (below)
            except Exception as exc:
                # The agent's own bug: it failed this attempt, which is scored as it stands.
                agent_error = _clip(f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}")
        result = conductor.result(agent_error=agent_error).model_dump(mode="json")
        trajectory = [_entry(e) for e in conductor.trajectory]
    except (SetupError, EnvironmentFailure) as exc:
        result = environment_failure(config, spec, str(exc), time.perf_counter() - started)
        trajectory = []
    except Exception as exc:  # a bug in sregym itself: keep the traceback for the report
        result = environment_failure(config, spec, f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}",
                                     time.perf_counter() - started)
        trajectory = []
    finally:
        if conductor is not None:
            with contextlib.suppress(Exception):
                conductor.close()
    return AttemptOutcome(spec=spec, result=result, trajectory=trajectory)


def _clip(text: str, limit: int = 6000) -> str:
    """Long tracebacks keep their head (what was raised) and tail (where)."""
    return text if len(text) <= limit else text[: limit // 2] + "\n[...]\n" + text[-limit // 2:]


def _entry(entry: Any) -> dict[str, Any]:
    return entry.model_dump(mode="json") if hasattr(entry, "model_dump") else dict(entry)


def environment_failure(config: WorkerConfig, spec: AttemptSpec, reason: str, wall_s: float) -> dict[str, Any]:
    """The result line of an attempt whose environment broke before it could be scored."""
    from sregym.env import AttemptResult
    from sregym.problems.model import id_version

    return AttemptResult(
        problem_id=spec.problem_id, problem_version=id_version(spec.problem_id), seed=spec.seed,
        agent=config.agent, model=config.agent_options.get("model"), noise=config.attempt.noise,
        clock=config.attempt.clock, phases=config.attempt.phases, passed=False, steps=0, tool_calls=0,
        wall_seconds=round(wall_s, 3), environment_failure=True, environment_failure_reason=_clip(reason),
    ).model_dump(mode="json")


def skipped(config: WorkerConfig, spec: AttemptSpec, reason: str) -> dict[str, Any]:
    """The result line of an attempt the backend cannot run: not scored, not an environment failure."""
    from sregym.env import AttemptResult
    from sregym.problems.model import id_version

    return AttemptResult(
        problem_id=spec.problem_id, problem_version=id_version(spec.problem_id), seed=spec.seed,
        agent=config.agent, model=config.agent_options.get("model"), noise=config.attempt.noise,
        clock=config.attempt.clock, phases=config.attempt.phases, passed=False, steps=0, tool_calls=0,
        wall_seconds=0.0, skipped=True, skipped_reason=reason,
    ).model_dump(mode="json")


def _backend_cannot_run(config: WorkerConfig, spec: AttemptSpec) -> str:
    """Why `--backend kube` cannot run this attempt ("" when it can, or on the twin)."""
    if not config.attempt.kube:
        return ""
    from sregym.problems import get_problem
    from sregym.problems.portability import twin_only_reason

    try:
        why = twin_only_reason(get_problem(spec.problem_id))
    except Exception:  # an unknown problem: the attempt itself records why
        return ""
    return f"needs the twin ({why})" if why else ""


def run_attempt_in_worker(config_json: str, spec_json: str) -> str:
    """Process-pool entry point: JSON in and out, so nothing but plain data crosses processes."""
    config, spec = WorkerConfig.model_validate_json(config_json), AttemptSpec.model_validate_json(spec_json)
    prepare(config)
    forked = None if config.attempt.kube else _run_forked(config, spec)  # a cluster is not forked
    return forked if forked is not None else run_attempt(config, spec).model_dump_json()


def _run_forked(config: WorkerConfig, spec: AttemptSpec) -> str | None:
    """The attempt forked from the worker's warm prefix of its app, or None (run it here)."""
    from sregym.problems import get_problem
    from sregym.problems.warm_prefix import run_forked

    try:
        problem = get_problem(spec.problem_id)
    except Exception:  # an unknown problem: the plain attempt records why
        return None
    return run_forked(problem, spec.seed, config.attempt.baseline_s,
                      lambda: run_attempt(config, spec).model_dump_json())


def resolve_dirs(dirs: list[str | Path] | tuple[str | Path, ...] | None) -> tuple[str, ...]:
    return tuple(str(Path(d).expanduser().resolve()) for d in dirs or ())


__all__ = ["AttemptOutcome", "WorkerConfig", "environment_failure", "make_agent", "prepare", "resolve_dirs",
           "run_attempt", "run_attempt_in_worker", "skipped"]
