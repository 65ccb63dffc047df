"""The span event an OpenFeature traces hook adds when a handler evaluates a flag.

Why: in the demo, services whose SDK registers the OpenTelemetry traces hook add an event named
`feature_flag.evaluation` to the span current during the evaluation, so an SRE sees in Jaeger
which flag, provider and variant a request ran with. Services without the hook (ad, payment)
add nothing. Modelled: the Go hook (go-sdk-contrib `hooks/open-telemetry` v0.3.6, `traces.go`,
semconv v1.34) as checkout registers it: `feature_flag.key`, `feature_flag.provider.name` (the
flagd provider's metadata name `flagd`) and `feature_flag.result.variant` when the evaluation
returned one, on the handler's server span (checkout evaluates with PlaceOrder's context).
A failed evaluation (flagd unreachable) goes through the hook's error path, which records an
exception instead: no evaluation event then.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

EVENT_NAME = "feature_flag.evaluation"


class TracesHook(BaseModel):
    """A program's OpenFeature traces hook: its flavour, its provider's name, and the flags each
    operation's handler evaluates (operation key → flag names, in evaluation order)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    style: Literal["go-otel"] = "go-otel"
    provider: str
    operations: dict[str, tuple[str, ...]]


def event_attributes(hook: TracesHook, flag: str, variant: str) -> dict[str, Any]:
    """The attributes one successful evaluation's event carries."""
    attrs: dict[str, Any] = {"feature_flag.key": flag, "feature_flag.provider.name": hook.provider}
    if variant:
        attrs["feature_flag.result.variant"] = variant
    return attrs


def server_span_events(hook: TracesHook | None, op_key: str, evaluated: dict[str, tuple[str, str]],
                       at_us: int) -> list[tuple[int, str, dict[str, Any]]]:
    """The events a handler's server span gets: one per flag it evaluated successfully this tick
    (`evaluated`: flag → (value, variant) from the SDK; absent when the evaluation failed)."""
    if hook is None:
        return []
    out = []
    for i, flag in enumerate(hook.operations.get(op_key, ())):
        found = evaluated.get(flag)
        if found is not None:
            out.append((at_us + i, EVENT_NAME, event_attributes(hook, flag, found[1])))
    return out


__all__ = ["EVENT_NAME", "TracesHook", "event_attributes", "server_span_events"]
