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
    """`obj` with every API timestamp field moved by `seconds`. `obj` is never changed (it may be
    the store's own object): a dict or list that holds a moved field is copied, and the subtrees
    without one (most of a spec) are shared with `obj` rather than copied, since the answer is
    only encoded. A list of 10,000 pods walks in a fraction of the time a full copy took."""
    if not seconds:
        return obj
    return _walk(obj, seconds)


def _walk(obj: Any, seconds: int) -> Any:
    if isinstance(obj, dict):
        return _walk_dict(obj, seconds)
    if isinstance(obj, list):
        return _walk_list(obj, seconds)
    return obj


def _walk_dict(obj: dict[str, Any], seconds: int) -> dict[str, Any]:
    moved: dict[str, Any] | None = None
    for key, value in obj.items():
        if isinstance(value, str):
            if key not in TIME_FIELDS:
                siblings = _CONTEXT_FIELDS.get(key)
                if siblings is None or (siblings[0] not in obj and siblings[1] not in obj):
                    continue
            new = shift_stamp(value, seconds)
        elif isinstance(value, dict):
            if key == "fieldsV1" and "fieldsType" in obj:
                continue  # a managedFields entry's field set: field paths, never an instant
            new = _walk_dict(value, seconds)
        elif isinstance(value, list):
            new = _walk_list(value, seconds)
        else:
            continue
        if new is not value:
            if moved is None:
                moved = {}
            moved[key] = new
    if obj.get("kind") == "Schedule" and str(obj.get("apiVersion", "")).startswith(_CHAOS_GROUP):
        status = moved["status"] if moved and "status" in moved else obj.get("status")
        if isinstance(status, dict) and isinstance(status.get("time"), str):
            moved = moved or {}
            moved["status"] = {**status, "time": shift_stamp(status["time"], seconds)}
    if moved is None:
        return obj
    out = {**obj, **moved}  # key order kept
    if type(obj) is not dict:  # a decoded body's marker type (repeated keys) survives the copy
        marked = type(obj)(out)
        marked.__dict__.update(getattr(obj, "__dict__", {}))
        return marked
    return out


def _walk_list(obj: list[Any], seconds: int) -> list[Any]:
    out: list[Any] | None = None
    for index, item in enumerate(obj):
        if isinstance(item, dict):
            new = _walk_dict(item, seconds)
        elif isinstance(item, list):
            new = _walk_list(item, seconds)
        else:
            continue
        if new is not item:
            if out is None:
                out = list(obj)
            out[index] = new
    return obj if out is None else out


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
