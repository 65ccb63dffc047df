"""The kubelet restarts a running container whose image is changed in place (`kubectl set image`
on a pod, Chaos Mesh pod-failure): kill with the pod's grace period, `Killing` event "Container X
definition changed, will be restarted", start from the new spec (restartCount + 1), whatever the
restartPolicy; a bad new image leaves the pod in ErrImagePull / ImagePullBackOff, never deleted.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from sregym.twin.chaos import install_chaos_mesh
from sregym.twin.chaos.actions import PAUSE_IMAGE
from sregym.twin.twin import Twin

# The API-server harness (real kubectl against a served twin), loaded by path like the chaos tests.
_spec = importlib.util.spec_from_file_location("sregym_api_conftest_k1", Path(__file__).parent / "api" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_api)
kube = _api.kube

NODE = "kind-worker"
CHANGED = "Container {} definition changed, will be restarted"


def bare_pod(name: str, containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": NODE, "containers": containers, **spec}}


def nginx(name: str = "web", image: str = "nginx:1.27") -> dict[str, Any]:
    return {"name": name, "image": image, "readinessProbe": {"httpGet": {"path": "/", "port": 80},
                                                              "periodSeconds": 2}}


def set_image(twin: Twin, pod: str, container: str, image: str, *, init: bool = False) -> None:
    """What `kubectl set image pod/<pod> <container>=<image>` sends: a strategic merge patch."""
    key = "initContainers" if init else "containers"
    twin.patch("pods", "default", pod, {"spec": {key: [{"name": container, "image": image}]}},
               patch_type="strategic")


def cstatus(twin: Twin, pod: str, index: int = 0, key: str = "containerStatuses") -> dict[str, Any]:
    return twin.get("pods", "default", pod)["status"][key][index]


def events(twin: Twin, pod: str, reason: str) -> list[dict[str, Any]]:
    return twin.event_list("default", involved_name=pod, reason=reason)


def count(twin: Twin, pod: str, reason: str, message: str) -> int:
    return sum(int(e.get("count") or 1) for e in events(twin, pod, reason) if e["message"] == message)


def test_set_image_restarts_running_container_once() -> None:
    twin = Twin(seed=3)
    twin.apply(bare_pod("web", [nginx()]))
    twin.advance(15)
    before = cstatus(twin, "web")
    uid = twin.get("pods", "default", "web")["metadata"]["uid"]
    assert before["ready"] and before["restartCount"] == 0
    set_image(twin, "web", "web", "nginx:1.28")
    twin.advance(10)
    after = cstatus(twin, "web")
    assert after["restartCount"] == 1 and after["ready"] and "running" in after["state"]
    assert after["image"] == "docker.io/library/nginx:1.28"
    assert after["imageID"].startswith("docker.io/library/nginx@sha256:") and after["imageID"] != before["imageID"]
    assert after["containerID"] != before["containerID"]
    last = after["lastState"]["terminated"]
    assert last["containerID"] == before["containerID"] and last["exitCode"] == 0  # nginx exits on SIGTERM
    killing = events(twin, "web", "Killing")
    assert [e["message"] for e in killing] == [CHANGED.format("web")]
    assert killing[0]["type"] == "Normal" and killing[0]["source"]["component"] == "kubelet"
    assert killing[0]["involvedObject"]["fieldPath"] == "spec.containers{web}"
    assert count(twin, "web", "Pulling", 'Pulling image "nginx:1.28"') == 1
    assert any(e["message"].startswith('Successfully pulled image "nginx:1.28"') for e in events(twin, "web", "Pulled"))
    assert count(twin, "web", "Created", "Created container: web") == 2
    assert count(twin, "web", "Started", "Started container web") == 2
    # Same pod, restarted in place; and only once.
    pod = twin.get("pods", "default", "web")
    assert pod["metadata"]["uid"] == uid and "deletionTimestamp" not in pod["metadata"]
    twin.advance(60)
    assert cstatus(twin, "web")["restartCount"] == 1
    assert len(events(twin, "web", "Killing")) == 1


def test_unchanged_spec_write_does_not_restart() -> None:
    twin = Twin(seed=3)
    twin.apply(bare_pod("web", [nginx()]))
    twin.advance(15)
    set_image(twin, "web", "web", "nginx:1.27")  # same image: no definition change
    twin.patch("pods", "default", "web", {"metadata": {"labels": {"x": "y"}}}, patch_type="merge")
    twin.advance(10)
    assert cstatus(twin, "web")["restartCount"] == 0
    assert events(twin, "web", "Killing") == []


def test_bad_image_on_running_pod_pull_errors_and_pod_stays() -> None:
    twin = Twin(seed=3)
    twin.apply(bare_pod("web", [nginx()]))
    twin.advance(15)
    uid = twin.get("pods", "default", "web")["metadata"]["uid"]
    set_image(twin, "web", "web", "nginx:1.99-missing")
    seen: list[str] = []
    for _ in range(30):
        twin.step()
        waiting = cstatus(twin, "web")["state"].get("waiting") or {}
        if waiting.get("reason") and (not seen or seen[-1] != waiting["reason"]):
            seen.append(waiting["reason"])
    assert "ErrImagePull" in seen and "ImagePullBackOff" in seen
    assert seen.index("ErrImagePull") < seen.index("ImagePullBackOff")
    st = cstatus(twin, "web")
    assert not st["ready"] and st["restartCount"] == 0  # the new container never started
    assert st["lastState"]["terminated"]["exitCode"] == 0
    assert [e["message"] for e in events(twin, "web", "Killing")] == [CHANGED.format("web")]
    failed = {e["message"] for e in events(twin, "web", "Failed")}
    assert {"Error: ErrImagePull", "Error: ImagePullBackOff"} <= failed
    assert any(m.startswith('Failed to pull image "nginx:1.99-missing": ') for m in failed)
    assert count(twin, "web", "BackOff", 'Back-off pulling image "nginx:1.99-missing"') >= 1
    pod = twin.get("pods", "default", "web")
    assert pod["metadata"]["uid"] == uid and "deletionTimestamp" not in pod["metadata"]
    assert pod["status"]["phase"] == "Running"
    assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"] == "False"
    # Fixing the image pulls it at once (the pull back-off is per image), then starts it.
    set_image(twin, "web", "web", "nginx:1.28")
    twin.advance(4)
    st = cstatus(twin, "web")
    assert "running" in st["state"] and st["restartCount"] == 1
    assert st["image"] == "docker.io/library/nginx:1.28"


def test_restart_policy_never_still_restarts_on_definition_change() -> None:
    twin = Twin(seed=3)
    twin.apply(bare_pod("once", [nginx("web")], restartPolicy="Never"))
    twin.advance(15)
    set_image(twin, "once", "web", "nginx:1.28")
    twin.advance(10)
    st = cstatus(twin, "once")
    assert "running" in st["state"] and st["restartCount"] == 1
    assert twin.get("pods", "default", "once")["status"]["phase"] == "Running"


def test_sigterm_ignoring_container_is_killed_after_grace_period() -> None:
    twin = Twin(seed=3)
    loop = {"name": "loop", "image": "busybox:1.36", "command": ["sh", "-c", "while true; do sleep 1; done"]}
    twin.apply(bare_pod("loop", [loop], terminationGracePeriodSeconds=8))
    twin.advance(10)
    set_image(twin, "loop", "loop", "busybox:1.37")
    twin.advance(3)
    st = cstatus(twin, "loop")
    assert [e["message"] for e in events(twin, "loop", "Killing")] == [CHANGED.format("loop")]
    assert "running" in st["state"] and st["restartCount"] == 0  # still in its grace period
    twin.advance(10)
    st = cstatus(twin, "loop")
    assert "running" in st["state"] and st["restartCount"] == 1
    assert st["image"] == "docker.io/library/busybox:1.37"
    assert st["lastState"]["terminated"]["exitCode"] == 137


def test_native_sidecar_restarts_but_completed_init_container_does_not() -> None:
    twin = Twin(seed=3)
    init = {"name": "setup", "image": "busybox:1.36", "command": ["sh", "-c", "echo ready"]}
    sidecar = {"name": "proxy", "image": "nginx:1.27", "restartPolicy": "Always"}
    main = {"name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "while true; do sleep 5; done"]}
    twin.apply(bare_pod("side", [main], initContainers=[init, sidecar]))
    twin.advance(20)
    assert cstatus(twin, "side", 1, "initContainerStatuses")["restartCount"] == 0
    set_image(twin, "side", "proxy", "nginx:1.28", init=True)
    set_image(twin, "side", "setup", "busybox:1.37", init=True)
    twin.advance(10)
    proxy = cstatus(twin, "side", 1, "initContainerStatuses")
    assert proxy["restartCount"] == 1 and "running" in proxy["state"]
    assert proxy["image"] == "docker.io/library/nginx:1.28"
    setup = cstatus(twin, "side", 0, "initContainerStatuses")
    assert setup["restartCount"] == 0 and setup["state"]["terminated"]["exitCode"] == 0
    assert cstatus(twin, "side")["restartCount"] == 0  # the app container keeps running
    killing = events(twin, "side", "Killing")
    assert [e["message"] for e in killing] == ["Init container proxy definition changed"]
    assert killing[0]["involvedObject"]["fieldPath"] == "spec.initContainers{proxy}"


def test_kubectl_set_image_over_the_wire(kube: Any) -> None:
    kube.call(lambda: kube.twin.apply(bare_pod("web", [nginx()])))
    kube.advance(15)
    out = kube.ok("set", "image", "pod/web", "web=nginx:1.28", "-n", "default")
    assert "pod/web image updated" in out
    kube.advance(10)
    st = kube.call(lambda: cstatus(kube.twin, "web"))
    assert st["restartCount"] == 1 and st["image"] == "docker.io/library/nginx:1.28"
    described = kube.ok("get", "events", "-n", "default", "--field-selector", "reason=Killing")
    assert CHANGED.format("web") in described


# --------------------------------------------------------------------------- Chaos Mesh pod-failure
WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 2, failureThreshold: 1}
"""


def _ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


def test_chaos_pod_failure_restarts_once_per_swap_and_recovers() -> None:
    twin = Twin(seed=5)
    install_chaos_mesh(twin)
    twin.apply(WEB)
    assert twin.settle(60, until=lambda: any(_ready(p) for p in twin.list("pods", "default")))
    victim = twin.list("pods", "default", label_selector="app=web")[0]["metadata"]["name"]
    twin.create({"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos",
                 "metadata": {"name": "pf", "namespace": "chaos-mesh"},
                 "spec": {"action": "pod-failure", "mode": "one", "duration": "40s",
                          "selector": {"namespaces": ["default"], "labelSelectors": {"app": "web"}}}})
    twin.advance(15)
    pod = twin.get("pods", "default", victim)
    st = pod["status"]["containerStatuses"][0]
    assert pod["spec"]["containers"][0]["image"] == PAUSE_IMAGE
    assert st["image"] == PAUSE_IMAGE and st["restartCount"] == 1 and not st["ready"]
    assert not _ready(pod)
    assert count(twin, victim, "Killing", CHANGED.format("nginx")) == 1
    assert twin.settle(60, until=lambda: _ready(twin.get("pods", "default", victim)))
    pod = twin.get("pods", "default", victim)
    st = pod["status"]["containerStatuses"][0]
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert st["image"] == "docker.io/library/nginx:1.27" and st["restartCount"] == 2
    assert st["lastState"]["terminated"]["exitCode"] == 0  # pause exits on SIGTERM
    assert count(twin, victim, "Killing", CHANGED.format("nginx")) == 2
    assert count(twin, victim, "Started", "Started container nginx") == 3
    twin.advance(30)
    assert twin.get("pods", "default", victim)["status"]["containerStatuses"][0]["restartCount"] == 2


def test_chaos_pod_failure_swaps_native_sidecars_too() -> None:
    twin = Twin(seed=5)
    install_chaos_mesh(twin)
    sidecar = {"name": "proxy", "image": "nginx:1.27", "restartPolicy": "Always"}
    twin.apply(bare_pod("side", [nginx("app", "nginx:1.27")], initContainers=[sidecar]))
    twin.advance(15)
    twin.create({"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos",
                 "metadata": {"name": "pf", "namespace": "chaos-mesh"},
                 "spec": {"action": "pod-failure", "mode": "all",
                          "selector": {"pods": {"default": ["side"]}}}})
    twin.advance(10)
    proxy = cstatus(twin, "side", 0, "initContainerStatuses")
    assert proxy["image"] == PAUSE_IMAGE and proxy["restartCount"] == 1
    assert count(twin, "side", "Killing", "Init container proxy definition changed") == 1
    twin.delete("PodChaos", "chaos-mesh", "pf")
    twin.advance(10)
    pod = twin.get("pods", "default", "side")
    assert pod["spec"]["initContainers"][0]["image"] == "nginx:1.27"
    proxy = pod["status"]["initContainerStatuses"][0]
    assert proxy["image"] == "docker.io/library/nginx:1.27" and proxy["restartCount"] == 2
