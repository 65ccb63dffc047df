"""Ambient noise: seeded, scheduled, self-healing disturbances on components not involved in the
fault, so that "something is red" is never by itself the answer.

Profiles: `none`; `low` (a disturbance every ~5 simulated minutes); `high` (every ~2 minutes, and
two kinds at once sometimes). Disturbances, as an operator would see them in a busy cluster:

- `pod-kill` / `pod-failure` / `network-delay` / `network-loss`: Chaos Mesh experiments (in the
  `chaos-mesh` namespace, which the agent cannot see) on one pod of an uninvolved workload, with a
  short `duration` so they heal by themselves;
- `rollout`: `kubectl rollout restart` of an uninvolved Deployment (pods are replaced);
- `warning-event`: a benign Warning event on an uninvolved pod (a probe blip);
- `log-chatter`: a few transient error lines in an uninvolved container's log, written the way an
  operator's script would (`kubectl exec ... -- sh -c 'echo ... > /proc/1/fd/2'`).

- `container-kill`: a Chaos Mesh container kill on one pod of an uninvolved workload (the
  container restarts, so `kubectl get pods` shows a restart).

A busy cluster is never quiet when the pager goes off, so noise starts with the healthy baseline,
not with the incident: every profile but `none` opens with a burst (`OPENING`) — unrelated
Warning events, a container restart, transient error lines — in its first `OPENING_S` seconds,
the first of them at once (`ProblemRun.start_noise` applies it before the fault is injected), so
an agent's first reads of events, pods and logs already hold noise. The opening is drawn from its
own seeded stream, so the periodic plan after it is the one the seed always gave.

Noise never touches the root-cause path in a way that changes the ground truth: targets are the
namespace's Deployments minus `protected` (every entity the ground truth involves, and the load
generator), for the opening as for the rest; and once what admits new pods has changed (a LimitRange,
quota or webhook), disturbances that would replace pods restart a container instead.

The plan is drawn once from the seed; `tick()` applies what is due. `pause()` (during the
verification window) deletes running experiments and stops applying; `resume()` continues.
Everything is written through `Cluster`, so noise runs the same on the twin and a real cluster.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

CHAOS_NAMESPACE = "chaos-mesh"
CHAOS_API = "chaos-mesh.org/v1alpha1"
PROFILES: dict[str, dict[str, Any]] = {
    "none": {"interval_s": 0.0, "kinds": ()},
    "low": {"interval_s": 300.0, "kinds": ("pod-kill", "network-delay", "warning-event", "rollout",
                                           "log-chatter")},
    "high": {"interval_s": 120.0, "kinds": ("pod-kill", "pod-failure", "network-delay", "network-loss",
                                            "warning-event", "rollout", "log-chatter")},
}
HORIZON_S = 3600.0
# The opening burst per profile (kinds, in order) and how long it lasts: the first at 0 s, the
# others spread over the first minute. Warnings, a restart and error lines for `low`; more of
# each, and a replaced pod, for `high`.
OPENING_S = 60.0
OPENING: dict[str, tuple[str, ...]] = {
    "none": (),
    "low": ("warning-event", "container-kill", "log-chatter"),
    "high": ("warning-event", "container-kill", "log-chatter", "warning-event", "pod-kill", "log-chatter",
             "container-kill"),
}
# Opening disturbances are numbered from here, so their chaos object names never meet the plan's.
OPENING_INDEX = 10_000
# Benign, self-healing error lines (no component names, nothing that points at a fault).
CHATTER = (
    "level=warn msg=\"slow request\" duration=1.2s",
    "level=error msg=\"read: connection reset by peer\" retrying=true",
    "level=warn msg=\"keepalive ping failed to receive ACK within timeout\"",
    "level=error msg=\"context canceled\" op=flush attempt=1",
    "level=warn msg=\"grpc: addrConn.createTransport failed to connect, reconnecting\"",
    "level=info msg=\"recovered after transient error\"",
)


@dataclass(frozen=True)
class Disturbance:
    at_s: float  # seconds after the scheduler started
    kind: str
    target: str  # workload (Deployment) name
    index: int


class NoiseScheduler:
    """Applies one profile's disturbances in one namespace, sparing `protected` workloads."""

    def __init__(self, cluster: Cluster, *, profile: str, seed: int, namespace: str,
                 protected: set[str] | frozenset[str] = frozenset()) -> None:
        if profile not in PROFILES:
            raise ValueError(f"unknown noise profile {profile!r} (none, low, high)")
        self.cluster = cluster
        self.profile = profile
        self.namespace = namespace
        self.protected = frozenset(protected)
        digest = hashlib.sha256(f"{seed}:noise:{namespace}".encode()).digest()
        self._rng = random.Random(int.from_bytes(digest[:8], "big"))
        opening = hashlib.sha256(f"{seed}:noise-opening:{namespace}".encode()).digest()
        self._opening_rng = random.Random(int.from_bytes(opening[:8], "big"))
        self._start = cluster.now()
        self._plan: list[Disturbance] = []
        self._next = 0
        self.paused = False
        self._active: list[tuple[str, str]] = []  # (kind, name) of chaos objects created
        self.applied: list[Disturbance] = []
        self._installed = False
        self._admission_at_start: str | None = None  # `_admission()` when the first disturbance ran

    # ------------------------------------------------------------------ plan
    def targets(self) -> list[str]:
        names = sorted(d["metadata"]["name"] for d in self.cluster.list("Deployment", self.namespace))
        return [n for n in names if n not in self.protected]

    def plan(self) -> list[Disturbance]:
        """Draw the schedule once (deterministic for a seed and the set of workloads)."""
        if self._plan or self.profile == "none":
            return self._plan
        config = PROFILES[self.profile]
        targets = self.targets()
        if not targets:
            return self._plan
        t, index = 0.0, 0
        while True:
            t += config["interval_s"] * self._rng.uniform(0.6, 1.4)
            if t > HORIZON_S:
                break
            kind = self._rng.choice(config["kinds"])
            self._plan.append(Disturbance(round(t), kind, self._rng.choice(targets), index))
            index += 1
        # Stable: at equal times the opening goes first, then the periodic plan in its order.
        self._plan = sorted([*self.opening(targets), *self._plan], key=lambda d: d.at_s)
        return self._plan

    def opening(self, targets: list[str]) -> list[Disturbance]:
        """The profile's opening burst over `targets`: the first at 0 s, the others at seeded
        instants of the first `OPENING_S` seconds, on targets drawn without repeats while they last."""
        kinds = OPENING[self.profile]
        rng = self._opening_rng
        times = [0.0, *sorted(round(rng.uniform(1.0, OPENING_S)) for _ in kinds[1:])]
        pool: list[str] = []
        burst = []
        for index, (at, kind) in enumerate(zip(times, kinds, strict=True)):
            if not pool:
                pool = list(targets)
            target = pool.pop(rng.randrange(len(pool)))
            burst.append(Disturbance(at, kind, target, OPENING_INDEX + index))
        return burst

    # ------------------------------------------------------------------ run
    def tick(self) -> list[Disturbance]:
        """Apply every disturbance that is due; returns those applied now."""
        if self.paused or self.profile == "none":
            return []
        plan = self.plan()
        elapsed = self.cluster.now() - self._start
        done = []
        while self._next < len(plan) and plan[self._next].at_s <= elapsed:
            item = plan[self._next]
            self._next += 1
            if self._apply(item):
                done.append(item)
                self.applied.append(item)
        return done

    def pause(self) -> None:
        """Stop disturbing and clean up running experiments (before verification)."""
        self.paused = True
        for kind, name in self._active:
            if self.cluster.get(kind, CHAOS_NAMESPACE, name) is not None:
                self.cluster.delete(kind, CHAOS_NAMESPACE, name)
        self._active.clear()

    def resume(self) -> None:
        self.paused = False

    # --------------------------------------------------------------- actions
    def _install(self) -> None:
        if self._installed:
            return
        from sregym.twin.chaos.install import manifests

        for obj in manifests():
            meta = obj["metadata"]
            if self.cluster.get(obj["kind"], meta.get("namespace"), meta["name"]) is None:
                self.cluster.create(obj)
        self._installed = True

    def _pods_of(self, deployment: str) -> list[dict[str, Any]]:
        obj = self.cluster.get("Deployment", self.namespace, deployment)
        if obj is None:
            return []
        selector = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        return sorted(self.cluster.list("Pod", self.namespace, label_selector=text),
                      key=lambda p: p["metadata"]["name"])

    def _chaos(self, kind: str, name: str, spec: dict[str, Any]) -> None:
        self._install()
        self.cluster.create({"apiVersion": CHAOS_API, "kind": kind,
                             "metadata": {"name": name, "namespace": CHAOS_NAMESPACE}, "spec": spec})
        self._active.append((kind, name))

    def _admission(self) -> str:
        """What shapes a new pod on its way in: the namespace's LimitRanges and ResourceQuotas and
        the cluster's admission webhooks (their specs, not their status)."""
        parts = []
        for kind, namespace in (("LimitRange", self.namespace), ("ResourceQuota", self.namespace),
                                ("MutatingWebhookConfiguration", None), ("ValidatingWebhookConfiguration", None)):
            for obj in self.cluster.list(kind, namespace):
                body = obj.get("spec", obj.get("webhooks"))
                parts.append(f"{kind}/{obj['metadata']['name']}={json.dumps(body, sort_keys=True)}")
        return "\n".join(sorted(parts))

    def _spares_admission(self, kind: str) -> str:
        """A disturbance that replaces pods sends the new ones through admission; once what admits
        them has changed since noise started (an incident's LimitRange, quota or webhook), a
        replaced pod of an uninvolved workload would be reshaped by it — the incident reaching past
        its ground truth. Such a disturbance becomes a container restart (no new pod)."""
        if kind not in ("pod-kill", "rollout"):
            return kind
        if self._admission_at_start is None:
            return kind
        return kind if self._admission() == self._admission_at_start else "container-kill"

    def _apply(self, item: Disturbance) -> bool:
        if self._admission_at_start is None:
            self._admission_at_start = self._admission()
        kind = self._spares_admission(item.kind)
        if kind != item.kind:
            item = Disturbance(item.at_s, kind, item.target, item.index)
        pods = self._pods_of(item.target)
        if not pods:
            return False
        selector = {"namespaces": [self.namespace],
                    "labelSelectors": dict((self.cluster.get("Deployment", self.namespace, item.target) or {})
                                            .get("spec", {}).get("selector", {}).get("matchLabels") or {})}
        suffix = f"{item.target}-{item.index}"
        if item.kind == "pod-kill":
            self._chaos("PodChaos", f"pod-kill-{suffix}",
                        {"action": "pod-kill", "mode": "one", "selector": selector, "gracePeriod": 0})
        elif item.kind == "container-kill":
            container = pods[0]["spec"]["containers"][0]["name"]
            self._chaos("PodChaos", f"container-kill-{suffix}",
                        {"action": "container-kill", "mode": "one", "selector": selector,
                         "containerNames": [container]})
        elif item.kind == "pod-failure":
            self._chaos("PodChaos", f"pod-failure-{suffix}",
                        {"action": "pod-failure", "mode": "one", "selector": selector, "duration": "30s"})
        elif item.kind == "network-delay":
            self._chaos("NetworkChaos", f"network-delay-{suffix}",
                        {"action": "delay", "mode": "one", "selector": selector, "duration": "60s",
                         "delay": {"latency": "200ms", "jitter": "50ms", "correlation": "50"}})
        elif item.kind == "network-loss":
            self._chaos("NetworkChaos", f"network-loss-{suffix}",
                        {"action": "loss", "mode": "one", "selector": selector, "duration": "45s",
                         "loss": {"loss": "30", "correlation": "50"}})
        elif item.kind == "rollout":
            stamp = _iso(self.cluster.now())
            self.cluster.patch("Deployment", self.namespace, item.target,
                               {"spec": {"template": {"metadata": {"annotations": {
                                   "kubectl.kubernetes.io/restartedAt": stamp}}}}})
        elif item.kind == "warning-event":
            pod = pods[self._rng.randrange(len(pods))]
            self._warning(pod)
        elif item.kind == "log-chatter":
            return self._chatter(pods[self._rng.randrange(len(pods))])
        return True

    def _chatter(self, pod: dict[str, Any]) -> bool:
        """Transient, self-resolving errors in the pod's main log (a dropped keep-alive, a retried
        call): the background noise every production log has."""
        lines = self._rng.sample(CHATTER, 2)
        script = "; ".join(f"echo '{line}' > /proc/1/fd/2" for line in lines)
        try:
            result = self.cluster.exec(self.namespace, pod["metadata"]["name"], ["sh", "-c", script])
        except Exception:  # a container without a shell simply gets no chatter
            return False
        return getattr(result, "exit_code", 1) == 0

    def _warning(self, pod: dict[str, Any]) -> None:
        """A readiness probe blip: one timed-out probe, as a busy node produces now and then."""
        meta = pod["metadata"]
        ip = (pod.get("status") or {}).get("podIP") or "10.244.1.10"
        container = pod["spec"]["containers"][0]
        port = next((p.get("containerPort") for p in container.get("ports") or []), 80)
        stamp = _iso(self.cluster.now())
        name = f"{meta['name']}.{int(self.cluster.now() * 1000):x}"
        self.cluster.create({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": self.namespace},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                               "namespace": self.namespace, "uid": meta.get("uid"),
                               "fieldPath": f"spec.containers{{{container['name']}}}"},
            "reason": "Unhealthy", "type": "Warning", "count": 1,
            "message": f'Readiness probe failed: Get "http://{ip}:{port}/": context deadline exceeded '
                       "(Client.Timeout exceeded while awaiting headers)",
            "source": {"component": "kubelet", "host": pod["spec"].get("nodeName", "")},
            "reportingComponent": "kubelet", "reportingInstance": pod["spec"].get("nodeName", ""),
            "firstTimestamp": stamp, "lastTimestamp": stamp,
        })


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
