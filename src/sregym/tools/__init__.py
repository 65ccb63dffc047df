"""The agent tool catalogue: typed tools, their JSON schemas, and the per-attempt session.

`ToolSession` is what every agent front end wraps (in-process agents, the Gymnasium session,
the MCP server); `ToolSpec` is derived from each tool's signature and docstring.
"""

from __future__ import annotations

from sregym.tools.session import (
    INVESTIGATION_TOOLS,
    SUBMIT_TOOLS,
    AppContext,
    Phase,
    SessionBackend,
    ToolError,
    ToolSession,
)
from sregym.tools.spec import ToolResult, ToolSpec, tool_spec

__all__ = ["INVESTIGATION_TOOLS", "SUBMIT_TOOLS", "AppContext", "Phase", "SessionBackend", "ToolError",
           "ToolResult", "ToolSession", "ToolSpec", "tool_spec"]
