"""Pod manifests several twin tests exec into: a busybox that sleeps, with and without a memory
limit, and a Running pod object for in-process exec."""

from __future__ import annotations

from typing import Any

BOX_POD = """
apiVersion: v1
kind: Pod
metadata: {name: box, namespace: default}
spec:
  nodeName: kind-worker
  containers:
  - {name: main, image: "busybox:1.36", command: ["sh", "-c", "sleep 36000"]}
"""

LIMITED_POD = """
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: default}
spec:
  nodeName: kind-worker
  containers:
  - name: main
    image: "busybox:1.36"
    command: ["sh", "-c", "sleep 36000"]
    resources: {limits: {memory: 8Mi}}
"""


def running_pod(name: str, image: str, *, container: str = "web", id_char: str = "b") -> dict[str, Any]:
    """A Pod object already Running on kind-worker, to `exec_context` into without scheduling it
    (the container ID is fixed: `id_char` repeated)."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeName": "kind-worker", "containers": [{"name": container, "image": image}]},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": container, "ready": True, "restartCount": 0, "image": image, "imageID": "",
            "containerID": "containerd://" + id_char * 64,
            "state": {"running": {"startedAt": "2026-01-05T09:00:02Z"}}}]},
    }
