"""One problem's lifecycle on one cluster: deploy, baseline, inject, noise, gold, verify, recover.

This is the sequence every consumer of problems shares (the `check` protocol, the conductor
that puts an agent in front of a problem): the app is deployed and warmed up, the baseline
(workload → replicas) is recorded, faults are injected with the admin credential, the cluster
runs for `settle_s` with noise, then the agent (or the gold solution, with the agent credential)
acts, and the mitigation oracle verifies with noise paused.
"""

from __future__ import annotations

import json
from typing import Any

from sregym.apps import AppSpec, get_app
from sregym.cluster.base import AGENT, Cluster
from sregym.faults.base import Fault, make_fault
from sregym.noise.schedule import NoiseScheduler
from sregym.oracles import baseline as healthy_baseline
from sregym.oracles.checks import CheckContext, workload_status
from sregym.oracles.mitigation import evaluate, verify
from sregym.problems.model import Action, Problem
from sregym.types import CheckResult, MitigationScore

WORKLOAD_KINDS = ("Deployment", "StatefulSet")
STATE_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Service", "ConfigMap", "Secret", "ResourceQuota",
               "LimitRange", "NetworkPolicy", "PersistentVolumeClaim", "CronJob")
CLUSTER_STATE_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "Namespace")
NOISE_STEP_S = 5.0
ENVIRONMENT_SETTLE_S = 60.0  # a baseline window of traffic on the environment
# The benchmark's own namespaces (noise experiments, reachability probes): not app state.
INFRA_NAMESPACES = ("chaos-mesh", "sregym-system")


class ProblemRun:
    """Drives one problem on one (admin) cluster."""

    def __init__(self, problem: Problem, cluster: Cluster, *, seed: int = 0, noise: str | None = None) -> None:
        self.problem = problem
        self.cluster = cluster
        self.seed = seed
        self.app: AppSpec = get_app(problem.app)
        self.baseline: dict[str, int] = {}
        self.healthy: healthy_baseline.HealthyBaseline | None = None
        self.faults: list[tuple[Fault, dict[str, Any]]] = []
        self.changes: list[tuple[Fault, dict[str, Any]]] = []  # benign changes: never recovered
        self.noise_profile = problem.noise if noise is None else noise
        self.noise: NoiseScheduler | None = None
        self.environment_ready = False

    # ----------------------------------------------------------------- setup
    def deploy(self, timeout_s: float = 300.0) -> None:
        self.app.push_images(self.cluster)
        for obj in self.app.objects():
            self.cluster.apply(obj)
        waited = 0.0
        while waited < timeout_s:
            self.cluster.advance(5)
            waited += 5
            if self._all_ready():
                return
        raise RuntimeError(f"app {self.app.name} did not become ready within {timeout_s:.0f}s")

    def _workloads(self) -> list[dict[str, Any]]:
        return [o for kind in WORKLOAD_KINDS for o in self.cluster.list(kind, self.app.namespace)]

    def _all_ready(self) -> bool:
        items = self._workloads()
        return bool(items) and all(workload_status(o)[0] for o in items)

    def record_baseline(self) -> dict[str, int]:
        """Record the healthy state the must_keep checks compare against: workloads → replicas,
        and the load generators, entry rate and safeguards (`oracles.baseline`)."""
        self.prepare_environment()
        self.baseline = {f"{o['kind']}/{self.app.namespace}/{o['metadata']['name']}":
                         int((o.get("spec") or {}).get("replicas", 1) or 0) for o in self._workloads()}
        self.healthy = healthy_baseline.record(self.cluster, self.app.namespace, self.app.generators,
                                               self.app.slo.window_s)
        return self.baseline

    def prepare_environment(self) -> None:
        """Set up the problem's environment once (before the baseline) and let traffic settle on it."""
        if self.environment_ready or not self.problem.environment:
            return
        self.environment_ready = True
        for spec in self.problem.environment:
            make_fault(spec.fault, spec.params).inject(self.cluster)
        self.cluster.advance(ENVIRONMENT_SETTLE_S)

    def inject(self) -> None:
        """Inject the faults, then make the benign changes (a control's rollout or scale-up)."""
        for spec in self.problem.faults:
            fault = make_fault(spec.fault, spec.params)
            self.faults.append((fault, fault.inject(self.cluster)))
        for spec in self.problem.changes:
            change = make_fault(spec.fault, spec.params)
            self.changes.append((change, change.inject(self.cluster)))

    def start_noise(self) -> None:
        protected = {rc.entity.name for rc in self.problem.ground_truth.involved} | {"loadgenerator"}
        self.noise = NoiseScheduler(self.cluster, profile=self.noise_profile, seed=self.seed,
                                    namespace=self.app.namespace, protected=protected)
        self.noise.tick()  # the opening's first disturbance lands now, before any fault

    def setup(self) -> None:
        """Deploy, warm up, record the baseline, inject and let the fault take hold (with noise)."""
        self.deploy()
        self.advance(30)
        self.record_baseline()
        self.start_noise()
        self.inject()
        self.advance(self.problem.settle_s)

    # ------------------------------------------------------------------ time
    def advance(self, seconds: float) -> None:
        """Advance in short steps so scheduled noise lands on time."""
        remaining = float(seconds)
        while remaining > 0:
            step = min(NOISE_STEP_S, remaining)
            self.cluster.advance(step)
            remaining -= step
            if self.noise is not None:
                self.noise.tick()

    # --------------------------------------------------------------- actions
    def apply_gold(self) -> None:
        """The reference solution, made with the agent's credential (what an agent could do)."""
        agent = self.cluster.as_user(AGENT)
        for action in self.problem.gold:
            if action.op == "wait":
                self.advance(action.seconds)  # with the noise, as any other passing time
            else:
                apply_action(agent, action)

    def recover(self) -> None:
        for fault, state in reversed(self.faults):
            fault.recover(self.cluster, state)
        self.faults.clear()

    # ---------------------------------------------------------------- oracles
    def check_context(self) -> CheckContext:
        entry_service, entry_port = self.app.entry
        return CheckContext(cluster=self.cluster, namespace=self.app.namespace, baseline=dict(self.baseline),
                            entry_service=entry_service, entry_port=entry_port,
                            slo_success_ratio=self.app.slo.success_ratio, slo_p95_ms=self.app.slo.p95_latency_ms,
                            slo_window_s=self.app.slo.window_s, healthy=self.healthy)

    def must_fix_now(self) -> list[CheckResult]:
        return evaluate(self.check_context(), self.problem.mitigation.must_fix, "must_fix")

    def verify(self, window_s: float | None = None, *, stop_at_failure: bool = False) -> MitigationScore:
        """The mitigation oracle over the problem's window (`oracles.mitigation.verify`)."""
        if self.noise is not None:
            self.noise.pause()
        m = self.problem.mitigation
        return verify(self.check_context(), must_fix=m.must_fix, must_keep=m.must_keep,
                      durability=m.durability, window_s=m.window_s if window_s is None else window_s,
                      stop_at_failure=stop_at_failure)

    def state_view(self) -> str:
        """The configuration that recover must restore: specs/data/labels of the app's objects
        and the cluster-scoped admission objects, canonical JSON."""
        items = []
        for kind in STATE_KINDS:
            for obj in self.cluster.list(kind, self.app.namespace):
                items.append(_normalise(obj, kind))
        for kind in CLUSTER_STATE_KINDS:
            for obj in self.cluster.list(kind):
                if obj["metadata"]["name"] in INFRA_NAMESPACES:
                    continue
                items.append(_normalise(obj, kind, spec_keys=("webhooks",)))
        items.sort(key=lambda i: (i["kind"], i["name"]))
        return json.dumps(items, sort_keys=True)


def _normalise(obj: dict[str, Any], kind: str, spec_keys: tuple[str, ...] = ()) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if "kubernetes.io/" not in k and not k.startswith("deployment.")}
    view: dict[str, Any] = {"kind": kind, "name": meta.get("name"), "labels": meta.get("labels") or {},
                            "annotations": annotations}
    for key in ("spec", "data", "stringData", *spec_keys):
        if key in obj:
            view[key] = obj[key]
    return view


def apply_action(cluster: Cluster, action: Action) -> None:
    if action.op == "patch":
        cluster.patch(action.kind, action.namespace, action.name, action.patch, patch_type=action.patch_type)
    elif action.op == "delete":
        cluster.delete(action.kind, action.namespace, action.name)
    elif action.op == "apply":
        assert action.manifest is not None, "an apply action needs a manifest"
        cluster.apply(action.manifest)
    elif action.op == "exec":
        pod = action.name
        if action.kind and action.kind not in ("Pod", "pod", "pods", "po"):
            pod = exec_target(cluster, action.kind, action.namespace or "default", action.name)
        cluster.exec(action.namespace or "default", pod, list(action.command), container=action.container)
    elif action.op == "wait":
        cluster.advance(action.seconds)


def exec_target(cluster: Cluster, kind: str, namespace: str, name: str) -> str:
    """The pod `kubectl exec <kind>/<name>` picks: a running pod of the workload (first by name)."""
    obj = cluster.get(kind, namespace, name)
    if obj is None:
        raise LookupError(f"{kind} {name} not found in namespace {namespace}")
    labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    pods = sorted(cluster.list("Pod", namespace, label_selector=selector), key=lambda p: p["metadata"]["name"])
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"
               and not p["metadata"].get("deletionTimestamp")]
    if not running:
        raise LookupError(f"{kind} {name} has no running pod to exec into")
    return str(running[0]["metadata"]["name"])
