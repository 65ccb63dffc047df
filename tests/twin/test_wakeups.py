"""Event-driven controller scheduling (`twin/wakeups.py`) changes how often controllers run, never
what the cluster does: timers still fire at their simulated second, writes still get noticed."""

from __future__ import annotations

from typing import Any

from sregym.twin.clock import parse_time
from sregym.twin.controller import Controller
from sregym.twin.twin import Twin


def _pvc(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


def _pod(name: str, containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": containers, "terminationGracePeriodSeconds": 0, **spec}}


def _cluster_with_timers(event_driven: bool) -> Twin:
    """A cluster where every kind of timer is pending: a claim waiting for its consumer (the
    binder's 15 s resync event), a CronJob, a crash-looping pod (kubelet back-off), a claim used by
    a pod (binding, attach), node and leader leases."""
    twin = Twin(seed=11, event_driven=event_driven)
    twin.create(_pvc("waiting"))
    twin.create(_pvc("used"))
    twin.create(_pod("user", [{"name": "app", "image": "nginx:1.27",
                               "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                     volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "used"}}]))
    twin.create(_pod("crash", [{"name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "exit 3"]}]))
    twin.apply({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick", "namespace": "default"},
                "spec": {"schedule": "*/2 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                    "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}})
    return twin


def test_event_driven_run_equals_every_tick_run() -> None:
    """Same seed, same cluster, object for object, with and without skipping idle controllers."""
    runs = []
    for event_driven in (True, False):
        twin = _cluster_with_timers(event_driven)
        twin.advance(300)
        runs.append(twin)
    driven, every_tick = runs
    assert driven.wakeups.skipped > 100  # the schedule really skipped runs ...
    assert every_tick.wakeups.skipped == 0
    assert driven.dump() == every_tick.dump()  # ... and nothing differs


def test_timers_fire_on_their_second_with_nothing_changing() -> None:
    twin = _cluster_with_timers(True)
    twin.advance(300)
    # The binder's resync re-emits WaitForFirstConsumer every 15 s though the claim never changes.
    wait = twin.event_list("default", reason="WaitForFirstConsumer", involved_name="waiting")[0]
    assert wait["count"] == 20
    first, last = parse_time(wait["firstTimestamp"]), parse_time(wait["lastTimestamp"])
    assert last - first == 19 * 15
    # The CronJob fires on the even minutes.
    jobs = sorted(j["metadata"]["name"] for j in twin.list("jobs", "default"))
    assert jobs and all(int(name.removeprefix("tick-")) % 2 == 0 for name in jobs)
    # The crash loop restarts on the kubelet's back-off.
    cs = twin.get("pods", "default", "crash")["status"]["containerStatuses"][0]
    assert cs["restartCount"] >= 4
    # Node leases renew every ~10 s.
    for lease in twin.list("leases", "kube-node-lease"):
        assert twin.clock.now - parse_time(lease["spec"]["renewTime"]) < 11


class _Probe(Controller):
    """A controller that counts its runs; only kinds a steady cluster never writes give it work."""

    name = "probe"
    quiet_kinds = ("Event", "Lease", "ConfigMap", "Node", "Pod", "Endpoints", "EndpointSlice")

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.runs: list[float] = []
        self.timer = float("inf")

    def next_due(self) -> float:
        return self.timer

    def reconcile(self) -> None:
        self.runs.append(self.twin.clock.elapsed)


def _twin_with_probe() -> tuple[Twin, _Probe]:
    from sregym.twin.wakeups import WakeSchedule

    twin = Twin(seed=3)
    twin.advance(30)
    probe = _Probe(twin)
    twin.controllers.append(probe)
    twin.wakeups = WakeSchedule(twin.store, twin.controllers)
    return twin, probe


def test_a_quiet_controller_wakes_on_changes_timers_and_requeues() -> None:
    twin, probe = _twin_with_probe()
    twin.step()
    assert len(probe.runs) == 1  # first tick: it always runs
    start = twin.clock.elapsed
    for _ in range(5):
        twin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "q-", "namespace": "default"}})
        twin.step()
    # Only kinds it ignores changed: it did not run again.
    quiet_runs = len(probe.runs)
    assert quiet_runs == 1, probe.runs
    twin.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}})
    twin.step()
    assert len(probe.runs) == quiet_runs + 1 and probe.runs[-1] == twin.clock.elapsed  # a watched kind woke it
    probe.timer = twin.clock.now + 3
    ticks_before = twin.clock.elapsed
    while twin.clock.elapsed < ticks_before + 3:
        twin.step()
    assert probe.runs[-1] == ticks_before + 3  # its timer woke it on its second
    probe.timer = float("inf")
    probe.requeue()
    twin.step()
    assert probe.runs[-1] == twin.clock.elapsed  # a requeue runs it next tick
    assert start < twin.clock.elapsed


def test_disabled_schedule_runs_everything_every_tick() -> None:
    from sregym.twin.wakeups import WakeSchedule

    twin = Twin(seed=3)
    probe = _Probe(twin)
    twin.controllers.append(probe)
    twin.wakeups = WakeSchedule(twin.store, twin.controllers, enabled=False)
    for _ in range(4):
        twin.step()
    assert len(probe.runs) == 4
