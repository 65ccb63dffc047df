"""An interactive shell on a TTY: what `kubectl exec -it POD -- sh` talks to.

The remote end of a real TTY does three things a one-shot command does not: the terminal line
discipline echoes what is typed and handles Enter (CR), backspace, Ctrl-C and Ctrl-D; output
newlines become CRLF; and the shell prints a prompt and keeps its state (variables, `cd`) from
one line to the next. `TtySession.feed()` takes the raw keystrokes kubectl sends (the local
terminal is in raw mode) and returns the bytes to send back.
"""

from __future__ import annotations

from sregym.twin.node.shell import (
    Exit,
    LoopControl,
    Output,
    OutputSink,
    Process,
    Shell,
    ShellSyntaxError,
    parse,
)
from sregym.twin.userland.context import ExecContext

SHELLS = ("sh", "ash", "bash", "dash")
# The line discipline's buffer (N_TTY_BUF_SIZE): a canonical-mode line holds at most 4095
# characters and the rest of what is typed is dropped, so a flood of keystrokes without Enter
# cannot grow the line without bound.
MAX_CANON = 4095


def is_interactive_shell(argv: list[str]) -> bool:
    """`sh`, `/bin/bash`, `sh -i`, `bash -l`: a shell reading commands from its terminal."""
    if not argv or argv[0].rsplit("/", 1)[-1] not in SHELLS:
        return False
    return all(arg.startswith("-") and "c" not in arg for arg in argv[1:])


class TtySession:
    """A shell process attached to a pseudo-terminal."""

    def __init__(self, ctx: ExecContext, argv: list[str]) -> None:
        self.ctx = ctx
        self.name = argv[0].rsplit("/", 1)[-1]
        self.shell = Shell(ctx, self.name)
        self.line = ""
        self.exit_code: int | None = None
        self._escape = ""

    def prompt(self) -> str:
        root = self.ctx.env.get("HOME", "/root") == "/root"
        mark = "#" if root else "$"
        if self.name == "bash":
            return f"root@{self.ctx.hostname}:{self.ctx.cwd}{mark} "
        if self.ctx.shell_flavour == "ash":
            return f"{self.ctx.cwd} {mark} "
        return f"{mark} "

    def start(self) -> str:
        return self.prompt()

    def feed(self, data: str) -> str:
        """Process typed characters; returns what the terminal shows in response."""
        out: list[str] = []
        for char in data:
            if self.exit_code is not None:
                break
            if self._escape or char == "\x1b":
                # Cursor keys and other escape sequences: not supported, swallowed.
                self._escape += char
                if len(self._escape) > 1 and (self._escape[-1].isalpha() or self._escape[-1] == "~"):
                    self._escape = ""
                continue
            if char in ("\r", "\n"):
                out.append("\r\n")
                line, self.line = self.line, ""
                out.append(self._run(line))
                if self.exit_code is None:
                    out.append(self.prompt())
            elif char in ("\x7f", "\b"):
                if self.line:
                    self.line = self.line[:-1]
                    out.append("\b \b")
            elif char == "\x03":
                self.line = ""
                out.append("^C\r\n" + self.prompt())
            elif char == "\x04":
                if not self.line:
                    out.append("\r\n" if self.name != "bash" else "exit\r\n")
                    self.exit_code = self.shell.status
            elif char == "\x15":  # Ctrl-U: kill the line
                out.append("\b \b" * len(self.line))
                self.line = ""
            elif (char >= " " or char == "\t") and len(self.line) < MAX_CANON:
                self.line += char
                out.append(char)
        return "".join(out)

    def _run(self, line: str) -> str:
        if not line.strip():
            return ""
        program = self._program(line)
        proc = Process(program, 0.0)
        sink = OutputSink(merged=True)
        proc.run(3600.0, 200000, sink)
        if not proc.finished:
            proc.close()
        if proc.oom_killed:
            # The shell itself was the process the OOM killer chose: the session ends.
            self.exit_code = proc.exit_code
        text = "".join(sink.streams["stdout"])
        return text.replace("\r\n", "\n").replace("\n", "\r\n")

    def _program(self, line: str):  # type: ignore[no-untyped-def]
        shell = self.shell
        try:
            tree = parse(line)
        except ShellSyntaxError as exc:
            yield Output("stderr", f"{shell.name}: {exc}\n")
            shell.status = 2
            return 2
        try:
            yield from shell.run_sequence(tree)
        except Exit as stop:
            self.exit_code = stop.code
            return stop.code
        except LoopControl:
            pass
        except ShellSyntaxError as exc:
            yield Output("stderr", f"{exc}\n")
            shell.status = 2
        return shell.status
