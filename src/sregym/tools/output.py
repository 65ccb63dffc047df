"""Compact observations: long outputs are cut with a notice that says so and how to narrow.

Agents pay for every character they read; a silent cut would make them reason from a partial
picture without knowing it. The cut keeps the head (headers, first rows) and the tail (the most
recent log lines, the error at the end) and states how much was left out.
"""

from __future__ import annotations

DEFAULT_MAX_CHARS = 12_000


def compact(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """`text`, or its head and tail with a truncation notice in between."""
    if len(text) <= max_chars:
        return text
    head_len = max_chars * 2 // 3
    tail_len = max_chars - head_len
    head = text[:head_len]
    head = head[: head.rfind("\n")] if "\n" in head else head
    tail = text[-tail_len:]
    tail = tail[tail.find("\n") + 1:] if "\n" in tail else tail
    omitted = len(text) - len(head) - len(tail)
    lines = text.count("\n", len(head), len(text) - len(tail))
    notice = (f"\n[... output truncated: {omitted} characters ({lines} lines) omitted; narrow the "
              f"query (selectors, --tail, limit, a shorter time range) to see them ...]\n")
    return head + notice + tail


__all__ = ["DEFAULT_MAX_CHARS", "compact"]
