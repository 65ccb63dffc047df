"""The Job controller: run pods to completion, count successes and failures, finish the Job.

Follows kube 1.32: pods carry the `batch.kubernetes.io/job-tracking` finalizer until they are
counted; `backoffLimit` (and, for `restartPolicy: OnFailure`, container restarts) or
`activeDeadlineSeconds` first add a `FailureTarget` condition and delete the running pods, and the
terminal `Failed` condition follows once no pod is left; success likewise goes through
`SuccessCriteriaMet` to `Complete` with `completionTime` and a `Completed` event. Replacement pods
after failures wait out the controller's back-off (10 s doubling, capped at 6 minutes).

The controller only reacts to pod phases: whether a pod Succeeds (a native sidecar is stopped, a
regular sidecar keeps it Running forever) is the kubelet's decision.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, ClassVar

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.controllers.replicaset import pod_from_template
from sregym.twin.machinery.objects import clone
from sregym.twin.workloads.shared import (
    ChangeGate,
    OwnerIndex,
    is_ready,
    is_terminating,
    pod_phase,
    restart_count,
    ts,
)

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

POD = ("", "Pod")
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
BACKOFF_BASE = 10.0
BACKOFF_MAX = 360.0
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")


def job_condition(job: dict[str, Any], cond_type: str) -> dict[str, Any] | None:
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") == cond_type and cond.get("status") == "True":
            return cond
    return None


def is_finished(job: dict[str, Any]) -> bool:
    return job_condition(job, "Complete") is not None or job_condition(job, "Failed") is not None


@controller
class JobController(Controller):
    name = "job"
    order = 25
    user = "system:serviceaccount:kube-system:job-controller"
    component: ClassVar[str] = "job-controller"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.index = OwnerIndex.of(twin)
        self._known_pods: dict[str, set[str]] = {}  # job uid -> uids of pods not yet counted
        self._job_uids: set[str] = set()
        self._last_failure: dict[str, float] = {}
        self.gate = ChangeGate(self.index)

    def reconcile(self) -> None:
        store = self.twin.store
        seen: set[str] = set()
        now = self.twin.clock.now
        for job in list(store.scan("Job")):
            seen.add(job["metadata"]["uid"])
            if not self.gate.due(job, now):
                continue
            try:
                self.sync(job)
            except ApiError:
                self.gate.wake_at(job["metadata"]["uid"], now)
                continue
        for gone in sorted(self._job_uids - seen):
            self._release_orphans(gone)
        self._job_uids = seen

    # ------------------------------------------------------------------ helpers
    def _cond(self, cond_type: str, reason: str, message: str) -> dict[str, Any]:
        now = self.twin.clock.iso()
        return {"type": cond_type, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
                "reason": reason, "message": message}

    def _remove_finalizer(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        if TRACKING_FINALIZER not in (meta.get("finalizers") or ()):
            return

        def drop(o: dict[str, Any]) -> None:
            rest = [f for f in o["metadata"].get("finalizers") or [] if f != TRACKING_FINALIZER]
            if rest:
                o["metadata"]["finalizers"] = rest
            else:
                o["metadata"].pop("finalizers", None)

        with contextlib.suppress(ApiError):
            self.twin.store.mutate("Pod", meta["namespace"], meta["name"], drop, user=self.user)

    def _release_orphans(self, job_uid: str) -> None:
        """A deleted Job's pods must not stay stuck on its tracking finalizer."""
        for pod in self.index.children(POD, job_uid):
            self._remove_finalizer(pod)
        self._known_pods.pop(job_uid, None)
        self._last_failure.pop(job_uid, None)

    def _delete_pod(self, job: dict[str, Any], pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        try:
            self.twin.store.delete("Pod", meta["namespace"], meta["name"], user=self.user)
        except ApiError:
            return
        self.twin.events.normal(job, "SuccessfulDelete", f"Deleted pod: {meta['name']}",
                                component=self.component)

    # ------------------------------------------------------------------ sync
    def sync(self, job: dict[str, Any]) -> None:
        meta = job["metadata"]
        uid = meta["uid"]
        spec = job.get("spec") or {}
        pods = self.index.children(POD, uid)
        if is_finished(job):
            for pod in pods:
                if pod_phase(pod) in ("Succeeded", "Failed") or is_terminating(pod):
                    self._remove_finalizer(pod)
            return
        now = self.twin.clock.now
        old_status = job.get("status") or {}
        status = clone(old_status)
        status.setdefault("startTime", self.twin.clock.iso())
        succeeded = int(status.get("succeeded") or 0)
        failed = int(status.get("failed") or 0)

        # Account for finished pods (the finalizer marks "not yet counted").
        known = self._known_pods.setdefault(uid, set())
        present = set()
        new_failure = False
        for pod in pods:
            pmeta = pod["metadata"]
            present.add(pmeta["uid"])
            phase = pod_phase(pod)
            tracked = TRACKING_FINALIZER in (pmeta.get("finalizers") or ())
            if phase == "Succeeded" and tracked:
                succeeded += 1
                known.discard(pmeta["uid"])
                self._remove_finalizer(pod)
            elif phase == "Failed" and tracked:
                failed += 1
                new_failure = True
                known.discard(pmeta["uid"])
                self._remove_finalizer(pod)
            elif tracked:
                known.add(pmeta["uid"])
        for vanished in sorted(known - present):
            # Removed before it could be counted (deleted while running): a failure.
            failed += 1
            new_failure = True
            known.discard(vanished)
        if new_failure:
            self._last_failure[uid] = now

        pods = self.index.children(POD, uid)
        active = [p for p in pods if pod_phase(p) not in ("Succeeded", "Failed") and not is_terminating(p)]
        terminating = [p for p in pods if is_terminating(p) and pod_phase(p) not in ("Succeeded", "Failed")]
        completions = spec.get("completions")
        parallelism = int(spec.get("parallelism") if spec.get("parallelism") is not None else 1)
        backoff_limit = int(spec.get("backoffLimit") if spec.get("backoffLimit") is not None else 6)

        conditions = [clone(c) for c in status.get("conditions") or []]
        has = {c["type"] for c in conditions if c.get("status") == "True"}
        if spec.get("suspend"):
            for pod in active:
                self._delete_pod(job, pod)
            if "Suspended" not in has:
                conditions.append(self._cond("Suspended", "JobSuspended", "Job suspended"))
                self.twin.events.normal(job, "Suspended", "Job suspended", component=self.component)
            status.pop("startTime", None)
            active = []
        else:
            if "Suspended" in has:
                conditions = [c for c in conditions if c["type"] != "Suspended"]
                self.twin.events.normal(job, "Resumed", "Job resumed", component=self.component)
            if "FailureTarget" not in has and "SuccessCriteriaMet" not in has:
                reason = None
                if failed > backoff_limit or self._past_backoff_on_failure(job, active, backoff_limit):
                    reason = BACKOFF_EXCEEDED
                elif self._past_deadline(job, status, now):
                    reason = DEADLINE_EXCEEDED
                if reason is not None:
                    conditions.append(self._cond("FailureTarget", *reason))
                    self.twin.events.warning(job, reason[0], reason[1], component=self.component)
                    has.add("FailureTarget")
                elif (completions is None and succeeded > 0 and not active) or \
                        (completions is not None and succeeded >= int(completions)):
                    conditions.append(self._cond("SuccessCriteriaMet", *COMPLETIONS_REACHED))
                    has.add("SuccessCriteriaMet")
            if "FailureTarget" in has or "SuccessCriteriaMet" in has:
                for pod in active:
                    self._delete_pod(job, pod)
                pods = self.index.children(POD, uid)
                active = []
                terminating = [p for p in pods if is_terminating(p)
                               and pod_phase(p) not in ("Succeeded", "Failed")]
                if not terminating:
                    self._finish(job, conditions, has)
            else:
                active = self._manage(job, active, terminating, succeeded, completions, parallelism, now)

        status["conditions"] = conditions
        if not conditions:
            status.pop("conditions")
        status["active"] = len(active)
        if not status["active"]:
            status.pop("active")
        if succeeded:
            status["succeeded"] = succeeded
        if failed:
            status["failed"] = failed
        status["ready"] = sum(1 for p in active if is_ready(p))
        status["terminating"] = len(terminating)
        status["uncountedTerminatedPods"] = {}
        if any(c["type"] == "Complete" for c in conditions):
            status.setdefault("completionTime", self.twin.clock.iso())
        if status != old_status:
            def put(o: dict[str, Any]) -> None:
                o["status"] = status

            self.twin.store.mutate("Job", meta["namespace"], meta["name"], put, status=True, user=self.user)

    def _finish(self, job: dict[str, Any], conditions: list[dict[str, Any]], has: set[str]) -> None:
        if "FailureTarget" in has:
            target = next(c for c in conditions if c["type"] == "FailureTarget")
            conditions.append(self._cond("Failed", target["reason"], target["message"]))
        else:
            conditions.append(self._cond("Complete", *COMPLETIONS_REACHED))
            self.twin.events.normal(job, "Completed", "Job completed", component=self.component)

    def _past_backoff_on_failure(self, job: dict[str, Any], active: list[dict[str, Any]], limit: int) -> bool:
        template_spec = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
        if template_spec.get("restartPolicy") != "OnFailure":
            return False
        restarts = 0
        for pod in active:
            status = pod.get("status") or {}
            for group in ("initContainerStatuses", "containerStatuses"):
                restarts += sum(int(s.get("restartCount") or 0) for s in status.get(group) or [])
        if limit == 0:
            return restarts > 0
        return restarts >= limit

    def _past_deadline(self, job: dict[str, Any], status: dict[str, Any], now: float) -> bool:
        deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
        if deadline is None or not status.get("startTime"):
            return False
        self.gate.wake_at(job["metadata"]["uid"], ts(status["startTime"]) + int(deadline))
        return now - ts(status["startTime"]) >= int(deadline)

    def _manage(self, job: dict[str, Any], active: list[dict[str, Any]], terminating: list[dict[str, Any]],
                succeeded: int, completions: Any, parallelism: int, now: float) -> list[dict[str, Any]]:
        meta = job["metadata"]
        if completions is None:
            want = 0 if succeeded > 0 else parallelism
        else:
            want = max(0, min(parallelism, int(completions) - succeeded))
        if (job.get("spec") or {}).get("podReplacementPolicy") == "Failed":
            want = max(0, want - len(terminating))
        diff = want - len(active)
        if diff < 0:
            victims = sorted(active, key=lambda p: (is_ready(p), pod_phase(p) == "Running",
                                                    -restart_count(p), p["metadata"]["name"]))
            for pod in victims[:-diff]:
                self._delete_pod(job, pod)
            return self.index_active(job)
        if diff == 0:
            return active
        failures = int((job.get("status") or {}).get("failed") or 0)
        last = self._last_failure.get(meta["uid"])
        if failures and last is not None:
            delay = min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (failures - 1))
            if now < last + delay:
                self.gate.wake_at(meta["uid"], last + delay)
                return active
        template = (job.get("spec") or {}).get("template") or {}
        for _ in range(diff):
            pod = pod_from_template(template, job, meta["namespace"], generate_prefix=f"{meta['name']}-")
            pod["metadata"]["finalizers"] = [*pod["metadata"].get("finalizers", []), TRACKING_FINALIZER]
            try:
                created = self.twin.store.create(pod, user=self.user)
            except ApiError as exc:
                self.twin.events.warning(job, "FailedCreate", f"Error creating: {exc.message}",
                                         component=self.component)
                break
            self._known_pods.setdefault(meta["uid"], set()).add(created["metadata"]["uid"])
            self.twin.events.normal(job, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}",
                                    component=self.component)
        return self.index_active(job)

    def index_active(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        return [p for p in self.index.children(POD, job["metadata"]["uid"])
                if pod_phase(p) not in ("Succeeded", "Failed") and not is_terminating(p)]
