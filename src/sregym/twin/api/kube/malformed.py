"""Bodies that do not parse, answered in the words of the API server's Go decoders.

Which words depends on who decodes: a create or update body goes through the codec, which cannot
even find its kind (`the object provided is unrecognized (must be of type ConfigMap): couldn't get
version/kind; json parse error: invalid character 'b' looking for beginning of object key string
({"apiVersion":"v1",bad})`); a patch body is unmarshalled by the patch handler (`invalid
character ...` for a strategic merge patch, `error decoding patch: invalid character ...` for
merge and JSON patches). YAML errors carry go-yaml's `yaml: line N: <problem>`, whose problem
texts are libyaml's, as PyYAML's are.
"""

from __future__ import annotations

from sregym.errors import BadRequest
from sregym.twin.api.kube.gojson import syntax_error

SUMMARY_BYTES = 30


class MalformedBody(BadRequest):
    """A request body that is not JSON/YAML; `detail` is the decoder's own error text."""

    def __init__(self, message: str, *, raw: bytes, detail: str, yaml: bool = False) -> None:
        super().__init__(message)
        self.raw = raw
        self.detail = detail
        self.yaml = yaml


def go_json_error(raw: bytes, exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "invalid character in string literal"
    return syntax_error(raw) or "unexpected end of JSON input"


def go_yaml_error(exc: BaseException) -> str:
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"yaml: line {mark.line + 1}: {problem}"
    text = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
    return text if text.startswith("yaml:") else f"yaml: {text}"


def summarize(raw: bytes) -> str:
    """apimachinery's summarizeData: a JSON object's first bytes as text, anything else as hex."""
    if not raw:
        return "<empty>"
    cut = raw[:SUMMARY_BYTES]
    more = " ..." if len(raw) > SUMMARY_BYTES else ""
    if raw[:1] == b"{":
        return cut.decode("utf-8", "replace") + more
    return cut.hex() + more


def reword(exc: MalformedBody, kind: str, method: str, content_type: str | None) -> BadRequest:
    """The error for this verb: the codec's for POST/PUT, the patch handler's for PATCH."""
    if method == "PATCH":
        media = (content_type or "").split(";")[0].strip().lower()
        if media == "application/strategic-merge-patch+json":
            return BadRequest(exc.detail)
        if media in ("application/merge-patch+json", "application/json-patch+json"):
            return BadRequest(f"error decoding patch: {exc.detail}")
        return exc
    return BadRequest(f"the object provided is unrecognized (must be of type {kind}): "
                      f"{exc.message} ({summarize(exc.raw)})")


__all__ = ["MalformedBody", "go_json_error", "go_yaml_error", "reword", "summarize"]
