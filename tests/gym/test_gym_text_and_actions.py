"""The pure parts of the Gymnasium interface: mapping text into the `Text` space and reading
tool calls in the shapes RL frameworks produce."""

from __future__ import annotations

import json

import pytest

from sregym.gym.actions import MalformedCall, ToolCall, read_call
from sregym.gym.text import CHARSET, bounded, to_charset


def test_characters_outside_the_charset_are_escaped_not_dropped() -> None:
    assert to_charset("plain text\n\tok") == "plain text\n\tok"
    assert to_charset("3 pods …\r\n") == "3 pods \\u2026\\r\n"
    assert set(to_charset("é µ ☃ \x00")) <= set(CHARSET)


@pytest.mark.parametrize("length", [1, 10, 45, 100, 1000])
def test_bounded_text_fits_and_says_how_much_was_cut(length: int) -> None:
    text = "x" * 500
    out = bounded(text, length)
    assert len(out) <= length
    if 45 <= length < 500:
        kept = out.split("\n[...")[0]
        assert out.endswith(f"[... {500 - len(kept)} more characters truncated]")
    assert bounded("short", max(length, 5)) == "short"
    assert bounded(text, 1000) == text


def test_tool_calls_in_every_accepted_shape() -> None:
    want = ToolCall("kubectl", {"command": "get pods"})
    assert read_call({"tool": "kubectl", "args": {"command": "get pods"}}) == want
    assert read_call(json.dumps({"tool": "kubectl", "args": {"command": "get pods"}})) == want
    assert read_call({"name": "kubectl", "arguments": '{"command": "get pods"}'}) == want
    openai = {"id": "call_1", "type": "function",
              "function": {"name": "kubectl", "arguments": '{"command": "get pods"}'}}
    assert read_call(openai) == ToolCall("kubectl", {"command": "get pods"}, call_id="call_1")
    assert read_call({"tool": "get_alerts"}) == ToolCall("get_alerts", {})


@pytest.mark.parametrize(("action", "message"), [
    ("kubectl get pods", "not valid JSON"),
    ([1, 2], "a tool call is"),
    ({"tool": "kubectl", "args": [1]}, "must be a JSON object"),
    ({"tool": "kubectl", "argz": {}}, "unknown field(s) argz"),
    ({"name": "kubectl", "arguments": "{oops"}, "arguments are not valid JSON"),
    ({"tool": ""}, "a tool call is"),
])
def test_malformed_calls_say_what_is_wrong(action: object, message: str) -> None:
    with pytest.raises(MalformedCall, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_call(action)
