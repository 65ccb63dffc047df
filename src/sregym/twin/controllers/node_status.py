"""The kubelet's periodic node status report: `lastHeartbeatTime` on every Node condition.

Since node leases took over as the frequent heartbeat, a kubelet still checks its node status
every `nodeStatusUpdateFrequency` (10 s, `wait.JitterUntil` with a 0.04 jitter factor) but only
patches the Node when the status changed or `nodeStatusReportFrequency` (5 min) has passed since
its last report. The first report after a kubelet start or a real status change waits an extra
one-off `delayAfterNodeStatusChange`, uniform in ±2.5 min, so nodes started together do not
report together. A report sets every condition's `lastHeartbeatTime` to the check's time; that
is the slow, regular Node write real clusters show in `kubectl describe node`.

Status changes themselves (images pulled, disk pressure) are written by the kubelet and node OS
code at the moment they happen; seeing one here only restarts the report clock, as the real
kubelet's patch would have. Draws come from the `node-status` random stream.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.chaos.kubelet_tls import kubelet_online
from sregym.twin.clock import parse_time
from sregym.twin.controller import Controller, controller

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

NODE_STATUS_UPDATE_S = 10.0  # nodeStatusUpdateFrequency
NODE_STATUS_REPORT_S = 300.0  # nodeStatusReportFrequency (1.32 default with node leases)
SYNC_JITTER = 0.04


@dataclass
class _Reporter:
    next_check: float
    last_report: float
    delay: float  # delayAfterNodeStatusChange, for the next report only
    reported: dict[str, Any] | None  # the Node status as of the last report (a stored dict)


@controller
class NodeStatusController(Controller):
    """Every node's kubelet reports its status every five minutes when nothing changed."""

    name = "node-status"
    order = 4
    user = "system:node"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._rng = twin.rng.stream("node-status")
        self._reporters: dict[str, _Reporter] = {}
        self._next = -math.inf
        self._node_count = -1

    def reconcile(self) -> None:
        store = self.twin.store
        now = self.twin.clock.now
        count = store.count("Node")
        if now < self._next and count == self._node_count:
            return
        self._node_count = count
        present: set[str] = set()
        for node in store.scan("Node"):
            name = node["metadata"]["name"]
            present.add(name)
            reporter = self._reporters.get(name)
            if reporter is None:
                reporter = self._start(node, now)
            if now >= reporter.next_check and self._kubelet_up(name):
                self._check(name, node, reporter, now)
        for name in [n for n in self._reporters if n not in present]:
            del self._reporters[name]
        self._next = min((r.next_check for r in self._reporters.values()), default=math.inf)

    def _kubelet_up(self, name: str) -> bool:
        nodeos = self.twin.services.nodeos
        return nodeos is None or kubelet_online(self.twin, name)

    def _start(self, node: dict[str, Any], now: float) -> _Reporter:
        """The kubelet has just registered its node: that was a report (of a changed status)."""
        created = node["metadata"].get("creationTimestamp")
        started = parse_time(created) if created else now
        reporter = _Reporter(next_check=now + self._rng.uniform(0.0, NODE_STATUS_UPDATE_S),
                             last_report=started, delay=self._change_delay(), reported=node.get("status"))
        self._reporters[node["metadata"]["name"]] = reporter
        return reporter

    def _change_delay(self) -> float:
        return self._rng.uniform(-0.5, 0.5) * NODE_STATUS_REPORT_S

    def _check(self, name: str, node: dict[str, Any], reporter: _Reporter, now: float) -> None:
        at = reporter.next_check
        reporter.next_check = at + NODE_STATUS_UPDATE_S * (1.0 + SYNC_JITTER * self._rng.random())
        if reporter.next_check <= now:  # ticks longer than the sync period: one check per tick
            reporter.next_check = now + NODE_STATUS_UPDATE_S
        status = node.get("status")
        if status is not reporter.reported and status != reporter.reported:
            # Someone wrote a real change (images, pressure): that patch was a report.
            reporter.last_report, reporter.delay, reporter.reported = at, self._change_delay(), status
            return
        if at < reporter.last_report + NODE_STATUS_REPORT_S + reporter.delay:
            return
        stamp = self.twin.clock.iso(at)

        def heartbeat(obj: dict[str, Any]) -> None:
            for cond in (obj.get("status") or {}).get("conditions") or []:
                cond["lastHeartbeatTime"] = stamp

        try:
            updated = self.twin.store.mutate("Node", None, name, heartbeat, status=True, user=f"system:node:{name}")
        except ApiError:
            return  # retried at the next check, like the kubelet's next sync
        if updated is not None:
            stored = self.twin.store.peek("Node", None, name)
            reporter.reported = stored.get("status") if stored is not None else None
            reporter.last_report, reporter.delay = at, 0.0
