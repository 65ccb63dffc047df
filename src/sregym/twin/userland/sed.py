"""`sed` inside a container: GNU sed 4.9 on Debian-family images, BusyBox sed on BusyBox/Alpine.

The script is compiled the way GNU sed compiles it (one `-e` expression at a time, blocks may
span expressions), so a broken script fails before any input is read with GNU's message and
its character position (`sed: -e expression #1, char 5: unterminated `s' command`, exit 1).
Execution is the classic cycle over pattern and hold space: addresses (N, $, /re/, \\%re%,
first~step, ranges with N, /re/, +N, ~N, 0,/re/), `!`, `{}` blocks and the commands
s y d D p P n N g G h H x b t T q Q = l a i c r w z and labels. Files come from the container
(`call.ctx.files`); `-i` rewrites them there (`-i.bak` keeps the original beside it). A file
that cannot be read is reported and skipped, and the exit code is then 2, as GNU does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sregym.twin.node.shell import BudgetExhausted, Invocation, command
from sregym.twin.userland.filteropts import is_busybox
from sregym.twin.userland.posix_regex import RegexError, compile_posix, successive_matches
from sregym.twin.userland.sed_regex import expand, max_group, parse_replacement


class SedError(Exception):
    """A script or usage error: the message (without the `sed: ` prefix) and the exit code."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass
class Address:
    kind: str  # line, last, regex, step, zero, plus, mult
    number: int = 0
    step: int = 0
    regex: re.Pattern[str] | None = None  # None for `//`: the last regex used


@dataclass
class Cmd:
    name: str
    a1: Address | None = None
    a2: Address | None = None
    negate: bool = False
    text: str = ""
    number: int | None = None
    regex: re.Pattern[str] | None = None
    empty_regex: bool = False
    repl: list = field(default_factory=list)
    every: bool = False
    nth: int = 1
    sprint: int = 0
    wfile: str = ""
    table: dict[str, str] = field(default_factory=dict)
    jump: int = -1
    active: bool = False
    end_line: int = 0
    done_zero: bool = False


_NO_ADDRESS = {":": ": doesn't want any addresses", "}": "unexpected `}'"}


class Compiler:
    """GNU sed's compiler: one expression at a time, with GNU's messages and positions."""

    def __init__(self, *, extended: bool, busybox: bool) -> None:
        self.extended = extended
        self.busybox = busybox
        self.cmds: list[Cmd] = []
        self.blocks: list[int] = []
        self.labels: dict[str, int] = {}
        self.expr_no = 0
        self.where = ""
        self.text = ""
        self.pos = 0
        self.pending_text: Cmd | None = None
        self.quiet_comment = False

    # -------------------------------------------------------------------- reading characters
    def fail(self, message: str, busybox: str | None = None) -> SedError:
        if self.busybox:
            return SedError(busybox or message)
        return SedError(f"{self.where}, char {self.pos}: {message}")

    def getc(self) -> str:
        if self.pos >= len(self.text):
            return ""  # GNU counts no character for the end of the expression
        ch = self.text[self.pos]
        self.pos += 1
        return ch

    def ungetc(self, ch: str) -> None:
        if ch:
            self.pos -= 1

    def nonblank(self) -> str:
        ch = self.getc()
        while ch in (" ", "\t"):
            ch = self.getc()
        return ch

    def end_of_cmd(self) -> None:
        ch = self.nonblank()
        if ch in ("}", "#"):
            self.ungetc(ch)
        elif ch not in ("", "\n", ";"):
            raise self.fail("extra characters after command")

    # ------------------------------------------------------------------------- expressions
    def add(self, text: str, where: str) -> None:
        self.expr_no += 1
        self.where, self.text, self.pos = where, text, 0
        if self.pending_text is not None:
            cmd, self.pending_text = self.pending_text, None
            cmd.text = self.read_text_lines()
        while True:
            ch = self.getc()
            while ch and (ch.isspace() or ch == ";"):
                ch = self.getc()
            if not ch:
                break
            if ch == "#":
                if self.expr_no == 1 and self.pos == 1 and (self.text == "#n" or self.text.startswith("#n\n")):
                    self.quiet_comment = True
                while ch and ch != "\n":
                    ch = self.getc()
                continue
            self.ungetc(ch)
            self.one_command()

    def finish(self) -> list[Cmd]:
        if self.blocks:
            self.pos = 0
            raise self.fail("unmatched `{'", "unmatched '{'")
        for cmd in self.cmds:
            if cmd.name in "btT":
                if not cmd.text:
                    cmd.jump = len(self.cmds)
                elif cmd.text in self.labels:
                    cmd.jump = self.labels[cmd.text]
                else:
                    msg = f"can't find label for jump to `{cmd.text}'"
                    raise SedError(msg if not self.busybox else f"can't find label for jump to '{cmd.text}'",
                                   1 if self.busybox else 4)
        return self.cmds

    # ---------------------------------------------------------------------------- addresses
    def address(self, second: bool) -> Address | None:
        ch = self.getc()
        if ch == "/" or ch == "\\":
            delim = "/"
            if ch == "\\":
                delim = self.getc()
            body = self.delimited(delim, "unterminated address regex", regex=True)
            icase = multi = False
            while True:
                flag = self.getc()
                if flag == "I":
                    icase = True
                elif flag == "M":
                    multi = True
                else:
                    self.ungetc(flag)
                    break
            if body == "":
                return Address("regex", regex=None)
            return Address("regex", regex=self.compile(body, icase, multi))
        if ch.isdigit():
            number = self.read_number(ch)
            ch = self.getc()
            if ch == "~" and not second:
                nxt = self.getc()
                step = self.read_number(nxt) if nxt.isdigit() else (self.ungetc(nxt) or 0)
                return Address("step", number=number, step=step)
            self.ungetc(ch)
            return Address("zero" if number == 0 and not second else "line", number=number)
        if ch == "$":
            return Address("last")
        if second and ch in "+~":
            nxt = self.getc()
            number = self.read_number(nxt) if nxt.isdigit() else (self.ungetc(nxt) or 0)
            return Address("plus" if ch == "+" else "mult", number=number)
        self.ungetc(ch)
        return None

    def read_number(self, first: str) -> int:
        digits = first
        ch = self.getc()
        while ch.isdigit():
            digits += ch
            ch = self.getc()
        self.ungetc(ch)
        return int(digits)

    def compile(self, body: str, icase: bool = False, multi: bool = False) -> re.Pattern[str]:
        try:
            return compile_posix(body, extended=self.extended, icase=icase, multiline=multi)
        except RegexError as exc:
            raise self.fail(str(exc)) from None

    def delimited(self, delim: str, unterminated: str, *, regex: bool, rhs: bool = False) -> str:
        """Text up to the next unescaped `delim`; `\\delim` becomes delim, `\\n` a newline.
        In an `s` replacement (`rhs`) an escaped newline is a newline too, and `\\&` stays the
        match's literal ampersand even when `&` is the delimiter."""
        out: list[str] = []
        while True:
            ch = self.getc()
            if not ch:
                raise self.fail(unterminated, f"unmatched '{delim}'")
            if ch == "\\":
                nxt = self.getc()
                if not nxt:
                    raise self.fail(unterminated, f"unmatched '{delim}'")
                if nxt == delim and not (rhs and delim == "&"):
                    out.append(delim)
                elif nxt == "\n" and (regex or rhs):
                    out.append("\\n")
                else:
                    out.append("\\" + nxt)
                continue
            if ch == delim:
                return "".join(out)
            if ch == "\n" and regex:
                raise self.fail(unterminated, f"unmatched '{delim}'")
            out.append(ch)
            if ch == "[" and regex:
                out.append(self.bracket_rest())

    def bracket_rest(self) -> str:
        """The rest of a bracket expression: a delimiter inside `[...]` does not end the regex."""
        start = self.pos
        text = self.text
        i = start
        if i < len(text) and text[i] == "^":
            i += 1
        if i < len(text) and text[i] == "]":
            i += 1
        while i < len(text) and text[i] != "]":
            if text[i] == "[" and i + 1 < len(text) and text[i + 1] in ":.=":
                end = text.find(text[i + 1] + "]", i + 2)
                if end < 0:
                    break
                i = end + 2
                continue
            if text[i] == "\n":
                break
            i += 1
        if i >= len(text) or text[i] != "]":
            return ""  # unterminated: let the delimiter scan and regcomp report it
        self.pos = i + 1
        return text[start:i + 1]

    # ----------------------------------------------------------------------------- commands
    def one_command(self) -> None:
        cmd = Cmd("")
        cmd.a1 = self.address(False)
        if cmd.a1 is not None:
            ch = self.nonblank()
            if ch == ",":
                ch2 = self.nonblank()
                self.ungetc(ch2)
                cmd.a2 = self.address(True)
                if cmd.a2 is None:
                    raise self.fail("unexpected `,'", "no address after comma")
            else:
                self.ungetc(ch)
        ch = self.nonblank()
        if ch == "!":
            cmd.negate = True
            ch = self.nonblank()
            if ch == "!":
                raise self.fail("multiple `!'s")
        if not ch or ch in "\n;":
            raise self.fail("missing command")
        cmd.name = ch
        if cmd.a1 is not None and cmd.a1.kind == "zero":
            if cmd.a2 is None or cmd.a2.kind != "regex":
                raise self.fail("invalid usage of line address 0")
        if cmd.a1 is not None and ch in ":}#":
            if ch == "#":
                raise self.fail("comments don't accept any addresses")
            raise self.fail(_NO_ADDRESS[ch])
        if cmd.a2 is not None and ch in "qQ":
            raise self.fail("command only uses one address")
        handler = getattr(self, "cmd_" + _HANDLERS.get(ch, "unknown"))
        handler(cmd)

    def cmd_unknown(self, cmd: Cmd) -> None:
        raise self.fail(f"unknown command: `{cmd.name}'", f"unsupported command {cmd.name}")

    def cmd_simple(self, cmd: Cmd) -> None:
        self.cmds.append(cmd)
        self.end_of_cmd()

    def cmd_open(self, cmd: Cmd) -> None:
        self.blocks.append(len(self.cmds))
        self.cmds.append(cmd)

    def cmd_close(self, cmd: Cmd) -> None:
        if not self.blocks:
            raise self.fail("unexpected `}'", "unexpected '}'")
        opener = self.blocks.pop()
        self.cmds[opener].jump = len(self.cmds) + 1
        self.cmds.append(cmd)
        self.end_of_cmd()

    def cmd_comment(self, cmd: Cmd) -> None:
        ch = self.getc()
        while ch and ch != "\n":
            ch = self.getc()

    def cmd_label(self, cmd: Cmd) -> None:
        label = self.read_label()
        if not label:
            raise self.fail("\":\" lacks a label")
        self.labels[label] = len(self.cmds)

    def read_label(self) -> str:
        ch = self.nonblank()
        out = []
        while ch and ch not in "\n;" and not ch.isspace():
            out.append(ch)
            ch = self.getc()
        self.ungetc(ch)
        return "".join(out)

    def cmd_branch(self, cmd: Cmd) -> None:
        cmd.text = self.read_label()
        self.cmds.append(cmd)
        self.end_of_cmd()

    def cmd_number(self, cmd: Cmd) -> None:
        ch = self.nonblank()
        if ch.isdigit():
            cmd.number = self.read_number(ch)
        else:
            self.ungetc(ch)
        self.cmds.append(cmd)
        self.end_of_cmd()

    def cmd_file(self, cmd: Cmd) -> None:
        cmd.text = self.read_filename()
        if not cmd.text:
            raise self.fail("missing filename in r/R/w/W commands", "empty filename")
        self.cmds.append(cmd)

    def read_filename(self) -> str:
        ch = self.nonblank()
        out = []
        while ch and ch != "\n":
            out.append(ch)
            ch = self.getc()
        return "".join(out)

    def cmd_text(self, cmd: Cmd) -> None:
        ch = self.nonblank()
        if not ch:
            raise self.fail("expected \\ after `a', `c' or `i'")
        self.cmds.append(cmd)
        if ch == "\\":
            ch = self.getc()
            if not ch:
                self.pending_text = cmd
                return
            if ch != "\n":
                self.ungetc(ch)
        else:
            self.ungetc(ch)
        cmd.text = self.read_text_lines()

    def read_text_lines(self) -> str:
        out: list[str] = []
        while True:
            ch = self.getc()
            if not ch or ch == "\n":
                break
            if ch == "\\":
                ch = self.getc()
                if not ch:
                    break
            out.append(ch)
        return "".join(out) + "\n"

    def cmd_subst(self, cmd: Cmd) -> None:
        delim = self.getc()
        if not delim or delim in "\n\\":
            raise self.fail("unterminated `s' command", "bad format in substitution expression")
        pattern = self.delimited(delim, "unterminated `s' command", regex=True)
        replacement = self.delimited(delim, "unterminated `s' command", regex=False, rhs=True)
        icase = multi = False
        seen_number = False
        while True:
            ch = self.getc()
            if ch in ("i", "I"):
                icase = True
            elif ch in ("m", "M"):
                multi = True
            elif ch == "p":
                if cmd.sprint:
                    raise self.fail("multiple `p' options to `s' command")
                cmd.sprint = 1
            elif ch == "g":
                if cmd.every:
                    raise self.fail("multiple `g' options to `s' command")
                cmd.every = True
            elif ch.isdigit():
                if seen_number:
                    raise self.fail("multiple number options to `s' command")
                number = self.read_number(ch)
                if number == 0:
                    raise self.fail("number option to `s' command may not be zero")
                cmd.nth, seen_number = number, True
            elif ch == "w":
                cmd.wfile = self.read_filename()
                if not cmd.wfile:
                    raise self.fail("missing filename in r/R/w/W commands", "empty filename")
                break
            elif ch in ("}", "#"):
                self.ungetc(ch)
                break
            elif ch in ("", "\n", ";"):
                break
            elif self.busybox and ch.isspace():
                continue
            else:
                raise self.fail("unknown option to `s'", "bad option in substitution expression")
        cmd.repl = parse_replacement(replacement)
        if pattern == "":
            cmd.empty_regex = True
        else:
            cmd.regex = self.compile(pattern, icase, multi)
            if max_group(cmd.repl) > cmd.regex.groups:
                raise self.fail(f"invalid reference \\{max_group(cmd.repl)} on `s' command's RHS")
        self.cmds.append(cmd)

    def cmd_translate(self, cmd: Cmd) -> None:
        delim = self.getc()
        if not delim or delim in "\n\\":
            raise self.fail("unterminated `y' command", f"unmatched '{delim}'")
        src = _unescape_y(self.delimited(delim, "unterminated `y' command", regex=False))
        dst = _unescape_y(self.delimited(delim, "unterminated `y' command", regex=False))
        if len(src) != len(dst):
            raise self.fail("strings for `y' command are different lengths")
        cmd.table = dict(zip(src, dst, strict=True))
        self.cmds.append(cmd)
        self.end_of_cmd()


def _unescape_y(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


_HANDLERS = {
    "{": "open", "}": "close", "#": "comment", ":": "label",
    "b": "branch", "t": "branch", "T": "branch",
    "=": "simple", "d": "simple", "D": "simple", "g": "simple", "G": "simple", "h": "simple",
    "H": "simple", "n": "simple", "N": "simple", "p": "simple", "P": "simple", "x": "simple",
    "z": "simple", "F": "simple",
    "q": "number", "Q": "number", "l": "number", "L": "number",
    "r": "file", "R": "file", "w": "file", "W": "file",
    "a": "text", "i": "text", "c": "text",
    "s": "subst", "y": "translate",
}


# ------------------------------------------------------------------------------- execution
@dataclass
class Line:
    text: str
    newline: bool
    source: str


class Quit(Exception):
    def __init__(self, status: int, autoprint: bool) -> None:
        super().__init__(status)
        self.status = status
        self.autoprint = autoprint


class Output:
    """A stream that remembers a last line printed without its newline (GNU adds it back
    before anything else is written). `sep` is NUL under `-z`."""

    def __init__(self, sep: str = "\n") -> None:
        self.parts: list[str] = []
        self.missing = False
        self.sep = sep

    def line(self, text: str, newline: bool = True) -> None:
        if self.missing:
            self.parts.append(self.sep)
        self.parts.append(text + (self.sep if newline else ""))
        self.missing = not newline

    def raw(self, text: str) -> None:
        if not text:
            return
        if self.missing:
            self.parts.append(self.sep)
        self.parts.append(text)
        self.missing = not text.endswith("\n")

    def text(self) -> str:
        return "".join(self.parts)


STEP_BUDGET = 1_000_000  # commands one sed run may execute (`:a;s/^/x/;ta` never ends)
COPY_BUDGET = 256 << 20  # bytes of pattern space one run may rewrite before it is ended
BIG_TEXT = 1 << 16  # pattern/hold space sizes from which growth is charged to the process


class Machine:
    """Runs a compiled program over one stream of lines."""

    def __init__(self, call: Invocation, cmds: list[Cmd], quiet: bool) -> None:
        self.call = call
        self.cmds = cmds
        self.quiet = quiet
        self.hold = ""
        self.last_regex: re.Pattern[str] | None = None
        self.wfiles: dict[str, list[str]] = {}
        self.rlines: dict[str, list[str]] = {}
        self.steps = 0
        self.copied = 0

    def run(self, lines: list[Line], out: Output) -> int | None:
        """Process `lines`; an exit status when `q`/`Q` ended the whole run, else None."""
        self.lines, self.index, self.out = lines, 0, out
        self.lineno = 0
        self.appended: list[str] = []
        restart = False
        while restart or self.index < len(lines):
            if not restart:
                current = self.read()
                self.ps, self.newline = current.text, current.newline
                self.source = current.source
                self.flag = False
            try:
                restart = self.cycle()
            except Quit as stop:
                if stop.autoprint and not self.quiet:
                    self.out.line(self.ps, self.newline)
                self.flush_appended()
                return stop.status
        return None

    def read(self) -> Line:
        current = self.lines[self.index]
        self.index += 1
        self.lineno += 1
        return current

    def is_last(self) -> bool:
        return self.index >= len(self.lines)

    def flush_appended(self) -> None:
        for text in self.appended:
            self.out.raw(text)
        self.appended = []

    def cycle(self) -> bool:
        """One cycle of the script; True when `D` restarts it on what is left."""
        pc = 0
        restart = False
        while pc < len(self.cmds):
            cmd = self.cmds[pc]
            pc += 1
            self.steps += 1
            if self.steps > STEP_BUDGET:
                raise BudgetExhausted()
            if len(self.ps) + len(self.hold) > BIG_TEXT:
                self.call.ctx.meter().need(len(self.ps) + len(self.hold))
            if not self.selected(cmd):
                if cmd.name == "{":
                    pc = cmd.jump
                continue
            name = cmd.name
            if name in "{}":
                continue
            if name == "s":
                self.substitute(cmd)
            elif name == "p":
                self.out.line(self.ps, self.newline)
            elif name == "d":
                break
            elif name == "D":
                if "\n" not in self.ps:
                    break
                self.ps = self.ps.split("\n", 1)[1]
                restart = True
                break
            elif name == "n":
                if self.is_last():
                    raise Quit(0, True)
                if not self.quiet:
                    self.out.line(self.ps, self.newline)
                self.flush_appended()
                nxt = self.read()
                self.ps, self.newline = nxt.text, nxt.newline
            elif name == "N":
                if self.is_last():
                    raise Quit(0, True)
                self.flush_appended()
                nxt = self.read()
                self.ps += "\n" + nxt.text
                self.newline = nxt.newline
            elif name == "P":
                self.out.line(self.ps.split("\n", 1)[0])
            elif name == "h":
                self.hold = self.ps
            elif name == "H":
                self.hold += "\n" + self.ps
            elif name == "g":
                self.ps = self.hold
            elif name == "G":
                self.ps += "\n" + self.hold
            elif name == "x":
                self.ps, self.hold = self.hold, self.ps
            elif name == "z":
                self.ps = ""
            elif name == "=":
                self.out.line(str(self.lineno))
            elif name == "F":
                self.out.line(self.source)
            elif name == "l":
                self.out.raw(escape_l(self.ps, 70 if cmd.number is None else cmd.number))
            elif name == "a":
                self.appended.append(cmd.text)
            elif name == "i":
                self.out.raw(cmd.text)
            elif name == "c":
                if cmd.a2 is None or not cmd.active or cmd.negate:
                    self.out.raw(cmd.text)
                break
            elif name == "y":
                self.ps = "".join(cmd.table.get(ch, ch) for ch in self.ps)
            elif name in "bT" or name == "t":
                taken = name == "b" or (name == "t") == self.flag
                if name != "b":
                    self.flag = False if taken or name == "T" else self.flag
                if taken:
                    pc = cmd.jump
            elif name == "q":
                raise Quit(cmd.number or 0, True)
            elif name == "Q":
                raise Quit(cmd.number or 0, False)
            elif name == "r":
                content = self.call.read_file(cmd.text) if cmd.text != "/dev/stdin" else self.call.stdin
                if content:
                    self.appended.append(content if content.endswith("\n") else content + "\n")
            elif name == "R":
                pending = self.rlines.setdefault(
                    cmd.text, (self.call.read_file(cmd.text) or "").splitlines())
                if pending:
                    self.appended.append(pending.pop(0) + "\n")
            elif name == "w":
                self.write_file(cmd.text, self.ps)
            elif name == "W":
                self.write_file(cmd.text, self.ps.split("\n", 1)[0])
        else:
            if not self.quiet:
                self.out.line(self.ps, self.newline)
        self.flush_appended()
        return restart

    def write_file(self, path: str, text: str) -> None:
        if path == "/dev/stdout":
            self.out.line(text)
            return
        if path == "/dev/stderr":
            self.call.write(text + "\n", "stderr")
            return
        self.wfiles.setdefault(path, []).append(text + "\n")
        self.call.ctx.files[self.call.shell.abspath(path)] = "".join(self.wfiles[path])

    def substitute(self, cmd: Cmd) -> None:
        regex = cmd.regex if not cmd.empty_regex else self.last_regex
        if regex is None:
            raise SedError("no previous regular expression", 1)
        self.last_regex = regex
        text = self.ps
        self.copied += len(text)
        if self.copied > COPY_BUDGET:
            raise BudgetExhausted()
        out: list[str] = []
        last = 0
        replaced = False
        for count, match in enumerate(successive_matches(regex, text), 1):
            if count >= cmd.nth and (cmd.every or count == cmd.nth):
                out.append(text[last:match.start()])
                out.append(expand(cmd.repl, match))
                last = match.end()
                replaced = True
                if not cmd.every:
                    break
        if not replaced:
            return
        out.append(text[last:])
        self.ps = "".join(out)
        self.flag = True
        if cmd.sprint:
            self.out.line(self.ps, self.newline)
        if cmd.wfile:
            self.write_file(cmd.wfile, self.ps)

    # ---------------------------------------------------------------------------- addresses
    def matches(self, addr: Address) -> bool:
        if addr.kind == "line":
            return self.lineno == addr.number
        if addr.kind == "last":
            return self.is_last()
        if addr.kind == "step":
            if addr.step <= 0:
                return self.lineno == addr.number
            return self.lineno >= addr.number and (self.lineno - addr.number) % addr.step == 0
        if addr.kind == "regex":
            regex = addr.regex if addr.regex is not None else self.last_regex
            if regex is None:
                raise SedError("no previous regular expression", 1)
            self.last_regex = regex
            return regex.search(self.ps) is not None
        return False

    def selected(self, cmd: Cmd) -> bool:
        if cmd.a1 is None:
            return True
        return self.in_range(cmd) != cmd.negate

    def in_range(self, cmd: Cmd) -> bool:
        a1, a2 = cmd.a1, cmd.a2
        assert a1 is not None
        if a2 is None:
            return self.matches(a1)
        if cmd.active:
            if a2.kind in ("line", "plus", "mult"):
                if self.lineno > cmd.end_line:
                    cmd.active = False
                    return self.start_range(cmd)
                if self.lineno == cmd.end_line:
                    cmd.active = False
                return True
            if self.matches(a2):
                cmd.active = False
            return True
        return self.start_range(cmd)

    def start_range(self, cmd: Cmd) -> bool:
        a1, a2 = cmd.a1, cmd.a2
        assert a1 is not None and a2 is not None
        if a1.kind == "zero":
            if cmd.done_zero:
                return False
            cmd.done_zero = True
            cmd.active = True
            if self.matches(a2):
                cmd.active = False
            return True
        if not self.matches(a1):
            return False
        if a2.kind == "line":
            cmd.end_line = a2.number
            cmd.active = a2.number > self.lineno
        elif a2.kind == "plus":
            cmd.end_line = self.lineno + a2.number
            cmd.active = a2.number > 0
        elif a2.kind == "mult":
            step = a2.number
            cmd.end_line = self.lineno if step <= 0 else -(-self.lineno // step) * step
            cmd.active = cmd.end_line > self.lineno
        elif a2.kind == "last":
            cmd.active = not self.is_last()
        else:
            cmd.active = True
        return True


def escape_l(text: str, width: int) -> str:
    """The `l` command's unambiguous form: C escapes, octal for the rest, `$` at the end,
    lines folded at `width - 1` characters with a trailing backslash."""
    names = {"\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
             "\t": "\\t", "\v": "\\v"}
    pieces = []
    for ch in text:
        if ch in names:
            pieces.append(names[ch])
        elif " " <= ch <= "~":
            pieces.append(ch)
        else:
            pieces.append("".join(f"\\{byte:03o}" for byte in ch.encode("utf-8", "surrogateescape")))
    out, col = [], 0
    for piece in pieces:
        if width > 1 and col + len(piece) > width - 1:
            out.append("\\\n")
            col = 0
        out.append(piece)
        col += len(piece)
    return "".join(out) + "$\n"


# ------------------------------------------------------------------------------ the command
def split_lines(content: str, source: str, sep: str = "\n") -> list[Line]:
    if not content:
        return []
    parts = content.split(sep)
    lines = [Line(part, True, source) for part in parts[:-1]]
    if parts[-1]:
        lines.append(Line(parts[-1], False, source))
    return lines


@dataclass
class Options:
    quiet: bool = False
    extended: bool = False
    in_place: str | None = None
    separate: bool = False
    null_data: bool = False
    scripts: list[tuple[str, str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def parse_options(call: Invocation, busybox: bool) -> Options:
    opts = Options()
    args = list(call.args)
    positional: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "--":
            positional.extend(args)
            break
        if arg.startswith("--") and len(arg) > 2:
            name, eq, value = arg[2:].partition("=")
            if name in ("quiet", "silent"):
                opts.quiet = True
            elif name == "regexp-extended":
                opts.extended = True
            elif name == "separate":
                opts.separate = True
            elif name in ("posix", "unbuffered", "debug", "sandbox", "follow-symlinks"):
                pass
            elif name == "null-data":
                opts.null_data = True
            elif name == "in-place":
                opts.in_place = value if eq else ""
            elif name in ("expression", "file"):
                if not eq:
                    if not args:
                        raise SedError(f"option '--{name}' requires an argument", -1)
                    value = args.pop(0)
                opts.scripts.append((name[0], value))
            elif name == "version":
                raise SedError("version", -2)
            elif name == "help":
                raise SedError("help", -3)
            else:
                raise SedError(f"unrecognized option '{arg}'", -1)
            continue
        if arg.startswith("-") and len(arg) > 1:
            i = 1
            while i < len(arg):
                flag = arg[i]
                i += 1
                if flag == "n":
                    opts.quiet = True
                elif flag in "Er":
                    opts.extended = True
                elif flag == "s":
                    opts.separate = True
                elif flag == "u" and not busybox:
                    pass
                elif flag == "z" and not busybox:
                    opts.null_data = True
                elif flag == "i":
                    opts.in_place = arg[i:]
                    break
                elif flag in "ef":
                    value = arg[i:]
                    if not value:
                        if not args:
                            raise SedError(f"option requires an argument -- '{flag}'", -1)
                        value = args.pop(0)
                    opts.scripts.append((flag, value))
                    break
                else:
                    raise SedError(f"invalid option -- '{flag}'", -1)
            continue
        positional.append(arg)
    if not opts.scripts:
        if not positional:
            raise SedError("", -1)
        opts.scripts.append(("e", positional.pop(0)))
    opts.files = positional
    return opts


@command("sed")
def sed(call: Invocation) -> int:
    """GNU sed names itself as invoked (`/bin/sed: can't read ...`); BusyBox as its applet."""
    busybox = is_busybox(call)
    prog = "sed" if busybox else (call.argv[0] or "sed")
    try:
        opts = parse_options(call, busybox)
    except SedError as exc:
        return usage_error(call, exc, busybox, prog)
    try:
        cmds, quiet = compile_scripts(call, opts, busybox)
    except SedError as exc:
        call.error(f"{prog}: {exc.message}")
        return exc.status
    machine = Machine(call, cmds, quiet)
    status = 0
    sep = "\0" if opts.null_data else "\n"
    sources = opts.files or ["-"]
    streams: list[tuple[str, list[Line]]] = []
    for path in sources:
        content = read_source(call, path, busybox, prog)
        if content is None:
            status = 1 if busybox else 2
            continue
        streams.append((path, split_lines(content, path, sep)))
    try:
        if opts.in_place is not None:
            if not opts.files:
                call.error("sed: -i requires an argument" if busybox else f"{prog}: no input files")
                return 1 if busybox else 4
            for path, lines in streams:
                out = Output(sep)
                stop = machine.run(lines, out)
                replace_file(call, path, out.text(), opts.in_place)
                if stop is not None:
                    return stop
            return status
        out = Output(sep)
        if opts.separate:
            stop = None
            for _path, lines in streams:
                stop = machine.run(lines, out)
                if stop is not None:
                    break
        else:
            stop = machine.run([line for _path, lines in streams for line in lines], out)
        call.write(out.text())
        return stop if stop is not None else status
    except SedError as exc:
        call.error(f"{prog}: {exc.message}")
        return 4


def compile_scripts(call: Invocation, opts: Options, busybox: bool) -> tuple[list[Cmd], bool]:
    compiler = Compiler(extended=opts.extended, busybox=busybox)
    count = 0
    for kind, value in opts.scripts:
        if kind == "f":
            content = call.read_file(value) if value != "-" else call.stdin
            if content is None:
                raise SedError(f"couldn't open file {value}: No such file or directory"
                               if not busybox else f"can't open '{value}': No such file or directory")
            for number, line in enumerate(content.split("\n"), 1):
                compiler.add(line, f"file {value} line {number}")
            continue
        count += 1
        compiler.add(value, f"-e expression #{count}")
    cmds = compiler.finish()
    return cmds, opts.quiet or compiler.quiet_comment


def read_source(call: Invocation, path: str, busybox: bool, prog: str) -> str | None:
    if path == "-":
        return call.stdin
    full = call.shell.abspath(path)
    content = call.ctx.files.get(full)
    if content is not None:
        return content
    if full in call.ctx.directories():
        call.error(f"{prog}: read error on {path}: Is a directory" if not busybox
                   else "sed: read error: Is a directory")
        return None
    call.error(f"{prog}: can't read {path}: No such file or directory" if not busybox
               else f"sed: {path}: No such file or directory")
    return None


def replace_file(call: Invocation, path: str, text: str, suffix: str) -> None:
    full = call.shell.abspath(path)
    if suffix:
        directory, _, base = full.rpartition("/")
        backup = suffix.replace("*", base) if "*" in suffix else base + suffix
        backup_path = backup if backup.startswith("/") else f"{directory}/{backup}"
        call.ctx.files[backup_path] = call.ctx.files.get(full, "")
    call.ctx.files[full] = text


def usage_error(call: Invocation, exc: SedError, busybox: bool, prog: str) -> int:
    usage = GNU_USAGE.replace("Usage: sed ", f"Usage: {prog} ", 1)
    if exc.status == -2:
        call.write("This is not GNU sed version 4.0\n" if busybox else prog + GNU_VERSION[3:])
        return 0
    if exc.status == -3:
        call.write(usage + "E-mail bug reports to: <bug-sed@gnu.org>.\n")
        return 0
    if exc.message:
        call.error(f"{prog}: {exc.message}")
    if busybox:
        call.error(BUSYBOX_USAGE)
    else:
        call.write(usage, "stderr")
    return 1


GNU_VERSION = (
    "sed (GNU sed) 4.9\n"
    "Packaged by Debian\n"
    "Copyright (C) 2022 Free Software Foundation, Inc.\n"
    "License GPLv3+: GNU GPL version 3 or later <https://gnu.org/licenses/gpl.html>.\n"
    "This is free software: you are free to change and redistribute it.\n"
    "There is NO WARRANTY, to the extent permitted by law.\n"
    "\n"
    "Written by Jay Fenlason, Tom Lord, Ken Pizzini,\n"
    "Paolo Bonzini, Jim Meyering, and Assaf Gordon.\n"
    "\n"
    "This sed program was built with SELinux support.\n"
    "SELinux is disabled on this system.\n"
    "\n"
    "GNU sed home page: <https://www.gnu.org/software/sed/>.\n"
    "General help using GNU software: <https://www.gnu.org/gethelp/>.\n"
    "E-mail bug reports to: <bug-sed@gnu.org>.\n"
)
BUSYBOX_USAGE = (
    "BusyBox v1.36.1 (2023-07-27 17:12:24 UTC) multi-call binary.\n"
    "\n"
    "Usage: sed [-i[SFX]] [-nrE] [-f FILE]... [-e CMD]... [FILE]...\n"
    "or: sed [-i[SFX]] [-nrE] CMD [FILE]..."
)
GNU_USAGE = (
    'Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n'
    '\n'
    '  -n, --quiet, --silent\n'
    '                 suppress automatic printing of pattern space\n'
    '      --debug\n'
    '                 annotate program execution\n'
    '  -e script, --expression=script\n'
    '                 add the script to the commands to be executed\n'
    '  -f script-file, --file=script-file\n'
    '                 add the contents of script-file to the commands to be executed\n'
    '  --follow-symlinks\n'
    '                 follow symlinks when processing in place\n'
    '  -i[SUFFIX], --in-place[=SUFFIX]\n'
    '                 edit files in place (makes backup if SUFFIX supplied)\n'
    '  -l N, --line-length=N\n'
    "                 specify the desired line-wrap length for the `l' command\n"
    '  --posix\n'
    '                 disable all GNU extensions.\n'
    '  -E, -r, --regexp-extended\n'
    '                 use extended regular expressions in the script\n'
    '                 (for portability use POSIX -E).\n'
    '  -s, --separate\n'
    '                 consider files as separate rather than as a single,\n'
    '                 continuous long stream.\n'
    '      --sandbox\n'
    '                 operate in sandbox mode (disable e/r/w commands).\n'
    '  -u, --unbuffered\n'
    '                 load minimal amounts of data from the input files and flush\n'
    '                 the output buffers more often\n'
    '  -z, --null-data\n'
    '                 separate lines by NUL characters\n'
    '      --help     display this help and exit\n'
    '      --version  output version information and exit\n'
    '\n'
    'If no -e, --expression, -f, or --file option is given, then the first\n'
    'non-option argument is taken as the sed script to interpret.  All\n'
    'remaining arguments are names of input files; if no input files are\n'
    'specified, then the standard input is read.\n'
    '\n'
    'GNU sed home page: <https://www.gnu.org/software/sed/>.\n'
    'General help using GNU software: <https://www.gnu.org/gethelp/>.\n'
)
