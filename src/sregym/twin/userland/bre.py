r"""POSIX basic and extended regular expressions (GNU flavour) translated to Python `re`.

grep's patterns are not Python's: in a BRE `\(`, `\{m,n\}`, `\|`, `\+`, `\?` are operators and
the bare characters literals; `*` at the start is literal; bracket expressions take `[:alpha:]`
classes and treat `\` as a plain character. Passing a pattern through would match the wrong lines,
so each is rewritten token by token, and malformed ones fail with GNU grep's own messages.
"""

from __future__ import annotations

CLASSES = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "0-9A-Za-z", "upper": "A-Z", "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "print": "\\x20-\\x7e", "graph": "\\x21-\\x7e",
    "cntrl": "\\x00-\\x1f\\x7f", "xdigit": "0-9A-Fa-f",
    "punct": "".join("\\" + c for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
}
_WORD = "[0-9A-Za-z_]"


class PatternError(ValueError):
    """A pattern GNU regex rejects; the message is grep's (without the `grep: ` prefix)."""


def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """Translate the bracket expression starting at pattern[i] == '['; return (python, next i)."""
    j = i + 1
    out = ["["]
    if j < len(pattern) and pattern[j] == "^":
        out.append("^")
        j += 1
    first = True
    while True:
        if j >= len(pattern):
            raise PatternError("Unmatched [, [^, [:, [., or [=")
        c = pattern[j]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), j + 1
        first = False
        if c == "[" and j + 1 < len(pattern) and pattern[j + 1] in ":=.":
            kind = pattern[j + 1]
            end = pattern.find(kind + "]", j + 2)
            if end < 0:
                raise PatternError("Unmatched [, [^, [:, [., or [=")
            name = pattern[j + 2:end]
            if kind == ":":
                if name not in CLASSES:
                    raise PatternError("Invalid character class name")
                out.append(CLASSES[name])
            else:
                if len(name) != 1:
                    raise PatternError("Invalid collation character")
                out.append("\\" + name if not name.isalnum() else name)
            j = end + 2
            continue
        if c == "-" and len(out) > 1 and j + 1 < len(pattern) and pattern[j + 1] != "]":
            out.append("-")
            j += 1
            continue
        out.append(c if c.isalnum() or c == " " else "\\" + c)
        j += 1


def _interval(pattern: str, i: int, closer: str) -> tuple[str, int] | None:
    """`{m,n}` contents from pattern[i] (after the opening brace) to `closer`; None if invalid."""
    end = pattern.find(closer, i)
    if end < 0:
        return None
    body = pattern[i:end]
    low, comma, high = body.partition(",")
    if not (low.isdigit() or (not low and comma)) or (high and not high.isdigit()):
        return None
    if high and low and int(high) < int(low):
        raise PatternError("Invalid content of \\{\\}")
    return "{" + (low or "0") + comma + high + "}", end + len(closer)


def translate(pattern: str, *, extended: bool = False) -> tuple[str, list[str]]:
    """Python `re` source for a GNU BRE (or ERE), and grep's warnings about it."""
    out: list[str] = []
    warnings: list[str] = []
    depth = 0
    groups = 0
    closed: set[int] = set()
    open_stack: list[int] = []
    at_start = True  # where `*` is literal and `^` an anchor
    i = 0
    n = len(pattern)
    quantified = False  # Python rejects `a**`; POSIX reads it as `a*`

    def quantify(source: str) -> None:
        if not quantified:
            out.append(source)

    while i < n:
        c = pattern[i]
        start_here = at_start
        at_start = False
        was_quantified, quantified = quantified, False
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            i += 2
            if not extended and nxt == "(":
                groups += 1
                depth += 1
                open_stack.append(groups)
                out.append("(")
                at_start = True
            elif not extended and nxt == ")":
                if not depth:
                    raise PatternError("Unmatched ) or \\)")
                depth -= 1
                closed.add(open_stack.pop())
                out.append(")")
            elif not extended and nxt == "|":
                out.append("|")
                at_start = True
            elif not extended and nxt == "{":
                if start_here:
                    out.append("\\{")
                    continue
                interval = _interval(pattern, i, "\\}")
                if interval is None:
                    raise PatternError("Unmatched \\{" if pattern.find("\\}", i) < 0
                                       else "Invalid content of \\{\\}")
                quantified = was_quantified
                quantify(interval[0])
                quantified = True
                i = interval[1]
            elif not extended and nxt in "+?":
                if start_here:
                    out.append("\\" + nxt)
                else:
                    quantified = was_quantified
                    quantify(nxt)
                    quantified = True
            elif nxt.isdigit() and nxt != "0":
                if int(nxt) not in closed:
                    raise PatternError("Invalid back reference")
                out.append("\\" + nxt)
            elif nxt == "<":
                out.append(f"(?<!{_WORD})(?={_WORD})")
            elif nxt == ">":
                out.append(f"(?<={_WORD})(?!{_WORD})")
            elif nxt in "bBwWsS":
                out.append("\\" + nxt)
            elif nxt == "`":
                out.append("\\A")
            elif nxt == "'":
                out.append("\\Z")
            else:
                out.append("\\" + nxt if not nxt.isalnum() else nxt)
            continue
        i += 1
        if c == "[":
            if pattern.startswith("[:", i - 1) and pattern.find(":]", i) > 0 and \
                    pattern[i + 1:pattern.find(":]", i)].isalpha():
                raise PatternError("character class syntax is [[:space:]], not [:space:]")
            source, i = _bracket(pattern, i - 1)
            out.append(source)
        elif c == "*":
            if start_here:
                if extended:
                    warnings.append("* at start of expression")
                    continue
                out.append("\\*")
            else:
                quantified = was_quantified
                quantify("*")
                quantified = True
        elif c == "^":
            if start_here or extended:
                out.append("^")
                at_start = True
            else:
                out.append("\\^")
        elif c == "$":
            rest = pattern[i:]
            anchor = extended or not rest or rest.startswith(("\\)", "\\|"))
            out.append("$" if anchor else "\\$")
        elif c == ".":
            out.append(".")
        elif extended and c == "(":
            groups += 1
            depth += 1
            open_stack.append(groups)
            out.append("(")
            at_start = True
        elif extended and c == ")":
            if depth:
                depth -= 1
                closed.add(open_stack.pop())
                out.append(")")
            else:
                out.append("\\)")
        elif extended and c == "|":
            out.append("|")
            at_start = True
        elif extended and c in "+?":
            if start_here:
                warnings.append(f"{c} at start of expression")
                continue
            quantified = was_quantified
            quantify(c)
            quantified = True
        elif extended and c == "{":
            interval = None if start_here else _interval(pattern, i, "}")
            if interval is None:
                out.append("\\{")
            else:
                quantified = was_quantified
                quantify(interval[0])
                quantified = True
                i = interval[1]
        else:
            out.append(c if c.isalnum() or c in " _" else "\\" + c)
    if depth:
        raise PatternError("Unmatched ( or \\(")
    return "".join(out), warnings
