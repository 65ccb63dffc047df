"""Reading a request body with a size bound, for every API the twin serves.

Starlette's `request.body()` buffers whatever arrives; a client could send gigabytes. The real
servers stop early (kube-apiserver at 3 MiB with `413 Request entity too large`, Go's ParseForm at
10 MiB with `http: POST too large`), so the twin reads at most `limit` bytes — refusing at once
when `Content-Length` already says more — and lets each API word the error as its server does.
"""

from __future__ import annotations

from starlette.requests import Request


class BodyTooLarge(Exception):
    """The body exceeds the API's limit (`limit` bytes)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body larger than {limit} bytes")
        self.limit = limit


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
    body = b"".join(chunks)
    request._body = body  # later `await request.body()` calls see the same bytes
    return body


__all__ = ["BodyTooLarge", "read_body"]
