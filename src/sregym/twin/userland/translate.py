"""`tr`: translate, delete (-d) and squeeze (-s) bytes, with GNU tr's set syntax.

Sets take escapes (`\\n`, `\\NNN`), ranges (`a-z`), classes (`[:upper:]`), equivalence classes
(`[=c=]`) and, in the second set, repeats (`[c*n]`, `[c*]`). tr works on bytes (containers have
no locale), so text is handled as its UTF-8 bytes.
"""

from __future__ import annotations

import re

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import Spec, is_busybox, usage_error, with_options

TR = Spec("tr", "cCdst", {"complement": "c", "delete": "d", "squeeze-repeats": "s",
                          "truncate-set1": "t"}, usage="tr [-cds] STRING1 [STRING2]")

_CLASSES = {
    "alpha": lambda c: c.isascii() and c.isalpha(), "digit": lambda c: "0" <= c <= "9",
    "alnum": lambda c: c.isascii() and c.isalnum(), "upper": lambda c: "A" <= c <= "Z",
    "lower": lambda c: "a" <= c <= "z", "space": lambda c: c in " \t\n\v\f\r",
    "blank": lambda c: c in " \t", "print": lambda c: " " <= c <= "~",
    "graph": lambda c: "!" <= c <= "~", "cntrl": lambda c: c < " " or c == "\x7f",
    "punct": lambda c: "!" <= c <= "~" and not c.isalnum(),
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
}
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}


class SetError(ValueError):
    """A set tr rejects; the message is tr's."""


def _unescape(text: str, warnings: list[str]) -> list[tuple[str, bool]]:
    """(char, escaped) pairs; escaped characters never start a range or a bracket construct."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 >= len(text):
                warnings.append("an unescaped backslash at end of string is not portable")
                out.append(("\\", True))
                i += 1
                continue
            octal = re.match(r"[0-7]{1,3}", text[i + 1:])
            if octal and int(octal.group(0), 8) < 256:
                out.append((chr(int(octal.group(0), 8)), True))
                i += 1 + len(octal.group(0))
                continue
            out.append((_ESCAPES.get(text[i + 1], text[i + 1]), True))
            i += 2
            continue
        out.append((c, False))
        i += 1
    return out


Item = tuple[str, str]  # ("chars", text) | ("class", name) | ("repeat", char + count)


def parse_set(text: str, warnings: list[str]) -> list[Item]:
    chars = _unescape(text, warnings)
    items: list[Item] = []
    i = 0
    while i < len(chars):
        c, escaped = chars[i]
        rest = "".join(ch for ch, _e in chars[i:])
        if not escaped and c == "[":
            cls = re.match(r"\[:([a-z]+):\]", rest)
            if cls:
                if cls.group(1) not in _CLASSES:
                    raise SetError(f"invalid character class '{cls.group(1)}'")
                items.append(("class", cls.group(1)))
                i += len(cls.group(0))
                continue
            equiv = re.match(r"\[=(.)=\]", rest, re.DOTALL)
            if equiv:
                items.append(("chars", equiv.group(1)))
                i += 5
                continue
            if i + 2 < len(chars) and chars[i + 2][0] == "*" and not chars[i + 2][1]:
                end = rest.find("]", 3)
                count = rest[3:end] if end > 0 else None
                if count is not None and re.fullmatch(r"\d*", count):
                    items.append(("repeat", chars[i + 1][0] + (count or "")))
                    i += end + 1
                    continue
        if i + 2 < len(chars) and chars[i + 1] == ("-", False):
            end = chars[i + 2][0]
            if end < c:
                raise SetError(f"range-endpoints of '{c}-{end}' are in reverse collating "
                               "sequence order")
            items.append(("chars", "".join(chr(x) for x in range(ord(c), ord(end) + 1))))
            i += 3
            continue
        items.append(("chars", c))
        i += 1
    return items


def expand(items: list[Item]) -> str:
    out: list[str] = []
    for kind, value in items:
        if kind == "chars":
            out.append(value)
        elif kind == "class":
            out.append("".join(chr(x) for x in range(256) if _CLASSES[value](chr(x))))
        else:
            out.append(value[0] * int(value[1:] or 0))
    return "".join(out)


def _fail(call: Invocation, *lines: str, try_help: bool = True) -> int:
    for line in lines:
        call.error(f"tr: {line}" if line is lines[0] else line)
    if try_help and not is_busybox(call):
        call.error("Try 'tr --help' for more information.")
    return 1


def _mapping(set1: str, items2: list[Item], truncate: bool) -> dict[str, str]:
    """SET1 -> SET2, with `[c*]` filling and SET2's last character repeated (GNU)."""
    fill_index = next((i for i, (kind, value) in enumerate(items2)
                       if kind == "repeat" and len(value) == 1), None)
    if fill_index is not None:
        before = expand(items2[:fill_index])
        after = expand(items2[fill_index + 1:])
        fill = max(0, len(set1) - len(before) - len(after))
        set2 = before + items2[fill_index][1] * fill + after
    else:
        set2 = expand(items2)
    if truncate:
        set1 = set1[:len(set2)]
    elif len(set2) < len(set1):
        set2 += set2[-1] * (len(set1) - len(set2))
    table: dict[str, str] = {}
    for a, b in zip(set1, set2, strict=False):
        table[a] = b
    return table


@command("tr")
@with_options(TR)
def tr(call: Invocation, options: list[tuple[str, str]], operands: list[str]) -> int:
    flags = {key for key, _v in options}
    complement = bool(flags & {"c", "C"})
    delete, squeeze, truncate = "d" in flags, "s" in flags, "t" in flags
    if not operands:
        return usage_error(call, TR, "") if is_busybox(call) else _fail(call, "missing operand")
    if delete and not squeeze and len(operands) > 1:
        return _fail(call, f"extra operand '{operands[1]}'", "Only one string may be given when "
                     "deleting without squeezing repeats.")
    if len(operands) > 2:
        return _fail(call, f"extra operand '{operands[2]}'")
    translating = not delete and len(operands) == 2
    if len(operands) == 1 and ((delete and squeeze) or not (delete or squeeze)):
        why = ("Two strings must be given when both deleting and squeezing repeats."
               if delete else "Two strings must be given when translating.")
        return _fail(call, f"missing operand after '{operands[0]}'", why)
    warnings: list[str] = []
    try:
        items1 = parse_set(operands[0], warnings)
        items2 = parse_set(operands[1], warnings) if len(operands) > 1 else []
    except SetError as bad:
        return _fail(call, str(bad), try_help=False)
    for warning in warnings:
        call.error(f"tr: warning: {warning}")
    set1 = expand(items1)
    if complement:
        members = set(set1)
        set1 = "".join(chr(x) for x in range(256) if chr(x) not in members)
    table: dict[str, str] = {}
    if translating:
        classes2 = [value for kind, value in items2 if kind == "class"]
        if classes2:
            pairs = list(zip(items1, items2, strict=False))
            aligned = all(k1 == "class" and {v1, v2} <= {"upper", "lower"}
                          for (k1, v1), (k2, v2) in pairs if k2 == "class")
            if not aligned or len(items1) != len(items2) or \
                    any(v not in ("upper", "lower") for v in classes2):
                return _fail(call, "misaligned [:upper:] and/or [:lower:] construct", try_help=False)
        if not expand(items2) and not any(kind == "repeat" for kind, _v in items2):
            return _fail(call, "when not truncating set1, string2 must be non-empty", try_help=False)
        table = _mapping(set1, items2, truncate)
    squeeze_set = set(expand(items2) if (translating or delete) and squeeze else set1) \
        if squeeze else set()
    data = (call.stdin or "").encode("utf-8", "surrogateescape").decode("latin-1")
    call.ctx.meter().need(2 * len(data))
    mapping: dict[int, int | None] = {ord(a): ord(b) for a, b in table.items()}
    if delete:
        mapping.update(dict.fromkeys(map(ord, set1)))
    data = data.translate(mapping)
    if squeeze and squeeze_set:
        members = "".join(re.escape(c) for c in sorted(squeeze_set))
        data = re.sub(f"([{members}])\\1+", r"\1", data)
    call.write(data.encode("latin-1").decode("utf-8", "replace"))
    return 0
