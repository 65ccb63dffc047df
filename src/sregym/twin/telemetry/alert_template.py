"""Alert label/annotation templates, expanded the way Prometheus expands them.

Prometheus runs Go `text/template` with `$labels`, `$externalLabels` and `$value` predefined
(also reachable as `.Labels`, `.ExternalLabels`, `.Value`) and a function map with `humanize`,
`humanizePercentage`, `humanizeDuration`, `printf`, `toUpper` ... This module implements the part of
that language rule files use: actions with trim markers, pipelines, variables with field access,
string/number literals, `if`/`else`/`end`, and those functions. Values print like Go's `%v`, and a
template that cannot be expanded yields `<error expanding template: ...>` as in Prometheus.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any


class TemplateError(Exception):
    pass


def go_float(v: float) -> str:
    """Go's `%v` for a float64: strconv's 'g' with the shortest digits, which switches to an
    exponent when the decimal exponent is < -4 or >= 6 (so 1e6 prints as `1e+06`)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "0"
    digits, point = decimal_digits(v)
    x = point - 1
    sign = "-" if v < 0 else ""
    if x < -4 or x >= 6:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def decimal_digits(v: float) -> tuple[str, int]:
    """The shortest round-trip significant digits of |v| (non-zero, finite) and the position of
    the decimal point relative to them (`0.0123` → ("123", -1))."""
    mantissa, _, exp_text = repr(abs(v)).partition("e")
    exp = int(exp_text) if exp_text else 0
    int_part, _, frac = mantissa.partition(".")
    raw = int_part + frac
    stripped = raw.lstrip("0")
    point = len(int_part) + exp - (len(raw) - len(stripped))
    return stripped.rstrip("0") or "0", point


def go_float_e(v: float) -> str:
    """Go's strconv.FormatFloat(v, 'e', -1, 64) (`1e+00`, `2.5e-01`)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "0e+00"
    digits, point = decimal_digits(v)
    x = point - 1
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{'-' if v < 0 else ''}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"


def _g4(v: float) -> str:
    """Go's `%.4g`."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return f"{v:.4g}"


def humanize(v: Any) -> str:
    v = _num(v)
    if v == 0 or math.isnan(v) or math.isinf(v):
        return _g4(v)
    if abs(v) >= 1:
        prefix = ""
        for p in ("k", "M", "G", "T", "P", "E", "Z", "Y"):
            if abs(v) < 1000:
                break
            prefix = p
            v /= 1000
        return f"{_g4(v)}{prefix}"
    prefix = ""
    for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
        if abs(v) >= 1:
            break
        prefix = p
        v *= 1000
    return f"{_g4(v)}{prefix}"


def humanize1024(v: Any) -> str:
    v = _num(v)
    if abs(v) <= 1 or math.isnan(v) or math.isinf(v):
        return _g4(v)
    prefix = ""
    for p in ("ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"):
        if abs(v) < 1024:
            break
        prefix = p
        v /= 1024
    return f"{_g4(v)}{prefix}"


def humanize_duration(v: Any) -> str:
    v = _num(v)
    if math.isnan(v) or math.isinf(v):
        return _g4(v)
    if v == 0:
        return f"{v:.4g}s"
    if abs(v) >= 1:
        sign = "-" if v < 0 else ""
        v = abs(v)
        days, rest = divmod(int(v), 86400)
        hours, rest = divmod(rest, 3600)
        minutes, seconds = divmod(rest, 60)
        if days:
            return f"{sign}{days}d {hours}h {minutes}m {seconds}s"
        if hours:
            return f"{sign}{hours}h {minutes}m {seconds}s"
        if minutes:
            return f"{sign}{minutes}m {seconds}s"
        return f"{sign}{v:.4g}s"
    prefix = ""
    for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
        if abs(v) >= 1:
            break
        prefix = p
        v *= 1000
    return f"{v:.4g}{prefix}s"


def humanize_percentage(v: Any) -> str:
    return f"{_num(v) * 100:.4g}%"


def humanize_timestamp(v: Any) -> str:
    v = _num(v)
    if math.isnan(v) or math.isinf(v):
        return _g4(v)
    moment = datetime.fromtimestamp(v, tz=UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0").rstrip(".") + " +0000 UTC"


def _num(v: Any) -> float:
    if isinstance(v, bool):
        raise TemplateError(f"can't convert {v!r} to float")
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(str(v))
    except ValueError:
        raise TemplateError(f'strconv.ParseFloat: parsing "{v}": invalid syntax') from None


def _printf(fmt: str, *args: Any) -> str:
    out: list[str] = []
    index = 0
    pos = 0
    for m in re.finditer(r"%([-+# 0]*)(\d+)?(?:\.(\d+))?([vdsfgeqxX%])", fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, verb = m.groups()
        if verb == "%":
            out.append("%")
            continue
        if index >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        arg = args[index]
        index += 1
        spec = f"%{flags}{width or ''}{'.' + prec if prec is not None else ''}"
        if verb == "v":
            text = go_float(arg) if isinstance(arg, float) else _text(arg)
            out.append(f"{spec}s" % text)
        elif verb == "q":
            out.append('"' + _text(arg).replace("\\", "\\\\").replace('"', '\\"') + '"')
        elif verb == "s":
            out.append((spec + "s") % _text(arg))
        elif verb == "d":
            if isinstance(arg, float) and not arg.is_integer():
                out.append(f"%!d(float64={go_float(arg)})")
            else:
                out.append((spec + "d") % int(_num(arg)))
        else:
            out.append((spec + verb) % _num(arg))
    out.append(fmt[pos:])
    if index < len(args):
        out.append("%!(EXTRA " + ", ".join(_text(a) for a in args[index:]) + ")")
    return "".join(out)


def _text(v: Any) -> str:
    if v is None:
        return "<no value>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{val}" for k, val in sorted(v.items())) + "]"
    return str(v)


def _re_replace_all(pattern: str, repl: str, text: str) -> str:
    return re.sub(pattern, re.sub(r"\$\{?(\w+)\}?", r"\\g<\1>", repl), text)


FUNCS: dict[str, Callable[..., Any]] = {
    "humanize": humanize,
    "humanize1024": humanize1024,
    "humanizeDuration": humanize_duration,
    "humanizePercentage": humanize_percentage,
    "humanizeTimestamp": humanize_timestamp,
    "printf": _printf,
    "toUpper": lambda s: _text(s).upper(),
    "toLower": lambda s: _text(s).lower(),
    "title": lambda s: _text(s).title(),
    "reReplaceAll": _re_replace_all,
    "match": lambda pattern, s: re.search(pattern, _text(s)) is not None,
    "index": lambda m, k: (m or {}).get(k, ""),
    "len": lambda v: len(v),
    "stripPort": lambda s: _text(s).rsplit(":", 1)[0] if ":" in _text(s) else _text(s),
    "safeHtml": lambda s: _text(s),
    "not": lambda v: not _truthy(v),
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "gt": lambda a, b: _num(a) > _num(b),
    "lt": lambda a, b: _num(a) < _num(b),
    "ge": lambda a, b: _num(a) >= _num(b),
    "le": lambda a, b: _num(a) <= _num(b),
}

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(`[^`]*`)|(\()|(\))|([^\s()]+))')


def _truthy(v: Any) -> bool:
    if isinstance(v, float | int):
        return v != 0
    return bool(v)


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise TemplateError(f"unexpected {text[pos:]!r} in command")
        pos = m.end()
        out.append(next(g for g in m.groups() if g is not None))
    return out


class _Eval:
    def __init__(self, scope: dict[str, Any]) -> None:
        self.scope = scope

    def operand(self, tok: str) -> Any:
        if tok.startswith('"'):
            return bytes(tok[1:-1], "utf-8").decode("unicode_escape")
        if tok.startswith("`"):
            return tok[1:-1]
        if tok in ("true", "false"):
            return tok == "true"
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
        if re.fullmatch(r"-?\d*\.\d+(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+", tok):
            return float(tok)
        if tok.startswith("$") or tok.startswith("."):
            head, *fields = tok.split(".") if tok.startswith("$") else ["$", *tok[1:].split(".")]
            if head == "$" and fields and fields[0]:
                root = {"Labels": self.scope["labels"], "ExternalLabels": self.scope["externalLabels"],
                        "Value": self.scope["value"]}
                value: Any = root
            elif head == "$":
                return self.scope["value"] if not fields else self.scope
            else:
                if head[1:] not in self.scope:
                    raise TemplateError(f'undefined variable "{head}"')
                value = self.scope[head[1:]]
            for f in fields:
                if not f:
                    continue
                if not isinstance(value, dict):
                    raise TemplateError(f"can't evaluate field {f}")
                value = value.get(f, "")
            return value
        if tok in FUNCS:
            return FUNCS[tok]()
        raise TemplateError(f'function "{tok}" not defined')

    def command(self, toks: list[str], piped: list[Any]) -> Any:
        if not toks:
            raise TemplateError("empty command")
        args = self.args(toks[1:])
        if toks[0] in FUNCS:
            return FUNCS[toks[0]](*args, *piped)
        if args or piped:
            if toks[0] == "(":
                pass
            else:
                raise TemplateError(f"can't give argument to non-function {toks[0]}")
        return self.operand(toks[0])

    def args(self, toks: list[str]) -> list[Any]:
        out: list[Any] = []
        i = 0
        while i < len(toks):
            if toks[i] == "(":
                depth, j = 1, i + 1
                while j < len(toks) and depth:
                    depth += {"(": 1, ")": -1}.get(toks[j], 0)
                    j += 1
                out.append(self.pipeline(toks[i + 1:j - 1]))
                i = j
            else:
                out.append(self.operand(toks[i]))
                i += 1
        return out

    def pipeline(self, toks: list[str]) -> Any:
        parts: list[list[str]] = [[]]
        depth = 0
        for t in toks:
            depth += {"(": 1, ")": -1}.get(t, 0)
            if t == "|" and depth == 0:
                parts.append([])
            else:
                parts[-1].append(t)
        value: Any = None
        for index, part in enumerate(parts):
            if len(part) == 1 and part[0] not in FUNCS and index == 0:
                value = self.operand(part[0])
                continue
            if part and part[0] == "(" and index == 0:
                value = self.args(part)[0]
                continue
            value = self.command(part, [] if index == 0 else [value])
        return value


def expand(template: str, labels: dict[str, str], value: float,
           external_labels: dict[str, str] | None = None) -> str:
    """Expand one template; on error, Prometheus' error text (the alert still fires)."""
    if "{{" not in template:
        return template
    scope: dict[str, Any] = {"labels": dict(labels), "externalLabels": dict(external_labels or {}),
                             "value": value}
    try:
        return _render(template, _Eval(scope))
    except (TemplateError, TypeError, ValueError, KeyError, re.error) as exc:
        return f"<error expanding template: {exc}>"


def _render(template: str, ev: _Eval) -> str:
    # Split into text and actions, honouring trim markers.
    pieces: list[tuple[str, str]] = []
    pos = 0
    for m in _ACTION.finditer(template):
        text = template[pos:m.start()]
        if m.group(1):
            text = text.rstrip()
        pieces.append(("text", text))
        pieces.append(("action", m.group(2)))
        pos = m.end()
        if m.group(3):
            rest = template[pos:]
            pos += len(rest) - len(rest.lstrip())
    pieces.append(("text", template[pos:]))
    out: list[str] = []
    # Stack of (emitting?, branch already taken?)
    stack: list[tuple[bool, bool]] = []

    def emitting() -> bool:
        return all(e for e, _ in stack)

    for kind, body in pieces:
        if kind == "text":
            if emitting():
                out.append(body)
            continue
        body = body.strip()
        if body.startswith("/*"):
            continue
        toks = _tokens(body)
        if not toks:
            raise TemplateError("missing value for command")
        if toks[0] == "if":
            cond = _truthy(ev.pipeline(toks[1:])) if emitting() else False
            stack.append((cond, cond))
        elif toks[0] == "else":
            if not stack:
                raise TemplateError("unexpected {{else}}")
            _cur, taken = stack.pop()
            if len(toks) > 2 and toks[1] == "if":
                cond = not taken and all(e for e, _ in stack) and _truthy(ev.pipeline(toks[2:]))
                stack.append((cond, taken or cond))
            else:
                stack.append((not taken, True))
        elif toks[0] == "end":
            if not stack:
                raise TemplateError("unexpected {{end}}")
            stack.pop()
        elif len(toks) >= 3 and toks[0].startswith("$") and toks[1] in (":=", "="):
            if emitting():
                ev.scope[toks[0][1:]] = ev.pipeline(toks[2:])
        elif emitting():
            out.append(_text(ev.pipeline(toks)))
    if stack:
        raise TemplateError("unexpected EOF")
    return "".join(out)


__all__ = ["TemplateError", "decimal_digits", "expand", "go_float", "go_float_e", "humanize", "humanize_duration",
           "humanize_percentage"]
