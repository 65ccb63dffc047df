"""The closed-loop generator: a Locust Deployment in the hidden `sregym-system` namespace.

The app's `ClosedLoop` becomes a real locustfile (one `HttpUser` with `wait_time = constant(...)`
and one `@task(weight)` method per flow, whose requests are `self.client.<method>(path)` calls in
order) mounted from the `sregym-loadgen-locustfile` ConfigMap, and a Deployment running
`locust --headless -u USERS -r SPAWN_RATE -H TARGET`. The `locust` binary is the data plane's
closed-loop program (`twin/dataplane/locust.py`). Names and annotation are the wrk2 generator's,
so the query APIs hide it the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from sregym.apps.loadgen.wrk2 import APP_ANNOTATION, LOADGEN_NAME, LOADGEN_NAMESPACE
from sregym.twin.node.images import ImageSpec

if TYPE_CHECKING:
    from sregym.apps.loadgen.model import ClosedLoop

IMAGE = "locustio/locust:2.32.4"
MOUNT = "/mnt/locust"
LOCUSTFILE = "locustfile.py"


def images() -> tuple[ImageSpec, ...]:
    """The Locust image, pushed to every twin a closed-loop app is deployed into."""
    from sregym.twin.dataplane.locust import locust_command

    return (ImageSpec("docker.io/locustio/locust", ("2.32.4", "latest"), size_mb=92.4,
                      description="Locust load generator", entrypoint=("locust",), shell="dash",
                      commands={"locust": locust_command}),)


def locustfile(load: ClosedLoop) -> str:
    """A locustfile sending `load`'s flows (task names must be Python identifiers)."""
    lines = ["from locust import HttpUser, constant, task", "", "", "class AppUser(HttpUser):",
             f"    wait_time = constant({load.think_time_s!r})"]
    for t in load.tasks:
        lines += ["", f"    @task({t.weight})", f"    def {t.name}(self):"]
        lines += [f"        self.client.{r.method.lower()}({r.path!r})" for r in t.requests]
    return "\n".join(lines) + "\n"


def manifests(app_name: str, load: ClosedLoop, *, name: str = LOADGEN_NAME) -> str:
    """Namespace, locustfile ConfigMap and Locust Deployment for `app_name`'s users."""
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": app_name}
    annotations = {APP_ANNOTATION: app_name}
    args = ["-f", f"{MOUNT}/{LOCUSTFILE}", "--headless", "-u", str(load.users), "-r", f"{load.spawn_rate:g}",
            "-H", load.target]
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LOADGEN_NAMESPACE}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": f"{name}-locustfile", "namespace": LOADGEN_NAMESPACE, "labels": labels},
         "data": {LOCUSTFILE: locustfile(load)}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": name, "namespace": LOADGEN_NAMESPACE, "labels": labels, "annotations": annotations},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels, "annotations": annotations},
                               "spec": {"containers": [{
                                   "name": name, "image": IMAGE, "args": args,
                                   "volumeMounts": [{"name": "locustfile", "mountPath": MOUNT}],
                                   "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                                                 "limits": {"memory": "512Mi"}}}],
                                   "volumes": [{"name": "locustfile",
                                                "configMap": {"name": f"{name}-locustfile"}}]}}}},
    ]
    return "\n---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)


__all__ = ["IMAGE", "images", "locustfile", "manifests"]
