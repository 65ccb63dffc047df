"""Reading an agent's tool call, in the shapes RL frameworks and LLM APIs produce.

Accepted, as a dict or as its JSON text:
- `{"tool": "kubectl", "args": {"command": "get pods"}}` (sregym's own shape);
- `{"name": "kubectl", "arguments": {...}}` or with `arguments` as a JSON string (MCP, and the
  `function` part of an OpenAI tool call);
- `{"type": "function", "function": {"name": ..., "arguments": "..."}}` (a whole OpenAI tool call).

A malformed call is not an exception: it becomes an error observation for the agent, the way a
shell answers a typo, and costs no tool call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None  # the OpenAI tool-call id, echoed in the tool message


class MalformedCall(ValueError):
    """The action is not a tool call; the message is the observation the agent gets."""


SHAPE = 'a tool call is {"tool": name, "args": {...}} (or {"name": ..., "arguments": {...}})'


def read_call(action: Any) -> ToolCall:
    """The tool call `action` denotes, or `MalformedCall` saying what is wrong with it."""
    if isinstance(action, str):
        try:
            action = json.loads(action)
        except ValueError:
            raise MalformedCall(f"the action is not valid JSON: {SHAPE}") from None
    if not isinstance(action, dict):
        raise MalformedCall(SHAPE)
    call_id = action.get("id") if isinstance(action.get("id"), str) else None
    if isinstance(action.get("function"), dict):
        action = action["function"]
    if "tool" in action:
        name, args, allowed = action.get("tool"), action.get("args"), {"tool", "args"}
    else:
        name, args, allowed = action.get("name"), action.get("arguments"), {"name", "arguments", "id", "type"}
    if not isinstance(name, str) or not name:
        raise MalformedCall(SHAPE)
    extra = sorted(set(action) - allowed)
    if extra:
        raise MalformedCall(f"unknown field(s) {', '.join(extra)} in the tool call: {SHAPE}")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            raise MalformedCall("the tool call's arguments are not valid JSON") from None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise MalformedCall("the tool call's arguments must be a JSON object")
    return ToolCall(tool=name, args=args, call_id=call_id)


__all__ = ["SHAPE", "MalformedCall", "ToolCall", "read_call"]
