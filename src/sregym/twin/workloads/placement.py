"""Where a pod may run and where it should: kube-scheduler's filter and score plugins.

The scheduler controller builds one `Snapshot` (nodes with the pods bound to them) per tick and
asks this module two questions per pending pod: which nodes pass every filter (and, for those that
do not, the exact per-node reason the real plugin reports), and which passing node scores best.
The reason strings and their codes (`UNSCHEDULABLE` vs `UNRESOLVABLE`, which decides whether
preemption can help) follow kube-scheduler 1.32's default profile, in its plugin order:
NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, VolumeBinding,
PodTopologySpread, InterPodAffinity.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.objects import controller_of, get_path, is_terminating
from sregym.twin.machinery.quantity import QuantityError, parse_quantity
from sregym.twin.machinery.selectors import LabelSelector, selector_from_spec
from sregym.twin.workloads.volumes import (
    NO_PROVISIONER,
    bound_volume,
    claim_class,
    claim_volumes,
    find_static_volume,
    is_bound,
    is_delayed_binding,
)

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

UNSCHEDULABLE = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"

# Requests assumed for scoring when a container asks for nothing (schedutil defaults).
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024

REASON_UNSCHEDULABLE_NODE = "node(s) were unschedulable"
REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_PORTS = "node(s) didn't have free ports for the requested pod ports"
REASON_TOO_MANY_PODS = "Too many pods"
REASON_VOLUME_NODE_AFFINITY = "node(s) had volume node affinity conflict"
REASON_NO_PV_TO_BIND = "node(s) didn't find available persistent volumes to bind"
REASON_SPREAD = "node(s) didn't match pod topology spread constraints"
REASON_SPREAD_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
NO_NODES = "no nodes available to schedule pods"

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


@dataclass(frozen=True)
class Status:
    """A failed filter: its code and the reasons that go into the FailedScheduling histogram."""

    code: str
    reasons: tuple[str, ...]


# ------------------------------------------------------------------ resources
def _quantity(value: Any, milli: bool) -> int:
    try:
        q = parse_quantity(value)
    except (QuantityError, TypeError):
        return 0
    return int(q * 1000) if milli else int(q)


def _add_list(total: dict[str, int], resources: dict[str, Any] | None) -> None:
    for name, value in (resources or {}).items():
        total[name] = total.get(name, 0) + _quantity(value, name == "cpu")


def _max_list(total: dict[str, int], other: dict[str, int]) -> None:
    for name, value in other.items():
        if value > total.get(name, 0):
            total[name] = value


def _container_requests(container: dict[str, Any]) -> dict[str, int]:
    res = container.get("resources") or {}
    # Requests default to limits (API defaulting); repeat it so a bare limit still counts.
    merged = dict(res.get("limits") or {})
    merged.update(res.get("requests") or {})
    out: dict[str, int] = {}
    _add_list(out, merged)
    return out


def pod_requests(pod: dict[str, Any]) -> tuple[dict[str, int], tuple[int, int]]:
    """Effective requests (cpu in millicores, everything else in base units) and the non-zero
    cpu/memory pair used for scoring.

    Like `resourcehelper.PodRequests`: regular containers add up, restartable init containers
    (native sidecars) add to them, and an ordinary init container only needs to fit on its own
    (max), plus pod overhead.
    """
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    nz_cpu = nz_mem = 0
    for c in spec.get("containers") or []:
        req = _container_requests(c)
        for name, value in req.items():
            total[name] = total.get(name, 0) + value
        nz_cpu += req.get("cpu") or DEFAULT_MILLI_CPU
        nz_mem += req.get("memory") or DEFAULT_MEMORY
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.get("initContainers") or []:
        req = _container_requests(c)
        if c.get("restartPolicy") == "Always":
            for name, value in req.items():
                sidecars[name] = sidecars.get(name, 0) + value
            nz_cpu += req.get("cpu") or 0
            nz_mem += req.get("memory") or 0
            _max_list(init_max, sidecars)
        else:
            step = dict(sidecars)
            for name, value in req.items():
                step[name] = step.get(name, 0) + value
            _max_list(init_max, step)
    for name, value in sidecars.items():
        total[name] = total.get(name, 0) + value
    _max_list(total, init_max)
    _add_list(total, spec.get("overhead"))
    return total, (nz_cpu, nz_mem)


def host_ports(pod: dict[str, Any]) -> list[tuple[str, str, int]]:
    out = []
    spec = pod.get("spec") or {}
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        for p in c.get("ports") or []:
            port = int(p.get("hostPort") or 0)
            if port > 0:
                out.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", port))
    return out


def ports_conflict(used: Iterable[tuple[str, str, int]], wanted: Iterable[tuple[str, str, int]]) -> bool:
    used = list(used)
    for ip, proto, port in wanted:
        for uip, uproto, uport in used:
            if uport == port and uproto == proto and (ip == uip or "0.0.0.0" in (ip, uip)):
                return True
    return False


# ---------------------------------------------------------------- pod entries
@dataclass(eq=False)
class PodEntry:
    """What the filters need to know about one pod, parsed once."""

    obj: dict[str, Any]
    uid: str
    namespace: str
    name: str
    labels: dict[str, str]
    priority: int
    requests: dict[str, int]
    nonzero: tuple[int, int]
    ports: list[tuple[str, str, int]]
    owner: str
    node: str = ""
    # Required anti-affinity terms of this pod (existing pods repel newcomers with them).
    anti_terms: list[AffinityTerm] = field(default_factory=list)

    @property
    def terminating(self) -> bool:
        return is_terminating(self.obj)

    @property
    def start(self) -> str:
        return get_path(self.obj, "status", "startTime") or get_path(
            self.obj, "metadata", "creationTimestamp") or ""


def pod_entry(pod: dict[str, Any], cache: dict[str, tuple[str, PodEntry]] | None = None) -> PodEntry:
    meta = pod.get("metadata") or {}
    uid = meta.get("uid", "")
    rv = meta.get("resourceVersion", "")
    if cache is not None:
        hit = cache.get(uid)
        if hit is not None and hit[0] == rv:
            return hit[1]
    requests, nonzero = pod_requests(pod)
    owner = controller_of(pod)
    entry = PodEntry(pod, uid, meta.get("namespace", ""), meta.get("name", ""),
                     meta.get("labels") or {}, int(get_path(pod, "spec", "priority") or 0),
                     requests, nonzero, host_ports(pod), (owner or {}).get("uid", ""),
                     get_path(pod, "spec", "nodeName") or "")
    if get_path(pod, "spec", "affinity", "podAntiAffinity"):
        entry.anti_terms = affinity_terms(pod, "podAntiAffinity", True)
    if cache is not None:
        cache[uid] = (rv, entry)
    return entry


# ---------------------------------------------------------------- nodes
@dataclass(eq=False)
class NodeInfo:
    node: dict[str, Any]
    name: str
    labels: dict[str, str]
    allocatable: dict[str, int]
    pods: list[PodEntry] = field(default_factory=list)
    requested: dict[str, int] = field(default_factory=dict)
    nonzero: list[int] = field(default_factory=lambda: [0, 0])
    ports: list[tuple[str, str, int]] = field(default_factory=list)
    anti_pods: list[PodEntry] = field(default_factory=list)

    def add(self, pod: PodEntry) -> None:
        self.pods.append(pod)
        if pod.anti_terms:
            self.anti_pods.append(pod)
        for name, value in pod.requests.items():
            self.requested[name] = self.requested.get(name, 0) + value
        self.nonzero[0] += pod.nonzero[0]
        self.nonzero[1] += pod.nonzero[1]
        self.ports.extend(pod.ports)

    def without(self, victims: set[str]) -> NodeInfo:
        """A copy with some pods removed (the preemption dry run)."""
        copy = NodeInfo(self.node, self.name, self.labels, self.allocatable)
        for p in self.pods:
            if p.uid not in victims:
                copy.add(p)
        return copy

    def with_pod(self, pod: PodEntry) -> NodeInfo:
        copy = self.without(set())
        copy.add(pod)
        return copy


def node_info(node: dict[str, Any]) -> NodeInfo:
    alloc: dict[str, int] = {}
    _add_list(alloc, get_path(node, "status", "allocatable", default=None) or {})
    meta = node.get("metadata") or {}
    return NodeInfo(node, meta.get("name", ""), meta.get("labels") or {}, alloc)


@dataclass
class Snapshot:
    """Nodes and the pods bound (or assumed) to them, for one scheduling pass."""

    nodes: list[NodeInfo]
    namespaces: dict[str, dict[str, str]]
    # Pending pods nominated to a node by an earlier preemption.
    nominated: list[PodEntry] = field(default_factory=list)

    def by_name(self) -> dict[str, NodeInfo]:
        return {n.name: n for n in self.nodes}

    def all_pods(self) -> Iterable[PodEntry]:
        for n in self.nodes:
            yield from n.pods


# ---------------------------------------------------------------- matching helpers
def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for tol in tolerations:
        effect = tol.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        op = tol.get("operator") or "Equal"
        key = tol.get("key") or ""
        if op == "Exists":
            if not key or key == taint.get("key"):
                return True
        elif key == taint.get("key") and (tol.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _requirement_matches(expr: dict[str, Any], value: str | None) -> bool:
    op = expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and values:
        try:
            a, b = int(value), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def node_selector_term_matches(term: dict[str, Any], node: NodeInfo) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False  # an empty term matches no objects
    for expr in exprs:
        if not _requirement_matches(expr, node.labels.get(expr.get("key", ""))):
            return False
    for expr in fields:
        value = node.name if expr.get("key") == "metadata.name" else None
        if not _requirement_matches(expr, value):
            return False
    return True


def matches_node_affinity(pod: dict[str, Any], node: NodeInfo) -> bool:
    spec = pod.get("spec") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if node.labels.get(key) != str(value):
            return False
    required = get_path(spec, "affinity", "nodeAffinity",
                        "requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        terms = required.get("nodeSelectorTerms") or []
        if not any(node_selector_term_matches(t, node) for t in terms):
            return False
    return True


@dataclass(frozen=True)
class AffinityTerm:
    selector: LabelSelector
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    topology_key: str
    weight: int = 0

    def matches(self, pod: PodEntry, namespaces: dict[str, dict[str, str]]) -> bool:
        if pod.namespace not in self.namespaces:
            if self.namespace_selector is None or not self.namespace_selector.matches(
                    namespaces.get(pod.namespace)):
                return False
        return self.selector.matches(pod.labels)


def affinity_terms(pod: dict[str, Any], kind: str, required: bool) -> list[AffinityTerm]:
    """Parsed pod (anti-)affinity terms; `kind` is "podAffinity" or "podAntiAffinity"."""
    section = get_path(pod, "spec", "affinity", kind) or {}
    namespace = get_path(pod, "metadata", "namespace") or "default"
    out = []
    if required:
        raw = [(t, 0) for t in section.get("requiredDuringSchedulingIgnoredDuringExecution") or []]
    else:
        raw = [(w.get("podAffinityTerm") or {}, int(w.get("weight") or 0))
               for w in section.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
    for term, weight in raw:
        ns_sel_spec = term.get("namespaceSelector")
        names = term.get("namespaces") or []
        namespaces = frozenset(names) if (names or ns_sel_spec is not None) else frozenset([namespace])
        out.append(AffinityTerm(selector_from_spec(term.get("labelSelector")), namespaces,
                                selector_from_spec(ns_sel_spec) if ns_sel_spec is not None else None,
                                term.get("topologyKey") or "", weight))
    return out


# ---------------------------------------------------------------- per-pod state
@dataclass
class PodState:
    """Everything computed once per pod per attempt (the PreFilter step)."""

    pod: dict[str, Any]
    entry: PodEntry
    tolerations: list[dict[str, Any]]
    affinity: list[AffinityTerm]
    anti_affinity: list[AffinityTerm]
    affinity_counts: Counter[tuple[str, str]]
    anti_counts: Counter[tuple[str, str]]
    existing_anti: Counter[tuple[str, str]]
    spread: list[dict[str, Any]]
    claims: list[dict[str, Any]]
    prefilter: str | None = None


def pod_state(twin: Twin, snap: Snapshot, pod: dict[str, Any], entry: PodEntry,
               excluded: set[str] | None = None) -> PodState:
    spec = pod.get("spec") or {}
    aff = affinity_terms(pod, "podAffinity", True)
    anti = affinity_terms(pod, "podAntiAffinity", True)
    aff_counts: Counter[tuple[str, str]] = Counter()
    anti_counts: Counter[tuple[str, str]] = Counter()
    existing: Counter[tuple[str, str]] = Counter()
    for node in snap.nodes:
        for other in node.pods if (aff or anti) else ():
            if excluded and other.uid in excluded:
                continue
            if aff and all(t.matches(other, snap.namespaces) for t in aff):
                for t in aff:
                    if t.topology_key in node.labels:
                        aff_counts[(t.topology_key, node.labels[t.topology_key])] += 1
            for t in anti:
                if t.topology_key in node.labels and t.matches(other, snap.namespaces):
                    anti_counts[(t.topology_key, node.labels[t.topology_key])] += 1
        for other in node.anti_pods:
            if excluded and other.uid in excluded:
                continue
            for t in other.anti_terms:
                if t.topology_key in node.labels and t.matches(entry, snap.namespaces):
                    existing[(t.topology_key, node.labels[t.topology_key])] += 1
    spread = [c for c in spec.get("topologySpreadConstraints") or []
              if (c.get("whenUnsatisfiable") or "DoNotSchedule") == "DoNotSchedule"]
    state = PodState(pod, entry, spec.get("tolerations") or [], aff, anti, aff_counts, anti_counts,
                     existing, spread, [])
    state.prefilter = _volume_prefilter(twin, pod, state)
    return state


def _volume_prefilter(twin: Twin, pod: dict[str, Any], state: PodState) -> str | None:
    """VolumeBinding's PreFilter: a missing or immediate-but-unbound claim fails every node."""
    ns = get_path(pod, "metadata", "namespace") or "default"
    unbound_immediate = False
    for vol in get_path(pod, "spec", "volumes", default=None) or []:
        if vol.get("ephemeral") and not (vol.get("persistentVolumeClaim") or {}).get("claimName"):
            claim = f"{get_path(pod, 'metadata', 'name')}-{vol.get('name', '')}"
            if twin.store.peek("PersistentVolumeClaim", ns, claim) is None:
                return ("waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{claim}"')
    for _vol, claim in claim_volumes(pod):
        pvc = twin.store.peek("PersistentVolumeClaim", ns, claim)
        if pvc is None:
            return f'persistentvolumeclaim "{claim}" not found'
        if is_terminating(pvc):
            return f'persistentvolumeclaim "{claim}" is being deleted'
        state.claims.append(pvc)
        if not is_bound(pvc) and not is_delayed_binding(twin, pvc):
            unbound_immediate = True
    return REASON_UNBOUND_IMMEDIATE if unbound_immediate else None


# ---------------------------------------------------------------- filters
def run_filters(twin: Twin, snap: Snapshot, state: PodState, node: NodeInfo) -> Status | None:
    """Every filter plugin in order; the first failure is the node's status."""
    node_obj = node.node
    spec = node_obj.get("spec") or {}
    if spec.get("unschedulable") and not tolerates(
            state.tolerations, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}):
        return Status(UNRESOLVABLE, (REASON_UNSCHEDULABLE_NODE,))
    for taint in spec.get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not tolerates(state.tolerations, taint):
            return Status(UNRESOLVABLE, (
                f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '') or ''}}}",))
    if not matches_node_affinity(state.pod, node):
        return Status(UNRESOLVABLE, (REASON_NODE_AFFINITY,))
    nominated = [p for p in snap.nominated
                 if p.node == node.name and p.uid != state.entry.uid and p.priority >= state.entry.priority]
    used_ports = node.ports + [pt for p in nominated for pt in p.ports]
    if state.entry.ports and ports_conflict(used_ports, state.entry.ports):
        return Status(UNSCHEDULABLE, (REASON_PORTS,))
    fit = insufficient_resources(node, state.entry, nominated)
    if fit:
        return Status(UNSCHEDULABLE, tuple(fit))
    volume = _volume_filter(twin, state, node)
    if volume is not None:
        return volume
    spread = _spread_filter(snap, state, node)
    if spread is not None:
        return spread
    return _inter_pod_filter(state, node)


def insufficient_resources(node: NodeInfo, pod: PodEntry, extra: list[PodEntry] = ()) -> list[str]:  # type: ignore[assignment]
    requested = dict(node.requested)
    count = len(node.pods)
    for p in extra:
        count += 1
        for name, value in p.requests.items():
            requested[name] = requested.get(name, 0) + value
    out = []
    if count + 1 > node.allocatable.get("pods", 110):
        out.append(REASON_TOO_MANY_PODS)
    ordered = ["cpu", "memory", "ephemeral-storage"]
    ordered += sorted(k for k in pod.requests if k not in ordered and k != "pods")
    for name in ordered:
        want = pod.requests.get(name, 0)
        if want <= 0:
            continue
        if want > node.allocatable.get(name, 0) - requested.get(name, 0):
            out.append(f"Insufficient {name}")
    return out


def _pv_node_affinity_ok(pv: dict[str, Any], node: NodeInfo) -> bool:
    required = get_path(pv, "spec", "nodeAffinity", "required")
    if not required:
        return True
    return any(node_selector_term_matches(t, node) for t in required.get("nodeSelectorTerms") or [])


def _volume_filter(twin: Twin, state: PodState, node: NodeInfo) -> Status | None:
    for pvc in state.claims:
        if is_bound(pvc):
            pv = bound_volume(twin, pvc)
            if pv is not None and not _pv_node_affinity_ok(pv, node):
                return Status(UNRESOLVABLE, (REASON_VOLUME_NODE_AFFINITY,))
            continue
        selected = get_path(pvc, "metadata", "annotations", "volume.kubernetes.io/selected-node")
        if selected and selected != node.name:
            # Provisioning is already under way for another node.
            return Status(UNRESOLVABLE, (REASON_VOLUME_NODE_AFFINITY,))
        sc = claim_class(twin, pvc)
        if sc is None or sc.get("provisioner") == NO_PROVISIONER:
            def fits(pv: dict[str, Any], node: NodeInfo = node) -> bool:
                return _pv_node_affinity_ok(pv, node)

            if find_static_volume(twin, pvc, accept=fits) is None:
                return Status(UNRESOLVABLE, (REASON_NO_PV_TO_BIND,))
    return None


def _spread_filter(snap: Snapshot, state: PodState, node: NodeInfo) -> Status | None:
    if not state.spread:
        return None
    pod = state.entry
    for constraint in state.spread:
        key = constraint.get("topologyKey") or ""
        if key not in node.labels:
            return Status(UNRESOLVABLE, (REASON_SPREAD_LABEL,))
        selector = selector_from_spec(constraint.get("labelSelector"))
        counts: Counter[str] = Counter()
        for other in snap.nodes:
            if key not in other.labels or not matches_node_affinity(state.pod, other):
                continue
            counts[other.labels[key]] += 0
            for p in other.pods:
                if p.namespace == pod.namespace and not p.terminating and selector.matches(p.labels):
                    counts[other.labels[key]] += 1
        min_domains = int(constraint.get("minDomains") or 1)
        lowest = min(counts.values()) if counts and len(counts) >= min_domains else 0
        self_match = 1 if selector.matches(pod.labels) else 0
        skew = counts.get(node.labels[key], 0) + self_match - lowest
        if skew > int(constraint.get("maxSkew") or 1):
            return Status(UNSCHEDULABLE, (REASON_SPREAD,))
    return None


def _inter_pod_filter(state: PodState, node: NodeInfo) -> Status | None:
    if state.affinity:
        exists = True
        for t in state.affinity:
            value = node.labels.get(t.topology_key)
            if value is None:
                return Status(UNRESOLVABLE, (REASON_AFFINITY,))
            if state.affinity_counts[(t.topology_key, value)] <= 0:
                exists = False
        if not exists:
            # The first pod of a group with affinity to itself may go anywhere.
            first = not state.affinity_counts and all(
                t.selector.matches(state.entry.labels) and state.entry.namespace in t.namespaces
                for t in state.affinity)
            if not first:
                return Status(UNRESOLVABLE, (REASON_AFFINITY,))
    for t in state.anti_affinity:
        value = node.labels.get(t.topology_key)
        if value is not None and state.anti_counts[(t.topology_key, value)] > 0:
            return Status(UNSCHEDULABLE, (REASON_ANTI_AFFINITY,))
    for (key, value), count in state.existing_anti.items():
        if count > 0 and node.labels.get(key) == value:
            return Status(UNSCHEDULABLE, (REASON_EXISTING_ANTI_AFFINITY,))
    return None


# ---------------------------------------------------------------- scoring
def _normalize(raw: dict[str, float], reverse: bool = False) -> dict[str, float]:
    if not raw:
        return {}
    hi = max(raw.values())
    if hi <= 0:
        return {k: (100.0 if reverse else 0.0) for k in raw}
    if reverse:
        return {k: 100.0 * (hi - v) / hi for k, v in raw.items()}
    return {k: 100.0 * v / hi for k, v in raw.items()}


def score_nodes(snap: Snapshot, state: PodState, feasible: list[NodeInfo]) -> list[tuple[float, str]]:
    """Weighted scores of the default profile (NodeResourcesFit least-allocated 1, balanced 1,
    TaintToleration 3, NodeAffinity 2, PodTopologySpread 2, InterPodAffinity 2)."""
    pod = state.entry
    least: dict[str, float] = {}
    balanced: dict[str, float] = {}
    taints: dict[str, float] = {}
    node_aff: dict[str, float] = {}
    spread: dict[str, float] = {}
    pod_aff: dict[str, float] = {}
    preferred_node = get_path(state.pod, "spec", "affinity", "nodeAffinity",
                              "preferredDuringSchedulingIgnoredDuringExecution") or []
    pref_aff = affinity_terms(state.pod, "podAffinity", False)
    pref_anti = affinity_terms(state.pod, "podAntiAffinity", False)
    for node in feasible:
        fractions = []
        for i, resource in enumerate(("cpu", "memory")):
            alloc = node.allocatable.get(resource, 0)
            used = node.nonzero[i] + pod.nonzero[i]
            fractions.append(min(used / alloc, 1.0) if alloc > 0 else 1.0)
        least[node.name] = sum((1 - f) * 100 for f in fractions) / 2
        balanced[node.name] = (1 - abs(fractions[0] - fractions[1]) / 2) * 100
        taints[node.name] = sum(1 for t in get_path(node.node, "spec", "taints", default=None) or []
                                if t.get("effect") == "PreferNoSchedule"
                                and not tolerates(state.tolerations, t))
        node_aff[node.name] = sum(int(p.get("weight") or 0) for p in preferred_node
                                  if node_selector_term_matches(p.get("preference") or {}, node))
        same_owner = sum(1 for p in node.pods if pod.owner and p.owner == pod.owner and not p.terminating)
        spread[node.name] = same_owner
        score = 0.0
        if pref_aff or pref_anti:
            for other_node in snap.nodes:
                for other in other_node.pods:
                    for t, sign in [*((t, 1) for t in pref_aff), *((t, -1) for t in pref_anti)]:
                        value = node.labels.get(t.topology_key)
                        if value is not None and other_node.labels.get(t.topology_key) == value \
                                and t.matches(other, snap.namespaces):
                            score += sign * t.weight
        pod_aff[node.name] = score
    taints_n = _normalize(taints, reverse=True)
    node_aff_n = _normalize(node_aff)
    spread_n = _normalize(spread, reverse=True)
    lo, hi = (min(pod_aff.values()), max(pod_aff.values())) if pod_aff else (0.0, 0.0)
    pod_aff_n = {k: (100.0 * (v - lo) / (hi - lo) if hi > lo else 0.0) for k, v in pod_aff.items()}
    out = []
    for node in feasible:
        n = node.name
        # Each plugin's score is an integer 0-100 before weighting, as in kube-scheduler.
        total = (int(least[n]) + int(balanced[n]) + 3 * int(taints_n[n]) + 2 * int(node_aff_n[n])
                 + 2 * int(spread_n[n]) + 2 * int(pod_aff_n[n]))
        out.append((total, n))
    return out


# ---------------------------------------------------------------- messages
def fit_message(num_nodes: int, statuses: dict[str, Status], prefilter: str | None = None,
                postfilter: str | None = None) -> str:
    """`FitError.Error()`: "0/4 nodes are available: <reason histogram>. <postfilter>"."""
    msg = f"0/{num_nodes} nodes are available:"
    if prefilter:
        msg += f" {prefilter}."
    else:
        counts: Counter[str] = Counter()
        for status in statuses.values():
            for reason in status.reasons:
                counts[reason] += 1
        parts = sorted(f"{count} {reason}" for reason, count in counts.items())
        if parts:
            msg += f" {', '.join(parts)}."
    if postfilter:
        msg += f" {postfilter}"
    return msg


def evaluate(twin: Twin, snap: Snapshot, pod: dict[str, Any], entry: PodEntry,
             excluded: set[str] | None = None) -> tuple[PodState, dict[str, Status], list[NodeInfo]]:
    """PreFilter + Filter over every node: (state, failures by node, feasible nodes)."""
    state = pod_state(twin, snap, pod, entry, excluded)
    statuses: dict[str, Status] = {}
    feasible: list[NodeInfo] = []
    if state.prefilter:
        status = Status(UNRESOLVABLE, (state.prefilter,))
        return state, {n.name: status for n in snap.nodes}, []
    for node in snap.nodes:
        failure = run_filters(twin, snap, state, node)
        if failure is None:
            feasible.append(node)
        else:
            statuses[node.name] = failure
    return state, statuses, feasible
