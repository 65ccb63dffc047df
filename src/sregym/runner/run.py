"""`run()`: evaluate one agent on many problems × seeds, in parallel, resumably.

The parent process plans the attempts, hands them to worker processes (spawned, `-j N`, under a
per-attempt wall-time watchdog: `runner/pool.py`), and is
the only writer of the run directory: each outcome is stored the moment it arrives (see
`ResultsStore`), progress is shown as it happens (a live bar on a terminal, one plain line per
finished attempt otherwise, and every environment failure with its reason), and at the end the
results file is put in plan order and `summary.json` written. `resume=DIR` reads the run's own `run.json`, so a resumed
run has exactly the configuration of the original, and re-runs only attempts that are missing or
ended in an environment failure.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sregym.env.config import ATTEMPT_TIMEOUT_S, AttemptConfig
from sregym.problems.family import expand_with_variants
from sregym.runner.plan import load_problem_dirs, plan_attempts, seed_list, select_problem_ids
from sregym.runner.pool import AttemptPool
from sregym.runner.pricing import Price, attempt_cost
from sregym.runner.progress import ProgressMode, Reporter
from sregym.runner.provenance import now_iso, provenance
from sregym.runner.store import ResultsStore, is_environment_failure
from sregym.runner.summary import Summary, phase_passed, summarize
from sregym.runner.worker import AttemptOutcome, WorkerConfig, resolve_dirs

RUN_FORMAT = 1


@dataclass
class Tallies:
    """Live counts for the progress bar."""

    done: int = 0
    diagnosis: int = 0
    mitigation: int = 0
    end_to_end: int = 0
    environment_failures: int = 0

    def add(self, result: dict[str, Any]) -> None:
        self.done += 1
        if is_environment_failure(result):
            self.environment_failures += 1
            return
        self.diagnosis += bool(phase_passed(result, "diagnosis"))
        self.mitigation += bool(phase_passed(result, "mitigation"))
        self.end_to_end += bool(result.get("passed"))

    def text(self) -> str:
        return (f"diag {self.diagnosis}  mitig {self.mitigation}  e2e {self.end_to_end}  "
                f"env-fail {self.environment_failures}")


def default_out_dir() -> Path:
    return Path("runs") / time.strftime("%Y%m%d-%H%M%S")


def run(problem_ids: Iterable[str] = (), *, agent: str = "noop", agent_options: dict[str, Any] | None = None,
        seeds: int | Iterable[int] = 1, variants: int = 0, jobs: int = 1, out_dir: str | Path | None = None,
        resume: str | Path | None = None, suite: str | None = None, tag: str | None = None,
        problems_dirs: Iterable[str | Path] = (), agents_dirs: Iterable[str | Path] = (),
        attempt: AttemptConfig | None = None, attempt_timeout_s: float | None = ATTEMPT_TIMEOUT_S,
        progress: bool | ProgressMode = "auto",
        on_result: Callable[[AttemptOutcome], None] | None = None,
        invocation: dict[str, Any] | None = None, judge: dict[str, Any] | None = None,
        executor: str = "local", ray_address: str | None = None, price: Price | None = None) -> Summary:
    """Run (or resume) a benchmark; returns its `Summary` (also written to `summary.json`).

    `attempt` says how each attempt runs (noise, clock, limits, phases ...; the defaults of
    `AttemptConfig` when None).

    Before anything is written, `preflight` checks what every attempt needs (the agent and its
    options, its extras and endpoint, kubectl): a `SetupError` then stops the run at once.
    `progress` is "auto" (a bar on a terminal, plain lines otherwise), "bar", "lines" or "none"
    (True/False mean "auto"/"none"). `invocation` (the command line's own options) is recorded
    in `run.json` next to the run's configuration. `variants` adds that many variants of each
    selected family after it (`problems/family.py`), drawn with the first seed; the drawn ids are
    the run's problem ids in `run.json`, so a resume runs the same ones. `judge` picks the checklist judge
    (`oracles.judge_choice.JudgeChoice.to_json()`; the deterministic judge when None).
    `executor` is "local" (the `-j` process pool) or "ray" (each attempt a Ray task, on the cluster
    at `ray_address` or a local Ray of `jobs` CPUs: `runner/ray_executor.py`). `price` (USD per
    million tokens) overrides the price table for each line's `cost_usd` (`runner.pricing`); it is
    stored in `run.json`, so a resume prices the same way."""
    started_at = now_iso()
    if executor not in ("local", "ray"):
        raise ValueError(f"unknown executor {executor!r}: local or ray")
    if executor == "ray":
        from sregym.extras import require
        from sregym.runner.ray_executor import FEATURE

        require("ray", FEATURE)  # before anything is written
    if resume is not None:
        store = ResultsStore(resume)
        stored = store.read_config()
        config = WorkerConfig.model_validate(stored["worker"])
        ids, seed_values = list(stored["problem_ids"]), [int(s) for s in stored["seeds"]]
        load_problem_dirs(config.problems_dirs)
        preflight(config)
        price = Price.from_json(stored.get("price_override"))
        stored.setdefault("resumes", []).append({"started_at": started_at, **provenance(),
                                                 "invocation": dict(invocation or {})})
        store.write_config(stored)
    else:
        config = WorkerConfig(agent=agent, agent_options=dict(agent_options or {}),
                              attempt=attempt or AttemptConfig(), problems_dirs=resolve_dirs(list(problems_dirs)),
                              agents_dirs=resolve_dirs(list(agents_dirs)), attempt_timeout_s=attempt_timeout_s,
                              judge=dict(judge or {}))
        load_problem_dirs(config.problems_dirs)
        ids = select_problem_ids(problem_ids, suite=suite, tag=tag)
        seed_values = seed_list(seeds) if isinstance(seeds, int) else list(seeds)
        ids = expand_with_variants(ids, variants, seed_values[0]) if variants else ids
        preflight(config)
        store = ResultsStore(out_dir or default_out_dir())
        stored = {"format": RUN_FORMAT, "problem_ids": ids, "seeds": seed_values,
                  "worker": config.model_dump(mode="json"),
                  "selection": {"problems": list(problem_ids), "suite": suite, "tag": tag,
                                "seeds": seeds if isinstance(seeds, int) else list(seed_values),
                                "variants": variants, "variant_seed": seed_values[0]},
                  "jobs": jobs, "started_at": started_at, "finished_at": None, **provenance(),
                  "invocation": dict(invocation or {}), "price_override": price.to_json() if price else None}
        store.write_config(stored)
    plan = plan_attempts(ids, seed_values)
    todo = store.pending(plan)
    tallies = Tallies()
    planned = {a.key for a in plan}
    for key, line in store.read_results().items():
        if key in planned and not is_environment_failure(line):
            tallies.add(line)
    mode: ProgressMode = ("auto" if progress else "none") if isinstance(progress, bool) else progress
    reporter = Reporter(len(plan), tallies, mode=mode)
    ran = 0

    def record(outcome: AttemptOutcome) -> None:
        nonlocal ran
        ran += 1
        cost, _ = attempt_cost(outcome.result, price)
        if cost is not None:
            outcome.result["cost_usd"] = cost
        store.write_attempt(outcome.spec, outcome.result, outcome.trajectory)
        tallies.add(outcome.result)
        if on_result is not None:
            on_result(outcome)
        reporter.finished(outcome.spec, outcome.result)

    interrupted = False
    _remove_kube_leftovers(config)
    with reporter, _terminate_as_interrupt():
        try:
            if todo and executor == "ray":
                from sregym.runner.ray_executor import run_on_ray

                run_on_ray(config, todo, address=ray_address, num_cpus=jobs, on_start=reporter.start,
                           on_outcome=record)
            elif todo:
                pool = AttemptPool(config, jobs, timeout_s=config.attempt_timeout_s)
                pool.run(todo, on_start=reporter.start, on_outcome=record)
        except KeyboardInterrupt:
            interrupted = True
    _remove_kube_leftovers(config)  # what killed workers (Ctrl-C, the watchdog) could not remove

    results = store.compact(plan)
    from sregym.problems import get_problem

    problems = {pid: get_problem(pid) for pid in ids}
    model = next((ln["model"] for ln in results if ln.get("model")), config.agent_options.get("model"))
    summary = summarize(results, layers={pid: p.tags.layers for pid, p in problems.items()},
                        difficulties={pid: p.tags.difficulty for pid, p in problems.items()},
                        agent=config.agent, model=model, noise=config.attempt.noise, seeds=seed_values,
                        planned=len(plan))
    summary = summary.model_copy(update={"ran": ran, "interrupted": interrupted, "out_dir": str(store.dir)})
    store.write_summary(summary.model_dump(mode="json", exclude={"ran", "interrupted", "out_dir"}))
    stored = store.read_config()
    ending = {"finished_at": now_iso(), "interrupted": interrupted, "ran": ran}
    (stored["resumes"][-1] if stored.get("resumes") else stored).update(ending)
    store.write_config(stored)
    return summary


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a batch system stopping the job) ends the run like Ctrl-C: what is written stays,
    the results file is put in order and the summary says the run is incomplete."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _remove_kube_leftovers(config: WorkerConfig) -> None:
    """`--backend kube`: remove what attempts of processes no longer alive left on the cluster
    (found by their ledgers, `env/kube/leftovers.py`), saying so on stderr; a no-op on the twin."""
    if not config.attempt.kube:
        return
    import sys

    from sregym.env.kube.leftovers import remove_leftovers
    from sregym.env.kube.target import KubeTarget

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    target = KubeTarget.from_json(dict(config.attempt.kube))
    for line in remove_leftovers(target, say):
        say(f"  could not delete {line}; the next run on this cluster tries again")


def preflight(config: WorkerConfig) -> None:
    """Fail before any attempt runs — not once per attempt — when every attempt would fail the
    same way: an unknown agent or options it rejects (`ValueError`), or a machine that is not set
    up for it (`SetupError`: kubectl missing, an extra not installed, a model endpoint that does
    not answer, an agent program that is not there)."""
    from sregym.runner.worker import make_agent, prepare
    from sregym.tools.kubectl import require_kubectl

    prepare(config)
    try:
        agent = make_agent(config.agent, config.agent_options)
    except TypeError as exc:
        raise ValueError(f"agent {config.agent!r} rejected its options {config.agent_options}: {exc}") from None
    require_kubectl()
    agent.preflight()
    from sregym.oracles.judge_choice import JudgeChoice

    JudgeChoice.from_json(config.judge).preflight()


__all__ = ["Tallies", "default_out_dir", "preflight", "run"]
