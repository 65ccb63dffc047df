"""ClusterIP and NodePort allocation for Services, as the API server's service registry does."""

from __future__ import annotations

import ipaddress

from sregym.errors import invalid
from sregym.twin.admission.base import AdmissionPlugin, admission_plugin
from sregym.twin.machinery.store import Operation

_SERVICE_NET = ipaddress.ip_network("10.96.0.0/12")
_NODE_PORTS = range(30000, 32768)


@admission_plugin
class ServiceIPAllocator(AdmissionPlugin):
    name = "service-ip-allocator"
    order = 20

    def mutate(self, op: Operation) -> None:
        if op.kind.key != ("", "Service") or op.obj is None or op.subresource:
            return
        spec = op.obj.setdefault("spec", {})
        svc_type = spec.get("type") or "ClusterIP"
        if op.verb == "UPDATE" and op.old is not None:
            old_spec = op.old.get("spec") or {}
            # clusterIP is immutable: keep the allocated one when the update omits it.
            if not spec.get("clusterIP") and old_spec.get("clusterIP"):
                spec["clusterIP"] = old_spec["clusterIP"]
                spec["clusterIPs"] = list(old_spec.get("clusterIPs") or [old_spec["clusterIP"]])
            elif spec.get("clusterIP") and old_spec.get("clusterIP") and \
                    spec["clusterIP"] != old_spec["clusterIP"]:
                raise invalid("Service", op.name, [("FieldValueInvalid", "spec.clusterIPs[0]",
                                                     "Invalid value: []string{\"" + spec["clusterIP"] +
                                                     "\"}: may not change once set")])
        if svc_type == "ExternalName":
            return
        if spec.get("clusterIP") in (None, ""):
            spec["clusterIP"] = self._allocate()
        if spec["clusterIP"] != "None":
            spec["clusterIPs"] = [spec["clusterIP"]]
        else:
            spec["clusterIPs"] = ["None"]
        if svc_type in ("NodePort", "LoadBalancer"):
            used = self._used_node_ports()
            for port in spec.get("ports") or []:
                if not port.get("nodePort"):
                    port["nodePort"] = next(p for p in _NODE_PORTS if p not in used)
                    used.add(port["nodePort"])

    def _allocate(self) -> str:
        used = {(s.get("spec") or {}).get("clusterIP") for s in self.twin.store.scan("Service")}
        rng = self.twin.rng.stream("service-ips")
        size = _SERVICE_NET.num_addresses
        while True:
            candidate = str(_SERVICE_NET.network_address + rng.randrange(16, size - 1))
            if candidate not in used:
                return candidate

    def _used_node_ports(self) -> set[int]:
        return {p.get("nodePort") for s in self.twin.store.scan("Service")
                for p in (s.get("spec") or {}).get("ports") or [] if p.get("nodePort")}
