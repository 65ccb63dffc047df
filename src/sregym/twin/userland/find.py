"""`find`: GNU findutils' in Debian-based images, BusyBox's applet in busybox/alpine ones.

The expression language an engineer uses: tests `-name -iname -path -wholename -ipath -type
-size -mtime -mmin -newer -empty -true -false`, operators `! -not -a -and -o -or ( )`, actions
`-print -print0 -exec CMD {} ;` / `-exec CMD {} +` and `-delete`, options `-maxdepth -mindepth
-depth -xdev`. Without an action the whole expression is followed by `-print`. Symlinks are not
followed (`-P`), so a merged-/usr image's `/bin` is a link and `find /bin -name ls` prints
nothing, as on a real node. Entries are visited in name order (a real directory's order is
the filesystem's). Errors read as each implementation prints them in the C locale, exit 1.
"""

from __future__ import annotations

import fnmatch
import math
import posixpath
from collections.abc import Generator
from dataclasses import dataclass, field

from sregym.twin.node.shell import Effect, Invocation, command
from sregym.twin.userland.filteropts import is_busybox
from sregym.twin.userland.tree import Entry, TreeView

_TESTS_WITH_ARG = {"-name", "-iname", "-path", "-wholename", "-ipath", "-iwholename", "-type", "-size",
                   "-mtime", "-mmin", "-newer", "-maxdepth", "-mindepth", "-perm", "-user", "-group",
                   "-regex", "-links"}
_NO_ARG = {"-print", "-print0", "-delete", "-empty", "-true", "-false", "-depth", "-xdev", "-mount",
           "-prune", "-quit", "-ls"}
_SIZE_UNITS = {"b": 512, "c": 1, "w": 2, "k": 1024, "M": 1 << 20, "G": 1 << 30}


class FindError(Exception):
    pass


@dataclass
class Node:
    op: str  # "and" | "or" | "not" | a primary such as "-name"
    args: list[str] = field(default_factory=list)
    kids: list[Node] = field(default_factory=list)


class _Parser:
    def __init__(self, words: list[str], busybox: bool) -> None:
        self.words, self.i, self.busybox = words, 0, busybox
        self.has_action = False
        self.maxdepth: int | None = None
        self.mindepth = 0
        self.depth_first = False

    def peek(self) -> str | None:
        return self.words[self.i] if self.i < len(self.words) else None

    def parse(self) -> Node | None:
        if self.peek() is None:
            return None
        node = self.parse_or()
        if self.peek() is not None:
            word = self.peek()
            raise FindError(f"find: unexpected `{word}'" if word != ")" else
                            "find: invalid expression; you have too many ')'")
        return node

    def parse_or(self) -> Node:
        left = self.parse_and()
        while self.peek() in ("-o", "-or"):
            self.i += 1
            left = Node("or", kids=[left, self.parse_and()])
        return left

    def parse_and(self) -> Node:
        left = self.parse_unary()
        while self.peek() is not None and self.peek() not in ("-o", "-or", ")"):
            if self.peek() in ("-a", "-and"):
                self.i += 1
            left = Node("and", kids=[left, self.parse_unary()])
        return left

    def parse_unary(self) -> Node:
        word = self.peek()
        if word is None:
            raise FindError("find: expected an expression at the end")
        if word in ("!", "-not"):
            self.i += 1
            return Node("not", kids=[self.parse_unary()])
        if word == "(":
            self.i += 1
            inner = self.parse_or()
            if self.peek() != ")":
                raise FindError("find: invalid expression; I was expecting to find a ')' somewhere "
                                "but did not see one.")
            self.i += 1
            return inner
        return self.parse_primary()

    def parse_primary(self) -> Node:
        word = self.words[self.i]
        self.i += 1
        if word in _NO_ARG:
            if word in ("-print", "-print0", "-delete", "-quit", "-ls"):
                self.has_action = True
            if word == "-delete" or word == "-depth":
                self.depth_first = True
            return Node(word)
        if word in ("-exec", "-execdir", "-ok"):
            start = self.i
            while self.i < len(self.words) and self.words[self.i] not in (";", "+"):
                self.i += 1
            if self.i >= len(self.words) or self.i == start:
                raise FindError(f"find: missing argument to `{word}'")
            argv = self.words[start:self.i]
            end = self.words[self.i]
            if end == "+" and (not argv or argv[-1] != "{}"):
                # `+` ends the command only right after `{}`; otherwise it is an argument.
                raise FindError(f"find: missing argument to `{word}'")
            self.i += 1
            self.has_action = True
            return Node("-exec", [end, *argv])
        if word in _TESTS_WITH_ARG:
            arg = self.peek()
            if arg is None:
                raise FindError(f"find: missing argument to `{word}'")
            self.i += 1
            return self._checked(word, arg)
        if word.startswith("-"):
            raise FindError(f"find: unknown predicate `{word}'")
        raise FindError(f"find: paths must precede expression: `{word}'")

    def _checked(self, word: str, arg: str) -> Node:
        if word == "-type":
            for kind in arg.split(","):
                if kind not in "fdlbcps" or len(kind) != 1:
                    raise FindError(f"find: Unknown argument to -type: {kind}")
        elif word in ("-maxdepth", "-mindepth"):
            if not arg.isdigit():
                raise FindError(f"find: Expected a positive decimal integer argument to {word}, "
                                f"but got `{arg}'")
            if word == "-maxdepth":
                self.maxdepth = int(arg)
            else:
                self.mindepth = int(arg)
            return Node("-true")
        elif word == "-size":
            body = arg.lstrip("+-")
            unit = body[-1:] if body[-1:].isalpha() else "b"
            number = body[:-1] if body[-1:].isalpha() else body
            if unit not in _SIZE_UNITS:
                raise FindError(f"find: invalid -size type `{unit}'")
            if not number.isdigit():
                raise FindError(f"find: invalid argument `{arg}' to `-size'")
        elif word in ("-mtime", "-mmin"):
            if not arg.lstrip("+-").isdigit():
                raise FindError(f"find: invalid argument `{arg}' to `{word}'")
        return Node(word, [arg])


def _compare(spec: str, value: int) -> bool:
    if spec.startswith("+"):
        return value > int(spec[1:])
    if spec.startswith("-"):
        return value < int(spec[1:])
    return value == int(spec)


class _Run:
    def __init__(self, call: Invocation, tree: TreeView, busybox: bool) -> None:
        self.call, self.tree, self.busybox = call, tree, busybox
        self.batches: dict[int, tuple[list[str], list[str]]] = {}
        self.status = 0
        self.quit = False

    def evaluate(self, node: Node, shown: str, real: str, entry: Entry, depth: int
                 ) -> Generator[Effect, None, bool]:
        op = node.op
        if op == "and":
            return (yield from self.evaluate(node.kids[0], shown, real, entry, depth)) and \
                (yield from self.evaluate(node.kids[1], shown, real, entry, depth))
        if op == "or":
            return (yield from self.evaluate(node.kids[0], shown, real, entry, depth)) or \
                (yield from self.evaluate(node.kids[1], shown, real, entry, depth))
        if op == "not":
            return not (yield from self.evaluate(node.kids[0], shown, real, entry, depth))
        arg = node.args[0] if node.args else ""
        name = posixpath.basename(shown.rstrip("/")) or shown
        if op in ("-name", "-iname"):
            fold = op == "-iname"
            return fnmatch.fnmatchcase(name.lower() if fold else name, arg.lower() if fold else arg)
        if op in ("-path", "-wholename", "-ipath", "-iwholename"):
            fold = op.startswith("-i")
            return fnmatch.fnmatchcase(shown.lower() if fold else shown, arg.lower() if fold else arg)
        if op == "-type":
            kind = {"file": "f", "dir": "d", "link": "l"}[entry.kind]
            return kind in arg.split(",")
        if op == "-size":
            body = arg.lstrip("+-")
            unit = body[-1] if body[-1:].isalpha() else "b"
            blocks = math.ceil(entry.size / _SIZE_UNITS[unit])
            return _compare(arg[: len(arg) - len(body)] + (body[:-1] if body[-1:].isalpha() else body), blocks)
        if op in ("-mtime", "-mmin"):
            age = self.tree.now - entry.mtime
            return _compare(arg, int(age // (86400 if op == "-mtime" else 60)))
        if op == "-newer":
            ref = self.tree.get(self.call.shell.abspath(arg))
            return ref is not None and entry.mtime > ref.mtime
        if op == "-empty":
            return entry.size == 0 if entry.kind == "file" else (
                entry.kind == "dir" and not self.tree.children(real))
        if op in ("-true", "-depth", "-xdev", "-mount", "-perm", "-user", "-group", "-regex", "-links"):
            return True
        if op == "-false":
            return False
        if op == "-prune":
            return True
        if op == "-quit":
            self.quit = True
            return True
        if op == "-print":
            self.call.write(shown + "\n")
            return True
        if op == "-print0":
            self.call.write(shown + "\0")
            return True
        if op == "-ls":
            self.call.write(f"{shown}\n")
            return True
        if op == "-delete":
            if entry.kind == "dir" and self.tree.children(real):
                self.call.error(f"find: cannot delete '{shown}': Directory not empty")
                self.status = 1
                return False
            self.tree.remove(real)
            return True
        if op == "-exec":
            end, argv = node.args[0], node.args[1:]
            if end == "+":
                pending = self.batches.setdefault(id(node), (argv, []))
                pending[1].append(shown)
                return True
            status = yield from self.call.shell._invoke([a.replace("{}", shown) for a in argv], {}, "")
            return status == 0
        return True

    def flush(self) -> Generator[Effect, None, None]:
        for argv, paths in self.batches.values():
            index = argv.index("{}")
            status = yield from self.call.shell._invoke(argv[:index] + paths + argv[index + 1:], {}, "")
            if status != 0:
                self.status = 1
        self.batches.clear()


def _walk(tree: TreeView, shown: str, real: str, depth: int, depth_first: bool
          ) -> Generator[tuple[str, str, Entry, int], None, None]:
    entry = tree.entries[real]
    if not depth_first:
        yield shown, real, entry, depth
    if entry.kind == "dir":
        for name in list(tree.children(real)):
            child = posixpath.join(real, name)
            if child in tree.entries:
                yield from _walk(tree, shown.rstrip("/") + "/" + name if shown != "/" else "/" + name,
                                 child, depth + 1, depth_first)
    if depth_first:
        yield shown, real, entry, depth


@command("find")
def find(call: Invocation) -> Generator[Effect, None, int]:
    busybox = is_busybox(call)
    args = list(call.args)
    while args and args[0] in ("-P", "-L", "-H"):
        args.pop(0)
    paths: list[str] = []
    while args and not (args[0].startswith("-") and len(args[0]) > 1) and args[0] not in ("!", "("):
        paths.append(args.pop(0))
    parser = _Parser(args, busybox)
    try:
        expr = parser.parse()
    except FindError as exc:
        message = str(exc)
        if busybox:
            message = message.replace("unknown predicate `", "unrecognized: ").rstrip("'")
        call.error(message)
        return 1
    if not parser.has_action:
        expr = Node("and", kids=[expr, Node("-print")]) if expr is not None else Node("-print")
    tree = TreeView(call)
    run = _Run(call, tree, busybox)
    for start in paths or ["."]:
        absolute = call.shell.abspath(start)
        follow = start.endswith("/")
        real = tree.resolve(absolute, follow=follow)
        if real is None:
            call.error(f"find: {start}: No such file or directory" if busybox
                       else f"find: '{start}': No such file or directory")
            run.status = 1
            continue
        for shown, where, entry, depth in _walk(tree, start, real, 0, parser.depth_first):
            if parser.maxdepth is not None and depth > parser.maxdepth:
                continue
            if depth < parser.mindepth or where not in tree.entries:
                continue
            yield from run.evaluate(expr, shown, where, entry, depth)
            if run.quit:
                break
            if len(call.pending) > 256:
                yield from _drain(call)
    yield from run.flush()
    return run.status


def _drain(call: Invocation) -> Generator[Effect, None, None]:
    """Hand buffered output on (a walk of `/` prints thousands of lines)."""
    pending, call.pending = call.pending, []
    call.pending_bytes = 0
    yield from pending
