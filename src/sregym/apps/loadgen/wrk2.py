"""The open-loop generator: a wrk2 Deployment in the hidden `sregym-system` namespace.

Like SREGym's wrk2 job (image `deathstarbench/wrk2-client`) but long-running: a shell loop
restarts `wrk` every hour, as people run wrk2 as a Deployment. The `wrk` binary is the data
plane's wrk2 program (`twin/dataplane/loadgen.py`): it reads its rate (`-R`), distribution (`-D`),
timeout and target URL from its args and the request mix from the Lua script mounted from the
`sregym-loadgen-workload` ConfigMap, and sends traffic from its own pod while it runs. Scaling the
Deployment to zero or deleting it stops the traffic.

Every name of the generator is `sregym-loadgen` (Deployment, container, labels), one of the jobs
the query APIs hide (`sregym.twin.api.prom_access.HIDDEN_JOBS`), on top of the hidden namespace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from sregym.twin.node.images import ImageSpec

if TYPE_CHECKING:
    from sregym.apps.loadgen.model import OpenLoop

LOADGEN_NAMESPACE = "sregym-system"
LOADGEN_NAME = "sregym-loadgen"
APP_ANNOTATION = "sregym.io/app"  # how the data plane attributes the generator's traffic
IMAGE = "deathstarbench/wrk2-client:latest"
SCRIPT_DIR = "/scripts"
RUN_DURATION = "1h"  # each wrk run; the loop starts the next one at once


def images() -> tuple[ImageSpec, ...]:
    """The wrk2 client image, pushed to every twin an open-loop app is deployed into."""
    from sregym.twin.dataplane.loadgen import wrk_command

    return (ImageSpec("docker.io/deathstarbench/wrk2-client", ("latest",), size_mb=62.3,
                      description="wrk2 HTTP load generator (DeathStarBench fork)",
                      entrypoint=("/usr/local/bin/wrk",), shell="dash", commands={"wrk": wrk_command}),)


def generic_script(workload: OpenLoop) -> str:
    """A wrk2 Lua script sending `workload.mix` (class names must be Lua identifiers): one request
    function per class and a `request` function drawing a coin against the ratios in order."""
    mix = workload.mix
    lines = ['local url = "http://localhost"', ""]
    for m in mix:
        lines += [f"local function {m.name}()", f'  local method = "{m.method}"',
                  f'  local path = url .. "{m.path}"', "  return wrk.format(method, path, {}, nil)", "end", ""]
    lines += ["request = function()", *(f"  local {m.name}_ratio = {m.weight:g}" for m in mix),
              "  local coin = math.random()"]
    threshold = ""
    for i, m in enumerate(mix):
        if i == len(mix) - 1:
            lines += (["  else", f"    return {m.name}(url)", "  end"] if i else [f"  return {m.name}(url)"])
            continue
        threshold = f"{threshold} + {m.name}_ratio" if threshold else f"{m.name}_ratio"
        lines += [f"  {'if' if i == 0 else 'elseif'} coin < {threshold} then", f"    return {m.name}(url)"]
    return "\n".join([*lines, "end", ""])


def script(workload: OpenLoop) -> str:
    return workload.script(workload) if workload.script is not None else generic_script(workload)


def wrk_args(workload: OpenLoop, duration: str = RUN_DURATION) -> list[str]:
    return ["-D", workload.distribution, f"-t{workload.threads}", f"-c{workload.connections}",
            f"-d{duration}", "-L", "-s", f"{SCRIPT_DIR}/{workload.script_name}", workload.target,
            f"-R{workload.rate:g}"]


def manifests(app_name: str, workload: OpenLoop, *, name: str = LOADGEN_NAME) -> str:
    """Namespace, script ConfigMap and wrk2 Deployment for `app_name`'s workload."""
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": app_name}
    annotations = {APP_ANNOTATION: app_name}
    loop = f"while true; do wrk {' '.join(wrk_args(workload))}; done"
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LOADGEN_NAMESPACE}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": f"{name}-workload", "namespace": LOADGEN_NAMESPACE, "labels": labels},
         "data": {workload.script_name: script(workload)}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": name, "namespace": LOADGEN_NAMESPACE, "labels": labels, "annotations": annotations},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels, "annotations": annotations},
                               "spec": {"containers": [{
                                   "name": name, "image": IMAGE, "command": ["/bin/sh", "-c"], "args": [loop],
                                   "volumeMounts": [{"name": "workload", "mountPath": SCRIPT_DIR}],
                                   "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                                 "limits": {"memory": "256Mi"}}}],
                                   "volumes": [{"name": "workload", "configMap": {"name": f"{name}-workload"}}]}}}},
    ]
    return "\n---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)


__all__ = ["IMAGE", "LOADGEN_NAME", "LOADGEN_NAMESPACE", "generic_script", "images", "manifests", "script",
           "wrk_args"]
