"""The interpreter: expansion, compound commands, pipelines, redirections and command calls."""

from __future__ import annotations

import ast
import re
from collections.abc import Generator, Iterator
from typing import Any

from sregym.twin.node.shell.arith import eval_arith
from sregym.twin.node.shell.builtins import BUILTINS
from sregym.twin.node.shell.commands import CommandFn, Invocation, ShellContext, lookup_command
from sregym.twin.node.shell.control import Exit, LoopControl
from sregym.twin.node.shell.describe import REGULAR_BUILTINS, SPECIAL_BUILTINS
from sregym.twin.node.shell.effects import Effect, Output, Program, Sleep
from sregym.twin.node.shell.globbing import glob_match
from sregym.twin.node.shell.lexer import tokenize
from sregym.twin.node.shell.limits import BUSY_ITERATION_SECONDS, MemoryMeter, Vars
from sregym.twin.node.shell.lookup import absolute, failure_message, locate
from sregym.twin.node.shell.parser import parse
from sregym.twin.node.shell.pathexpand import escape, expand_path, has_magic
from sregym.twin.node.shell.syntax import (
    AndOr,
    Case,
    For,
    Group,
    If,
    Loop,
    Pipeline,
    Redirect,
    Sequence,
    ShellSyntaxError,
    Simple,
    Word,
)


class Shell:
    """The state of one shell process: variables, positional parameters, last status, clock."""

    def __init__(self, ctx: ShellContext, name: str = "sh", positional: list[str] | None = None) -> None:
        self.ctx = ctx
        self.name = name
        self.meter = ctx.meter()
        self._vars = Vars(ctx.env, self.meter)
        self.exported: set[str] = set(ctx.env)
        self.positional = list(positional or [])
        self.status = 0
        self.errexit = False
        self.noglob = False  # `set -f`
        self.offset = 0.0  # simulated seconds since the process started
        self.lineno = 1
        # The input of the compound command being run (`... | while read l; do ...; done`,
        # `done <<EOF`): `read` takes its lines one by one.
        self.stream: list[str] | None = None

    @property
    def vars(self) -> dict[str, str]:
        return self._vars

    @vars.setter
    def vars(self, values: dict[str, str]) -> None:
        """Replacing the variables (a subshell's copy, `VAR=x cmd` restored) drops what the old
        ones held."""
        self._vars.release()
        self._vars = Vars(values, self.meter)

    def release(self) -> None:
        """The shell exits: what its variables held is free again."""
        self._vars.release()

    # ---------------------------------------------------------------- helpers
    def abspath(self, path: str) -> str:
        return absolute(path, self.ctx.cwd)

    def exported_env(self) -> dict[str, str]:
        return {k: self.vars[k] for k in sorted(self.exported) if k in self.vars}

    def not_found_message(self, name: str) -> str:
        flavour = self.ctx.shell_flavour or "ash"
        if flavour == "bash":
            return f"{self.message_prefix()}{name}: command not found"
        return f"{self.message_prefix()}{name}: not found"

    def message_prefix(self) -> str:
        """How the shell starts an error about a command (`sh: 1: `, `bash: line 1: `, `sh: `)."""
        flavour = self.ctx.shell_flavour or "ash"
        if flavour == "bash":
            return f"{self.name}: line {self.lineno}: "
        if flavour == "dash":
            return f"{self.name}: {self.lineno}: "
        return f"{self.name}: "

    # ------------------------------------------------------------- expansion
    def _param(self, expr: str) -> str | None:
        if expr == "?":
            return str(self.status)
        if expr == "$":  # the exec's PID in the container's namespace (set by the exec), else init's
            return str(self.ctx.extras.get("pid") or 1)
        if expr == "!":
            return ""
        if expr == "#":
            return str(len(self.positional))
        if expr == "-":
            return "e" if self.errexit else ""
        if expr in ("@", "*"):
            return " ".join(self.positional)
        if expr == "0":
            return self.name
        if expr.isdigit():
            index = int(expr)
            return self.positional[index - 1] if index <= len(self.positional) else None
        return self.vars.get(expr)

    def _expand_var(self, expr: str) -> Generator[Effect, None, str]:
        if expr.startswith("#") and len(expr) > 1:
            return str(len(self._param(expr[1:]) or ""))
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[?#$@*!-])(:?[-=+?])?(.*)", expr, re.S)
        if not m:
            raise ShellSyntaxError(f"{self.name}: syntax error: bad substitution")
        name, op, arg = m.group(1), m.group(2), m.group(3)
        value = self._param(name)
        if not op:
            if arg:
                raise ShellSyntaxError(f"{self.name}: syntax error: bad substitution")
            return value or ""
        unset = value is None or (op.startswith(":") and value == "")
        kind = op[-1]
        if kind == "-":
            return (yield from self._expand_text(arg)) if unset else (value or "")
        if kind == "=":
            if unset:
                value = yield from self._expand_text(arg)
                self.vars[name] = value
            return value or ""
        if kind == "+":
            return "" if unset else (yield from self._expand_text(arg))
        if unset:  # "?"
            message = (yield from self._expand_text(arg)) or "parameter not set"
            yield Output("stderr", f"{self.name}: {name}: {message}\n")
            raise Exit(2 if self.ctx.shell_flavour != "bash" else 1)
        return value or ""

    def _expand_text(self, text: str) -> Generator[Effect, None, str]:
        """Expand a default-value word of `${X:-word}` (no field splitting)."""
        if not text:
            return ""
        toks = tokenize(text.replace("\n", " "))
        parts = []
        for tok in toks:
            if tok.kind == "word":
                parts.append((yield from self.expand_word(tok.value, split=False))[0])
        return " ".join(parts)

    def _command_substitution(self, source: str) -> Generator[Effect, None, str]:
        sub = Shell(self.ctx, self.name, self.positional)
        sub.vars = dict(self.vars)
        sub.exported = set(self.exported)
        sub.offset = self.offset
        captured: list[str] = []
        try:
            code = yield from capture(sub.run_source(source), captured, self.meter)
            self.offset = sub.offset
            self.status = code
            return "".join(captured).rstrip("\n")
        finally:
            sub.release()
            self.meter.release(sum(map(len, captured)))

    def expand_word(self, word: Word, split: bool = True) -> Generator[Effect, None, list[str]]:
        """Expand one word into fields (parameter, command and arithmetic expansion, then field
        splitting of unquoted expansions). Pathname expansion is `expand_words`' job."""
        return [text for text, _pattern in (yield from self.expand_fields(word, split))]

    def expand_fields(self, word: Word, split: bool = True) -> Generator[Effect, None, list[tuple[str, str]]]:
        """`expand_word`'s fields, each with its glob pattern: the text with quoted characters
        escaped (`pathexpand.escape`), so only what the script left unquoted can match files."""
        fields: list[tuple[str, str]] = []
        current = ""
        pattern = ""
        have_field = False
        for kind, text, quoted in word:
            if kind == "lit":
                current += text
                pattern += escape(text) if quoted else text
                have_field = have_field or quoted or bool(text)
                continue
            if kind == "var":
                value = yield from self._expand_var(text)
            elif kind == "cmd":
                value = yield from self._command_substitution(text)
            else:
                value = str(self._arith(text))
            self.meter.need(len(current) + len(value))
            self.meter.copy(len(current) + len(value), self.offset)
            if quoted or not split:
                current += value
                pattern += escape(value) if quoted else value.replace("\\", "\\\\")
                have_field = True
                continue
            self.meter.need_split(value)
            pieces = value.split()
            if not pieces:
                if value and current:
                    fields.append((current, pattern))
                    current, pattern, have_field = "", "", False
                continue
            if value[:1].isspace() and (current or have_field):
                fields.append((current, pattern))
                current, pattern = "", ""
            current += pieces[0]
            pattern += pieces[0].replace("\\", "\\\\")
            for piece in pieces[1:]:
                fields.append((current, pattern))
                current, pattern = piece, piece.replace("\\", "\\\\")
            have_field = True
            if value[-1:].isspace():
                fields.append((current, pattern))
                current, pattern, have_field = "", "", False
        if current or have_field:
            fields.append((current, pattern))
        return fields

    def expand_words(self, words: list[Word]) -> Generator[Effect, None, list[str]]:
        out: list[str] = []
        for word in words:
            if len(word) == 1 and word[0] == ("var", "@", True):
                out.extend(self.positional)
                continue
            for text, pattern in (yield from self.expand_fields(word)):
                matches = self.glob(pattern) if has_magic(pattern) else []
                if matches:
                    self.meter.need(sum(map(len, matches)))
                out.extend(matches or [text])
        return out

    def glob(self, pattern: str) -> list[str]:
        """The files `pattern` names in the container's tree, sorted (empty when none match or
        `set -f` is on)."""
        if self.noglob:
            return []
        return expand_path(pattern, self.ctx.cwd, self.ctx.list_dir, self.ctx.path_kind,
                           dot_entries=self.ctx.shell_flavour != "bash")

    def _arith(self, expr: str) -> int:
        def substitute(m: re.Match[str]) -> str:
            value = self.vars.get(m.group(0), "0") or "0"
            return value if re.fullmatch(r"-?\d+", value.strip()) else "0"

        text = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: self.vars.get(m.group(1), "0"), expr)
        text = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", substitute, text)
        self.meter.need_parse(text)
        try:
            return eval_arith(ast.parse(text.strip() or "0", mode="eval").body)
        except (SyntaxError, ValueError, ZeroDivisionError, RecursionError) as exc:
            raise ShellSyntaxError(f"{self.name}: arithmetic syntax error") from exc

    # ------------------------------------------------------------- execution
    def run_source(self, source: str) -> Program:
        """Parse and run a script; syntax errors print like sh does and exit 2."""
        self.meter.need_parse(source)
        try:
            tree = parse(source)
        except ShellSyntaxError as exc:
            yield Output("stderr", f"{self.name}: {exc}\n")
            return 2
        try:
            yield from self.run_sequence(tree)
        except Exit as stop:
            return stop.code
        except LoopControl:
            pass
        except ShellSyntaxError as exc:
            yield Output("stderr", f"{exc}\n")
            return 2
        return self.status

    def run_sequence(self, seq: Sequence) -> Generator[Effect, None, int]:
        for item in seq.items:
            if item.line:
                self.lineno = item.line
            self.status = yield from self.run_and_or(item)
        return self.status

    def run_and_or(self, node: AndOr) -> Generator[Effect, None, int]:
        status = yield from self.run_pipeline(node.first, checked=not node.rest)
        for index, (op, pipe) in enumerate(node.rest):
            if (op == "&&") == (status == 0):
                last = index == len(node.rest) - 1
                status = yield from self.run_pipeline(pipe, checked=last)
        self.status = status
        return status

    def run_pipeline(self, pipe: Pipeline, checked: bool = True) -> Generator[Effect, None, int]:
        stdin = ""
        status = 0
        held = 0  # the pipe's content, held until the next command has read it
        try:
            for index, cmd in enumerate(pipe.commands):
                last = index == len(pipe.commands) - 1
                if last:
                    status = yield from self.run_command(cmd, stdin)
                else:
                    captured: list[str] = []
                    try:
                        status = yield from capture(self.run_command(cmd, stdin), captured, self.meter)
                    finally:
                        self.meter.release(held)
                        held = sum(map(len, captured))
                    stdin = "".join(captured)
        finally:
            self.meter.release(held)
        if pipe.negate:
            status = 0 if status else 1
        self.status = status
        if checked and self.errexit and status != 0 and not pipe.negate:
            raise Exit(status)
        return status

    def _input(self, redirects: list[Redirect], stdin: str) -> Generator[Effect, None, str | None]:
        """What `<`, a here-document (`<<`, `<<-`) or a here-string (`<<<`, bash only) feeds the
        command; None after the shell reported an error."""
        for red in redirects:
            if red.op == "<":
                fields = yield from self.expand_word(red.target)  # type: ignore[arg-type]
                path = self.abspath(fields[0] if fields else "")
                if path not in self.ctx.files and path != "/dev/null":
                    yield Output("stderr", f"{self.name}: can't open {fields[0] if fields else ''}: "
                                           "no such file\n")
                    return None
                stdin = self.ctx.files.get(path, "")
            elif red.op == "<<":
                stdin = "".join((yield from self.expand_word(red.target, split=False)))  # type: ignore[arg-type]
            elif red.op == "<<<":
                if self.ctx.shell_flavour != "bash":
                    yield Output("stderr", f"{self.name}: {self.lineno}: Syntax error: redirection unexpected\n"
                                 if self.ctx.shell_flavour == "dash"
                                 else f"{self.name}: syntax error: unexpected redirection\n")
                    return None
                stdin = " ".join((yield from self.expand_word(red.target, split=False))) + "\n"  # type: ignore[arg-type]
        return stdin

    def run_command(self, node: Any, stdin: str = "") -> Generator[Effect, None, int]:
        if isinstance(node, Simple):
            return (yield from self.run_simple(node, stdin))
        redirected = yield from self._input(node.redirects, stdin)
        if redirected is None:
            return 2 if any(red.op == "<<<" for red in node.redirects) else 1
        stdin = redirected
        saved, self.stream = self.stream, ([stdin] if stdin else self.stream)
        try:
            return (yield from self._redirected(self._run_compound(node, stdin), node.redirects))
        finally:
            self.stream = saved

    def _run_compound(self, node: Any, stdin: str) -> Program:
        if isinstance(node, Group):
            if not node.subshell:
                return (yield from self.run_sequence(node.body))
            sub = Shell(self.ctx, self.name, self.positional)
            sub.vars, sub.exported, sub.offset = dict(self.vars), set(self.exported), self.offset
            try:
                status = yield from sub.run_sequence(node.body)
            except Exit as stop:
                status = stop.code
            finally:
                sub.release()
            self.offset = sub.offset
            return status
        if isinstance(node, If):
            for cond, body in node.branches:
                if (yield from self._condition(cond)) == 0:
                    return (yield from self.run_sequence(body))
            if node.otherwise is not None:
                return (yield from self.run_sequence(node.otherwise))
            return 0
        if isinstance(node, Loop):
            return (yield from self._run_loop(node))
        if isinstance(node, For):
            items = (yield from self.expand_words(node.items)) if node.items is not None else \
                list(self.positional)
            status = 0
            for item in items:
                self.vars[node.var] = item
                try:
                    status = yield from self.run_sequence(node.body)
                except LoopControl as ctl:
                    if ctl.levels > 1:
                        raise LoopControl(ctl.kind, ctl.levels - 1) from None
                    if ctl.kind == "break":
                        break
            return status
        if isinstance(node, Case):
            subject = " ".join((yield from self.expand_word(node.subject, split=False)))
            for patterns, body in node.arms:
                for pattern in patterns:
                    fields = yield from self.expand_fields(pattern, split=False)
                    if glob_match(" ".join(p for _text, p in fields), subject):  # quoted parts literal
                        return (yield from self.run_sequence(body))
            return 0
        raise ShellSyntaxError(f"unsupported construct {type(node).__name__}")

    def _condition(self, cond: Sequence) -> Generator[Effect, None, int]:
        saved = self.errexit
        self.errexit = False
        try:
            return (yield from self.run_sequence(cond))
        finally:
            self.errexit = saved

    def _run_loop(self, node: Loop) -> Program:
        status = 0
        while True:
            started = self.offset
            cond = yield from self._condition(node.cond)
            if (cond == 0) == node.until:
                break
            try:
                status = yield from self.run_sequence(node.body)
            except LoopControl as ctl:
                if ctl.levels > 1:
                    raise LoopControl(ctl.kind, ctl.levels - 1) from None
                if ctl.kind == "break":
                    break
            if self.offset == started:
                # A loop that never sleeps still burns time: keep the simulation moving.
                self.offset += BUSY_ITERATION_SECONDS
                yield Sleep(BUSY_ITERATION_SECONDS)
        return status

    def _redirected(self, body: Generator[Effect, None, int], redirects: list[Redirect],
                    stdin_holder: list[str] | None = None, writer: str = "") -> Program:
        if not redirects:
            return (yield from body)
        # Map each output stream to a destination: "stdout", "stderr", None (discard) or a path.
        routes: dict[str, str | None] = {"stdout": "stdout", "stderr": "stderr"}
        appends: dict[str, bool] = {}
        for red in redirects:
            if red.op in ("<", "<<", "<<<"):
                continue
            if red.op == ">&":
                src = "stderr" if red.fd == 2 else "stdout"
                target = {1: "stdout", 2: "stderr"}.get(red.target) if isinstance(red.target, int) else None
                routes[src] = routes.get(target or "stdout", target)
                continue
            fields = yield from self.expand_word(red.target)  # type: ignore[arg-type]
            path = fields[0] if fields else ""
            dest: str | None
            if path == "/dev/null":
                dest = None
            elif path in ("/dev/stdout", "/proc/self/fd/1"):
                dest = "stdout"
            elif path in ("/dev/stderr", "/proc/self/fd/2"):
                dest = "stderr"
            elif path in ("/proc/1/fd/1", "/proc/1/fd/2"):
                # PID 1's stdout/stderr: what the container runtime logs (`kubectl logs`).
                dest = "pid1:" + ("stdout" if path.endswith("/1") else "stderr")
            else:
                dest = "file:" + self.abspath(path)
                check = self.ctx.extras.get("open_write")  # an exec's tree (userland/openwrite.py)
                problem = check(dest[5:]) if check is not None and dest not in appends else None
                if problem:
                    yield Output("stderr", self._cannot_create(path, problem))
                    body.close()
                    return 1 if self.ctx.shell_flavour == "bash" else 2
                if red.op == ">" or dest not in appends:
                    if red.op == ">":
                        self.meter.disk_used = max(
                            0, self.meter.disk_used - len(self.ctx.files.get(dest[5:], "")))
                        self.ctx.files[dest[5:]] = ""
                    appends[dest] = True
            for stream in (("stdout", "stderr") if red.fd == -1 else
                           ("stderr",) if red.fd == 2 else ("stdout",)):
                routes[stream] = dest
        result = 0
        gen = body
        full = False
        try:
            effect = next(gen)
            while True:
                if isinstance(effect, Output):
                    dest = routes.get(effect.stream, effect.stream)
                    if dest is not None and dest.startswith("file:"):
                        if not self._append_file(dest[5:], effect.text) and not full:
                            full = True
                            yield Output("stderr", self._enospc(writer))
                    elif dest is not None and dest.startswith("pid1:"):
                        _append_to_main_log(self.ctx, dest[5:], effect.text)
                    elif dest is not None:
                        yield Output(dest, effect.text)
                else:
                    yield effect
                effect = next(gen)
        except StopIteration as stop:
            result = stop.value if stop.value is not None else 0
        return result or (1 if full else 0)

    def _cannot_create(self, path: str, errno: str) -> str:
        """A failed redirection as each shell words it (dash and ash name ENOENT their own way)."""
        text = {"ENOTDIR": "Not a directory", "EISDIR": "Is a directory", "EROFS": "Read-only file system",
                "ELOOP": "Too many levels of symbolic links"}.get(errno, "No such file or directory")
        flavour = self.ctx.shell_flavour
        if flavour == "bash":
            return f"{self.name}: {path}: {text}\n"
        if flavour == "dash":
            return f"{self.name}: {self.lineno}: cannot create {path}: " \
                   f"{'Directory nonexistent' if errno in ('ENOENT', 'ENOTDIR') else text}\n"
        return f"{self.name}: can't create {path}: {'nonexistent directory' if errno in ('ENOENT', 'ENOTDIR') else text}\n"

    def _enospc(self, writer: str) -> str:
        """What the writer says when its output file's filesystem is full: dash's builtins
        report EIO from their output buffer, bash's and external programs ENOSPC."""
        flavour = self.ctx.shell_flavour
        if writer in ("echo", "printf") and flavour == "dash":
            return f"{self.name}: {self.lineno}: {writer}: {writer}: I/O error\n"
        if writer in ("echo", "printf") and flavour == "bash":
            return f"{self.name}: {writer}: write error: No space left on device\n"
        if writer and writer not in ("echo", "printf"):
            return f"{writer}: write error: No space left on device\n"
        return f"{self.name}: write error: No space left on device\n"

    def write_file(self, path: str, text: str, *, append: bool = False) -> bool:
        """Write `text` to the file at absolute `path` as a program's open+write does (`tee`):
        truncated first unless `append`; False when the filesystem is full (ENOSPC)."""
        if not append:
            self.meter.disk_used = max(0, self.meter.disk_used - len(self.ctx.files.get(path, "")))
            self.ctx.files[path] = ""
        return self._append_file(path, text) if text else True

    def _append_file(self, path: str, text: str) -> bool:
        """Append to a file in the writable layer; False (ENOSPC, nothing written) once the layer
        is at `WRITABLE_LAYER_CAP`, so `cat f >> f` in a loop cannot grow without bound."""
        meter = self.meter
        # A /dev/shm or memory-backed emptyDir file: its tmpfs's size, not the writable layer.
        room = self.ctx.extras.get("tmpfs_room")
        in_tmpfs = room is not None and room(self.ctx, path, None)
        if in_tmpfs and not room(self.ctx, path, len(text.encode("utf-8", "surrogateescape"))):
            return False
        if not in_tmpfs and meter.disk_used + len(text) > meter.disk_limit:
            return False
        claim = self.ctx.extras.get("claim_space")  # the node disk behind the path (userland.diskwrite)
        if claim is not None and text and not claim(path, len(text)):
            return False
        old = self.ctx.files.get(path, "")
        meter.copy(len(old) + len(text), self.offset)
        meter.disk_used += 0 if in_tmpfs else len(text)
        self.ctx.files[path] = old + text
        return True

    def run_simple(self, node: Simple, stdin: str) -> Program:
        argv = yield from self.expand_words(node.words)
        assigns: dict[str, str] = {}
        for name, word in node.assigns:
            assigns[name] = " ".join((yield from self.expand_word(word, split=False)))
        redirected = yield from self._input(node.redirects, stdin)
        if redirected is None:
            return 1 if not any(red.op == "<<<" for red in node.redirects) else 2
        stdin = redirected
        if not argv:
            self.vars.update(assigns)
            return 0
        return (yield from self._redirected(self._invoke(argv, assigns, stdin), node.redirects,
                                            writer=argv[0].rsplit("/", 1)[-1]))

    def _invoke(self, argv: list[str], assigns: dict[str, str], stdin: str) -> Program:
        name = argv[0]
        builtin = BUILTINS.get(name)
        if builtin is not None:
            self.vars.update(assigns)
            return (yield from builtin(self, argv, stdin))
        # The shells' own builtins (`echo`, `test`, `kill` ...) run without a file on PATH.
        fn = lookup_command(name, self.ctx, self.vars.get("PATH"),
                            anywhere=name in REGULAR_BUILTINS or name in SPECIAL_BUILTINS)
        if fn is None:
            return (yield from self._not_runnable(argv, assigns, stdin))
        refused = fork_refused(self, name)  # the node has no task left for the child
        if refused is not None:
            yield Output("stderr", refused[0])
            return refused[1]
        saved_vars, saved_exported = None, None
        if assigns:
            saved_vars, saved_exported = dict(self.vars), set(self.exported)
            self.vars.update(assigns)
            self.exported.update(assigns)
        call = Invocation(list(argv), self.ctx, self, stdin)
        try:
            status = yield from drive(fn, call, self)
        finally:
            if saved_vars is not None:
                self.vars, self.exported = saved_vars, saved_exported  # type: ignore[assignment]
        return status


    def _not_runnable(self, argv: list[str], assigns: dict[str, str], stdin: str) -> Program:
        """No implementation for `argv[0]`: a script file runs with its `#!` interpreter (sh
        for none, as dash and bash fall back to on ENOEXEC); otherwise the shell's error."""
        name = argv[0]
        status, path = locate(self.ctx, name, self.vars.get("PATH")) if self.ctx.has_tree else ("missing", name)
        script = self.ctx.files.get(absolute(path, self.ctx.cwd)) if status == "ok" else None
        if script:
            first = script.split("\n", 1)[0]
            interpreter = first[2:].split()[0] if first.startswith("#!") and first[2:].split() else "sh"
            if lookup_command(interpreter, self.ctx, self.vars.get("PATH")) is not None:
                shown = name if "/" in name else path  # the kernel passes the path as found
                return (yield from self._invoke([interpreter, shown, *argv[1:]], assigns, stdin))
            status = "missing"
        if "/" not in name or status == "ok":
            yield Output("stderr", self.not_found_message(name) + "\n")
            return 127
        text, code = failure_message(self.message_prefix(), self.ctx.shell_flavour or "ash", name, status)
        yield Output("stderr", text)
        return code


def fork_refused(shell: Shell, name: str) -> tuple[str, int] | None:
    """(stderr, status) when the shell of a `kubectl exec` cannot fork the child that runs
    `name` because the node has no task left (`kernel.threads-max` / `kernel.pid_max`
    reached); None otherwise, and for what real shells run without forking."""
    ctx = shell.ctx
    if not ctx.extras.get("exec") or ctx.twin is None:
        return None
    from sregym.twin.chaos.node_tasks import SHELL_BUILTINS, exhausted, fork_failure

    if name in SHELL_BUILTINS:
        return None

    node = str(ctx.extras.get("node_host") or ctx.node or "")
    if not exhausted(ctx.twin, node):
        return None
    return fork_failure(shell.name, ctx.shell_flavour or "ash")


def drive(fn: CommandFn, call: Invocation, shell: Shell) -> Program:
    """Run a command function, flushing its buffered writes and tracking slept time."""
    result = fn(call)
    if isinstance(result, Iterator):
        gen = result
        try:
            effect = next(gen)
            while True:
                for pending in call.pending:
                    yield pending
                call.pending.clear()
                call.pending_bytes = 0
                if isinstance(effect, Sleep):
                    shell.offset += effect.seconds
                yield effect
                effect = next(gen)
        except StopIteration as stop:
            result = stop.value
    for pending in call.pending:
        yield pending
    call.pending.clear()
    call.pending_bytes = 0
    return int(result or 0)


def capture(gen: Generator[Effect, None, int], captured: list[str], meter: MemoryMeter) -> Program:
    """Run `gen`, collecting its stdout into `captured` (pipes, `$(...)`).

    The twin's pipes hold the whole stream (the reader runs after the writer), so what is captured
    is charged to `meter`; the caller releases `sum(map(len, captured))` when it is done with it."""
    try:
        effect = next(gen)
        while True:
            if isinstance(effect, Output) and effect.stream == "stdout":
                meter.charge(len(effect.text))
                captured.append(effect.text)
            else:
                yield effect
            effect = next(gen)
    except StopIteration as stop:
        return stop.value if stop.value is not None else 0




def _append_to_main_log(ctx: ShellContext, stream: str, text: str) -> None:
    """Write to the container's main-process log, as `echo ... > /proc/1/fd/1` does in a real
    container: the line shows up in `kubectl logs` with the current simulated time."""
    twin, pod = ctx.twin, ctx.pod
    if twin is None or pod is None:
        return
    runtime, logs = twin.services.runtime, twin.services.logs
    meta = pod.get("metadata") or {}
    instance = runtime.instance(meta.get("namespace", ""), meta.get("name", ""), ctx.container) \
        if runtime is not None else None
    if instance is None or logs is None:
        return
    for line in text.splitlines():
        logs.append(instance.container_id, twin.clock.now, stream, line)
