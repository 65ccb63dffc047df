"""Fixtures shared by the oracle tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sregym.oracles.checklist import QUESTIONS


@pytest.fixture
def llm_server() -> Iterator[tuple[list[dict], str]]:
    """An OpenAI-compatible endpoint that answers every question "yes"."""
    seen: list[dict] = []
    reply = json.dumps({"answers": [{"id": q.id, "answer": True, "evidence": "ok", "confidence": 1.0}
                                    for q in QUESTIONS]})

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"body": body, "auth": self.headers.get("Authorization")})
            payload = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": reply}}],
                                  "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield seen, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
