"""The chaos-controller-manager: runs Chaos Mesh v1alpha1 experiments created in the store.

Per experiment and tick it does what Chaos Mesh v2's chain of reconcilers does:

1. finalizers — puts `chaos-mesh/records` on a new experiment and removes it once every record
   is recovered after deletion (so `kubectl delete` returns only after recovery);
2. desiredphase — `Stop` when deleted, when `duration` (from creation) has passed or when the
   `experiment.chaos-mesh.org/pause: "true"` annotation is set; otherwise `Run` (one-shot actions
   such as pod-kill always stay `Run`);
3. records — selects targets once (mode applied with the `chaos` stream), then drives every
   record through `Not Injected` ⇄ `Injected` with apply/recover, counting injections and
   recoveries and keeping the last ten record events;
4. condition — `Selected`, `AllInjected`, `AllRecovered`, `Paused`.

Before the experiments, the Schedule and Workflow controllers (`schedule.py`, `workflow.py`) run,
so what they spawn or delete this tick is reconciled in the same pass.

Order 65, before the kubelet (70): container kills and image swaps take effect the same tick.
The injected records are published to `twin.services.chaos` for the data plane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.actions import ACTIONS, INJECTED, NOT_INJECTED, ApplyError, Target
from sregym.twin.chaos.devices import DATA_DEVICE, DEVICE_SCOPE, is_device_scoped
from sregym.twin.chaos.goduration import parse_duration
from sregym.twin.chaos.injection import Injection
from sregym.twin.chaos.jvm import JvmChaosAction  # noqa: F401  (registers the JVMChaos action)
from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.chaos.schedule import reconcile_schedules
from sregym.twin.chaos.selection import SelectError
from sregym.twin.chaos.service import ChaosService
from sregym.twin.chaos.workflow import reconcile_workflows
from sregym.twin.clock import parse_time
from sregym.twin.controller import Controller, controller
from sregym.twin.datastores.kernel_faults import kernel_tick
from sregym.twin.machinery.objects import clone

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

FINALIZER = "chaos-mesh/records"
PAUSE_ANNOTATION = "experiment.chaos-mesh.org/pause"
MAX_EVENTS = 10
KINDS = ("PodChaos", "NetworkChaos", "StressChaos", "IOChaos", "TimeChaos", "DNSChaos", "HTTPChaos", "JVMChaos",
         "KernelChaos")
USER = "system:serviceaccount:chaos-mesh:chaos-controller-manager"
IO_ERROR_PERIOD = (5.0, 30.0)  # seconds between failing reads the kernel logs while a fault runs


def chaos_of(twin: Twin) -> ChaosService:
    service = twin.services.chaos
    if service is None:
        service = ChaosService(twin)
        twin.services.chaos = service
    return service


@controller
class ChaosController(Controller):
    name = "chaos-mesh"
    order = 65
    user = USER

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.service = chaos_of(twin)
        self.nodeos = nodeos_of(twin)
        self._select_failed: set[str] = set()
        self._next_io_error: dict[tuple[str, str], float] = {}

    # ------------------------------------------------------------------ loop
    def reconcile(self) -> None:
        reconcile_schedules(self.twin)  # Schedule and Workflow spawn or delete experiments first
        reconcile_workflows(self.twin)
        injections: list[Injection] = []
        for kind in KINDS:
            for obj in list(self.twin.store.scan(kind)):
                current = self._reconcile_one(kind, obj)
                if current is not None:
                    injection = self._injection(kind, current)
                    if injection is not None:
                        injections.append(injection)
        self.service.publish(injections)
        self.service.bad_disks.sync(injections)
        self._ongoing(injections)
        kernel_tick(self.twin, injections)  # KernelChaos on the stores' journal syncs

    def _reconcile_one(self, kind: str, obj: dict[str, Any]) -> dict[str, Any] | None:
        meta = obj["metadata"]
        ns, name = meta.get("namespace", "default"), meta["name"]
        deleted = bool(meta.get("deletionTimestamp"))
        if not deleted and FINALIZER not in (meta.get("finalizers") or []):
            updated = self.twin.store.mutate(kind, ns, name, _add_finalizer, user=USER)
            if updated is None:
                return None
            self._event(updated, "Normal", "FinalizerInited", "Finalizer has been inited", "finalizers")
            obj = self.twin.store.peek(kind, ns, name) or obj
        action = ACTIONS[kind]
        status = obj.get("status") or {}
        experiment = status.get("experiment") or {}
        old_desired = experiment.get("desiredPhase")
        desired, cause = self._desired_phase(obj, action.one_shot(obj))
        if desired != old_desired and cause:
            self._event(obj, "Normal", cause[0], cause[1], "desiredphase")
        records = clone(experiment.get("containerRecords")) if experiment.get("containerRecords") else None
        if records is None and not deleted:
            records = self._select(obj, action)
        for record in records or []:
            self._drive(obj, action, record, desired)
        paused = (meta.get("annotations") or {}).get(PAUSE_ANNOTATION) == "true"
        new_experiment: dict[str, Any] = {"desiredPhase": desired}
        if records:
            new_experiment["containerRecords"] = records
        new_status = {**status, "conditions": _conditions(records, paused), "experiment": new_experiment}
        if new_status != status:
            updated = self.twin.store.mutate(kind, ns, name, lambda o: o.__setitem__("status", new_status),
                                             status=True, user=USER)
            if updated is None:
                return None
            obj = updated
        if deleted and all(r.get("phase") == NOT_INJECTED for r in records or []):
            self.twin.store.mutate(kind, ns, name, _remove_finalizer, user=USER)
            self._event(obj, "Normal", "FinalizerRemoved", "Finalizer has been removed", "finalizers")
            return None
        return obj

    # ------------------------------------------------------------ lifecycle
    def _desired_phase(self, obj: dict[str, Any], one_shot: bool) -> tuple[str, tuple[str, str] | None]:
        meta = obj["metadata"]
        if meta.get("deletionTimestamp"):
            return "Stop", ("Deleted", "Experiment has been deleted")
        if one_shot:
            return "Run", ("Started", "Experiment has started")
        duration = parse_duration((obj.get("spec") or {}).get("duration"))
        created = parse_time(meta["creationTimestamp"]) if meta.get("creationTimestamp") else self.twin.clock.now
        if duration is not None and created + duration <= self.twin.clock.now:
            return "Stop", ("TimeUp", "Time up according to the duration")
        if (meta.get("annotations") or {}).get(PAUSE_ANNOTATION) == "true":
            return "Stop", ("Paused", "Experiment has been paused")
        return "Run", ("Started", "Experiment has started")

    def _select(self, obj: dict[str, Any], action: Any) -> list[dict[str, Any]] | None:
        uid = obj["metadata"].get("uid", "")
        try:
            groups: list[list[Target]] = action.targets(self.twin, obj)
            if any(not group for group in groups):
                raise SelectError("no target has been selected")
        except SelectError as exc:
            if uid not in self._select_failed:
                self._select_failed.add(uid)
                self._event(obj, "Warning", "Failed", f"Failed to select targets: {exc}", "records")
            return None
        self._select_failed.discard(uid)
        return [{"id": t.id, "selectorKey": t.selector_key, "phase": NOT_INJECTED,
                 "injectedCount": 0, "recoveredCount": 0} for group in groups for t in group]

    def _drive(self, obj: dict[str, Any], action: Any, record: dict[str, Any], desired: str) -> None:
        phase = record.get("phase")
        if desired == "Run" and phase != INJECTED:
            operation = "Apply"
        elif desired == "Stop" and phase != NOT_INJECTED:
            operation = "Recover"
        else:
            return
        try:
            if operation == "Apply":
                record["phase"] = action.apply(self.twin, obj, record)
            else:
                record["phase"] = action.recover(self.twin, obj, record)
        except ApplyError as exc:
            self._record_event(record, "Failed", operation, str(exc))
            verb = "apply" if operation == "Apply" else "recover"
            self._event(obj, "Warning", "Failed", f"Failed to {verb} chaos: {exc}", "records")
            return
        if operation == "Apply" and record["phase"] == INJECTED:
            record["injectedCount"] = int(record.get("injectedCount") or 0) + 1
            self._record_event(record, "Succeeded", "Apply")
            self._event(obj, "Normal", "Applied", f"Successfully apply chaos for {record['id']}", "records")
        elif operation == "Recover" and record["phase"] == NOT_INJECTED:
            record["recoveredCount"] = int(record.get("recoveredCount") or 0) + 1
            self._record_event(record, "Succeeded", "Recover")
            self._event(obj, "Normal", "Recovered", f"Successfully recover chaos for {record['id']}", "records")

    def _record_event(self, record: dict[str, Any], kind: str, operation: str, message: str = "") -> None:
        event: dict[str, Any] = {"type": kind, "operation": operation, "timestamp": self.twin.clock.iso()}
        if message:
            event["message"] = message
        events = list(record.get("events") or [])[-(MAX_EVENTS - 1):]
        events.append(event)
        record["events"] = events

    def _event(self, obj: dict[str, Any], kind: str, reason: str, message: str, component: str) -> None:
        self.twin.events.record(obj, kind, reason, message, component=component)

    # -------------------------------------------------------------- publish
    def _injection(self, kind: str, obj: dict[str, Any]) -> Injection | None:
        records = ((obj.get("status") or {}).get("experiment") or {}).get("containerRecords") or []
        injected = [r for r in records if r.get("phase") == INJECTED]
        if not injected:
            return None
        meta = obj["metadata"]
        spec = obj.get("spec") or {}
        pods: set[str] = set()
        targets: set[str] = set()
        containers: dict[str, set[str]] = {}
        for record in injected:
            parts = record["id"].split("/")
            pod = "/".join(parts[:2])
            if record.get("selectorKey") == ".Target":
                targets.add(pod)
                continue
            pods.add(pod)
            if len(parts) > 2:
                containers.setdefault(pod, set()).add(parts[2])
        return Injection(kind=kind, namespace=meta.get("namespace", "default"), name=meta["name"], spec=spec,
                         pods=frozenset(pods),
                         targets=frozenset(targets) if kind == "NetworkChaos" and spec.get("target") else None,
                         containers={k: frozenset(v) for k, v in sorted(containers.items())},
                         uid=meta.get("uid", ""), scope=DEVICE_SCOPE if is_device_scoped(obj) else "")

    def _ongoing(self, injections: list[Injection]) -> None:
        """Node-side symptoms of running faults: an IOChaos errno fault on a volume keeps failing
        reads on the disk behind it, which the node's kernel logs with a device and sector."""
        now = self.twin.clock.now
        live: set[tuple[str, str]] = set()
        rng = self.twin.rng.stream("chaos-io")
        for injection in injections:
            if injection.kind != "IOChaos" or (injection.spec.get("action") or "latency") != "fault":
                continue
            if not int(injection.spec.get("errno") or 0):
                continue
            if injection.scope == DEVICE_SCOPE:
                self._disk_errors(injection, now, live, rng)
                continue
            for pod_key_ in sorted(injection.pods):
                ns, name = pod_key_.split("/", 1)
                pod = self.twin.store.peek("Pod", ns, name)
                node = ((pod or {}).get("spec") or {}).get("nodeName")
                if pod is None or not node:
                    continue
                device = self.nodeos.volume_device(pod, injection.spec.get("volumePath") or "/")
                key = (f"{injection.uid}/{pod_key_}", node)
                live.add(key)
                due = self._next_io_error.get(key)
                if due is None or now >= due:
                    self.nodeos.io_errors(node, device, 1 if due is not None else 2)
                    self._next_io_error[key] = now + rng.uniform(*IO_ERROR_PERIOD)
        for key in [k for k in self._next_io_error if k not in live]:
            del self._next_io_error[key]

    def _disk_errors(self, injection: Injection, now: float, live: set[tuple[str, str]], rng: Any) -> None:
        """A device-scoped fault: the kernel of whichever node has the bad disk attached logs
        the failing reads, across pod restarts and reschedules."""
        bad = self.service.bad_disks
        for disk in sorted(d for d, i in bad.by_disk.items() if i.uid == injection.uid):
            for node in bad.attached_nodes(disk):
                key = (f"{injection.uid}/{disk}", node)
                live.add(key)
                due = self._next_io_error.get(key)
                if due is None or now >= due:
                    self.nodeos.io_errors(node, DATA_DEVICE, 1 if due is not None else 2)
                    self._next_io_error[key] = now + rng.uniform(*IO_ERROR_PERIOD)


def _add_finalizer(obj: dict[str, Any]) -> None:
    meta = obj["metadata"]
    meta["finalizers"] = [*(meta.get("finalizers") or []), FINALIZER]


def _remove_finalizer(obj: dict[str, Any]) -> None:
    meta = obj["metadata"]
    remaining = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
    if remaining:
        meta["finalizers"] = remaining
    else:
        meta.pop("finalizers", None)


def _conditions(records: list[dict[str, Any]] | None, paused: bool) -> list[dict[str, Any]]:
    """Chaos Mesh's condition reconciler: all four, True/False."""
    selected = records is not None
    all_injected = all(r.get("phase") == INJECTED for r in records or [])
    all_recovered = all(r.get("phase") == NOT_INJECTED for r in records or [])

    def cond(kind: str, value: bool) -> dict[str, Any]:
        return {"type": kind, "status": "True" if value else "False"}

    return [cond("AllInjected", all_injected), cond("AllRecovered", all_recovered),
            cond("Paused", paused), cond("Selected", selected)]
