"""The wrk2 load generator Deployment, in the hidden `sregym-system` namespace.

Like SREGym's `wrk2-job` (image `deathstarbench/wrk2-client`, `mixed-workload_type_1.lua`), but
long-running: the data plane's workload generator drives the rate; the Deployment and its
ConfigMap make the generator a real, inspectable (by admins) part of the cluster. The
`sregym.io/*` annotations tell the data plane which app, target and rate it generates.
"""

from __future__ import annotations

import json

import yaml

from sregym.apps.catalog import Workload
from sregym.twin.images import ImageSpec, register_image, serve
from sregym.twin.shell import Invocation, Program

LOADGEN_NAMESPACE = "sregym-system"
IMAGE = "deathstarbench/wrk2-client:latest"


def _wrk(call: Invocation) -> Program:
    rate = next((a[2:] for a in call.args if a.startswith("-R")), "")
    return (yield from serve(call, ports=(), startup_seconds=0.5, memory_mb=12, logs=[
        f"Running wrk2 open loop {rate} req/s with {call.ctx.env.get('WRK_CONNECTIONS', '100')} connections"]))


register_image(ImageSpec("docker.io/deathstarbench/wrk2-client", ("latest",), size_mb=62.3,
                         description="wrk2 HTTP load generator", entrypoint=("/usr/local/bin/wrk",),
                         shell="dash", commands={"wrk": _wrk}))


def manifests(app_name: str, workload: Workload) -> str:
    name = f"wrk2-{app_name}"
    mix = [{"name": m.name, "weight": m.weight, "method": m.method, "path": m.path, "operation": m.operation}
           for m in workload.mix]
    annotations = {"sregym.io/app": app_name, "sregym.io/target": workload.target,
                   "sregym.io/rate": str(workload.rate)}
    docs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LOADGEN_NAMESPACE}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": f"{name}-workload", "namespace": LOADGEN_NAMESPACE, "annotations": annotations},
         "data": {"workload.json": json.dumps({"target": workload.target, "rate": workload.rate,
                                               "connections": workload.connections, "threads": workload.threads,
                                               "distribution": workload.distribution, "mix": mix}, indent=2)}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": name, "namespace": LOADGEN_NAMESPACE, "labels": {"app": name},
                      "annotations": annotations},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                  "template": {"metadata": {"labels": {"app": name}, "annotations": annotations},
                               "spec": {"containers": [{
                                   "name": "wrk2", "image": IMAGE, "command": ["wrk"],
                                   "args": ["-D", workload.distribution, f"-t{workload.threads}",
                                            f"-c{workload.connections}", "-d30s", "-L",
                                            "-s", "/scripts/mixed-workload_type_1.lua", workload.target,
                                            f"-R{workload.rate:g}"],
                                   "env": [{"name": "WRK_CONNECTIONS", "value": str(workload.connections)}],
                                   "volumeMounts": [{"name": "workload", "mountPath": "/scripts"}],
                                   "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                                   "volumes": [{"name": "workload",
                                                "configMap": {"name": f"{name}-workload"}}]}}}},
    ]
    return "\n---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)
