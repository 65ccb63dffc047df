"""Argument checks, plug-in loading and error lines shared by every `sregym` command.

A bad argument must end the same way in every command: one line on stderr that names the
argument and says what to do, exit code 2 (`exitcodes.USAGE`), nothing started and no
traceback. Scripts rely on the code; people rely on the line. `Args` does the checks of one
command; `CliGroup` gives Click's own parse errors (a non-integer `-j`, an unknown option) the
same one-line shape, and turns a machine that is not set up (`SetupError`: a missing extra,
kubectl, an agent's program) into its line and exit code 3.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from sregym.cli import exitcodes

MAX_PORT = 65535
# Flags that fill agent options, so an error can name the flag the user typed.
OPTION_FLAGS = {"model": "--model", "base_url": "--base-url", "api_key_env": "--api-key-env",
                "command": "--command"}


class CliGroup(TyperGroup):
    """The top-level group: every error a user can cause is one line, never a usage box or a
    traceback (a usage box is for reading help; an error must fit a CI log line)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        from sregym.errors import SetupError

        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.TyperException as err:  # Click's parse errors and BadParameter from a command
            if type(err).__name__ == "NoArgsIsHelpError":  # `sregym twin`: the help (rich prints it itself)
                if err.format_message().strip():
                    typer.echo(err.format_message(), err=True)
                sys.exit(exitcodes.USAGE)
            ctx = getattr(err, "ctx", None)
            where = ctx.command_path if ctx is not None else (prog_name or self.name or "sregym")
            typer.echo(f"{where}: {one_line(err.format_message())}", err=True)
            sys.exit(err.exit_code)
        except typer.Abort:
            typer.echo("aborted", err=True)
            sys.exit(exitcodes.FAILED)
        except SetupError as err:  # a missing extra, kubectl, an agent's program
            typer.echo(f"sregym: {err}", err=True)
            sys.exit(exitcodes.ENVIRONMENT)
        sys.exit(code if isinstance(code, int) else exitcodes.OK)


def one_line(text: object) -> str:
    """`text` on one line (a multi-line message would break `grep` and CI annotations)."""
    return " ".join(str(text).split())


class Args:
    """The argument checks of one command; each failure prints `sregym CMD: ARG: why` and exits 2."""

    def __init__(self, command: str) -> None:
        self.command = command

    # ------------------------------------------------------------------ failing
    def fail(self, message: str, code: int = exitcodes.USAGE) -> NoReturn:
        typer.echo(f"sregym {self.command}: {one_line(message)}", err=True)
        raise typer.Exit(code)

    def bad(self, option: str, message: str) -> NoReturn:
        self.fail(f"{option}: {message}")

    # ------------------------------------------------------------------ numbers
    def count(self, value: int | None, option: str, minimum: int = 1) -> None:
        """A count of things (workers, seeds, repeats): at least `minimum`."""
        if value is not None and value < minimum:
            self.bad(option, f"must be at least {minimum}, got {value}")

    def non_negative(self, value: float | None, option: str) -> None:
        if value is not None and value < 0:
            self.bad(option, f"must not be negative, got {value:g}")

    def positive(self, value: float | None, option: str) -> None:
        if value is not None and value <= 0:
            self.bad(option, f"must be positive, got {value:g}")

    def port(self, value: int | None, option: str, *, off: bool = False, ephemeral: bool = False) -> None:
        """A TCP port 1-65535; `off` also allows -1 (not served), `ephemeral` 0 (any free port)."""
        if value is None or 1 <= value <= MAX_PORT or (off and value == -1) or (ephemeral and value == 0):
            return
        extra = "".join((", 0 for any free port" if ephemeral else "", ", or -1 to turn it off" if off else ""))
        self.bad(option, f"{value} is not a port: use 1-{MAX_PORT}{extra}")

    # ------------------------------------------------------------------ words
    def choice(self, value: str, option: str, choices: Iterable[str]) -> None:
        known = list(choices)
        if value not in known:
            self.bad(option, f"must be one of {', '.join(known)}, got {value!r}")

    def phases(self, text: str, option: str = "--phases") -> tuple[str, ...]:
        """'diagnosis,mitigation' → the phases, in the order given, each known and once."""
        from sregym.env.config import PHASES as known

        phases = tuple(p.strip() for p in text.split(",") if p.strip())
        unknown = [p for p in phases if p not in known]
        if not phases or unknown or len(set(phases)) != len(phases):
            shown = f"unknown phase {unknown[0]!r}" if unknown else f"bad list {text!r}"
            self.bad(option, f"{shown}; give detection, diagnosis and/or mitigation, comma-separated")
        return phases

    # ------------------------------------------------------------------ paths
    def out_dir(self, path: Path | None, option: str = "--out") -> None:
        """A directory to create or fill: not an existing file, and not below one."""
        if path is None:
            return
        blocker = _file_on_the_way(Path(path).expanduser())
        if blocker is not None:
            what = "is a file" if blocker == Path(path).expanduser() else f"is below the file {blocker}"
            self.bad(option, f"{path} {what}; give a directory")

    def out_file(self, path: Path | None, option: str) -> None:
        """A file to write: not a directory, not below a file, its directory creatable and writable."""
        if path is None:
            return
        target = Path(path).expanduser()
        if target.is_dir():
            self.bad(option, f"{path} is a directory; give a file name")
        blocker = _file_on_the_way(target.parent)
        if blocker is not None:
            self.bad(option, f"{path} is below the file {blocker}; give a path in a directory")
        existing = next((p for p in (target.parent, *target.parent.parents) if p.exists()), None)
        if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
            self.bad(option, f"cannot write {path}: {existing} is not writable")
        if target.exists() and not os.access(target, os.W_OK):
            self.bad(option, f"cannot write {path}: the file is not writable")

    # ------------------------------------------------------------------ registered names
    def problem(self, problem_id: str, argument: str = "--problem") -> Any:
        """The registered problem `problem_id` (the error points at `sregym list problems`
        instead of listing every id on one line)."""
        from sregym.problems import get_problem

        try:
            return get_problem(problem_id)
        except KeyError as err:
            if "@" in problem_id and err.args:  # a variant id: say what is wrong with it
                self.bad(argument, str(err.args[0]))
            self.bad(argument, f"unknown problem {problem_id!r}; `sregym list problems` lists them")

    # ------------------------------------------------------------------ plug-ins
    def problems_dirs(self, dirs: Iterable[Path] | None, option: str = "--problems-dir") -> None:
        """Load every `--problems-dir`; a bad directory or a file that does not import is one line."""
        from sregym.problems import load_problems_dir

        for d in dirs or []:
            self._load(load_problems_dir, d, option)

    def agents_dirs(self, dirs: Iterable[Path] | None, option: str = "--agents-dir") -> None:
        from sregym.agents import load_agents_dir

        for d in dirs or []:
            self._load(load_agents_dir, d, option)

    def _load(self, loader: Any, directory: Path, option: str) -> None:
        from sregym.registry import PluginLoadError

        try:
            loader(directory)
        except (FileNotFoundError, NotADirectoryError, PluginLoadError) as err:
            self.bad(option, str(err))

    def agent_options(self, agent: str, options: dict[str, Any]) -> None:
        """Refuse options the agent does not declare in `Agent.known_options`. An agent that
        declares none takes none, unless it overrides `__init__`: then it checks its own options
        when the runner builds it before the first attempt (the way docs/agents.md describes)."""
        from sregym.agents import Agent, get_agent

        try:
            cls = get_agent(agent)
        except KeyError as err:
            self.bad("--agent", err.args[0] if err.args else str(err))
        if not cls.known_options and cls.__init__ is not Agent.__init__:
            return
        known = list(cls.known_options)
        for key in sorted(options):
            if key in known:
                continue
            flag = OPTION_FLAGS.get(key, f"-o {key}")
            if not known:
                self.bad(flag, f"the {agent} agent takes no options")
            self.bad(flag, f"unknown option of the {agent} agent; known: {', '.join(known)}")


def _file_on_the_way(path: Path) -> Path | None:
    """`path` itself or its nearest existing ancestor, if that is a file (not a directory)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


__all__ = ["Args", "CliGroup", "one_line"]
