"""Running a parsed awk program over the container's files.

The interpreter walks the tuple tree from `parser.py`. Records come from the operands (files in
`call.ctx.files`, `-` for stdin, `var=value` assignments taking effect when reached) split by
RS; fields by FS (a single space: runs of blanks, trimmed; one other character: that character;
longer: an ERE). Assigning a field rebuilds $0 with OFS; assigning NF truncates or extends.
`for (k in a)` visits keys in insertion order (mawk visits its hash order, which scripts cannot
rely on). Output redirections write the container's files; `| "cmd"` pipes are run by the
command module through the container's shell after the program ends.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from sregym.twin.node.shell.limits import BudgetExhausted
from sregym.twin.userland.awk.parser import Node, Program
from sregym.twin.userland.awk.values import (
    UNINIT,
    FormatError,
    StrNum,
    c_format,
    is_numeric,
    to_num,
    to_str,
    truth,
)
from sregym.twin.userland.posix_regex import RegexError, compile_posix

if TYPE_CHECKING:
    from sregym.twin.node.shell import Invocation

STEP_BUDGET = 1_000_000  # statements and loop turns one awk run may take (a busy loop ends)
BIG_TEXT = 1 << 16  # strings from which building one is charged to the process's memory
COPY_BUDGET = 256 << 20  # bytes of string one run may build by concatenation before it is ended
ELEMENT_COST = 112  # what one array element takes beyond its key and value (two str headers)


class AwkRuntimeError(Exception):
    def __init__(self, text: str, status: int = 2) -> None:
        super().__init__(text)
        self.text = text
        self.status = status


class Next(Exception):
    pass


class NextFile(Exception):
    pass


class Exit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class Return(Exception):
    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value


class Break(Exception):
    pass


class Continue(Exception):
    pass


class Random:
    """glibc's `random()` (TYPE_3 additive feedback), which mawk's rand() draws from."""

    def __init__(self, seed: int) -> None:
        self.seed(seed)

    def seed(self, seed: int) -> None:
        seed &= 0xFFFFFFFF
        r = [0] * 34
        r[0] = seed if seed else 1
        for i in range(1, 31):
            hi, lo = divmod(r[i - 1], 127773)
            word = 16807 * lo - 2836 * hi
            if word < 0:
                word += 2147483647
            r[i] = word
        for i in range(31, 34):
            r[i] = r[i - 31]
        self.state = r
        for _ in range(310):
            self.next()

    def next(self) -> int:
        r = self.state
        value = (r[-31] + r[-3]) & 0xFFFFFFFF
        r.append(value)
        if len(r) > 64:
            del r[:-34]
        return value >> 1

    def fraction(self) -> float:
        return self.next() / 2147483648.0


class Interpreter:
    def __init__(self, call: Invocation, program: Program, *, flavour: str, seed: int,
                 progname: str = "awk") -> None:
        self.call = call
        self.progname = progname
        self.prog = program
        self.flavour = flavour  # mawk, gawk or busybox
        self.gawk = flavour == "gawk"
        # gawk and BusyBox print any integral value as an integer; mawk only within a C int.
        self.wide = flavour in ("gawk", "busybox")
        self.globals: dict[str, Any] = {
            "FS": " ", "OFS": " ", "ORS": "\n", "RS": "\n", "NR": 0.0, "FNR": 0.0,
            "FILENAME": "", "SUBSEP": "\x1c", "CONVFMT": "%.6g", "OFMT": "%.6g",
            "RSTART": 0.0, "RLENGTH": -1.0, "ENVIRON": {k: StrNum(v) for k, v in call.ctx.env.items()},
        }
        self.frames: list[dict[str, Any]] = []
        self.record = ""
        self.fields: list[str] | None = []
        self.nf = 0
        self.steps = 0
        self.out: list[str] = []
        self.files: dict[str, str] = {}  # redirection target -> mode used
        self.pipes: dict[str, list[str]] = {}
        self.pipe_order: list[str] = []
        self.closed_pipes: list[tuple[str, str]] = []  # (command, what was written), in close order
        self.readers: dict[str, tuple[list[str], int]] = {}
        self.regex_cache: dict[str, re.Pattern[str]] = {}
        self.ranges: dict[int, bool] = {}
        self.rng = Random(seed)
        self.seed = float(seed)
        self.prev_seed = float(seed)
        self.exit_status = 0
        self.operands: list[str] = []
        self.main_records: list[str] = []
        self.main_index = 0
        self.operand_index = 0
        self.stdout_used = False

    # ------------------------------------------------------------------------------ running
    def tick(self) -> None:
        self.steps += 1
        if self.steps > STEP_BUDGET:
            raise BudgetExhausted()

    def run(self, operands: list[str]) -> int:
        self.operands = operands
        self.globals["ARGV"] = {StrNum("0"): "awk", **{StrNum(str(i + 1)): StrNum(arg)
                                                         for i, arg in enumerate(operands)}}
        self.globals["ARGC"] = float(len(operands) + 1)
        try:
            try:
                for block in self.prog.begin:
                    self.execute(block)
                if self.prog.rules or self.prog.end:
                    self.main_loop()
            except Exit as stop:
                self.exit_status = stop.status
            try:
                for block in self.prog.end:
                    self.execute(block)
            except Exit as stop:
                self.exit_status = stop.status
        except (Next, NextFile):
            pass
        return self.exit_status

    def main_loop(self) -> None:
        while self.next_main_record():
            try:
                for index, (pattern, action) in enumerate(self.prog.rules):
                    if self.matches(index, pattern):
                        if action is None:
                            self.emit(self.record + self.ors())
                        else:
                            self.execute(action)
            except Next:
                continue
            except NextFile:
                self.main_records, self.main_index = [], 0

    def matches(self, index: int, pattern: Node | None) -> bool:
        if pattern is None:
            return True
        if pattern[0] == "expr":
            return truth(self.eval(pattern[1]))
        if self.ranges.get(index):
            if truth(self.eval(pattern[2])):
                self.ranges[index] = False
            return True
        if truth(self.eval(pattern[1])):
            self.ranges[index] = not truth(self.eval(pattern[2]))
            return True
        return False

    # ------------------------------------------------------------------------------- input
    def next_main_record(self) -> bool:
        while self.main_index >= len(self.main_records):
            if not self.open_next_operand():
                return False
        self.set_record(self.main_records[self.main_index])
        self.main_index += 1
        self.globals["NR"] = to_num(self.globals["NR"]) + 1
        self.globals["FNR"] = to_num(self.globals["FNR"]) + 1
        return True

    def open_next_operand(self) -> bool:
        argc = int(to_num(self.globals.get("ARGC", 0.0)))
        argv = self.globals["ARGV"]
        while self.operand_index < argc - 1:
            self.operand_index += 1
            arg = to_str(argv.get(str(self.operand_index), UNINIT)) if isinstance(argv, dict) else ""
            if not arg:
                continue
            if re.match(r"[A-Za-z_][A-Za-z0-9_]*=", arg):
                name, _, value = arg.partition("=")
                from sregym.twin.userland.awk.lexer import unescape

                self.globals[name] = StrNum(unescape(value))
                continue
            return self.load(arg)
        if self.operand_index == argc - 1 and not self.stdout_used and not self.had_file:
            self.stdout_used = True
            return self.load("-")
        return False

    had_file = False

    def load(self, path: str) -> bool:
        self.had_file = True
        if path in ("-", "/dev/stdin"):
            content = self.call.stdin
        else:
            content = self.call.ctx.files.get(self.call.shell.abspath(path))
            if content is None:
                raise AwkRuntimeError(self.cannot_open(path), 1 if self.flavour == "busybox" else 2)
        self.globals["FILENAME"] = "" if path == "-" and self.gawk else path
        self.globals["FNR"] = 0.0
        self.main_records = self.split_records(content)
        self.main_index = 0
        return True

    def cannot_open(self, path: str) -> str:
        if self.flavour == "busybox":
            return f"awk: can't open '{path}': No such file or directory"
        if self.gawk:
            return f"{self.progname}: fatal: cannot open file `{path}' for reading: No such file or directory"
        return f"{self.progname}: cannot open {path} (No such file or directory)"

    def split_records(self, content: str) -> list[str]:
        rs = to_str(self.globals["RS"])
        if rs == "\n":
            records = content.split("\n")
            if records and records[-1] == "":
                records.pop()
            return records
        if rs == "":
            return [r for r in re.split(r"\n\n+", content.strip("\n")) if r] if content.strip("\n") else []
        if len(rs) == 1:
            records = content.split(rs)
        else:
            records = self.regex(rs).split(content)
        if records and records[-1] == "":
            records.pop()
        return records

    # ------------------------------------------------------------------------------ fields
    def set_record(self, text: str) -> None:
        self.record = text
        self.fields = None

    def split(self) -> list[str]:
        if self.fields is None:
            self.fields = self.split_text(self.record, to_str(self.globals["FS"]))
            self.nf = len(self.fields)
        return self.fields

    def split_text(self, text: str, fs: str) -> list[str]:
        paragraph = to_str(self.globals["RS"]) == ""
        if fs == " ":
            return re.split(r"[ \t\n]+", text.strip(" \t\n")) if text.strip(" \t\n") else []
        if text == "":
            return []
        if paragraph:
            parts: list[str] = []
            for line in text.split("\n"):
                parts.extend(self.split_text(line, fs))
            return parts
        if len(fs) == 1 and fs != "\\":
            return text.split(fs)
        return self.regex(fs).split(text)

    def get_field(self, index: int) -> object:
        if index == 0:
            return StrNum(self.record)
        if index < 0:
            raise self.runtime_error(f"negative field index ${index}")
        fields = self.split()
        if index > len(fields):
            return UNINIT
        return StrNum(fields[index - 1])

    def set_field(self, index: int, value: str) -> None:
        if index == 0:
            self.set_record(value)
            return
        fields = self.split()
        while len(fields) < index:
            fields.append("")
        fields[index - 1] = value
        self.nf = len(fields)
        self.rebuild()

    def rebuild(self) -> None:
        fields = self.split()
        self.record = to_str(self.globals["OFS"]).join(fields)

    def set_nf(self, count: int) -> None:
        fields = self.split()
        if count < len(fields):
            del fields[count:]
        while len(fields) < count:
            fields.append("")
        self.nf = count
        self.rebuild()

    # ----------------------------------------------------------------------------- helpers
    def runtime_error(self, message: str) -> AwkRuntimeError:
        """mawk's run-time error: the message, then where the input was."""
        g = self.globals
        return AwkRuntimeError(f"{self.name()}: run time error: {message}\n\tFILENAME=\"{to_str(g['FILENAME'])}\" "
                               f"FNR={self.str_of(g['FNR'])} NR={self.str_of(g['NR'])}")

    def name(self) -> str:
        return self.progname

    def ors(self) -> str:
        return to_str(self.globals["ORS"])

    def str_of(self, value: object) -> str:
        return to_str(value, to_str(self.globals["CONVFMT"]), gawk=self.wide)

    def out_str(self, value: object) -> str:
        return to_str(value, to_str(self.globals["OFMT"]), gawk=self.wide)

    def regex(self, source: str) -> re.Pattern[str]:
        cached = self.regex_cache.get(source)
        if cached is None:
            try:
                cached = compile_posix(source, extended=True, dialect="awk")
            except RegexError as exc:
                raise AwkRuntimeError(f"{self.name()}: run time error: regular expression compile "
                                      f"failed ({exc})\n{source}") from None
            self.regex_cache[source] = cached
        return cached

    def regex_of(self, node: Node) -> re.Pattern[str]:
        if node[0] == "regex":
            return self.regex(node[1])
        return self.regex(self.str_of(self.eval(node)))

    def emit(self, text: str, redirect: Node | None = None) -> None:
        if redirect is None:
            self.call.write(text)
            return
        op, target_node = redirect
        target = self.str_of(self.eval(target_node))
        if op == "|":
            if target not in self.pipes:
                self.pipes[target] = []
                self.pipe_order.append(target)
            self.pipes[target].append(text)
            return
        if target in ("/dev/stdout", "-"):
            self.call.write(text)
            return
        if target == "/dev/stderr":
            self.call.write(text, "stderr")
            return
        path = self.call.shell.abspath(target)
        files = self.call.ctx.files
        if target not in self.files:
            self.files[target] = op
            if op == ">" or path not in files:
                files[path] = ""
        self.call.ctx.meter().need(len(files[path]) + len(text))
        files[path] = files[path] + text

    # -------------------------------------------------------------------------- variables
    def lookup(self, name: str) -> Any:
        if self.frames and name in self.frames[-1]:
            return self.frames[-1][name]
        if name == "NF":
            self.split()
            return float(self.nf)
        return self.globals.get(name, UNINIT)

    def store(self, name: str, value: object) -> None:
        if self.frames and name in self.frames[-1]:
            self.frames[-1][name] = value
            return
        if isinstance(self.globals.get(name), dict):
            raise AwkRuntimeError(f"{self.name()}: line 1: illegal reference to array {name}")
        if name == "NF":
            self.set_nf(int(to_num(value)))
            return
        self.globals[name] = value

    def array(self, name: str) -> dict[str, Any]:
        if self.frames and name in self.frames[-1]:
            found = self.frames[-1][name]
            if not isinstance(found, dict):
                found = {}
                self.frames[-1][name] = found
            return found
        found = self.globals.get(name)
        if not isinstance(found, dict):
            found = {}
            self.globals[name] = found
        return found

    def subscript(self, nodes: list[Node]) -> str:
        if len(nodes) == 1:
            value = self.eval(nodes[0])
            return self.key(value)
        return to_str(self.globals["SUBSEP"]).join(self.key(self.eval(node)) for node in nodes)

    def key(self, value: object) -> str:
        if isinstance(value, float) and value == int(value):
            return str(int(value))
        return self.str_of(value)

    def assign_to(self, target: Node, value: object) -> object:
        kind = target[0]
        if kind == "var":
            self.store(target[1], value)
        elif kind == "field":
            index = int(to_num(self.eval(target[1])))
            self.set_field(index, self.str_of(value))
            if index == 0:
                return StrNum(self.record) if not isinstance(value, float) else value
        elif kind == "index":
            array = self.array(target[1])
            key = self.subscript(target[2])
            if key not in array:
                self.call.ctx.meter().charge(ELEMENT_COST + len(key))
            array[key] = value
        elif kind == "group":
            return self.assign_to(target[1], value)
        return value

    # -------------------------------------------------------------------------- statements
    def execute(self, node: Node) -> None:
        self.tick()
        kind = node[0]
        if kind == "block":
            for stmt in node[1]:
                self.execute(stmt)
        elif kind == "expr":
            self.eval(node[1])
        elif kind == "print":
            self.do_print(node)
        elif kind == "printf":
            args = [self.eval(arg) for arg in node[1]]
            self.emit(self.sprintf(args, "printf"), node[2])
        elif kind == "if":
            if truth(self.eval(node[1])):
                self.execute(node[2])
            elif node[3] is not None:
                self.execute(node[3])
        elif kind == "while":
            while truth(self.eval(node[1])):
                try:
                    self.execute(node[2])
                except Break:
                    break
                except Continue:
                    continue
        elif kind == "do":
            while True:
                try:
                    self.execute(node[1])
                except Break:
                    break
                except Continue:
                    pass
                if not truth(self.eval(node[2])):
                    break
        elif kind == "for":
            self.for_loop(node)
        elif kind == "forin":
            array = self.array(node[2])
            for key in list(array):
                if key not in array:
                    continue
                self.store(node[1], StrNum(key))
                try:
                    self.execute(node[3])
                except Break:
                    break
                except Continue:
                    continue
        elif kind == "next":
            raise Next()
        elif kind == "nextfile":
            raise NextFile()
        elif kind == "exit":
            raise Exit(int(to_num(self.eval(node[1]))) & 0xFF if node[1] is not None else self.exit_status)
        elif kind == "return":
            raise Return(self.eval(node[1]) if node[1] is not None else UNINIT)
        elif kind == "break":
            raise Break()
        elif kind == "continue":
            raise Continue()
        elif kind == "delete":
            array = self.array(node[1])
            if node[2] is None:
                array.clear()
            else:
                array.pop(self.subscript(node[2]), None)

    def for_loop(self, node: Node) -> None:
        _, init, cond, step, body = node
        if init is not None:
            self.eval(init)
        while cond is None or truth(self.eval(cond)):
            try:
                self.execute(body)
            except Break:
                break
            except Continue:
                pass
            if step is not None:
                self.eval(step)

    def do_print(self, node: Node) -> None:
        args = node[1]
        if not args:
            text = self.record
        else:
            ofs = to_str(self.globals["OFS"])
            text = ofs.join(self.out_str(self.eval(arg)) for arg in args)
        self.emit(text + self.ors(), node[2])

    def sprintf(self, args: list[object], who: str) -> str:
        if not args:
            return ""
        fmt = self.str_of(args[0])
        try:
            return c_format(fmt, list(args[1:]), gawk=self.wide, need=self.call.ctx.meter().need)
        except FormatError as exc:
            if who == "printf":
                self.call.write(exc.partial)
            if "not enough" in str(exc):
                raise self.runtime_error(f"not enough arguments passed to {who}(\"{fmt}\")") from None
            raise self.runtime_error(str(exc)) from None

    # ------------------------------------------------------------------------- expressions
    def eval(self, node: Node) -> Any:
        kind = node[0]
        handler = _EVAL[kind]
        return handler(self, node)

    def e_num(self, node: Node) -> object:
        return node[1]

    def e_str(self, node: Node) -> object:
        return node[1]

    def e_regex(self, node: Node) -> object:
        return 1.0 if self.regex(node[1]).search(self.record) else 0.0

    def e_group(self, node: Node) -> object:
        return self.eval(node[1])

    def e_var(self, node: Node) -> object:
        value = self.lookup(node[1])
        if isinstance(value, dict):
            raise AwkRuntimeError(f"{self.name()}: line 1: illegal reference to array {node[1]}")
        return value

    def e_field(self, node: Node) -> object:
        return self.get_field(int(to_num(self.eval(node[1]))))

    def e_index(self, node: Node) -> object:
        array = self.array(node[1])
        key = self.subscript(node[2])
        if key not in array:
            self.call.ctx.meter().charge(ELEMENT_COST + len(key))
            array[key] = UNINIT
        return array[key]

    def e_assign(self, node: Node) -> object:
        _, op, target, expr = node
        value = self.eval(expr)
        if op != "=":
            current = to_num(self.eval(target))
            value = arith(op[0], current, to_num(value))
        elif isinstance(value, dict):
            raise AwkRuntimeError(f"{self.name()}: can't assign array")
        return self.assign_to(target, value)

    def e_cond(self, node: Node) -> object:
        return self.eval(node[2]) if truth(self.eval(node[1])) else self.eval(node[3])

    def e_or(self, node: Node) -> object:
        return 1.0 if truth(self.eval(node[1])) or truth(self.eval(node[2])) else 0.0

    def e_and(self, node: Node) -> object:
        return 1.0 if truth(self.eval(node[1])) and truth(self.eval(node[2])) else 0.0

    def e_in(self, node: Node) -> object:
        return 1.0 if self.subscript(node[1]) in self.array(node[2]) else 0.0

    def e_match(self, node: Node) -> object:
        text = self.str_of(self.eval(node[2]))
        found = self.regex_of(node[3]).search(text) is not None
        return 1.0 if found != node[1] else 0.0

    def e_cmp(self, node: Node) -> object:
        left, right = self.eval(node[2]), self.eval(node[3])
        if is_numeric(left) and is_numeric(right):
            a: Any = to_num(left)
            b: Any = to_num(right)
        else:
            a, b = self.str_of(left), self.str_of(right)
        op = node[1]
        result = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]
        return 1.0 if result else 0.0

    def e_concat(self, node: Node) -> object:
        left, right = self.str_of(self.eval(node[1])), self.str_of(self.eval(node[2]))
        size = len(left) + len(right)
        if size > BIG_TEXT:
            self.call.ctx.meter().need(size)
            self.copied += size
            if self.copied > COPY_BUDGET:
                raise BudgetExhausted()
        return left + right

    copied = 0

    def e_binop(self, node: Node) -> object:
        left, right = to_num(self.eval(node[2])), to_num(self.eval(node[3]))
        if right == 0 and node[1] in "/%" and self.flavour != "mawk":
            if self.flavour == "busybox":
                raise AwkRuntimeError("awk: cmd. line:1: Division by zero", 1)
            raise AwkRuntimeError(f"{self.progname}: cmd. line:1: fatal: division by zero attempted")
        return arith(node[1], left, right)

    def e_neg(self, node: Node) -> object:
        return -to_num(self.eval(node[1]))

    def e_pos(self, node: Node) -> object:
        return to_num(self.eval(node[1]))

    def e_not(self, node: Node) -> object:
        return 0.0 if truth(self.eval(node[1])) else 1.0

    def e_incdec(self, node: Node) -> object:
        kind = node[0]
        old = to_num(self.eval(node[1]))
        new = old + (1.0 if kind.endswith("inc") else -1.0)
        self.assign_to(node[1], new)
        return new if kind.startswith("pre") else old

    def e_grouping(self, node: Node) -> object:
        raise AwkRuntimeError(f"{self.name()}: line 1: syntax error")

    def e_getline(self, node: Node) -> object:
        _, kind, target, source = node
        if kind == "simple":
            if not self.next_getline_record():
                return 0.0
            text = self.last_getline
            self.globals["NR"] = to_num(self.globals["NR"]) + 1
            self.globals["FNR"] = to_num(self.globals["FNR"]) + 1
        elif kind == "file":
            name = self.str_of(self.eval(source))
            text_or_none = self.read_from(name)
            if text_or_none is None:
                return 0.0 if name in self.readers else -1.0
            text = text_or_none
        else:
            name = self.str_of(self.eval(source))
            text_or_none = self.read_from_command(name)
            if text_or_none is None:
                return 0.0
            text = text_or_none
        if target is None:
            self.set_record(text)
            if kind == "simple":
                return 1.0
            self.globals["NR"] = to_num(self.globals["NR"]) + (1 if kind == "cmd" else 0)
        else:
            self.assign_to(target, StrNum(text))
        return 1.0

    last_getline = ""

    def next_getline_record(self) -> bool:
        while self.main_index >= len(self.main_records):
            if not self.open_next_operand():
                return False
        self.last_getline = self.main_records[self.main_index]
        self.main_index += 1
        return True

    def read_from(self, name: str) -> str | None:
        if name not in self.readers:
            if name in ("-", "/dev/stdin"):
                content = self.call.stdin
            else:
                content = self.call.ctx.files.get(self.call.shell.abspath(name))
                if content is None:
                    return None
            self.readers[name] = (self.split_records(content), 0)
        records, index = self.readers[name]
        if index >= len(records):
            return None
        self.readers[name] = (records, index + 1)
        return records[index]

    def read_from_command(self, cmd: str) -> str | None:
        """`cmd | getline`: the command's output, run once in the container, read record by record."""
        key = "|" + cmd
        if key not in self.readers:
            self.readers[key] = (self.split_records(self.run_command(cmd)), 0)
        records, index = self.readers[key]
        if index >= len(records):
            return None
        self.readers[key] = (records, index + 1)
        return records[index]

    def run_command(self, cmd: str) -> str:
        """Run `cmd` by the container's shell to completion; its stdout, its stderr passed on."""
        from sregym.twin.node.shell import run_once

        result = run_once(self.call.ctx, cmd)
        if result.stderr:
            self.call.write(result.stderr, "stderr")
        self.last_status = result.exit_code
        return result.stdout

    last_status = 0

    def e_call(self, node: Node) -> object:
        name, args = node[1], node[2]
        if name not in self.prog.functions:
            raise AwkRuntimeError(f"{self.name()}: line 1: function {name} never defined")
        params, body = self.prog.functions[name]
        array_params = self.prog.array_params.get(name, set())
        frame: dict[str, Any] = {}
        for i, param in enumerate(params):
            if i < len(args):
                arg = args[i]
                if arg[0] == "var":
                    current = self.lookup(arg[1])
                    if isinstance(current, dict):
                        frame[param] = current
                        continue
                    if param in array_params and current is UNINIT:
                        # An untyped variable passed where the callee uses an array becomes one.
                        frame[param] = self.array(arg[1])
                        continue
                frame[param] = self.eval(arg)
            else:
                frame[param] = UNINIT
        if len(self.frames) > 1000:
            raise self.runtime_error("function call nesting too deep")
        self.frames.append(frame)
        try:
            self.execute(body)
        except Return as ret:
            return ret.value
        finally:
            self.frames.pop()
        return UNINIT

    def e_builtin(self, node: Node) -> object:
        from sregym.twin.userland.awk.builtins import call_builtin

        return call_builtin(self, node[1], node[2])


def arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            if a == 0 or math.isnan(a):
                return -math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b
    if op == "%":
        if b == 0 or math.isinf(a):
            return -math.nan
        return math.fmod(a, b)
    try:
        return math.pow(a, b)
    except (OverflowError, ValueError):
        if a < 0 and b != int(b):
            return -math.nan
        return math.inf


_EVAL = {
    "num": Interpreter.e_num, "str": Interpreter.e_str, "regex": Interpreter.e_regex,
    "group": Interpreter.e_group, "var": Interpreter.e_var, "field": Interpreter.e_field,
    "index": Interpreter.e_index, "assign": Interpreter.e_assign, "cond": Interpreter.e_cond,
    "or": Interpreter.e_or, "and": Interpreter.e_and, "in": Interpreter.e_in,
    "match": Interpreter.e_match, "cmp": Interpreter.e_cmp, "concat": Interpreter.e_concat,
    "binop": Interpreter.e_binop, "neg": Interpreter.e_neg, "pos": Interpreter.e_pos,
    "not": Interpreter.e_not, "preinc": Interpreter.e_incdec, "predec": Interpreter.e_incdec,
    "postinc": Interpreter.e_incdec, "postdec": Interpreter.e_incdec,
    "grouping": Interpreter.e_grouping, "getline": Interpreter.e_getline,
    "call": Interpreter.e_call, "builtin": Interpreter.e_builtin,
}
