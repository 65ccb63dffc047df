"""What a person, or a CI log, sees while a run goes.

On a terminal a live bar with tallies; when stdout is not a terminal (CI, `| tee`, `| cat`) one
plain line per finished attempt, so a log never stays silent for minutes. In every mode an
environment failure is reported the moment it arrives, on stderr: the first time a reason is seen
in full, afterwards as a one-line count — a broken setup is loud without drowning the log.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Literal, TextIO

from sregym.runner.store import is_environment_failure, is_skipped
from sregym.runner.summary import phase_passed, reason_head

if TYPE_CHECKING:
    from sregym.runner.plan import AttemptSpec
    from sregym.runner.run import Tallies

ProgressMode = Literal["auto", "bar", "lines", "none"]


def attempt_line(done: int, total: int, spec: AttemptSpec, result: dict[str, Any]) -> str:
    """`[ 3/22] app/problem-v1 seed 0: PASS (diagnosis pass, mitigation pass) 2.1s`."""
    width = len(str(total))
    head = f"[{done:>{width}}/{total}] {spec.problem_id} seed {spec.seed}:"
    wall = f"{float(result.get('wall_seconds') or 0):.1f}s"
    if is_environment_failure(result):
        return f"{head} ENVIRONMENT FAILURE {wall}"
    if is_skipped(result):
        return f"{head} SKIPPED ({result.get('skipped_reason') or 'not run on this backend'})"
    phases = []
    for phase in ("detection", "diagnosis", "mitigation"):
        passed = phase_passed(result, phase)
        if isinstance(result.get(phase), dict):
            phases.append(f"{phase} {'pass' if passed else 'fail'}")
    verdict = "PASS" if result.get("passed") else "FAIL"
    detail = f" ({', '.join(phases)})" if phases else ""
    extra = "; agent error" if result.get("agent_error") else ""
    return f"{head} {verdict}{detail}{extra} {wall}"


class Reporter:
    """Progress of one run (see the module docstring). Use as a context manager; call
    `start(spec)` when an attempt starts and `finished(spec, result)` when it ends."""

    def __init__(self, total: int, tallies: Tallies, *, mode: ProgressMode = "auto",
                 out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.total = total
        self.tallies = tallies
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        if mode == "auto":
            mode = "bar" if _isatty(self.out) else "lines"
        self.mode: ProgressMode = mode
        self.reasons: dict[str, int] = {}
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> Reporter:
        if self.mode == "bar":
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("{task.fields[tallies]}"), TimeElapsedColumn(),
                                      console=Console(file=self.err), transient=False)
            self._progress.start()
            self._task = self._progress.add_task("attempts", total=self.total, completed=self.tallies.done,
                                                 tallies=self.tallies.text())
        elif self.mode == "lines" and self.tallies.done:
            self._print(f"resuming: {self.tallies.done} of {self.total} attempts already done", self.out)
        return self

    def start(self, spec: AttemptSpec) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description=f"{spec.problem_id} #{spec.seed}")

    def finished(self, spec: AttemptSpec, result: dict[str, Any]) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=self.tallies.done, tallies=self.tallies.text())
        elif self.mode == "lines":
            self._print(attempt_line(self.tallies.done, self.total, spec, result), self.out)
        if is_environment_failure(result):
            self._environment_failure(spec, result)

    def _environment_failure(self, spec: AttemptSpec, result: dict[str, Any]) -> None:
        head = reason_head(result)
        seen = self.reasons.get(head, 0)
        self.reasons[head] = seen + 1
        where = f"{spec.problem_id} seed {spec.seed}"
        if not seen:
            reason = str(result.get("environment_failure_reason") or "unknown").strip()
            body = "\n".join("    " + line for line in reason.splitlines())
            self._print(f"environment failure on {where}:\n{body}", self.err)
        else:
            short = head if len(head) <= 100 else head[:97] + "..."
            self._print(f"environment failure on {where}: same reason as before ({seen + 1} attempts so far): "
                        f"{short}", self.err)

    def _print(self, text: str, stream: TextIO) -> None:
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=stream, flush=True)

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description="attempts")
            self._progress.stop()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = ["ProgressMode", "Reporter", "attempt_line"]
