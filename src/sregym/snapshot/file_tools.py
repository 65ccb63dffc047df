"""The tools of an LLM agent on a snapshot: a confined shell, list/read/grep, and the submit tool.

`SnapshotToolSession` has the surface the `react` loop drives (`specs()`, `call()`,
`note_step()`, `phase`, `done`, `tokens_in/out`, plus the names of its investigation and submit
tools), so the live agent loop runs unchanged over files instead of a cluster. Every path an
agent names is resolved (symlinks followed) and must stay inside the snapshot copy; the answer
goes through the same validation as an `output.json` file (`sregym.snapshot.output`), and its
errors go back to the model as an observation so it can correct itself. A successful submission
writes `output.json` and ends the episode.
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from sregym.agents.react import AgentBudgetExceeded
from sregym.snapshot.jsonfile import dumps_line as dumps_entry
from sregym.snapshot.output import OutputError, json_schema, validate_output, write_output
from sregym.snapshot.sandbox import ConfinedShell
from sregym.tools.output import compact
from sregym.tools.session import validate as _bind  # the live session's argument checks, shared
from sregym.tools.spec import ToolResult, ToolSpec, tool_spec

SUBMIT_TOOL = "submit_root_causes"
INVESTIGATION = ("shell", "list_files", "read_file", "grep")
MAX_LINE_CHARS = 2_000  # one line of read_file (TSV bodies hold whole JSON objects)
MAX_GREP_LINE_CHARS = 500


class PathRefused(ValueError):
    """A path that leaves the snapshot copy (`..`, an absolute path elsewhere, a symlink out)."""


class TimeLimitReached(AgentBudgetExceeded):
    """The whole episode's wall-time limit ran out (stops the react loop like its own budgets)."""


def resolve_inside(root: Path, path: str) -> Path:
    """`path` (relative to `root`, or absolute inside it) resolved with symlinks followed;
    raises `PathRefused` if the result is not `root` or below it."""
    base = Path(root).resolve()
    text = (path or ".").strip() or "."
    candidate = Path(text)
    resolved = (candidate if candidate.is_absolute() else base / candidate).resolve()
    if not resolved.is_relative_to(base):
        raise PathRefused(f"{path!r} is outside the snapshot directory; use paths relative to it "
                          f"(e.g. 'README.md', 'alerts/', 'metrics/pod_*.tsv')")
    return resolved


class SnapshotToolSession:
    """The tool catalogue of one offline episode (see the module docstring)."""

    investigation_tools = INVESTIGATION
    submit_tools = {"diagnosis": SUBMIT_TOOL}
    phases = ("diagnosis",)

    def __init__(self, root: Path, output_path: Path, *, shell: ConfinedShell | None,
                 record: Callable[[dict[str, Any]], None] | None = None, max_output_chars: int = 10_000,
                 trajectory_chars: int = 4_000, time_limit_s: float | None = None,
                 cancelled: Callable[[], bool] | None = None) -> None:
        self.root = Path(root).resolve()
        self.output_path = Path(output_path)
        self.shell_runner = shell
        self._record = record
        self.max_output_chars = int(max_output_chars)
        self.trajectory_chars = int(trajectory_chars)
        self._started = time.monotonic()
        self._deadline = self._started + float(time_limit_s) if time_limit_s else None
        self.time_limit_s = time_limit_s
        self._cancelled = cancelled
        self._phase: Literal["diagnosis", "done"] = "diagnosis"
        self.tool_calls = 0
        self.steps = 0
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None

    # --------------------------------------------------------------- surface
    @property
    def phase(self) -> str:
        return self._phase

    @property
    def done(self) -> bool:
        return self._phase == "done"

    @property
    def submitted(self) -> bool:
        return self.done

    def tool_names(self) -> list[str]:
        names = [n for n in INVESTIGATION if n != "shell" or self.shell_runner is not None]
        return [*names, SUBMIT_TOOL]

    def specs(self) -> list[ToolSpec]:
        out = [tool_spec(getattr(self, name)) for name in self.tool_names() if name != SUBMIT_TOOL]
        schema = {k: v for k, v in json_schema().items() if k not in ("title", "$schema")}
        schema.pop("description", None)
        out.append(ToolSpec(name=SUBMIT_TOOL, input_schema=schema, description=(
            "Submit the root cause of the incident: the minimal set of Kubernetes objects where the fault "
            "originates (not the components that only show symptoms), each with kind, namespace (null for "
            "cluster-scoped kinds) and exact name, plus an explanation with the evidence. Scored by "
            "precision at full recall: a missed root cause scores 0, every extra entity lowers the score. "
            "This ends the investigation; it can be called once.")))
        return out

    def note_step(self, *, tokens_in: int | None = None, tokens_out: int | None = None) -> None:
        """One model turn (the react loop calls it after each completion)."""
        self.steps += 1
        if tokens_in is not None:
            self.tokens_in = (self.tokens_in or 0) + int(tokens_in)
        if tokens_out is not None:
            self.tokens_out = (self.tokens_out or 0) + int(tokens_out)
        self._check_time()

    def note_message(self, content: str | None, *, tool_calls: list[dict[str, Any]] | None = None,
                     purpose: str = "turn") -> None:
        """The model's own words, kept in the repeat's trajectory next to its tool calls."""
        if self._record is not None:
            self._record({"kind": "message", "tool": "assistant", "purpose": purpose,
                          "tool_calls": list(tool_calls or []),
                          "observation": compact(content or "", self.trajectory_chars),
                          "t_s": round(time.monotonic() - self._started, 3)})

    def call(self, name: str, args: dict[str, Any] | None = None) -> ToolResult:
        """Run one tool; a refusal or failure is an error observation, never an exception
        (except the episode's time limit, which ends the agent's loop)."""
        self._check_time()
        args = dict(args or {})
        started = time.monotonic()
        if self.done:
            result = ToolResult("the investigation is over: the root causes were already submitted", True)
        elif name not in self.tool_names():
            result = ToolResult(f"unknown tool {name!r}; available tools: {', '.join(self.tool_names())}", True)
        else:
            self.tool_calls += 1
            result = self._dispatch(name, args)
        if self._record is not None:
            self._record({"index": self.tool_calls, "tool": name, "args": args, "is_error": result.is_error,
                          "observation": compact(result.text, self.trajectory_chars),
                          "t_s": round(started - self._started, 3),
                          "wall_s": round(time.monotonic() - started, 3)})
        return result

    def _dispatch(self, name: str, args: dict[str, Any]) -> ToolResult:
        if name == SUBMIT_TOOL:
            return self._submit(args)
        fn = getattr(self, name)
        try:
            kwargs = _bind(fn, args)
        except ValueError as exc:
            return ToolResult(f"invalid arguments for {name}: {exc}", True)
        try:
            value = fn(**kwargs)
        except PathRefused as exc:
            return ToolResult(f"refused: {exc}", True)
        except (OSError, ValueError, re.error) as exc:
            return ToolResult(f"{name} failed: {exc}", True)
        result = value if isinstance(value, ToolResult) else ToolResult(str(value))
        return ToolResult(compact(result.text, self.max_output_chars), result.is_error)

    def _check_time(self) -> None:
        if self._cancelled is not None and self._cancelled():
            raise TimeLimitReached("the run was interrupted")
        if self._deadline is not None and time.monotonic() >= self._deadline and not self.done:
            raise TimeLimitReached(f"time limit of {self.time_limit_s:g} s for the episode reached")

    # ----------------------------------------------------------------- tools
    def shell(self, command: str) -> ToolResult:
        """Run a bash command in the snapshot directory (your working directory) and return its
        output (stdout and stderr). The directory is read-only and there is no network; use the
        usual tools (ls, grep, awk, cut, sort, uniq, head, tail, jq if installed, python3) and pipes.
        Long outputs are cut in the middle with a notice; each call has a time limit.

        Args:
            command: the bash command line, e.g. "grep -c Warning k8s_events.tsv".
        """
        assert self.shell_runner is not None
        result = self.shell_runner.run(command)
        return ToolResult(result.output or "(no output)", bool(result.exit_code) or result.timed_out)

    def list_files(self, path: str = ".", recursive: bool = False, pattern: str | None = None) -> str:
        """List the files of a directory of the snapshot with their sizes.

        Args:
            path: a directory relative to the snapshot root ("." is the root).
            recursive: list subdirectories' files too.
            pattern: only names matching this glob, e.g. "*.tsv" or "pod_*".
        """
        base = resolve_inside(self.root, path)
        if not base.is_dir():
            raise ValueError(f"{path!r} is not a directory" if base.exists() else f"{path!r} does not exist")
        entries = sorted(base.rglob("*") if recursive else base.iterdir())
        lines: list[str] = []
        for entry in entries:
            rel = entry.relative_to(self.root).as_posix()
            if pattern and not fnmatch.fnmatch(entry.name, pattern):
                continue
            if entry.is_symlink():
                continue
            if entry.is_dir():
                if not recursive:
                    lines.append(f"{rel}/  ({sum(1 for _ in entry.iterdir())} entries)")
            else:
                lines.append(f"{rel}  {entry.stat().st_size} bytes")
        shown = base.relative_to(self.root).as_posix()
        if not lines:
            return f"{shown}: no entries" + (f" matching {pattern!r}" if pattern else "")
        return f"{shown}: {len(lines)} entries\n" + "\n".join(lines)

    def read_file(self, path: str, offset: int = 1, limit: int = 200) -> str:
        """Read lines of a text file of the snapshot. Very long lines are cut.

        Args:
            path: the file, relative to the snapshot root, e.g. "k8s_events.tsv".
            offset: the first line to return (1 is the first line of the file).
            limit: how many lines to return at most.
        """
        target = resolve_inside(self.root, path)
        if not target.is_file():
            raise ValueError(f"{path!r} is not a file" if target.exists() else f"{path!r} does not exist")
        first = max(1, int(offset))
        count = max(1, min(int(limit), 5_000))
        out: list[str] = []
        total = 0
        with target.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                total = number
                if first <= number < first + count:
                    line = line.rstrip("\n")
                    if len(line) > MAX_LINE_CHARS:
                        line = line[:MAX_LINE_CHARS] + f" [... line cut: {len(line) - MAX_LINE_CHARS} more chars]"
                    out.append(line)
        rel = target.relative_to(self.root).as_posix()
        if not out:
            return f"{rel}: {total} lines; nothing at line {first}"
        last = first + len(out) - 1
        more = f"; continue with offset={last + 1}" if last < total else ""
        return f"{rel}: lines {first}-{last} of {total}{more}\n" + "\n".join(out)

    def grep(self, pattern: str, path: str = "**/*", max_matches: int = 50, ignore_case: bool = False) -> str:
        """Search the snapshot's files for lines matching a regular expression (Python syntax);
        prints `file:line: text`.

        Args:
            pattern: the regular expression, e.g. "CrashLoopBackOff|OOMKilled".
            path: a file or a glob of files relative to the snapshot root, e.g. "k8s_events.tsv",
                "metrics/pod_*.tsv", "**/*" (every file, the default).
            max_matches: how many matching lines to show at most.
            ignore_case: match without regard to case.
        """
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        files = self._glob(path)
        limit = max(1, min(int(max_matches), 1_000))
        shown: list[str] = []
        total = 0
        matched_files = 0
        for file in files:
            hit = False
            with file.open(encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, start=1):
                    if regex.search(line) is None:
                        continue
                    total += 1
                    hit = True
                    if len(shown) < limit:
                        text = line.rstrip("\n")
                        if len(text) > MAX_GREP_LINE_CHARS:
                            text = text[:MAX_GREP_LINE_CHARS] + " [...]"
                        shown.append(f"{file.relative_to(self.root).as_posix()}:{number}: {text}")
            matched_files += hit
        if not total:
            return f"no match for {pattern!r} in {len(files)} file(s)"
        head = f"{total} matching line(s) in {matched_files} file(s)"
        if total > len(shown):
            head += f"; showing the first {len(shown)} (narrow the pattern or the path, or raise max_matches)"
        return head + "\n" + "\n".join(shown)

    def _glob(self, path: str) -> list[Path]:
        text = (path or "**/*").strip()
        target = Path(text)
        if target.is_absolute() or ".." in target.parts:
            resolved = resolve_inside(self.root, text)  # refuses whatever leaves the copy
            text = resolved.relative_to(self.root).as_posix()
        if not any(c in text for c in "*?["):
            single = resolve_inside(self.root, text)
            if single.is_dir():
                return [p for p in sorted(single.rglob("*")) if p.is_file() and _inside(self.root, p)]
            if not single.is_file():
                raise ValueError(f"{path!r} does not exist")
            return [single]
        return [p for p in sorted(self.root.glob(text)) if p.is_file() and _inside(self.root, p)]

    # ---------------------------------------------------------------- submit
    def _submit(self, args: dict[str, Any]) -> ToolResult:
        try:
            output = validate_output(args, source=f"{SUBMIT_TOOL} arguments")
        except OutputError as exc:
            return ToolResult(f"{exc}\nCall {SUBMIT_TOOL} again with corrected arguments.", True)
        write_output(self.output_path, output)
        self._phase = "done"
        count = len(output.entities)
        return ToolResult(f"submitted {count} root-cause entit{'y' if count == 1 else 'ies'}; "
                          "the investigation is over.")


def _inside(root: Path, path: Path) -> bool:
    try:
        resolve_inside(root, str(path))
    except PathRefused:
        return False
    return True


__all__ = ["INVESTIGATION", "SUBMIT_TOOL", "PathRefused", "SnapshotToolSession", "TimeLimitReached",
           "dumps_entry", "resolve_inside"]
