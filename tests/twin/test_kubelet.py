"""The kubelet: pulls, config, probes, restarts, OOM kills, sidecars, logs and deletion.

Pods are bare Pods with `spec.nodeName` set, so these tests do not depend on the scheduler.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from sregym.errors import ApiError
from sregym.twin.clock import parse_time
from sregym.twin.twin import Twin

NODE = "kind-worker"


def pod(name: str, containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": NODE, "containers": containers, **spec}}


def status(twin: Twin, name: str) -> dict[str, Any]:
    return twin.get("pods", "default", name)["status"]


def cstatus(twin: Twin, name: str, index: int = 0, key: str = "containerStatuses") -> dict[str, Any]:
    return status(twin, name)[key][index]


def condition(twin: Twin, name: str, cond: str) -> str:
    return next(c["status"] for c in status(twin, name)["conditions"] if c["type"] == cond)


def events(twin: Twin, name: str, reason: str | None = None) -> list[dict[str, Any]]:
    return twin.event_list("default", involved_name=name, reason=reason)


@pytest.fixture
def twin() -> Twin:
    return Twin(seed=3)


def test_running_pod_gets_ip_and_ready(twin: Twin):
    twin.apply(pod("web", [{"name": "web", "image": "nginx:1.27",
                            "readinessProbe": {"httpGet": {"path": "/", "port": 80}}}]))
    twin.advance(15)
    st = status(twin, "web")
    assert st["phase"] == "Running"
    assert st["podIP"].startswith("10.244.1.") and st["hostIP"] == "172.18.0.3"
    cs = st["containerStatuses"][0]
    assert cs["ready"] and cs["started"] and cs["restartCount"] == 0
    assert cs["image"] == "docker.io/library/nginx:1.27"
    assert cs["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert cs["containerID"].startswith("containerd://") and len(cs["containerID"]) == 13 + 64
    assert condition(twin, "web", "Ready") == "True"
    assert condition(twin, "web", "PodReadyToStartContainers") == "True"
    pulled = events(twin, "web", "Pulled")[0]["message"]
    assert pulled.startswith('Successfully pulled image "nginx:1.27" in ')
    assert "including waiting). Image size: " in pulled
    assert [e["message"] for e in events(twin, "web", "Created")] == ["Created container: web"]
    node = twin.get("nodes", None, NODE)
    assert any("docker.io/library/nginx:1.27" in i["names"] for i in node["status"]["images"])


def test_second_pod_finds_image_present(twin: Twin):
    twin.apply(pod("a", [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]))
    twin.advance(5)
    twin.apply(pod("b", [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]))
    twin.advance(5)
    assert [e["message"] for e in events(twin, "b", "Pulled")] == [
        'Container image "busybox:1.36" already present on machine']


def test_unknown_tag_errimagepull_then_backoff(twin: Twin):
    twin.apply(pod("bad", [{"name": "app", "image": "nginx:1.99"}]))
    twin.advance(3)
    waiting = cstatus(twin, "bad")["state"]["waiting"]
    assert waiting["reason"] == "ErrImagePull"
    assert "docker.io/library/nginx:1.99: not found" in waiting["message"]
    twin.advance(4)
    waiting = cstatus(twin, "bad")["state"]["waiting"]
    assert waiting["reason"] == "ImagePullBackOff"
    assert waiting["message"].startswith('Back-off pulling image "nginx:1.99"')
    failed = [e["message"] for e in events(twin, "bad", "Failed")]
    assert any(m.startswith('Failed to pull image "nginx:1.99": rpc error: code = NotFound') for m in failed)
    assert "Error: ErrImagePull" in failed and "Error: ImagePullBackOff" in failed
    backoff = events(twin, "bad", "BackOff")
    assert backoff[0]["type"] == "Normal" and backoff[0]["message"] == 'Back-off pulling image "nginx:1.99"'
    assert status(twin, "bad")["phase"] == "Pending"
    # Retries back off: 10 s, 20 s, 40 s ... so few pulls happen in five minutes.
    twin.advance(300)
    pulls = events(twin, "bad", "Pulling")[0]["count"]
    assert 4 <= pulls <= 7


def test_crash_loop_backoff_intervals_and_previous_logs(twin: Twin):
    twin.apply(pod("crash", [{"name": "app", "image": "busybox:1.36",
                              "command": ["sh", "-c", "echo starting; echo 'fatal: no config' >&2; exit 3"]}]))
    starts: set[str] = set()
    for _ in range(960):
        twin.step()
        cs = cstatus(twin, "crash")
        for state in (cs["state"], cs["lastState"]):
            if "terminated" in state:
                starts.add(state["terminated"]["startedAt"])
            if "running" in state:
                starts.add(state["running"]["startedAt"])
    times = sorted(parse_time(s) for s in starts)
    gaps = [round(b - a) for a, b in itertools.pairwise(times)]
    assert gaps[0] <= 2  # the first restart is immediate
    assert gaps[1:8] == [10, 20, 40, 80, 160, 300, 300]
    cs = cstatus(twin, "crash")
    assert cs["restartCount"] >= 8
    waiting = cs["state"]["waiting"]
    assert waiting["reason"] == "CrashLoopBackOff"
    assert waiting["message"].startswith("back-off 5m0s restarting failed container=app pod=crash_default(")
    last = cs["lastState"]["terminated"]
    assert last["exitCode"] == 3 and last["reason"] == "Error"
    assert status(twin, "crash")["phase"] == "Running"
    assert twin.logs("default", "crash", previous=True) == "starting\nfatal: no config\n"
    assert twin.logs("default", "crash") == "starting\nfatal: no config\n"
    backoff = events(twin, "crash", "BackOff")[0]
    assert backoff["type"] == "Warning"
    assert backoff["message"].startswith("Back-off restarting failed container app in pod crash_default(")


def test_missing_configmap_key_then_fixed(twin: Twin):
    twin.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app-config"},
                "data": {"OTHER": "x"}})
    twin.apply(pod("cfg", [{"name": "app", "image": "busybox:1.36",
                            "command": ["sh", "-c", "echo level=$LOG_LEVEL; sleep 3600"],
                            "env": [{"name": "LOG_LEVEL", "valueFrom": {"configMapKeyRef": {
                                "name": "app-config", "key": "LOG_LEVEL"}}}]}]))
    twin.advance(5)
    waiting = cstatus(twin, "cfg")["state"]["waiting"]
    assert waiting == {"reason": "CreateContainerConfigError",
                       "message": "couldn't find key LOG_LEVEL in ConfigMap default/app-config"}
    assert "Error: couldn't find key LOG_LEVEL in ConfigMap default/app-config" in \
        [e["message"] for e in events(twin, "cfg", "Failed")]
    twin.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app-config"},
                "data": {"OTHER": "x", "LOG_LEVEL": "debug"}})
    twin.advance(12)
    assert "running" in cstatus(twin, "cfg")["state"]
    assert twin.logs("default", "cfg") == "level=debug\n"


def test_missing_configmap_and_secret_messages(twin: Twin):
    twin.apply(pod("nocm", [{"name": "app", "image": "busybox:1.36", "command": ["sleep", "9"],
                             "envFrom": [{"configMapRef": {"name": "absent"}}]}]))
    twin.apply(pod("nosecret", [{"name": "app", "image": "busybox:1.36", "command": ["sleep", "9"],
                                 "env": [{"name": "PW", "valueFrom": {"secretKeyRef": {
                                     "name": "db", "key": "password"}}}]}]))
    twin.advance(5)
    assert cstatus(twin, "nocm")["state"]["waiting"]["message"] == 'configmap "absent" not found'
    assert cstatus(twin, "nosecret")["state"]["waiting"]["message"] == 'secret "db" not found'


def test_env_resolution_sources(twin: Twin):
    twin.apply([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"A": "1"}},
                {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                 "data": {"TOKEN": "czNjcmV0"}}])
    twin.apply(pod("env", [{"name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "env; sleep 999"],
                            "envFrom": [{"configMapRef": {"name": "c"}, "prefix": "CM_"}],
                            "env": [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "TOKEN"}}},
                                    {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                                    {"name": "URL", "value": "http://$(POD):$(CM_A)/x"},
                                    {"name": "OPT", "valueFrom": {"configMapKeyRef": {
                                        "name": "c", "key": "nope", "optional": True}}}],
                            "resources": {"limits": {"memory": "64Mi"}}}]))
    twin.advance(5)
    env = dict(line.split("=", 1) for line in twin.logs("default", "env").splitlines())
    assert env["CM_A"] == "1" and env["TOKEN"] == "s3cret" and env["POD"] == "env"
    assert env["URL"] == "http://env:1/x" and "OPT" not in env
    assert env["HOSTNAME"] == "env" and env["KUBERNETES_SERVICE_HOST"] == "10.96.0.1"


def test_missing_configmap_volume_fails_mount(twin: Twin):
    twin.apply(pod("vol", [{"name": "app", "image": "nginx:1.27",
                            "volumeMounts": [{"name": "cfg", "mountPath": "/etc/nginx/conf.d"}]}],
                   volumes=[{"name": "cfg", "configMap": {"name": "nginx-conf"}}]))
    twin.advance(10)
    assert cstatus(twin, "vol")["state"]["waiting"]["reason"] == "ContainerCreating"
    mount = events(twin, "vol", "FailedMount")[0]
    assert mount["message"] == 'MountVolume.SetUp failed for volume "cfg" : configmap "nginx-conf" not found'
    assert mount["count"] > 1
    with pytest.raises(ApiError) as err:
        twin.logs("default", "vol")
    assert err.value.code == 400
    assert err.value.message == 'container "app" in pod "vol" is waiting to start: ContainerCreating'
    conf = "server { listen 8080; location / { return 200; } }"
    twin.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nginx-conf"},
                "data": {"default.conf": conf}})
    twin.advance(70)
    assert "running" in cstatus(twin, "vol")["state"]
    runtime = twin.services.runtime
    assert runtime.listener(status(twin, "vol")["podIP"], 8080) is not None


def test_readiness_probe_on_unserved_port(twin: Twin):
    twin.apply(pod("unready", [{"name": "web", "image": "nginx:1.27",
                                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8081},
                                                   "periodSeconds": 5}}]))
    twin.advance(40)
    st = status(twin, "unready")
    assert st["phase"] == "Running"
    assert not st["containerStatuses"][0]["ready"]
    assert condition(twin, "unready", "Ready") == "False"
    ready = next(c for c in st["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "ContainersNotReady"
    assert ready["message"] == "containers with unready status: [web]"
    unhealthy = events(twin, "unready", "Unhealthy")[0]
    ip = st["podIP"]
    assert unhealthy["message"] == (f'Readiness probe failed: Get "http://{ip}:8081/ready": dial tcp '
                                    f"{ip}:8081: connect: connection refused")
    assert st["containerStatuses"][0]["restartCount"] == 0


def test_misconfigured_liveness_restarts(twin: Twin):
    twin.apply(pod("live", [{"name": "web", "image": "nginx:1.27",
                             "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80},
                                               "periodSeconds": 5, "failureThreshold": 3}}]))
    twin.advance(60)
    cs = cstatus(twin, "live")
    assert cs["restartCount"] >= 2
    assert "Liveness probe failed: HTTP probe failed with statuscode: 404" in \
        [e["message"] for e in events(twin, "live", "Unhealthy")]
    assert "Container web failed liveness probe, will be restarted" in \
        [e["message"] for e in events(twin, "live", "Killing")]


def test_exec_liveness_probe_sees_container_files(twin: Twin):
    script = "touch /tmp/healthy; sleep 20; rm -f /tmp/healthy; sleep 600"
    twin.apply(pod("execp", [{"name": "app", "image": "busybox:1.36", "args": ["/bin/sh", "-c", script],
                              "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]},
                                                "initialDelaySeconds": 5, "periodSeconds": 5}}]))
    twin.advance(18)
    assert not events(twin, "execp", "Unhealthy")
    twin.advance(25)
    messages = [e["message"] for e in events(twin, "execp", "Unhealthy")]
    assert "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory" in messages
    assert events(twin, "execp", "Killing")


def test_oom_killed(twin: Twin):
    twin.apply(pod("mem", [{"name": "stress", "image": "polinux/stress",
                            "resources": {"requests": {"memory": "50Mi"}, "limits": {"memory": "100Mi"}},
                            "command": ["stress"],
                            "args": ["--vm", "1", "--vm-bytes", "250M", "--vm-hang", "1"]}]))
    twin.advance(20)
    cs = cstatus(twin, "mem")
    term = cs["lastState"].get("terminated") or cs["state"].get("terminated")
    assert term["reason"] == "OOMKilled" and term["exitCode"] == 137
    assert cs["restartCount"] >= 1
    logs = twin.services.logs.node_lines(NODE, "kernel")
    assert any("Memory cgroup out of memory" in line.text for line in logs)


def test_enough_memory_keeps_running(twin: Twin):
    twin.apply(pod("mem-ok", [{"name": "stress", "image": "polinux/stress",
                               "resources": {"limits": {"memory": "200Mi"}},
                               "command": ["stress"], "args": ["--vm", "1", "--vm-bytes", "150M"]}]))
    twin.advance(20)
    assert "running" in cstatus(twin, "mem-ok")["state"]
    cpu, memory = twin.services.runtime.container_usage("default", "mem-ok", "stress")
    assert memory >= 150 * 2**20 and cpu > 0


def test_restart_policy_never_phases(twin: Twin):
    twin.apply(pod("ok", [{"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", "echo done"]}],
                   restartPolicy="Never"))
    twin.apply(pod("ko", [{"name": "c", "image": "busybox:1.36",
                           "command": ["sh", "-c", "echo boom > /dev/termination-log; exit 2"]}],
                   restartPolicy="Never"))
    twin.advance(10)
    assert status(twin, "ok")["phase"] == "Succeeded"
    assert cstatus(twin, "ok")["state"]["terminated"]["reason"] == "Completed"
    assert status(twin, "ko")["phase"] == "Failed"
    term = cstatus(twin, "ko")["state"]["terminated"]
    assert term["exitCode"] == 2 and term["reason"] == "Error" and term["message"] == "boom\n"
    assert condition(twin, "ok", "Ready") == "False"


def test_missing_executable_is_start_error(twin: Twin):
    twin.apply(pod("noexec", [{"name": "c", "image": "busybox:1.36", "command": ["/app/server"]}]))
    twin.advance(15)
    cs = cstatus(twin, "noexec")
    term = cs["lastState"]["terminated"]
    assert term["reason"] == "StartError" and term["exitCode"] == 128
    assert 'exec: "/app/server": executable file not found in $PATH' in term["message"]


def _job_pod(name: str, sidecar_native: bool) -> dict[str, Any]:
    sidecar = {"name": "proxy", "image": "busybox:1.36", "command": ["sh", "-c", "sleep infinity"]}
    main = {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "echo work; sleep 3"]}
    if sidecar_native:
        return pod(name, [main], restartPolicy="Never", terminationGracePeriodSeconds=5,
                   initContainers=[{**sidecar, "restartPolicy": "Always"}])
    return pod(name, [main, sidecar], restartPolicy="Never", terminationGracePeriodSeconds=5)


def test_regular_sidecar_keeps_job_pod_running(twin: Twin):
    twin.apply(_job_pod("regular", sidecar_native=False))
    twin.advance(60)
    st = status(twin, "regular")
    assert st["phase"] == "Running"
    assert st["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"


def test_native_sidecar_lets_job_pod_succeed(twin: Twin):
    twin.apply(_job_pod("native", sidecar_native=True))
    twin.advance(3)
    assert "running" in cstatus(twin, "native", key="initContainerStatuses")["state"]
    twin.advance(30)
    st = status(twin, "native")
    assert st["phase"] == "Succeeded"
    assert st["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 137
    assert "Stopping container proxy" in [e["message"] for e in events(twin, "native", "Killing")]


def test_init_containers_run_in_order(twin: Twin):
    twin.apply(pod("init", [{"name": "app", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
                   initContainers=[{"name": "wait", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 5"]}]))
    twin.advance(2)
    assert status(twin, "init")["phase"] == "Pending"
    assert cstatus(twin, "init")["state"]["waiting"]["reason"] == "PodInitializing"
    assert condition(twin, "init", "Initialized") == "False"
    twin.advance(8)
    assert status(twin, "init")["phase"] == "Running"
    assert cstatus(twin, "init", key="initContainerStatuses")["state"]["terminated"]["reason"] == "Completed"


def test_log_errors(twin: Twin):
    twin.apply(pod("two", [{"name": "a", "image": "busybox:1.36", "command": ["sleep", "999"]},
                           {"name": "b", "image": "busybox:1.36", "command": ["sleep", "999"]}]))
    twin.apply(pod("pull", [{"name": "web", "image": "nginx:9.9"}]))
    twin.advance(5)
    with pytest.raises(ApiError) as err:
        twin.logs("default", "two")
    assert err.value.message == "a container name must be specified for pod two, choose one of: [a b]"
    with pytest.raises(ApiError) as err:
        twin.logs("default", "two", "a", previous=True)
    assert err.value.message == 'previous terminated container "a" in pod "two" not found'
    with pytest.raises(ApiError) as err:
        twin.logs("default", "pull")
    assert err.value.message == 'container "web" in pod "pull" is waiting to start: image can\'t be pulled'
    with pytest.raises(ApiError) as err:
        twin.logs("default", "missing")
    assert err.value.code == 404


def test_log_options(twin: Twin):
    from sregym.twin.node.logs import container_logs

    twin.apply(pod("ticker", [{"name": "c", "image": "busybox:1.36",
                               "command": ["sh", "-c", "i=0; while true; do i=$((i+1)); echo line $i; sleep 10; done"]}]))
    twin.advance(45)
    text = container_logs(twin, "default", "ticker", tail=2)
    assert text == "line 4\nline 5\n"
    stamped = container_logs(twin, "default", "ticker", tail=1, timestamps=True)
    assert stamped.endswith("Z line 5\n") and stamped[:4] == "2026"
    assert container_logs(twin, "default", "ticker", since_seconds=8) == "line 5\n"


def test_graceful_deletion(twin: Twin):
    twin.apply(pod("quick", [{"name": "web", "image": "nginx:1.27"}]))
    twin.apply(pod("slow", [{"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 3600"]}],
                   terminationGracePeriodSeconds=10))
    twin.advance(5)
    twin.delete("pods", "default", "quick")
    twin.delete("pods", "default", "slow")
    twin.advance(2)
    assert twin.try_get("pods", "default", "quick") is None
    assert twin.try_get("pods", "default", "slow") is not None  # sh as PID 1 ignores SIGTERM
    assert "Stopping container c" in [e["message"] for e in events(twin, "slow", "Killing")]
    twin.advance(10)
    assert twin.try_get("pods", "default", "slow") is None


def test_control_plane_mirror_pods(twin: Twin):
    twin.advance(15)
    names = {p["metadata"]["name"]: p for p in twin.list("pods", "kube-system")}
    for component in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"):
        mirror = names[f"{component}-kind-control-plane"]
        assert "kubernetes.io/config.mirror" in mirror["metadata"]["annotations"]
        assert mirror["metadata"]["ownerReferences"][0]["kind"] == "Node"
        assert mirror["status"]["phase"] == "Running"
        assert mirror["status"]["podIP"] == "172.18.0.2"
    twin.delete("pods", "kube-system", "etcd-kind-control-plane", grace_period=0)
    twin.advance(2)
    assert twin.try_get("pods", "kube-system", "etcd-kind-control-plane") is not None


def test_same_seed_same_history():
    def run() -> str:
        twin = Twin(seed=11)
        twin.apply(pod("x", [{"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", "exit 1"]}]))
        twin.apply(pod("y", [{"name": "c", "image": "nginx:1.27"}]))
        twin.advance(60)
        return twin.dump()

    assert run() == run()


@pytest.mark.parametrize(("container", "least"), [
    ({"name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "exit 3"]}, 10),  # crash loop
    ({"name": "app", "image": "busybox:0.0.0-nonexistent"}, 5),  # image pull back-off
], ids=["crash-loop", "image-pull"])
def test_back_off_is_reported_on_the_retry_period_with_or_without_a_memory_limit(twin: Twin, container: dict[str, Any],
                                                                                  least: int):
    """The pod worker retries a pod in back-off (a crash loop, a pull that keeps failing) every
    10 s and reports `BackOff` each time. A memory-limited pod is checked every tick while
    something moves working sets (a usage hook, as the data plane installs); those checks are not
    retries and must not report it again: the event's count grows the same with and without the
    limit (before, 293 against 30 over five minutes)."""
    twin.services.runtime.add_usage_hook(lambda *_args: (0.0, 0.0))
    twin.apply(pod("plain", [container]))
    twin.apply(pod("limited", [{**container, "resources": {"limits": {"memory": "64Mi"}}}]))
    twin.advance(300)
    counts = {name: sum(e.get("count", 1) for e in events(twin, name, "BackOff")) for name in ("plain", "limited")}
    assert least <= counts["plain"] <= 40, counts
    assert abs(counts["limited"] - counts["plain"]) <= 2, counts
