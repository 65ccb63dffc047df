"""Kubernetes timestamps across the wall anchor (`api/wall_time.py`): out in responses, back in
requests.

The API's instants are `metav1.Time` (`2026-01-05T09:00:00Z`) and `metav1.MicroTime`
(`...:00.123456Z`) values under well-known field names, so the walk shifts exactly those fields
(whatever object, list, Table row or watch event holds them) rather than every string that looks
like a date: an annotation or a ConfigMap value that happens to hold a date is the user's data and
a real server never rewrites it. `time` counts only in a managedFields entry and `timestamp` only
in a metrics.k8s.io item, where the API defines them. Precision and layout are kept, so a shifted
value reads exactly as the simulated one did.
"""

from __future__ import annotations

from typing import Any

from sregym.twin.api.wall_time import active_offset, shift_embedded, shift_stamp

# metav1.Time / MicroTime fields of the built-in kinds (core, apps, batch, autoscaling,
# coordination, events, authentication, metrics).
TIME_FIELDS = frozenset({
    "creationTimestamp", "deletionTimestamp",
    "lastTransitionTime", "lastUpdateTime", "lastProbeTime", "lastHeartbeatTime",
    "startedAt", "finishedAt", "startTime", "completionTime",
    "eventTime", "firstTimestamp", "lastTimestamp", "lastObservedTime",
    "deprecatedFirstTimestamp", "deprecatedLastTimestamp",
    "renewTime", "acquireTime", "lastScheduleTime", "lastSuccessfulTime", "lastScaleTime",
    "expirationTimestamp",
})
# Field names that are times only next to a sibling that identifies the struct: a managedFields
# entry's `time`, a metrics.k8s.io item's `timestamp`, and the `timestamp` of a Chaos Mesh
# record event (`{"type", "operation", "timestamp"}` under `status.experiment`).
_CONTEXT_FIELDS = {"time": ("manager", "operation"), "timestamp": ("window", "operation")}
# Chaos Mesh's Schedule keeps its last schedule time as `status.time` (metav1.Time), a name that
# is a time only there.
_CHAOS_GROUP = "chaos-mesh.org/"

def shift_times(obj: Any, seconds: int) -> Any:
    """A copy of `obj` with every API timestamp field moved by `seconds` (`obj` is untouched:
    it may be the store's own object)."""
    if not seconds:
        return obj
    return _walk(obj, seconds)


def _walk(obj: Any, seconds: int) -> Any:
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for key, value in obj.items():
            if isinstance(value, str) and _is_time_field(key, obj):
                out[key] = shift_stamp(value, seconds)
            elif isinstance(value, dict | list):
                out[key] = _walk(value, seconds)
            else:
                out[key] = value
        if obj.get("kind") == "Schedule" and str(obj.get("apiVersion", "")).startswith(_CHAOS_GROUP):
            status = out.get("status")
            if isinstance(status, dict) and isinstance(status.get("time"), str):
                status["time"] = shift_stamp(status["time"], seconds)  # `status` is the walk's copy
        if type(obj) is not dict:  # a decoded body's marker type (repeated keys) survives the copy
            marked = type(obj)(out)
            marked.__dict__.update(getattr(obj, "__dict__", {}))
            return marked
        return out
    if isinstance(obj, list):
        return [_walk(item, seconds) if isinstance(item, dict | list) else item for item in obj]
    return obj


def _is_time_field(key: str, parent: dict[str, Any]) -> bool:
    if key in TIME_FIELDS:
        return True
    siblings = _CONTEXT_FIELDS.get(key)
    return siblings is not None and any(s in parent for s in siblings)


def outgoing(obj: Any) -> Any:
    """`obj` as the client sees it, under the anchor of the request being answered."""
    return shift_times(obj, active_offset())


def incoming(obj: Any) -> Any:
    """A client's body with its timestamps mapped back to simulated time."""
    return shift_times(obj, -active_offset())


def present_instant(sim_s: float) -> float:
    """A simulated instant (Unix seconds) under the active anchor."""
    return sim_s + active_offset()


def present_log_lines(text: str) -> str:
    """Container log text: the `--timestamps` prefix and the date-times the program printed."""
    return shift_embedded(text, active_offset())


__all__ = ["TIME_FIELDS", "incoming", "outgoing", "present_instant", "present_log_lines",
           "shift_times"]
