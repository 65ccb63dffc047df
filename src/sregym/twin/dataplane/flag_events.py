"""The span event an OpenFeature traces hook adds when a handler evaluates a flag.

Why: in the demo, services whose SDK registers the OpenTelemetry traces hook add an event named
`feature_flag.evaluation` to the span current during the evaluation, so an SRE sees in Jaeger
which flag, provider and variant a request ran with. Services without the hook (ad, payment)
add nothing. Modelled: the Go hook (go-sdk-contrib `hooks/open-telemetry` v0.3.6, `traces.go`,
semconv v1.34) as checkout registers it: `feature_flag.key`, `feature_flag.provider.name` (the
flagd provider's metadata name `flagd`) and `feature_flag.result.variant` when the evaluation
returned one, on the handler's server span (checkout evaluates with PlaceOrder's context).
A failed evaluation goes through the hook's error path instead: `span.RecordError(err, key,
provider)`, an `exception` event. When flagd cannot be reached the flagd provider (v0.3.1)
answers PROVIDER_NOT_READY "connection not made" and the go-sdk (v1.17) wraps it
(`fmt.Errorf("error code: %w", err)`), so the event's `exception.type` is `*fmt.wrapError`.
The .NET SDK's `TraceEnricherHook` (cart, OpenFeature 2.11) adds `feature_flag.evaluation` in its
finally stage with the provider's name (`flagd Provider`, dotnet-sdk-contrib flagd 0.3.4), the
reason lower-cased (`static`), variant and value (null attributes dropped by ActivityTagsCollection);
on a failed evaluation the same event says `error` with `error.type` `providernotready`.
A handler that evaluates on only some requests (product-catalog checks its flag for one product)
gets events on that share of its spans (`shares`), picked from the span's time, not a random stream.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

EVENT_NAME = "feature_flag.evaluation"


class TracesHook(BaseModel):
    """A program's OpenFeature traces hook: its flavour, its provider's name, and the flags each
    operation's handler evaluates (operation key → flag names, in evaluation order)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    style: Literal["go-otel", "dotnet"] = "go-otel"
    provider: str
    operations: dict[str, tuple[str, ...]]
    shares: dict[str, float] = {}  # operation → share of its requests whose handler evaluates


def event_attributes(hook: TracesHook, flag: str, variant: str, value: str = "") -> dict[str, Any]:
    """The attributes one successful evaluation's event carries."""
    attrs: dict[str, Any] = {"feature_flag.key": flag, "feature_flag.provider.name": hook.provider}
    if hook.style == "dotnet":  # EvaluationEventBuilder: reason lower-cased, then variant and value
        attrs["feature_flag.result.reason"] = "static"
    if variant:
        attrs["feature_flag.result.variant"] = variant
    if hook.style == "dotnet":
        attrs["feature_flag.result.value"] = _json_value(value)
    return attrs


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def error_attributes(hook: TracesHook, flag: str, code: str) -> dict[str, Any] | None:
    """The `exception` event of a failed evaluation (None: a failure whose text is not modelled)."""
    if code != "PROVIDER_NOT_READY":
        return None
    if hook.style == "dotnet":  # FinallyAsync runs on errors too: the same event with the error type
        return {"feature_flag.key": flag, "feature_flag.provider.name": hook.provider,
                "feature_flag.result.reason": "error", "feature_flag.result.value": False,
                "error.type": "providernotready"}
    return {"exception.type": "*fmt.wrapError", "exception.message": "error code: PROVIDER_NOT_READY: connection not made",
            "feature_flag.key": flag, "feature_flag.provider.name": hook.provider}


def _evaluates(hook: TracesHook, op_key: str, at_us: int) -> bool:
    share = hook.shares.get(op_key, 1.0)
    return share >= 1.0 or (at_us * 2654435761 % 1_000_003) / 1_000_003 < share


def server_span_events(hook: TracesHook | None, op_key: str, evaluated: dict[str, tuple[str, str]],
                       at_us: int, failed: dict[str, str] | None = None) -> list[tuple[int, str, dict[str, Any]]]:
    """The events a handler's server span gets: one per flag it evaluated this tick (`evaluated`:
    flag → (value, variant) from the SDK; `failed`: flag → error code of a failed evaluation)."""
    if hook is None or not _evaluates(hook, op_key, at_us):
        return []
    out = []
    for i, flag in enumerate(hook.operations.get(op_key, ())):
        found = evaluated.get(flag)
        if found is not None:
            out.append((at_us + i, EVENT_NAME, event_attributes(hook, flag, found[1], found[0])))
        elif (error := error_attributes(hook, flag, (failed or {}).get(flag, ""))) is not None:
            out.append((at_us + i, EVENT_NAME if hook.style == "dotnet" else "exception", error))
    return out


__all__ = ["EVENT_NAME", "TracesHook", "error_attributes", "event_attributes", "server_span_events"]
