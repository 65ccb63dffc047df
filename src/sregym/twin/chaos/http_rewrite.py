"""HTTPChaos rewrites as chaos-tproxy applies them to one matching request or response.

Matching beyond port/path/method (`ChaosService.http`): `request_headers` (every listed header
must be present with that value) and, for `target: Response`, `code` (only responses with that
status) and `response_headers`. Actions:

- `replace` on a request: `path`, `method` (the server sees another route), `headers`, `queries`;
  on a response: `code`, `headers`, `body` (base64 in the CR, as Go encodes []byte);
- `patch` on a request: `headers` / `queries` appended; on a response: `headers` appended and
  `body` `{type: JSON, value: ...}` merged into a JSON body (RFC 7386 merge patch).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any


def headers_match(wanted: dict[str, Any] | None, headers: dict[str, str] | None) -> bool:
    if not wanted:
        return True
    have = {k.lower(): v for k, v in (headers or {}).items()}
    return all(have.get(str(k).lower()) == str(v) for k, v in wanted.items())


def request_route(effect: Any, path: str, method: str) -> tuple[str, str]:
    """The path and method the server sees after a request-side `replace`."""
    if effect is None or getattr(effect, "target", "Request") != "Request":
        return path, method
    replace = getattr(effect, "replace", None) or {}
    return str(replace.get("path") or path), str(replace.get("method") or method)


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


def rewrite_response(effect: Any, status: int, body: str, headers: dict[str, str]) -> tuple[int, str, dict[str, str]]:
    """A response after the rule's `replace` and `patch` (response-side rules only)."""
    if effect is None or getattr(effect, "target", "Request") != "Response":
        return status, body, headers
    spec_code = getattr(effect, "match_code", None)
    if spec_code is not None and int(spec_code) != status:
        return status, body, headers
    if not headers_match(getattr(effect, "response_headers", None), headers):
        return status, body, headers
    headers = dict(headers)
    replace = getattr(effect, "replace", None) or {}
    if replace.get("code") is not None:
        status = int(replace["code"])
    for key, value in (replace.get("headers") or {}).items():
        headers[str(key)] = str(value)
    if replace.get("body") is not None:
        try:
            body = base64.b64decode(str(replace["body"]), validate=True).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            body = str(replace["body"])
    patch = getattr(effect, "patch", None) or {}
    for pair in patch.get("headers") or []:
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            headers[str(pair[0])] = str(pair[1])
    patch_body = patch.get("body") or {}
    if patch_body.get("type") == "JSON" and patch_body.get("value"):
        try:
            merged = _merge(json.loads(body), json.loads(str(patch_body["value"])))
            body = json.dumps(merged, separators=(",", ":")) + ("\n" if body.endswith("\n") else "")
        except ValueError:
            pass
    return status, body, headers
