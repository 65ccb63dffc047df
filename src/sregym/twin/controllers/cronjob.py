"""The CronJob controller: create Jobs on a cron schedule evaluated on the simulated clock.

Follows kube's cronjob controller (v2): the most recent unmet schedule time since the last one
(or since creation), `startingDeadlineSeconds` turning late runs into `MissSchedule` warnings,
the concurrency policies (`Allow`, `Forbid` with `JobAlreadyActive`, `Replace` deleting the running
Job), Jobs named `<cronjob>-<scheduled time in minutes since the epoch>` with the
`batch.kubernetes.io/cronjob-scheduled-timestamp` annotation, `status.active` /
`lastScheduleTime` / `lastSuccessfulTime`, `SawCompletedJob` events and history limits.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from sregym.errors import ApiError
from sregym.twin.clock import format_time
from sregym.twin.controller import Controller, controller
from sregym.twin.controllers.job import is_finished, job_condition
from sregym.twin.machinery.objects import clone, owner_ref
from sregym.twin.workloads.shared import OwnerIndex, ts

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

JOB = ("batch", "Job")
SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MAX_MISSED = 100


def rfc1123z(moment: float) -> str:
    return datetime.fromtimestamp(moment, tz=UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")


def job_name(cronjob: str, scheduled: float) -> str:
    return f"{cronjob}-{int(scheduled // 60)}"


@controller
class CronJobController(Controller):
    name = "cronjob"
    order = 20
    user = "system:serviceaccount:kube-system:cronjob-controller"
    component: ClassVar[str] = "cronjob-controller"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.index = OwnerIndex.of(twin)
        # uid -> (schedule key, next schedule time): avoids re-evaluating cron every tick.
        self._next: dict[str, tuple[tuple[Any, ...], float]] = {}

    def reconcile(self) -> None:
        store = self.twin.store
        if not store.count("CronJob"):
            return
        for cj in list(store.scan("CronJob")):
            try:
                self.sync(cj)
            except ApiError:
                continue

    # ------------------------------------------------------------------ schedule
    def _zone(self, cj: dict[str, Any]) -> Any:
        name = (cj.get("spec") or {}).get("timeZone")
        if not name:
            return UTC
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            return None

    def unmet_times(self, cj: dict[str, Any], now: float) -> tuple[float | None, int, float | None]:
        """(most recent unmet schedule time, how many were missed, next schedule time)."""
        spec = cj.get("spec") or {}
        meta = cj["metadata"]
        status = cj.get("status") or {}
        zone = self._zone(cj)
        if status.get("lastScheduleTime"):
            earliest = ts(status["lastScheduleTime"])
        else:
            earliest = ts(meta["creationTimestamp"])
        if spec.get("startingDeadlineSeconds") is not None:
            earliest = max(earliest, now - int(spec["startingDeadlineSeconds"]))
        start = datetime.fromtimestamp(earliest, tz=zone)
        it = croniter(spec.get("schedule", ""), start)
        latest: float | None = None
        missed = 0
        while True:
            moment = it.get_next(datetime).timestamp()
            if moment > now:
                return latest, missed, moment
            latest = moment
            missed += 1
            if missed > MAX_MISSED:
                # Jump to the most recent time instead of walking every missed one.
                back = croniter(spec.get("schedule", ""), datetime.fromtimestamp(now, tz=zone))
                latest = back.get_prev(datetime).timestamp()
                following = croniter(spec.get("schedule", ""), datetime.fromtimestamp(now, tz=zone))
                return latest, missed, following.get_next(datetime).timestamp()

    # ------------------------------------------------------------------ sync
    def sync(self, cj: dict[str, Any]) -> None:
        meta = cj["metadata"]
        spec = cj.get("spec") or {}
        now = self.twin.clock.now
        old_status = cj.get("status") or {}
        status = clone(old_status)
        jobs = self.index.children(JOB, meta["uid"])
        self._track_active(cj, status, jobs)
        if not meta.get("deletionTimestamp") and not spec.get("suspend"):
            self._maybe_start(cj, status, jobs, now)
        self._write(cj, status, old_status)
        self._cleanup_history(cj)

    def _track_active(self, cj: dict[str, Any], status: dict[str, Any], jobs: list[dict[str, Any]]) -> None:
        by_uid = {j["metadata"]["uid"]: j for j in jobs}
        active = []
        for ref in status.get("active") or []:
            job = by_uid.get(ref.get("uid"))
            if job is None:
                continue
            if is_finished(job):
                cond = "Complete" if job_condition(job, "Complete") else "Failed"
                self.twin.events.normal(cj, "SawCompletedJob",
                                        f"Saw completed job: {job['metadata']['name']}, condition: {cond}",
                                        component=self.component)
                if cond == "Complete":
                    done = (job.get("status") or {}).get("completionTime")
                    if done and (not status.get("lastSuccessfulTime")
                                 or ts(done) > ts(status["lastSuccessfulTime"])):
                        status["lastSuccessfulTime"] = done
                continue
            active.append(ref)
        if active:
            status["active"] = active
        else:
            status.pop("active", None)

    def _maybe_start(self, cj: dict[str, Any], status: dict[str, Any], jobs: list[dict[str, Any]],
                     now: float) -> None:
        meta = cj["metadata"]
        spec = cj.get("spec") or {}
        if self._zone(cj) is None:
            self.twin.events.warning(cj, "UnknownTimeZone",
                                     f"invalid timeZone: {spec.get('timeZone')!r}: unknown time zone "
                                     f"{spec.get('timeZone')}", component=self.component)
            return
        key = (spec.get("schedule"), spec.get("timeZone"), spec.get("startingDeadlineSeconds"),
               status.get("lastScheduleTime"))
        cached = self._next.get(meta["uid"])
        if cached is not None and cached[0] == key and now < cached[1]:
            return
        try:
            scheduled, missed, following = self.unmet_times({**cj, "status": status}, now)
        except (ValueError, KeyError, TypeError) as exc:
            self.twin.events.warning(cj, "UnparseableSchedule",
                                     f"unparseable schedule: {spec.get('schedule')!r} : {exc}",
                                     component=self.component)
            return
        if following is not None:
            self._next[meta["uid"]] = (key, following)
        if missed > MAX_MISSED:
            self.twin.events.warning(cj, "TooManyMissedTimes",
                                     f"too many missed start times: {missed}. Set or decrease "
                                     ".spec.startingDeadlineSeconds or check clock skew",
                                     component=self.component)
        if scheduled is None:
            return
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and scheduled + int(deadline) < now:
            self.twin.events.warning(cj, "MissSchedule",
                                     f"Missed scheduled time to start a job: {rfc1123z(scheduled)}",
                                     component=self.component)
            return
        name = job_name(meta["name"], scheduled)
        if any(j["metadata"]["name"] == name for j in jobs):
            return
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and status.get("active"):
            self.twin.events.normal(cj, "JobAlreadyActive",
                                    "Not starting job because prior execution is running and concurrency "
                                    "policy is Forbid", component=self.component)
            return
        if policy == "Replace":
            for ref in list(status.get("active") or []):
                try:
                    self.twin.store.delete("Job", meta["namespace"], ref["name"], propagation="Background",
                                           user=self.user)
                except ApiError:
                    continue
                self.twin.events.normal(cj, "SuccessfulDelete", f"Deleted job {ref['name']}",
                                        component=self.component)
            status.pop("active", None)
        job = self._job_from_template(cj, name, scheduled)
        try:
            created = self.twin.store.create(job, user=self.user)
        except ApiError as exc:
            if exc.code != 409:
                self.twin.events.warning(cj, "FailedCreate", f"Error creating job: {exc.message}",
                                         component=self.component)
            return
        self.twin.events.normal(cj, "SuccessfulCreate", f"Created job {name}", component=self.component)
        cmeta = created["metadata"]
        status.setdefault("active", []).append({
            "apiVersion": "batch/v1", "kind": "Job", "name": cmeta["name"], "namespace": cmeta["namespace"],
            "resourceVersion": cmeta["resourceVersion"], "uid": cmeta["uid"]})
        status["lastScheduleTime"] = format_time(scheduled)

    def _job_from_template(self, cj: dict[str, Any], name: str, scheduled: float) -> dict[str, Any]:
        template = (cj.get("spec") or {}).get("jobTemplate") or {}
        tmeta = template.get("metadata") or {}
        meta: dict[str, Any] = {"name": name, "namespace": cj["metadata"]["namespace"],
                                "ownerReferences": [owner_ref(cj)]}
        if tmeta.get("labels"):
            meta["labels"] = clone(tmeta["labels"])
        meta["annotations"] = {**clone(tmeta.get("annotations") or {}),
                               SCHEDULED_TIMESTAMP: format_time(scheduled)}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
                "spec": clone(template.get("spec") or {})}

    def _write(self, cj: dict[str, Any], status: dict[str, Any], old: dict[str, Any]) -> None:
        if status == old:
            return
        meta = cj["metadata"]

        def put(o: dict[str, Any]) -> None:
            o["status"] = status

        self.twin.store.mutate("CronJob", meta["namespace"], meta["name"], put, status=True, user=self.user)

    def _cleanup_history(self, cj: dict[str, Any]) -> None:
        spec = cj.get("spec") or {}
        jobs = self.index.children(JOB, cj["metadata"]["uid"])
        succeeded = [j for j in jobs if job_condition(j, "Complete")]
        failed = [j for j in jobs if job_condition(j, "Failed")]
        for finished, limit in ((succeeded, spec.get("successfulJobsHistoryLimit")),
                                (failed, spec.get("failedJobsHistoryLimit"))):
            if limit is None or len(finished) <= int(limit):
                continue
            finished.sort(key=lambda j: ((j.get("status") or {}).get("startTime") or "", j["metadata"]["name"]))
            for job in finished[:len(finished) - int(limit)]:
                with contextlib.suppress(ApiError):
                    self.twin.store.delete("Job", job["metadata"]["namespace"], job["metadata"]["name"],
                                           propagation="Background", user=self.user)
                    self.twin.events.normal(cj, "SuccessfulDelete", f"Deleted job {job['metadata']['name']}",
                                            component=self.component)
