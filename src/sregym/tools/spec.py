"""Tool specifications derived from typed Python functions.

A tool is an ordinary function with type hints and a Google-style docstring; its JSON schema is
derived from them, so the one definition serves the in-process session, the Gymnasium session
and the MCP server, and a description can never drift from the code that implements it.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter


@dataclass(frozen=True)
class ToolSpec:
    """What an agent is told about one tool: its name, a neutral description and the JSON schema
    of its arguments (an `object` schema, as OpenAI tools and MCP expect)."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI chat-completions `tools` entry for this tool."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": self.input_schema}}


@dataclass(frozen=True)
class ToolResult:
    """One observation: compact text, and whether the call failed (a failed call is still an
    observation; it never raises into the agent loop)."""

    text: str
    is_error: bool = False


_SECTION = re.compile(r"^(\w[\w ]*):\s*$")
_ARG = re.compile(r"^(\w+)\s*(?:\([^)]*\))?:\s*(.*)$")


def _split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """(summary, {arg: description}) from a Google-style docstring: the text before the first
    section is the description; `Args:` lines are `name: text`, continued on deeper indents."""
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    indent = 0
    for line in inspect.cleandoc(doc).splitlines():
        header = _SECTION.match(line)
        if header and not line.startswith(" "):
            section, current = header.group(1).lower(), None
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in ("args", "arguments", "parameters") or not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        match = _ARG.match(line.strip())
        if match and (current is None or depth <= indent):
            current, indent = match.group(1), depth
            args[current] = match.group(2).strip()
        elif current:
            args[current] = f"{args[current]} {line.strip()}".strip()
    paragraphs = "\n".join(summary).strip().split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs), args


def _schema_of(annotation: Any) -> dict[str, Any]:
    schema = TypeAdapter(annotation).json_schema()
    schema.pop("title", None)
    # `X | None` becomes anyOf[X, null]; keep it simple for clients: the non-null branch.
    any_of = schema.get("anyOf")
    if isinstance(any_of, list):
        non_null = [s for s in any_of if s.get("type") != "null"]
        if len(non_null) == 1:
            schema = {**non_null[0], **{k: v for k, v in schema.items() if k != "anyOf"}}
    return schema


def tool_spec(fn: Callable[..., Any], name: str | None = None) -> ToolSpec:
    """The `ToolSpec` of a typed function (bound methods: `self` is skipped)."""
    doc = inspect.getdoc(fn) or ""
    summary, arg_docs = _split_docstring(doc)
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        if param.name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema = _schema_of(hints.get(param.name, str))
        if param.name in arg_docs:
            schema["description"] = arg_docs[param.name]
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        elif param.default is not None:
            schema["default"] = param.default
        properties[param.name] = schema
    input_schema: dict[str, Any] = {"type": "object", "properties": properties,
                                    "additionalProperties": False}
    if required:
        input_schema["required"] = required
    return ToolSpec(name=name or fn.__name__, description=summary, input_schema=input_schema)


__all__ = ["ToolResult", "ToolSpec", "tool_spec"]
