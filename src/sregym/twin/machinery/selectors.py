"""Label and field selectors with Kubernetes semantics.

A selector is parsed once into a list of requirements and then matched against many objects; the
parser accepts the string syntax kubectl sends (`app=web,tier!=db,env in (a,b),!legacy`) and the
structured `LabelSelector` of manifests (`matchLabels`, `matchExpressions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sregym.errors import BadRequest


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.op == "=":
            return present and value == self.values[0]
        if self.op == "!=":
            return not present or value != self.values[0]
        if self.op == "in":
            return present and value in self.values
        if self.op == "notin":
            return not present or value not in self.values
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("gt", "lt"):
            try:
                number = int(value or "")
            except ValueError:
                return False
            bound = int(self.values[0])
            return number > bound if self.op == "gt" else number < bound
        return False


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()
    # A nil structured selector matches nothing; an empty one matches everything.
    match_nothing: bool = False

    def matches(self, labels: dict[str, str] | None) -> bool:
        if self.match_nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements and not self.match_nothing


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(match_nothing=True)

_TOKEN = re.compile(r"\s*(!=|==|=|!|,|\(|\)|[^\s!=,()]+)")


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse the string form; raise BadRequest with the API server's wording when malformed."""
    if text is None or not text.strip():
        return EVERYTHING
    tokens = _TOKEN.findall(text)
    reqs: list[Requirement] = []
    i = 0

    def fail() -> BadRequest:
        return BadRequest(f"unable to parse requirement: found '{text}', expected: valid selector")

    while i < len(tokens):
        tok = tokens[i]
        if tok == ",":
            i += 1
            continue
        if tok == "!":
            if i + 1 >= len(tokens):
                raise fail()
            reqs.append(Requirement(tokens[i + 1], "!"))
            i += 2
            continue
        key = tok
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ","
        if nxt == ",":
            reqs.append(Requirement(key, "exists"))
            i += 1
            continue
        if nxt in ("=", "==", "!="):
            value = tokens[i + 2] if i + 2 < len(tokens) and tokens[i + 2] != "," else ""
            reqs.append(Requirement(key, "!=" if nxt == "!=" else "=", (value,)))
            i += 3 if value else 2
            continue
        if nxt in ("in", "notin"):
            if i + 2 >= len(tokens) or tokens[i + 2] != "(":
                raise fail()
            j = i + 3
            values: list[str] = []
            while j < len(tokens) and tokens[j] != ")":
                if tokens[j] != ",":
                    values.append(tokens[j])
                j += 1
            if j >= len(tokens):
                raise fail()
            reqs.append(Requirement(key, nxt, tuple(values)))
            i = j + 1
            continue
        raise fail()
    return LabelSelector(tuple(reqs))


def selector_from_spec(spec: dict[str, Any] | None) -> LabelSelector:
    """Build a selector from a structured `LabelSelector` (nil matches nothing)."""
    if spec is None:
        return NOTHING
    reqs = [Requirement(k, "=", (str(v),)) for k, v in sorted((spec.get("matchLabels") or {}).items())]
    for expr in spec.get("matchExpressions") or []:
        op = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!",
              "Gt": "gt", "Lt": "lt"}.get(expr.get("operator", ""))
        if op is None:
            return NOTHING
        reqs.append(Requirement(expr.get("key", ""), op, tuple(str(v) for v in expr.get("values") or ())))
    return LabelSelector(tuple(reqs))


def selector_from_map(labels: dict[str, str] | None) -> LabelSelector:
    """A Service-style selector map. An empty or missing map selects nothing for Services, which
    callers decide; this helper returns the everything-selector for an empty map."""
    return LabelSelector(tuple(Requirement(k, "=", (str(v),)) for k, v in sorted((labels or {}).items())))


def selector_to_string(spec: dict[str, Any] | None) -> str:
    """Render a structured selector the way kubectl prints it (`app=web,tier in (a,b)`)."""
    if not spec:
        return ""
    parts = [f"{k}={v}" for k, v in sorted((spec.get("matchLabels") or {}).items())]
    for expr in spec.get("matchExpressions") or []:
        op = expr.get("operator")
        key = expr.get("key")
        values = ",".join(expr.get("values") or [])
        if op == "In":
            parts.append(f"{key} in ({values})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({values})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


@dataclass(frozen=True)
class FieldSelector:
    terms: tuple[tuple[str, str, str], ...] = ()  # (path, op, value) with op "=" or "!="

    def matches(self, obj: dict[str, Any]) -> bool:
        for path, op, value in self.terms:
            actual = field_value(obj, path)
            if (actual == value) != (op == "="):
                return False
        return True


def parse_field_selector(text: str | None) -> FieldSelector:
    if text is None or not text.strip():
        return FieldSelector()
    terms = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-/]+)\s*(==|!=|=)\s*(.*)", part)
        if not m:
            raise BadRequest(f'invalid selector: \'{text}\'; can\'t understand \'{part}\'')
        terms.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3)))
    return FieldSelector(tuple(terms))


def field_value(obj: dict[str, Any], path: str) -> str:
    """Read a dotted path as the string the field-selector index would hold ("" when absent)."""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)
