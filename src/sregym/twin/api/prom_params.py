"""Request bodies of the Prometheus-style APIs (the time and duration syntax is in
`sregym.twin.telemetry.promtime`)."""

from __future__ import annotations

from urllib.parse import parse_qsl


class FormData:
    """An `application/x-www-form-urlencoded` body as a multi-dict (`get`, `getlist`, `in`),
    parsed without python-multipart (the query APIs only ever receive url-encoded forms)."""

    def __init__(self, body: bytes) -> None:
        text = body.decode("utf-8", errors="replace")
        self._pairs = parse_qsl(text, keep_blank_values=True)

    def __contains__(self, name: object) -> bool:
        return any(k == name for k, _v in self._pairs)

    def get(self, name: str, default: str | None = None) -> str | None:
        return next((v for k, v in self._pairs if k == name), default)

    def getlist(self, name: str) -> list[str]:
        return [v for k, v in self._pairs if k == name]


__all__ = ["FormData"]
