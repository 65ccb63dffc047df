"""A loopback OpenAI-compatible chat-completions server that answers from a script, for tests of
LLM agents: the `openai` SDK talks real HTTP to it (it uses httpx2, so patching httpx would not
reach it), so retries, errors and parsing are exercised for real."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, dict[str, Any]]


def tool_call(name: str, arguments: str | dict[str, Any], *, tokens: tuple[int, int] = (100, 10),
              call_id: str = "call_1") -> Reply:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return 200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "scripted",
                 "choices": [{"index": 0, "finish_reason": "tool_calls",
                              "message": {"role": "assistant", "content": None,
                                          "tool_calls": [{"id": call_id, "type": "function",
                                                          "function": {"name": name, "arguments": raw}}]}}],
                 "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1],
                           "total_tokens": sum(tokens)}}


def text(content: str, *, tokens: tuple[int, int] = (50, 20)) -> Reply:
    return 200, {"id": "chatcmpl-2", "object": "chat.completion", "created": 0, "model": "scripted",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": content}}],
                 "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1],
                           "total_tokens": sum(tokens)}}


def error(status: int, message: str = "scripted failure") -> Reply:
    return status, {"error": {"message": message, "type": "server_error", "code": None}}


class ScriptedModel:
    """A chat-completions endpoint answering from a script; records every request body."""

    def __init__(self, script: list[Reply], default: Callable[[], Reply] | None = None) -> None:
        self.script = list(script)
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.auth: list[str | None] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.requests.append(body)
                model.paths.append(self.path)
                model.auth.append(self.headers.get("Authorization"))
                if model.script:
                    status, payload = model.script.pop(0)
                elif model.default is not None:
                    status, payload = model.default()
                else:
                    status, payload = error(500, "script exhausted")
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0.01")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def received(self) -> list[dict[str, Any]]:
        """Every request so far as {"path", "body", "auth"}."""
        return [{"path": p, "body": b, "auth": a} for p, b, a in zip(self.paths, self.requests, self.auth,
                                                                     strict=True)]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


__all__ = ["Reply", "ScriptedModel", "error", "text", "tool_call"]
