"""Server-side field validation of writes (`fieldValidation=Strict|Warn|Ignore`).

What the API server does with a decoded write (`machinery/decoding.py` finds the problems):

- create/update: a type error is `400 <Kind> in version "<v>" cannot be handled as a <Kind>:
  json: cannot unmarshal ...`; unknown or duplicate fields are, by mode, the same 400 with
  `strict decoding error: unknown field "...", ...` (Strict, kubectl's default), one
  `Warning: 299 - "unknown field ..."` header each (Warn, the server's default when the client
  says nothing), or nothing (Ignore). The unknown fields are dropped before storing.
- patch: the patched object is decoded; errors are `422  "" is invalid: patch: Invalid value:
  "<the patch>": ...` (kubectl: `The request is invalid: patch: ...`), duplicates in the patch
  body first.
"""

from __future__ import annotations

import json
from typing import Any

from sregym.errors import BadRequest, invalid
from sregym.twin.machinery.decoding import Decoded, decode, has_schema

MODES = ("Strict", "Warn", "Ignore")


def mode_of(query: Any) -> str:
    value = query.get("fieldValidation") or "Warn"
    return value if value in MODES else "Warn"


def warning_header(text: str) -> bytes | None:
    """RFC 7234 warning as the API server sends it: `299 - "<text with quotes escaped>"`; None
    for text outside printable ASCII (a fuzzer's field name), which many HTTP stacks refuse."""
    if not all(0x20 <= ord(c) < 0x7F for c in text):
        return None
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'.encode("ascii")


def _target(call: Any, body: dict[str, Any]) -> tuple[str, str, str] | None:
    kind = call.kind
    if kind.custom or kind.virtual or not has_schema(kind.group, kind.version, kind.kind):
        return None
    api_version = body.get("apiVersion", kind.api_version)
    if body.get("kind", kind.kind) != kind.kind or api_version != kind.api_version:
        return None  # the mismatch is reported by the body checks, before decoding
    return kind.group, kind.version, kind.kind


def check_body(call: Any, body: Any) -> Any:
    """Create/update: the body with unknown fields dropped, or the decoding error."""
    if not isinstance(body, dict):
        return body
    target = _target(call, body)
    if target is None:
        return body
    body = _copy(body)
    found = decode(body, *target)
    kind, version = target[2], target[1]
    prefix = f'{kind} in version "{version}" cannot be handled as a {kind}: '
    if found.type_error:
        raise BadRequest(prefix + found.type_error)
    _report(call, found.strict, lambda text: BadRequest(prefix + text))
    return plain(body)


def check_patched(call: Any, patched: Any, raw_patch: Any, patch_type: str) -> None:
    """Patch: decode the patched object in place (unknown fields dropped) or refuse the patch."""
    if not isinstance(patched, dict):
        return
    target = _target(call, patched)
    if target is None:
        return
    found = decode(patched, *target, sorted_keys=True)
    shown = go_map(raw_patch) if patch_type == "strategic" else \
        json.dumps(patched, sort_keys=True, separators=(",", ":"))

    def refuse(text: str) -> Exception:
        return invalid("", "", [("FieldValueInvalid", "patch", f'Invalid value: "{_quote(shown)}": {text}')])

    if found.type_error:
        raise refuse(found.type_error)
    _report(call, duplicates(raw_patch) + found.strict, refuse)
    patched.update(plain(patched))


def _report(call: Any, findings: list[str], error: Any) -> None:
    if not findings:
        return
    mode = mode_of(call.query)
    if mode == "Strict":
        raise error("strict decoding error: " + ", ".join(findings))
    if mode == "Warn":
        call.warnings.extend(findings)


def duplicates(value: Any, path: str = "") -> list[str]:
    """`duplicate field "..."` for every key a JSON body repeats (see `decoding.DuplicateKeys`)."""
    out: list[str] = []
    if isinstance(value, dict):
        order = getattr(value, "keys_in_order", None) or list(value)
        seen: set[str] = set()
        for key in order:
            where = f"{path}.{key}" if path else key
            if key in seen:
                out.append(f'duplicate field "{where}"')
                continue
            seen.add(key)
            out.extend(duplicates(value[key], where))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out.extend(duplicates(item, f"{path}[{i}]"))
    return out


def go_map(value: Any) -> str:
    """Go's `%+v` of a decoded JSON value (`map[spec:map[replicas:x]]`), keys sorted."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_map(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_map(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def plain(value: Any) -> Any:
    """The value with every `DuplicateKeys` turned back into a plain dict (what gets stored)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _copy(value: Any) -> Any:
    """A deep copy that keeps `DuplicateKeys` (their key order is needed while decoding)."""
    if isinstance(value, dict):
        out = type(value)((k, _copy(v)) for k, v in value.items())
        if hasattr(value, "keys_in_order"):
            out.keys_in_order = list(value.keys_in_order)  # type: ignore[attr-defined]
        return out
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


__all__ = ["MODES", "Decoded", "check_body", "check_patched", "duplicates", "go_map", "mode_of",
           "warning_header"]
