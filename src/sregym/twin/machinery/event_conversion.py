"""`events.k8s.io/v1` Events: the same objects as core `v1` Events, under other field names.

The real API server stores one Event type and serves it in both groups (`kubectl get
events.events.k8s.io` lists exactly what `kubectl get events` lists). The twin stores core/v1
Events (its recorder writes them); this converter renames the fields the way
pkg/apis/events/v1 conversion does, so a client of either group reads and writes the same events:

    involvedObject → regarding          message → note
    source → deprecatedSource           firstTimestamp → deprecatedFirstTimestamp
    count → deprecatedCount             lastTimestamp → deprecatedLastTimestamp
    reportingComponent → reportingController (eventTime, series, action, related, reason, type and
    reportingInstance keep their names).
"""

from __future__ import annotations

from typing import Any

from sregym.twin.machinery.conversion import VersionConverter, register
from sregym.twin.machinery.objects import clone

Obj = dict[str, Any]

_RENAMED = (("involvedObject", "regarding"), ("message", "note"), ("source", "deprecatedSource"),
            ("firstTimestamp", "deprecatedFirstTimestamp"),
            ("lastTimestamp", "deprecatedLastTimestamp"), ("count", "deprecatedCount"),
            ("reportingComponent", "reportingController"))


def _rename(obj: Obj, pairs: tuple[tuple[str, str], ...], api_version: str) -> Obj:
    out = clone(obj)
    for old, new in pairs:
        if old in out:
            value = out.pop(old)
            if value not in (None, "", {}):
                out[new] = value
    out["apiVersion"] = api_version
    out["kind"] = "Event"
    return out


def core_to_events_v1(obj: Obj) -> Obj:
    out = _rename(obj, _RENAMED, "events.k8s.io/v1")
    # eventTime is required in events.k8s.io/v1; the server fills it from the legacy fields.
    out.setdefault("eventTime", None)
    return out


def events_v1_to_core(obj: Obj) -> Obj:
    return _rename(obj, tuple((new, old) for old, new in _RENAMED), "v1")


register(VersionConverter("events.k8s.io", "Event", "v1", "v1", to_storage=events_v1_to_core,
                          from_storage=core_to_events_v1, storage_group=""))

__all__ = ["core_to_events_v1", "events_v1_to_core"]
