"""awk's built-in functions: string (length substr index split sub gsub match sprintf tolower
toupper), arithmetic (int sqrt exp log sin cos atan2 rand srand) and I/O (close fflush system).

`substr` follows mawk 1.3.4-20200120: start and length are truncated, and a start below 1 is
moved to 1 while the length grows by as much (`substr("hello", 0, 2)` is "he", not "h").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from sregym.twin.userland.awk.values import UNINIT, StrNum, to_num
from sregym.twin.userland.posix_regex import successive_matches

if TYPE_CHECKING:
    from sregym.twin.userland.awk.interp import Interpreter
    from sregym.twin.userland.awk.parser import Node


def call_builtin(vm: Interpreter, name: str, args: list[Node]) -> Any:
    handler = _BUILTINS.get(name)
    if handler is None:
        return UNINIT
    return handler(vm, args)


def _arg_str(vm: Interpreter, args: list[Node], index: int, default: str = "") -> str:
    return vm.str_of(vm.eval(args[index])) if index < len(args) else default


def _length(vm: Interpreter, args: list[Node]) -> float:
    if not args:
        return float(len(vm.record))
    node = args[0]
    if node[0] == "var":
        value = vm.lookup(node[1])
        if isinstance(value, dict):
            return float(len(value))
    return float(len(vm.str_of(vm.eval(node))))


def _substr(vm: Interpreter, args: list[Node]) -> str:
    text = _arg_str(vm, args, 0)
    start_f = to_num(vm.eval(args[1])) if len(args) > 1 else 1.0
    if math.isnan(start_f):
        return ""
    start = int(start_f) if abs(start_f) < 1e18 else (len(text) + 1 if start_f > 0 else -(10**18))
    if len(args) > 2:
        length_f = to_num(vm.eval(args[2]))
        if math.isnan(length_f) or length_f <= 0:
            return ""
        length = int(min(length_f, 1e18))
    else:
        length = len(text) + 1 + abs(start)
    if start < 1:
        length -= start  # mawk 20200120 grows the length where POSIX would shorten it
        start = 1
    if length <= 0:
        return ""
    return text[start - 1:start - 1 + length]


def _index(vm: Interpreter, args: list[Node]) -> float:
    return float(_arg_str(vm, args, 0).find(_arg_str(vm, args, 1)) + 1)


def _split(vm: Interpreter, args: list[Node]) -> float:
    text = _arg_str(vm, args, 0)
    target = args[1]
    array = vm.array(target[1])
    if len(args) > 2:
        sep_node = args[2]
        if sep_node[0] == "regex":
            parts = vm.regex(sep_node[1]).split(text) if text else []
        else:
            parts = vm.split_text(text, vm.str_of(vm.eval(sep_node)))
    else:
        parts = vm.split_text(text, vm.str_of(vm.globals["FS"]))
    array.clear()
    for i, part in enumerate(parts, 1):
        array[str(i)] = StrNum(part)
    return float(len(parts))


def _substitute(vm: Interpreter, args: list[Node], every: bool) -> float:
    regex = vm.regex_of(args[0])
    repl_text = _arg_str(vm, args, 1)
    target = args[2] if len(args) > 2 else ("field", ("num", 0.0))
    text = vm.str_of(vm.eval(target))
    pieces = _awk_replacement(repl_text)
    out: list[str] = []
    count = last = 0
    for match in successive_matches(regex, text):
        count += 1
        out.append(text[last:match.start()])
        out.append("".join(match.group(0) if piece is None else piece for piece in pieces))
        last = match.end()
        if not every:
            break
    if count:
        out.append(text[last:])
        vm.assign_to(target, "".join(out))
    return float(count)


def _awk_replacement(text: str) -> list[str | None]:
    """awk's replacement: `&` is the match (None here), `\\&` a literal ampersand, `\\\\` a
    backslash; other backslashes stay."""
    pieces: list[str | None] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "&\\":
            pieces.append(text[i + 1])
            i += 2
        elif ch == "&":
            pieces.append(None)
            i += 1
        else:
            pieces.append(ch)
            i += 1
    return pieces


def _match(vm: Interpreter, args: list[Node]) -> float:
    text = _arg_str(vm, args, 0)
    found = vm.regex_of(args[1]).search(text)
    if found is None:
        vm.globals["RSTART"], vm.globals["RLENGTH"] = 0.0, -1.0
    else:
        vm.globals["RSTART"] = float(found.start() + 1)
        vm.globals["RLENGTH"] = float(found.end() - found.start())
    return vm.globals["RSTART"]


def _sprintf(vm: Interpreter, args: list[Node]) -> str:
    return vm.sprintf([vm.eval(arg) for arg in args], "sprintf")


def _math(fn: Any) -> Any:
    def run(vm: Interpreter, args: list[Node]) -> float:
        value = to_num(vm.eval(args[0])) if args else 0.0
        try:
            return float(fn(value))
        except ValueError:
            return -math.nan
        except OverflowError:
            return math.inf
    return run


def _log(value: float) -> float:
    if value < 0 or math.isnan(value):
        return -math.nan
    if value == 0:
        return -math.inf
    return math.log(value)


def _int(value: float) -> float:
    if math.isnan(value) or math.isinf(value):
        return value
    return float(math.trunc(value))


def _atan2(vm: Interpreter, args: list[Node]) -> float:
    return math.atan2(to_num(vm.eval(args[0])), to_num(vm.eval(args[1])))


def _rand(vm: Interpreter, args: list[Node]) -> float:
    return vm.rng.fraction()


def _srand(vm: Interpreter, args: list[Node]) -> float:
    previous = vm.seed
    vm.seed = to_num(vm.eval(args[0])) if args else float(int(vm.call.now))
    vm.rng.seed(int(vm.seed))
    return previous


def _case(upper: bool) -> Any:
    def run(vm: Interpreter, args: list[Node]) -> str:
        text = _arg_str(vm, args, 0)
        return text.upper() if upper else text.lower()
    return run


def _close(vm: Interpreter, args: list[Node]) -> float:
    name = _arg_str(vm, args, 0)
    known = name in vm.files or name in vm.readers or name in vm.pipes
    vm.files.pop(name, None)
    vm.readers.pop(name, None)
    if name in vm.pipes:
        vm.closed_pipes.append((name, "".join(vm.pipes.pop(name))))
        vm.pipe_order.remove(name)
    return 0.0 if known else -1.0


def _fflush(vm: Interpreter, args: list[Node]) -> float:
    return 0.0


def _system(vm: Interpreter, args: list[Node]) -> float:
    vm.call.write(vm.run_command(_arg_str(vm, args, 0)))
    return float(vm.last_status)


_BUILTINS = {
    "length": _length, "substr": _substr, "index": _index, "split": _split,
    "sub": lambda vm, args: _substitute(vm, args, False),
    "gsub": lambda vm, args: _substitute(vm, args, True),
    "match": _match, "sprintf": _sprintf,
    "sin": _math(math.sin), "cos": _math(math.cos), "exp": _math(math.exp), "log": _math(_log),
    "sqrt": _math(lambda v: math.sqrt(v) if v >= 0 else -math.nan), "int": _math(_int),
    "atan2": _atan2, "rand": _rand, "srand": _srand,
    "tolower": _case(False), "toupper": _case(True),
    "close": _close, "fflush": _fflush, "system": _system,
}
