"""Bodies in and out: content negotiation, JSON/YAML decoding, `Status` responses.

Clients say what they want in `Accept` (kubectl asks for `as=Table` when printing, discovery
clients ask for `as=APIGroupDiscoveryList`) and what they send in `Content-Type` (JSON, YAML, the
four patch flavours). Everything the server answers is JSON unless YAML was asked for, and every
failure is a `Status` object, never a traceback.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from starlette.responses import Response

from sregym.errors import ApiError, BadRequest
from sregym.twin.api.kube.wall_fields import incoming, outgoing

JSON = "application/json"
YAML = "application/yaml"

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}


class UnsupportedMediaType(ApiError):
    code = 415
    reason = "UnsupportedMediaType"


class NotAcceptable(ApiError):
    code = 406
    reason = "NotAcceptable"


def media_types(header: str | None) -> list[tuple[str, dict[str, str]]]:
    """Parse an Accept/Content-Type header into (type, params) pairs, in order."""
    out: list[tuple[str, dict[str, str]]] = []
    for item in (header or "").split(","):
        pieces = [p.strip() for p in item.split(";")]
        if not pieces[0]:
            continue
        params: dict[str, str] = {}
        for piece in pieces[1:]:
            key, _, value = piece.partition("=")
            params[key.strip().lower()] = value.strip().strip('"')
        out.append((pieces[0].lower(), params))
    return out


def wants_table(accept: str | None) -> bool:
    """kubectl's printing request: `application/json;as=Table;v=v1;g=meta.k8s.io`."""
    return any(params.get("as") == "Table" and params.get("g", "meta.k8s.io") == "meta.k8s.io"
               for _mt, params in media_types(accept))


def wants_yaml(accept: str | None) -> bool:
    for media, params in media_types(accept):
        if params.get("as"):
            continue
        if media in (YAML, "application/x-yaml", "text/yaml"):
            return True
        if media in (JSON, "*/*", "application/*"):
            return False
    return False


def encode_json(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def respond(obj: Any, status: int = 200, *, accept: str | None = None,
            content_type: str = JSON) -> Response:
    obj = outgoing(obj)  # timestamps as the client's clock reads them (api/wall_time.py)
    if content_type == JSON and wants_yaml(accept):
        body = yaml.safe_dump(obj, sort_keys=False, allow_unicode=True).encode()
        return Response(body, status_code=status, media_type=YAML)
    return Response(encode_json(obj), status_code=status, media_type=content_type)


def error_response(err: ApiError, *, headers: dict[str, str] | None = None) -> Response:
    return Response(encode_json(err.to_status()), status_code=err.code, media_type=JSON,
                    headers=headers)


def success_status(details: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details}


def decode_body(raw: bytes, content_type: str | None) -> Any:
    """Decode a request body sent as JSON or YAML (what kubectl and the clients send), its
    timestamps mapped back to simulated time (api/wall_time.py)."""
    return incoming(_decode_body(raw, content_type))


def _decode_body(raw: bytes, content_type: str | None) -> Any:
    media = media_types(content_type)[0][0] if media_types(content_type) else JSON
    if not raw.strip():
        raise BadRequest("the body of the request was empty")
    if media == "application/vnd.kubernetes.protobuf":
        from sregym.twin.api.kube.protobuf import decode

        return decode(raw)
    if "protobuf" in media or "cbor" in media:
        raise UnsupportedMediaType(
            f'the body of the request was in an unknown format - accepted media types include: '
            f'{JSON}, {YAML}', details={"causes": [{"reason": "UnsupportedMediaType",
                                                    "message": media}]})
    from sregym.twin.api.kube.limits import load_json, load_yaml
    from sregym.twin.api.kube.malformed import MalformedBody, go_json_error, go_yaml_error

    if media.endswith("yaml"):
        try:
            return load_yaml(raw.decode("utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            detail = go_yaml_error(exc)
            raise MalformedBody(f"error converting YAML to JSON: {detail}", raw=raw,
                                detail=detail, yaml=True) from None
    try:
        return load_json(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        detail = go_json_error(raw, exc)
        raise MalformedBody(f"couldn't get version/kind; json parse error: {detail}", raw=raw,
                            detail=detail) from None


def patch_type_of(content_type: str | None) -> str:
    media = media_types(content_type)[0][0] if media_types(content_type) else ""
    patch_type = PATCH_TYPES.get(media)
    if patch_type is None:
        accepted = ", ".join(PATCH_TYPES)
        raise UnsupportedMediaType(
            f"the body of the request was in an unknown format - accepted media types include: "
            f"{accepted}")
    return patch_type


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


__all__ = ["JSON", "YAML", "NotAcceptable", "UnsupportedMediaType", "decode_body", "encode_json",
           "error_response", "media_types", "patch_type_of", "respond", "success_status",
           "wants_table", "wants_yaml"]
