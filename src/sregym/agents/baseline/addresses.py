"""Addresses callers cannot reach: the host names in their errors, checked against what exists.

A caller logs the name it dials ("lookup mongodb-rate", "Could not resolve host ...
<Host: user-service", "dial tcp: lookup product-catalog"). When a workload of that name runs but
no Service of that name exists, the Service was deleted: restore it from the workload it fronts
(its pod labels as selector, its container ports).
"""

from __future__ import annotations

import json
import re

from sregym.agents.baseline import remedies as fix
from sregym.agents.baseline.context import IMPACT, Ctx, Finding, callers, containers

_HOSTS = re.compile(r"(?:lookup |Host: |host |resolve host[^<]*<Host: |dial tcp:? )([a-z][a-z0-9-]*)")


def _service_names(ctx: Ctx) -> set[str]:
    return {line.split("/", 1)[1] for line in ctx.get(f"get services -n {ctx.ns} -o name").splitlines()
            if "/" in line}


def missing_service(ctx: Ctx) -> Finding | None:
    dialled: dict[str, set[str]] = {}
    for workload, message in ctx.facts.error_logs:
        for host in _HOSTS.findall(message):
            dialled.setdefault(host, set()).add(workload)
    candidates = sorted(h for h in dialled if h in ctx.facts.deployments)
    if not candidates:
        return None
    services = _service_names(ctx)
    missing = [h for h in candidates if h not in services]
    if not missing:
        return None
    name = missing[0]
    dep = ctx.deployment(name)
    labels = ((dep.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    ports = [{"name": p.get("name") or f"port-{p['containerPort']}", "port": p["containerPort"],
              "targetPort": p["containerPort"], "protocol": p.get("protocol", "TCP")}
             for c in containers(dep) for p in c.get("ports") or [] if p.get("containerPort")]
    if not labels or not ports:
        return None
    manifest = json.dumps({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ctx.ns},
                           "spec": {"selector": labels, "ports": ports}})
    users = sorted(dialled[name])
    return Finding([ctx.obj("Service", name)], "missing service: the Service was deleted (service does not exist)",
                   f"{', '.join(users)} fail to reach {name}: the host name does not resolve (no such host) because "
                   f"the {name} Service is missing (service deleted) while Deployment {name} still runs. Fix: "
                   f"recreate Service {name} (selector {json.dumps(labels)}, ports "
                   f"{[p['port'] for p in ports]}). {IMPACT}", fix.apply_yaml(manifest),
                   affected=[ctx.dep(u) for u in users] + callers(ctx, users))


__all__ = ["missing_service"]
