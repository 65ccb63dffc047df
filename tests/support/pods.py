"""Pod manifests several twin tests exec into: a busybox that sleeps, with and without a memory
limit."""

from __future__ import annotations

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
