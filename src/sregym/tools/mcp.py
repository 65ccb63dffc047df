"""The tool catalogue served over MCP: a thin adapter over one `ToolSession`.

Any MCP-capable agent (an IDE assistant, a coding CLI, a custom loop) can be benchmarked by
pointing it at `sregym mcp --problem ID`. The server adds no behaviour of its own: every tool is
the catalogue's `ToolSpec` (same name, description and JSON schema), every call goes to
`ToolSession.call`, and an observation flagged `is_error` is raised as `ToolError` so the client
sees `isError: true` with the message. The conductor behind the session moves the phases when
the agent calls the submit tools, exactly as for an in-process agent; once the attempt is scored
the result is handed to `on_finished` (the CLI prints it and can write it to a file).

The `mcp` SDK is heavy, so it is imported only when a server is built.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from sregym.tools import ToolSession, ToolSpec

SERVER_NAME = "sregym"

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                               "array": list[Any], "object": dict[str, Any]}


def _annotation(schema: dict[str, Any]) -> Any:
    """The Python type the SDK validates an argument against. Types are kept (so the SDK does not
    JSON-decode a string argument such as a kubectl command) but kept loose: the catalogue itself
    validates and answers a wrong argument with an observation."""
    kind = schema.get("type")
    py = _JSON_TYPES.get(kind, Any) if isinstance(kind, str) else Any
    return py | None if py is not Any else Any


def _signature(spec: ToolSpec) -> inspect.Signature:
    props: dict[str, Any] = spec.input_schema.get("properties") or {}
    required = set(spec.input_schema.get("required") or ())
    params = []
    for name in sorted(props, key=lambda n: (n not in required, list(props).index(n))):
        default = inspect.Parameter.empty if name in required else props[name].get("default")
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=_annotation(props[name])))
    return inspect.Signature(params, return_annotation=str)


class McpAdapter:
    """Binds one `ToolSession` to MCP tools; calls are serialised (the SDK runs sync tools on
    worker threads, the session and its twin are single-threaded)."""

    def __init__(self, session: ToolSession, *, on_call: Callable[[], None] | None = None) -> None:
        self.session = session
        self._lock = threading.Lock()
        self._on_call = on_call

    def call(self, name: str, args: dict[str, Any]) -> str:
        from mcp.server.mcpserver.exceptions import ToolError

        # The SDK fills in defaults for every optional parameter; pass on only what was given or
        # differs from None so the catalogue applies its own defaults.
        given = {k: v for k, v in args.items() if v is not None}
        with self._lock:
            result = self.session.call(name, given)
            if self._on_call is not None:
                self._on_call()
        if result.is_error:
            raise ToolError(result.text)
        return result.text

    def tool_function(self, spec: ToolSpec) -> Callable[..., str]:
        def call(**kwargs: Any) -> str:
            return self.call(spec.name, kwargs)

        call.__name__ = spec.name
        call.__doc__ = spec.description
        call.__signature__ = _signature(spec)  # type: ignore[attr-defined]
        return call


def build_server(session: ToolSession, *, instructions: str = "",
                 on_call: Callable[[], None] | None = None) -> MCPServer:
    """An `MCPServer` whose tools are exactly `session.specs()`.

    `instructions` (the incident brief) is what MCP clients show the model when it connects;
    `on_call` runs after every tool call (the CLI uses it to notice the end of the attempt).
    """
    from sregym import __version__
    from sregym.extras import require

    require("mcp", "serving the agent tools over MCP")
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools.base import Tool

    adapter = McpAdapter(session, on_call=on_call)
    tools = []
    for spec in session.specs():
        tool = Tool.from_function(adapter.tool_function(spec), name=spec.name, description=spec.description,
                                  structured_output=False)
        # Advertise the catalogue's own schema (descriptions, defaults), not the SDK's rendering.
        tools.append(tool.model_copy(update={"parameters": dict(spec.input_schema)}))
    # The version lets a client (and a results file) tell which sregym served the tools.
    return MCPServer(SERVER_NAME, version=__version__, instructions=instructions or None, tools=tools,
                     log_level="WARNING")


__all__ = ["SERVER_NAME", "McpAdapter", "build_server"]
