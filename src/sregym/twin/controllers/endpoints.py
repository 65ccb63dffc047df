"""The endpoints and endpointslice controllers: which pod IPs stand behind each Service.

Half of all "the service is down" incidents are really "the service has no endpoints": a selector
that matches nothing after a label change, a named `targetPort` the new pods do not declare, pods
that are Running but not Ready. This controller derives `Endpoints` and `EndpointSlice` objects
from the pods exactly as kube-controller-manager does, so `kubectl get endpoints` shows the same
emptiness an engineer would see, and the data plane routes only to what is listed here.

Work is driven by change: a store listener marks the Services a pod change can affect (matching
its old or new labels), and each tick only those Services are recomputed, namespace by namespace.
Objects are written only when their content changes.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.objects import owner_ref
from sregym.twin.machinery.selectors import LabelSelector, selector_from_map
from sregym.twin.machinery.store import WatchEvent

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
MANAGED_BY = "endpointslice-controller.k8s.io"
HEADLESS_LABEL = "service.kubernetes.io/headless"
TRIGGER_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time"
MAX_ENDPOINTS_PER_SLICE = 100

PortKey = tuple[tuple[str, int, str, str], ...]  # (name, port, protocol, appProtocol)


@dataclass(frozen=True)
class Backend:
    """One pod behind a Service, with what the controllers publish about it."""

    pod: dict[str, Any]  # the stored pod: read-only
    ip: str
    ready: bool  # the pod's Ready condition
    terminating: bool
    ports: PortKey  # the service ports this pod resolves, in service order

    @property
    def name(self) -> str:
        return self.pod["metadata"]["name"]


def service_selector(service: dict[str, Any]) -> LabelSelector | None:
    """The Service's selector, or None when it has none (its endpoints are managed by hand)."""
    selector = (service.get("spec") or {}).get("selector")
    if not selector:
        return None
    return selector_from_map(selector)


def is_pod_ready(pod: dict[str, Any]) -> bool:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def resolve_target_port(pod: dict[str, Any], service_port: dict[str, Any]) -> int | None:
    """The container port a service port reaches on this pod (podutil.FindPort): a number is
    used as is, a name must be declared by one of the pod's containers with the same protocol."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    if target is None:
        return None
    protocol = service_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    for field in ("containers", "initContainers"):
        for container in spec.get(field) or []:
            for port in container.get("ports") or []:
                if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                    return port.get("containerPort")
    return None


def _headless(service: dict[str, Any]) -> bool:
    return (service.get("spec") or {}).get("clusterIP") == "None"


def backends_for(service: dict[str, Any], pods: list[dict[str, Any]]) -> list[Backend]:
    """Pods (of the Service's namespace) selected by the Service and eligible to be endpoints:
    they have an IP and are not in a terminal phase. Sorted by IP, then name."""
    selector = service_selector(service)
    if selector is None:
        return []
    ports = (service.get("spec") or {}).get("ports") or []
    out = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        if not selector.matches(meta.get("labels")):
            continue
        status = pod.get("status") or {}
        ip = status.get("podIP")
        if not ip or status.get("phase") in ("Succeeded", "Failed"):
            continue
        resolved = []
        for port in ports:
            number = resolve_target_port(pod, port)
            if number is not None:
                resolved.append((port.get("name") or "", int(number), port.get("protocol") or "TCP",
                                 port.get("appProtocol") or ""))
        out.append(Backend(pod, ip, is_pod_ready(pod), bool(meta.get("deletionTimestamp")),
                           tuple(resolved)))
    out.sort(key=lambda b: (_ip_key(b.ip), b.name))
    return out


def _ip_key(ip: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in ip.split("."))
    except ValueError:
        return (1 << 16,)


def _target_ref(pod: dict[str, Any]) -> dict[str, Any]:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta.get("namespace", ""), "name": meta["name"],
            "uid": meta.get("uid", "")}


def _hostname(service: dict[str, Any], pod: dict[str, Any]) -> str | None:
    spec = pod.get("spec") or {}
    if spec.get("hostname") and spec.get("subdomain") == service["metadata"]["name"]:
        return spec["hostname"]
    return None


def _port_list(key: PortKey, *, slice_style: bool) -> list[dict[str, Any]]:
    out = []
    for name, port, protocol, app_protocol in key:
        entry: dict[str, Any] = {}
        if name or slice_style:
            entry["name"] = name
        entry["port"] = port
        entry["protocol"] = protocol
        if app_protocol:
            entry["appProtocol"] = app_protocol
        out.append(entry)
    return out


def desired_subsets(service: dict[str, Any], backends: list[Backend]) -> list[dict[str, Any]]:
    """Endpoints subsets: addresses grouped by identical port sets (RepackSubsets). Terminating
    pods are left out; not-ready pods go to notReadyAddresses unless publishNotReadyAddresses."""
    spec = service.get("spec") or {}
    publish = bool(spec.get("publishNotReadyAddresses"))
    has_ports = bool(spec.get("ports"))
    groups: dict[PortKey, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for backend in backends:
        if backend.terminating and not publish:
            continue
        if has_ports and not backend.ports:
            continue  # no service port resolves on this pod
        if not has_ports and not _headless(service):
            continue
        address: dict[str, Any] = {"ip": backend.ip}
        hostname = _hostname(service, backend.pod)
        if hostname:
            address["hostname"] = hostname
        node = (backend.pod.get("spec") or {}).get("nodeName")
        if node:
            address["nodeName"] = node
        address["targetRef"] = _target_ref(backend.pod)
        ready_list, not_ready = groups.setdefault(backend.ports, ([], []))
        (ready_list if publish or backend.ready else not_ready).append(address)
    subsets = []
    for key in sorted(groups):
        ready_list, not_ready = groups[key]
        subset: dict[str, Any] = {}
        if ready_list:
            subset["addresses"] = ready_list
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        if key:
            subset["ports"] = _port_list(key, slice_style=False)
        subsets.append(subset)
    return subsets


def slice_endpoint(service: dict[str, Any], backend: Backend) -> dict[str, Any]:
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    endpoint: dict[str, Any] = {
        "addresses": [backend.ip],
        "conditions": {"ready": publish or (backend.ready and not backend.terminating),
                       "serving": backend.ready,
                       "terminating": backend.terminating},
    }
    hostname = _hostname(service, backend.pod)
    if hostname:
        endpoint["hostname"] = hostname
    node = (backend.pod.get("spec") or {}).get("nodeName")
    if node:
        endpoint["nodeName"] = node
    endpoint["targetRef"] = _target_ref(backend.pod)
    return endpoint


def desired_slice_groups(service: dict[str, Any],
                         backends: list[Backend]) -> list[tuple[PortKey, list[dict[str, Any]]]]:
    """Slice contents: endpoints grouped by port set, at most 100 per slice. A Service with no
    eligible pods gets one empty placeholder slice, like the real controller."""
    groups: dict[PortKey, list[dict[str, Any]]] = defaultdict(list)
    for backend in backends:
        groups[backend.ports].append(slice_endpoint(service, backend))
    out: list[tuple[PortKey, list[dict[str, Any]]]] = []
    for key in sorted(groups):
        items = groups[key]
        for start in range(0, len(items), MAX_ENDPOINTS_PER_SLICE):
            out.append((key, items[start:start + MAX_ENDPOINTS_PER_SLICE]))
    return out


def ready_backends(twin: Twin, service: dict[str, Any]) -> list[Backend]:
    """Ready, non-terminating pods behind a Service right now (what a client connecting through
    the Service can reach). Selector-less Services use their hand-written Endpoints."""
    namespace = service["metadata"].get("namespace", "")
    if service_selector(service) is not None:
        pods = list(twin.store.scan("Pod", namespace))
        return [b for b in backends_for(service, pods) if b.ready and not b.terminating]
    endpoints = twin.store.peek("Endpoints", namespace, service["metadata"]["name"])
    out = []
    for subset in (endpoints or {}).get("subsets") or []:
        for address in subset.get("addresses") or []:
            ref = address.get("targetRef") or {}
            pod = twin.store.peek("Pod", ref.get("namespace") or namespace, ref.get("name", "")) \
                if ref.get("kind") == "Pod" else None
            if pod is not None:
                ports = tuple((p.get("name") or "", int(p.get("port") or 0), p.get("protocol") or "TCP",
                               p.get("appProtocol") or "") for p in subset.get("ports") or [])
                out.append(Backend(pod, address.get("ip", ""), True, False, ports))
    return out


def _labels_for(service: dict[str, Any]) -> dict[str, str]:
    labels = dict((service.get("metadata") or {}).get("labels") or {})
    if _headless(service):
        labels[HEADLESS_LABEL] = ""
    return labels


@controller
class EndpointsController(Controller):
    """Maintains `Endpoints` and `EndpointSlice` objects for every Service with a selector."""

    name = "endpoints"
    order = 80
    user = "system:serviceaccount:kube-system:endpoint-controller"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._dirty: set[tuple[str, str]] = set()
        self._all_dirty = True
        self._writing = False
        # namespace -> service name -> selector, and pod -> labels, to route pod changes.
        self._selectors: dict[str, dict[str, LabelSelector]] = defaultdict(dict)
        self._pod_labels: dict[tuple[str, str], dict[str, str]] = {}
        self._managed: set[tuple[str, str]] = set()
        twin.store.add_listener(self._on_change)

    # ------------------------------------------------------------ change feed
    def _on_change(self, event: WatchEvent) -> None:
        key = event.kind.key
        meta = event.object.get("metadata") or {}
        ns = meta.get("namespace", "")
        if key == ("", "Pod"):
            pod_key = (ns, meta.get("name", ""))
            old = self._pod_labels.get(pod_key)
            new = meta.get("labels") or {}
            for svc, selector in self._selectors.get(ns, {}).items():
                if selector.matches(new) or (old is not None and selector.matches(old)):
                    self._dirty.add((ns, svc))
            if event.type == "DELETED":
                self._pod_labels.pop(pod_key, None)
            else:
                self._pod_labels[pod_key] = new
        elif key == ("", "Service"):
            name = meta.get("name", "")
            selector = service_selector(event.object) if event.type != "DELETED" else None
            if selector is None:
                self._selectors.get(ns, {}).pop(name, None)
            else:
                self._selectors[ns][name] = selector
            self._dirty.add((ns, name))
        elif self._writing:
            return
        elif key == ("", "Endpoints"):
            self._dirty.add((ns, meta.get("name", "")))
        elif key == ("discovery.k8s.io", "EndpointSlice"):
            service = (meta.get("labels") or {}).get(SERVICE_NAME_LABEL)
            if service:
                self._dirty.add((ns, service))

    # -------------------------------------------------------------- reconcile
    def reconcile(self) -> None:
        store = self.twin.store
        if self._all_dirty:
            self._all_dirty = False
            self._dirty = {(s["metadata"].get("namespace", ""), s["metadata"]["name"])
                           for s in store.scan("Service")}
            self._dirty |= {(e["metadata"].get("namespace", ""), e["metadata"]["name"])
                            for e in store.scan("Endpoints") if (e["metadata"].get("namespace", ""),
                                                                 e["metadata"]["name"]) in self._managed}
        if not self._dirty:
            return
        dirty, self._dirty = sorted(self._dirty), set()
        by_namespace: dict[str, list[str]] = defaultdict(list)
        for ns, name in dirty:
            by_namespace[ns].append(name)
        self._writing = True
        try:
            for ns in sorted(by_namespace):
                pods = list(store.scan("Pod", ns))
                for name in by_namespace[ns]:
                    self._sync(ns, name, pods)
        finally:
            self._writing = False

    def _sync(self, ns: str, name: str, pods: list[dict[str, Any]]) -> None:
        service = self.twin.store.peek("Service", ns, name)
        if service is None or (service.get("metadata") or {}).get("deletionTimestamp"):
            self._remove(ns, name)
            return
        if service_selector(service) is None:
            if (ns, name) == ("default", "kubernetes"):
                self._sync_apiserver(service)
            return  # selector-less: Endpoints belong to whoever wrote them
        backends = backends_for(service, pods)
        self._sync_endpoints(service, backends)
        self._sync_slices(service, backends)

    def _remove(self, ns: str, name: str) -> None:
        store = self.twin.store
        if (ns, name) in self._managed and store.peek("Endpoints", ns, name) is not None:
            self._try(lambda: store.delete("Endpoints", ns, name, user=self.user))
        self._managed.discard((ns, name))
        for slice_obj in list(store.scan("EndpointSlice", ns)):
            labels = slice_obj["metadata"].get("labels") or {}
            if labels.get(SERVICE_NAME_LABEL) == name and labels.get(MANAGED_BY_LABEL) == MANAGED_BY:
                slice_name = slice_obj["metadata"]["name"]
                self._try(lambda n=slice_name: store.delete("EndpointSlice", ns, n, user=self.user))

    @staticmethod
    def _try(action: Any) -> None:
        # Gone already, or the namespace is terminating: nothing left to maintain.
        with contextlib.suppress(ApiError):
            action()

    def _sync_apiserver(self, service: dict[str, Any]) -> None:
        """The API server publishes its own address behind `default/kubernetes` (Endpoints with
        skip-mirror, and a slice named `kubernetes`); the twin does it here, once."""
        store = self.twin.store
        address = next((a.get("address") for node in store.scan("Node")
                        if "node-role.kubernetes.io/control-plane" in (node["metadata"].get("labels") or {})
                        for a in (node.get("status") or {}).get("addresses") or []
                        if a.get("type") == "InternalIP"), None)
        if address is None:
            return
        port = {"name": "https", "port": 6443, "protocol": "TCP"}
        if store.peek("Endpoints", "default", "kubernetes") is None:
            self._try(lambda: store.create({
                "apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                "subsets": [{"addresses": [{"ip": address}], "ports": [port]}]}, user=self.user))
        if store.peek("EndpointSlice", "default", "kubernetes") is None:
            self._try(lambda: store.create({
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {SERVICE_NAME_LABEL: "kubernetes"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
                "ports": [port]}, user=self.user))

    # -------------------------------------------------------------- Endpoints
    def _sync_endpoints(self, service: dict[str, Any], backends: list[Backend]) -> None:
        store = self.twin.store
        meta = service["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        subsets = desired_subsets(service, backends)
        labels = _labels_for(service)
        existing = store.peek("Endpoints", ns, name)
        self._managed.add((ns, name))
        if existing is not None:
            if (existing.get("subsets") or []) == subsets and \
                    (existing["metadata"].get("labels") or {}) == labels:
                return

            def change(obj: dict[str, Any]) -> None:
                obj["metadata"]["labels"] = labels
                obj["metadata"].setdefault("annotations", {})[TRIGGER_ANNOTATION] = self.twin.clock.iso()
                if subsets:
                    obj["subsets"] = subsets
                else:
                    obj.pop("subsets", None)

            self._try(lambda: store.mutate("Endpoints", ns, name, change, user=self.user))
            return
        obj: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": name, "namespace": ns, "labels": labels,
                         "annotations": {TRIGGER_ANNOTATION: self.twin.clock.iso()}},
        }
        if subsets:
            obj["subsets"] = subsets
        self._try(lambda: store.create(obj, user=self.user))

    # --------------------------------------------------------- EndpointSlices
    def _sync_slices(self, service: dict[str, Any], backends: list[Backend]) -> None:
        store = self.twin.store
        meta = service["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        labels = {**_labels_for(service), SERVICE_NAME_LABEL: name, MANAGED_BY_LABEL: MANAGED_BY}
        owner = owner_ref(service)
        existing = [s for s in store.scan("EndpointSlice", ns)
                    if (s["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL) == name
                    and (s["metadata"].get("labels") or {}).get(MANAGED_BY_LABEL) == MANAGED_BY]
        wanted = desired_slice_groups(service, backends)
        if not wanted:
            wanted = [((), [])]  # placeholder
        # Reuse slices whose port set matches (stable names), create the rest, drop leftovers.
        free = {s["metadata"]["name"]: s for s in existing}
        for ports, endpoints in wanted:
            match = next((n for n, s in sorted(free.items())
                          if _slice_port_key(s) == ports), None)
            body: dict[str, Any] = {"addressType": "IPv4", "endpoints": endpoints}
            if ports:
                body["ports"] = _port_list(ports, slice_style=True)
            if match is not None:
                current = free.pop(match)
                if (current.get("endpoints") or []) == endpoints and \
                        current.get("ports") == body.get("ports") and \
                        (current["metadata"].get("labels") or {}) == labels and \
                        current.get("addressType") == "IPv4":
                    continue

                def change(obj: dict[str, Any], body: dict[str, Any] = body) -> None:
                    obj["metadata"]["labels"] = labels
                    obj["metadata"]["ownerReferences"] = [owner]
                    obj["metadata"].setdefault("annotations", {})[TRIGGER_ANNOTATION] = \
                        self.twin.clock.iso()
                    obj.pop("ports", None)
                    obj.update(body)

                self._try(lambda m=match, c=change: store.mutate("EndpointSlice", ns, m, c, user=self.user))
                continue
            obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                   "metadata": {"generateName": _generate_name(name), "namespace": ns,
                                "labels": labels, "ownerReferences": [owner],
                                "annotations": {TRIGGER_ANNOTATION: self.twin.clock.iso()}},
                   **body}
            self._try(lambda o=obj: store.create(o, user=self.user))
        for leftover in sorted(free):
            self._try(lambda n=leftover: store.delete("EndpointSlice", ns, n, user=self.user))


def _generate_name(service_name: str) -> str:
    return f"{service_name[:57]}-"


def _slice_port_key(slice_obj: dict[str, Any]) -> PortKey:
    return tuple((p.get("name") or "", int(p.get("port") or 0), p.get("protocol") or "TCP",
                  p.get("appProtocol") or "") for p in slice_obj.get("ports") or [])
