"""Chaos Mesh's `Schedule`: experiments (or workflows) spawned on a cron schedule.

What the controller manager's schedule controllers do, per Schedule and tick:

- cron: the most recent unmet run since `status.time` (the last schedule time) or creation, on
  `spec.schedule` (standard cron, `@hourly`-style descriptors and `@every <duration>`); a run
  older than `startingDeadlineSeconds` is a `MissSchedule` warning; with `concurrencyPolicy`
  Forbid (the default) an unfinished child is a `Forbid` warning; otherwise a child of
  `spec.type` is created from the embedded block (`spec.networkChaos` ...) named
  `<schedule>-<5 characters>`, labelled `managed-by: <schedule>`, owned by the Schedule
  (`Spawned` event), and `status.time` is set (`Updated` event). A paused Schedule spawns nothing;
- active: `status.active` references every child;
- gc: beyond `historyLimit` the oldest children are deleted, except those whose `duration` has
  not run out (`Skip` warning);
- pause: the `experiment.chaos-mesh.org/pause` annotation is copied onto the children.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from croniter import croniter

from sregym.errors import ApiError
from sregym.twin.chaos.goduration import parse_duration
from sregym.twin.chaos.spawn import (
    API_VERSION,
    duration_left,
    embedded_spec,
    experiment_finished,
    generate_name,
    object_reference,
    owner_reference,
)
from sregym.twin.clock import format_time, parse_time
from sregym.twin.machinery.objects import clone

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

USER = "system:serviceaccount:chaos-mesh:chaos-controller-manager"
PAUSE_ANNOTATION = "experiment.chaos-mesh.org/pause"
MANAGED_BY = "managed-by"
MAX_MISSED = 100


def _rfc1123z(moment: float) -> str:
    return datetime.fromtimestamp(moment, tz=UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")


def unmet_run(expression: str, earliest: float, now: float) -> tuple[float | None, float]:
    """(most recent scheduled time in (earliest, now], the next one after now)."""
    text = expression.strip()
    if text.startswith("@every "):
        step = parse_duration(text[len("@every "):].strip())
        if not step or step <= 0:
            raise ValueError(f"failed to parse duration {text[len('@every '):]}")
        runs = int((now - earliest) // step)
        missed = earliest + runs * step if runs >= 1 else None
        return missed, earliest + (runs + 1) * step
    it = croniter(text, datetime.fromtimestamp(earliest, tz=UTC))
    missed: float | None = None
    for _ in range(MAX_MISSED):
        moment = it.get_next(datetime).timestamp()
        if moment > now:
            return missed, moment
        missed = moment
    back = croniter(text, datetime.fromtimestamp(now, tz=UTC))
    latest = back.get_prev(datetime).timestamp()
    return latest, croniter(text, datetime.fromtimestamp(now, tz=UTC)).get_next(datetime).timestamp()


def children(twin: Twin, schedule: dict[str, Any]) -> list[dict[str, Any]]:
    """The schedule's spawned objects, oldest first (the `managed-by` label, as ActiveLister)."""
    meta = schedule["metadata"]
    kind = (schedule.get("spec") or {}).get("type") or ""
    try:
        objs = list(twin.store.scan(kind, meta.get("namespace", "default")))
    except ApiError:
        return []
    mine = [o for o in objs if (o["metadata"].get("labels") or {}).get(MANAGED_BY) == meta["name"]]
    return sorted(mine, key=lambda o: (o["metadata"].get("creationTimestamp", ""), o["metadata"]["name"]))


def reconcile_schedules(twin: Twin) -> None:
    if not twin.store.count("Schedule"):
        return
    for schedule in list(twin.store.scan("Schedule")):
        if schedule["metadata"].get("deletionTimestamp"):
            continue
        _cron(twin, schedule)
        current = twin.store.peek("Schedule", schedule["metadata"].get("namespace"), schedule["metadata"]["name"])
        if current is None:
            continue
        _pause(twin, current)
        _gc(twin, current)
        _active(twin, current)


def _event(twin: Twin, obj: dict[str, Any], kind: str, reason: str, message: str, component: str) -> None:
    twin.events.record(obj, kind, reason, message, component=component)


def _cron(twin: Twin, schedule: dict[str, Any]) -> None:
    meta = schedule["metadata"]
    spec = schedule.get("spec") or {}
    status = schedule.get("status") or {}
    if (meta.get("annotations") or {}).get(PAUSE_ANNOTATION) == "true":
        return
    now = twin.clock.now
    earliest = parse_time(status["time"]) if status.get("time") else parse_time(meta["creationTimestamp"])
    try:
        missed, _next = unmet_run(str(spec.get("schedule") or ""), earliest, now)
    except (ValueError, KeyError) as exc:
        _event(twin, schedule, "Warning", "Failed", f"Failed to get run time: {exc}", "schedule-cron")
        return
    if missed is None:
        return
    deadline = spec.get("startingDeadlineSeconds")
    if deadline is not None and missed + float(deadline) < now:
        _event(twin, schedule, "Warning", "MissSchedule",
               f"Missed scheduled time to start a job: {_rfc1123z(missed)}", "schedule-cron")
        return
    if (spec.get("concurrencyPolicy") or "Forbid") == "Forbid":
        for child in children(twin, schedule):
            if not experiment_finished(twin, child):
                _event(twin, schedule, "Warning", "Forbid",
                       f"Forbid spawning new job because: {child['metadata']['name']} is still running",
                       "schedule-cron")
                return
    kind = spec.get("type") or ""
    body = clone(spec.get("workflow")) if kind == "Workflow" else embedded_spec(spec, kind)
    if body is None:
        _event(twin, schedule, "Warning", "Failed",
               f"Failed to generate new object: unsupported type {kind}", "schedule-cron")
        return
    name = generate_name(twin, meta["name"] + "-")
    child = {"apiVersion": API_VERSION, "kind": kind,
             "metadata": {"name": name, "namespace": meta.get("namespace", "default"),
                          "labels": {MANAGED_BY: meta["name"]}, "ownerReferences": [owner_reference(schedule)]},
             "spec": body}
    try:
        twin.store.create(child, user=USER)
    except ApiError as exc:
        _event(twin, schedule, "Warning", "Failed", f"Failed to create new object: {exc}", "schedule-cron")
        return
    _event(twin, schedule, "Normal", "Spawned", f"Create new object: {name}", "schedule-cron")

    def stamp(obj: dict[str, Any]) -> None:
        obj.setdefault("status", {})["time"] = format_time(now)

    twin.store.mutate("Schedule", meta.get("namespace"), meta["name"], stamp, status=True, user=USER)
    _event(twin, schedule, "Normal", "Updated", "Successfully update lastScheduleTime of resource", "schedule-cron")


def _gc(twin: Twin, schedule: dict[str, Any]) -> None:
    spawned = [c for c in children(twin, schedule) if not c["metadata"].get("deletionTimestamp")]
    limit = int((schedule.get("spec") or {}).get("historyLimit") or 0)
    for child in spawned[:max(0, len(spawned) - limit)]:
        left = duration_left(twin, child) if child.get("kind") != "Workflow" else None
        if left is not None and left > 0:
            _event(twin, schedule, "Warning", "Skip",
                   f"Skip removing history: {child['metadata']['name']} is still running", "schedule-gc")
            continue
        try:
            twin.store.delete(child["kind"], child["metadata"].get("namespace"), child["metadata"]["name"], user=USER)
        except ApiError:
            _event(twin, schedule, "Warning", "Failed",
                   f"Failed to delete: {child['metadata'].get('namespace')}/{child['metadata']['name']}",
                   "schedule-gc")


def _pause(twin: Twin, schedule: dict[str, Any]) -> None:
    paused = (schedule["metadata"].get("annotations") or {}).get(PAUSE_ANNOTATION) == "true"
    for child in children(twin, schedule):
        current = (child["metadata"].get("annotations") or {}).get(PAUSE_ANNOTATION) == "true"
        if current == paused or child["metadata"].get("deletionTimestamp"):
            continue

        def flip(obj: dict[str, Any]) -> None:
            annotations = obj["metadata"].setdefault("annotations", {})
            if paused:
                annotations[PAUSE_ANNOTATION] = "true"
            else:
                annotations.pop(PAUSE_ANNOTATION, None)
                if not annotations:
                    obj["metadata"].pop("annotations", None)

        twin.store.mutate(child["kind"], child["metadata"].get("namespace"), child["metadata"]["name"], flip, user=USER)


def _active(twin: Twin, schedule: dict[str, Any]) -> None:
    active = [object_reference(c) for c in children(twin, schedule)]
    status = schedule.get("status") or {}
    if (status.get("active") or []) == active:
        return

    def put(obj: dict[str, Any]) -> None:
        if active:
            obj.setdefault("status", {})["active"] = active
        else:
            (obj.get("status") or {}).pop("active", None)

    twin.store.mutate("Schedule", schedule["metadata"].get("namespace"), schedule["metadata"]["name"], put,
                      status=True, user=USER)
