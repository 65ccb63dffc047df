"""`jq` in a container: jq 1.6 (Debian/Ubuntu images: mongo) or 1.7 (Alpine images: consul).

The command line (`-r -c -e -n -s -j -S --tab --indent --arg --argjson`, files or stdin), the
input reader (concatenated JSON documents; the position jq reports for a bad one) and the exit
codes: 2 usage or unreadable file, 3 compile error, 5 runtime error (processing goes on with the
next input), 1/4 with `-e` for a last output of false/null or no output at all, and the parse
error status (2 in 1.7; Debian's 1.6 exits 4). The language is in jqlang.py.
"""

from __future__ import annotations

import json
from typing import Any

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland import jqfuncs  # noqa: F401  (registers the builtins)
from sregym.twin.userland.jqlang import (
    Evaluator,
    JqRuntimeError,
    JqSyntaxError,
    compile_program,
    dump,
    jtype,
    trunc,
)

_USAGE_HINT = ("Use jq --help for help with command-line options,\nor see the jq manpage, or online docs  at "
               "{url}")
_URLS = {"1.6": "https://stedolan.github.io/jq", "1.7": "https://jqlang.github.io/jq"}
_LONG = {"--raw-output": "r", "--compact-output": "c", "--exit-status": "e", "--null-input": "n",
         "--slurp": "s", "--join-output": "j", "--sort-keys": "S", "--monochrome-output": "M",
         "--color-output": "C", "--ascii-output": "a", "--raw-input": "R", "--unbuffered": ""}


def version_of(call: Invocation) -> str:
    """Alpine packages jq 1.7; Debian bookworm and Ubuntu ship 1.6."""
    from sregym.twin.node.image_families import ALPINE, family_of
    from sregym.twin.node.images import lookup

    image = str(call.ctx.extras.get("image", ""))
    try:
        spec, _ref = lookup(image, call.ctx.twin)
    except Exception:  # an unparsable reference: judged by its name alone
        spec = None
    return "1.7" if family_of(image, spec) == ALPINE or call.ctx.shell_flavour == "ash" else "1.6"


class _Input:
    """Concatenated JSON documents with jq's line accounting."""

    def __init__(self, text: str, name: str) -> None:
        self.text = text
        self.name = name
        self.pos = 0
        self.decoder = json.JSONDecoder(parse_int=int, parse_float=float,
                                        parse_constant=lambda c: None)
        self.line = 0

    def documents(self) -> list[tuple[Any, int] | tuple[None, str]]:
        """[(value, line)] and, at a bad document, (None, error message) last."""
        out: list[Any] = []
        text = self.text
        while True:
            while self.pos < len(text) and text[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos >= len(text):
                return out
            try:
                value, end = self.decoder.raw_decode(text, self.pos)
            except json.JSONDecodeError:
                out.append((None, self._error()))
                return out
            if end < len(text) and text[end] not in " \t\r\n,]}" and isinstance(value, int | float) \
                    and not isinstance(value, bool):
                out.append((None, self._error()))
                return out
            line = text.count("\n", 0, end) + (1 if text[end:end + 1] == "\n" else 0)
            out.append((_numbers(value), line))
            self.pos = end

    def _error(self) -> str:
        text, start = self.text, self.pos
        if text[start] in "[{\"" and not _fails_inside(text[start:]):
            return (f"Unfinished JSON term at EOF at line {text.count(chr(10)) + 1}, column "
                    f"{len(text) - (text.rfind(chr(10)) + 1)}")
        return _at("Invalid numeric literal", text, start)


def _fails_inside(doc: str) -> bool:
    """Whether a document fails before its end (bad content) rather than by running out."""
    try:
        json.loads(doc)
    except json.JSONDecodeError as exc:
        return exc.pos < len(doc.rstrip())
    return False


def _at(message: str, text: str, start: int) -> str:
    """jq reports a bad token where its delimiter ends: after the first space or newline."""
    end = start
    while end < len(text) and text[end] not in " \t\r\n":
        end += 1
    end = min(len(text), end + 1)
    line = text.count("\n", 0, end) + 1
    column = end - (text.rfind("\n", 0, end) + 1)
    return f"{message} at line {line}, column {column}"


def _numbers(value: Any) -> Any:
    """jq holds numbers as doubles: big integers lose their digits."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if abs(value) < 10 ** 17 else float(value)
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 1e17 else value
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    return value


@command("jq")
def jq(call: Invocation) -> int:
    version = version_of(call)
    args = list(call.args)
    flags: set[str] = set()
    indent = 2
    variables: dict[str, Any] = {}
    program: str | None = None
    files: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "--":
            files.extend(args)
            break
        if arg in ("--arg", "--argjson"):
            if len(args) < 2:
                call.error(f"jq: {arg} takes two parameters (e.g. {arg} varname "
                           f"{'value' if arg == '--arg' else 'text'})\n" + _USAGE_HINT.format(url=_URLS[version]))
                return 2
            name, value = args.pop(0), args.pop(0)
            if arg == "--argjson":
                try:
                    variables[name] = _numbers(json.loads(value))
                except ValueError:
                    call.error("jq: Invalid JSON text passed to --argjson\n" + _USAGE_HINT.format(url=_URLS[version]))
                    return 2
            else:
                variables[name] = value
            continue
        if arg in ("--tab", "--indent"):
            if arg == "--tab":
                indent = 1
                flags.add("tab")
            else:
                indent = int(args.pop(0)) if args and args[0].isdigit() else 2
            continue
        if arg in _LONG:
            flags.add(_LONG[arg])
            continue
        if arg.startswith("-") and len(arg) > 1 and not arg.startswith("--") \
                and all(ch in "rcensjSMCaRh" for ch in arg[1:]):
            if "h" in arg:
                call.write("Usage:\tjq [OPTIONS] FILTER [FILES...]\n")
                return 0
            flags.update(arg[1:])
            continue
        if arg.startswith("-") and len(arg) > 1:
            if arg == "--version":
                call.write(f"jq-{version}{'.1' if version == '1.7' else ''}\n")
                return 0
            call.error(f"jq: Unknown option: {arg}\n" if version == "1.7" else f"jq: Unknown option {arg}\n")
            call.error(_USAGE_HINT.format(url=_URLS[version]))
            return 2
        if program is None:
            program = arg
        else:
            files.append(arg)
    if program is None:
        program = "."
    try:
        tree = compile_program(program, set(variables))
    except JqSyntaxError as exc:
        message = exc.message.replace("$end", "end of file") if version == "1.7" else exc.message
        if message.startswith("unexpected"):
            message = f"syntax error, {message} (Unix shell quoting issues?)"
        count = getattr(exc, "count", 1)
        call.error(f"jq: error: {message} at <top-level>, line 1:\n{program}{' ' * exc.offset}\n"
                   f"jq: {count} compile error{'s' if count > 1 else ''}")
        return 3
    # Inputs.
    sources: list[tuple[str, str]] = []
    status = 0
    if files:
        for path in files:
            content = call.read_file(path)
            if content is None:
                call.error(f"jq: error: Could not open file {path}: No such file or directory")
                status = 2
                continue
            sources.append((path, content))
    else:
        sources.append(("<stdin>", call.stdin))
    evaluator = Evaluator(version=version, env=dict(call.shell.exported_env()))
    compact = "c" in flags
    pretty_indent = 0 if compact else indent
    last: Any = _NOTHING
    parse_failed = ""
    documents: list[tuple[Any, int, str]] = []
    if "R" in flags:
        for name, text in sources:
            lines = text.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            documents += [(line, i + 1, name) for i, line in enumerate(lines)]
    else:
        for name, text in sources:
            for value, where in _Input(text, name).documents():
                if value is None and isinstance(where, str):
                    parse_failed = where
                    break
                documents.append((value, where, name))
            if parse_failed:
                break
    if "s" in flags:
        documents = [([d[0] for d in documents], documents[-1][1] if documents else 0, "<stdin>")]
    if "n" in flags:
        documents = [(None, 0, "<unknown>")]
    for value, line, name in documents:
        try:
            for out in evaluator.run(tree, value, variables):
                last = out
                call.write(_render(out, flags, pretty_indent))
        except JqRuntimeError as exc:
            status = 5
            call.error(_runtime_message(exc.value, name, line))
        except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError):
            status = 5  # an input the subset mishandles: fail like a jq error, never a traceback
            call.error(_runtime_message(f"{jtype(value)} ({trunc(value)}) cannot be processed", name, line))
    if parse_failed:
        call.error(("jq: " if version == "1.7" else "") + f"parse error: {parse_failed}")
        return 2 if version == "1.7" else 4
    if status:
        return status
    if "e" in flags:
        if last is _NOTHING:
            return 4
        return 1 if last is None or last is False else 0
    return 0


_NOTHING = object()


def _runtime_message(value: Any, name: str, line: int) -> str:
    where = f"jq: error (at {name}:{line})"
    if isinstance(value, str):
        return f"{where}: {value}"
    return f"{where} (not a string): {dump(value, 0)}"


def _render(value: Any, flags: set[str], indent: int) -> str:
    if isinstance(value, str) and ("r" in flags or "j" in flags):
        text = value
    else:
        text = dump(value, indent, sort_keys="S" in flags)
        if "tab" in flags and indent:
            text = "\n".join(_tabs(line) for line in text.split("\n"))
    return text if "j" in flags else text + "\n"


def _tabs(line: str) -> str:
    stripped = line.lstrip(" ")
    return "\t" * (len(line) - len(stripped)) + stripped
