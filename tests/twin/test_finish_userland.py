"""The finished container userland, in-process against one small live twin: signals through the
one process table (StressChaos stressors stay dead), `$$`, du/stat/free/uptime/dd, /dev/shm as a
sized tmpfs charged to the container's memory, and socket counts (ss -s, node_sockstat_*)."""

from __future__ import annotations

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.telemetry.promql import Engine
from sregym.twin.userland.context import exec_context, run_exec

APP = """
apiVersion: v1
kind: Namespace
metadata: {name: chaos-mesh}
---
apiVersion: v1
kind: Pod
metadata: {name: hog, namespace: default}
spec:
  containers: [{name: c, image: "nginx:1.27", resources: {limits: {cpu: "2", memory: 512Mi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: "nginx:1.27", resources: {limits: {cpu: 500m, memory: 256Mi}},
                readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 5},
                volumeMounts: [{name: cache, mountPath: /cache}]}]
  volumes: [{name: cache, emptyDir: {medium: Memory, sizeLimit: 2Mi}}]
---
apiVersion: v1
kind: Pod
metadata: {name: bb, namespace: default}
spec:
  containers: [{name: c, image: "busybox:1.36", command: [sleep, "3600"]}]
"""
STRESS = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "StressChaos",
          "metadata": {"name": "burn", "namespace": "chaos-mesh"},
          "spec": {"mode": "all", "selector": {"pods": {"default": ["hog"]}}, "containerNames": ["c"],
                   "stressors": {"cpu": {"workers": 2, "load": 50}, "memory": {"workers": 1, "size": "64MB"}}}}


@pytest.fixture(scope="module")
def twin() -> Twin:
    twin = Twin(seed=7)
    twin.apply(APP)
    twin.advance(30)
    twin.create(STRESS)
    twin.advance(20)
    return twin


def run(twin: Twin, pod: str, script: str) -> tuple[str, str, int]:
    obj = twin.store.peek("Pod", "default", pod)
    assert obj is not None
    result = run_exec(exec_context(twin, obj, "c"), ["sh", "-c", script])
    return result.stdout, result.stderr, result.exit_code


# ------------------------------------------------------------------------------------- signals
def test_killing_a_stressor_ends_its_load_for_good(twin: Twin) -> None:
    usage = twin.services.runtime.container_usage
    cpu_before, mem_before = usage("default", "hog", "c")
    out, _, code = run(twin, "hog", "pgrep -x stress-ng-cpu | head -1 | xargs kill; pgrep -l stress")
    assert code == 0
    assert [line.split()[1] for line in out.splitlines()] == ["stress-ng", "stress-ng-cpu"]
    cpu_one, _ = usage("default", "hog", "c")
    assert cpu_one == pytest.approx(cpu_before - 0.5, abs=0.05)
    out, _, code = run(twin, "hog", "pkill -e memStress; pkill stress-ng; echo $?; ps -eo comm")
    assert "memStress killed (pid " in out and "stress" not in out.split("\n", 1)[1]
    twin.advance(5)
    cpu_after, mem_after = usage("default", "hog", "c")
    assert cpu_after < 0.1 and mem_after < mem_before - 60_000_000
    assert twin.store.peek("Pod", "default", "hog")["status"]["containerStatuses"][0]["restartCount"] == 0


def test_dollar_dollar_is_the_exec_and_kill_ends_it(twin: Twin) -> None:
    out, _, _ = run(twin, "web", "echo $$; ps -o pid= -p $$")
    pid, shown = out.split()
    assert int(pid) > 1 and shown == pid
    _, _, code = run(twin, "web", "kill $$; echo survived")
    assert code == 143
    _, err, code = run(twin, "web", "kill 4242")
    assert (err, code) == ("sh: 1: kill: No such process\n\n", 1)  # dash, byte for byte


# --------------------------------------------------------------------------------------- tools
@pytest.mark.parametrize(("pod", "script", "expected"), [
    ("web", "mkdir -p /tmp/d/s && printf 'hello\\n' > /tmp/d/a && printf '%5000s' x > /tmp/d/s/b && du /tmp/d",
     "12\t/tmp/d/s\n20\t/tmp/d\n"),
    ("web", "mkdir -p /tmp/e && printf 'hi\\n' > /tmp/e/a && du -sh /tmp/e; du -b /tmp/e/a; du -c /tmp/e/a",
     "8.0K\t/tmp/e\n3\t/tmp/e/a\n4\t/tmp/e/a\n4\ttotal\n"),
    ("web", "printf 'hello\\n' > /tmp/a; stat -c '%s %n %a %U %F %A' /tmp/a; stat -c %F /tmp",
     "6 /tmp/a 644 root regular file -rw-r--r--\ndirectory\n"),
    ("web", "du nosuch; stat nosuch; stat", None),
])
def test_du_and_stat(twin: Twin, pod: str, script: str, expected: str | None) -> None:
    out, err, code = run(twin, pod, script)
    if expected is not None:
        assert out == expected
    else:
        assert code == 1 and err == ("du: cannot access 'nosuch': No such file or directory\n"
                                     "stat: cannot statx 'nosuch': No such file or directory\n"
                                     "stat: missing operand\nTry 'stat --help' for more information.\n")


def test_stat_default_layout(twin: Twin) -> None:
    out, _, _ = run(twin, "web", "printf 'hello\\n' > /tmp/a; stat /tmp/a")
    lines = out.splitlines()
    assert lines[0] == "  File: /tmp/a"
    assert lines[1] == "  Size: 6         \tBlocks: 8          IO Block: 4096   regular file"
    assert lines[3] == "Access: (0644/-rw-r--r--)  Uid: (    0/    root)   Gid: (    0/    root)"
    assert lines[4].startswith("Access: 20") and lines[4].endswith(" +0000") and lines[7].startswith(" Birth: ")


def test_free_and_uptime_read_the_proc_files(twin: Twin) -> None:
    out, _, _ = run(twin, "web", "free; cat /proc/meminfo; free -h; uptime; cat /proc/uptime /proc/loadavg")
    lines = out.splitlines()
    assert lines[0] == "               total        used        free      shared  buff/cache   available"
    mem = lines[1].split()
    info = {line.split(":")[0]: int(line.split()[1]) for line in lines[3:] if line.endswith(" kB")}
    assert mem[0] == "Mem:" and int(mem[1]) == info["MemTotal"] and int(mem[3]) == info["MemFree"]
    assert int(mem[2]) == info["MemTotal"] - info["MemAvailable"]
    assert int(mem[5]) == info["Buffers"] + info["Cached"] + info["SReclaimable"]
    human = next(line for line in lines if line.startswith("Mem:") and "Gi" in line)
    assert human.split()[1] == "16Gi" and len(human) == 80
    up = next(line for line in lines if " up " in line)
    load = next(line for line in lines if line.count(" ") == 4 and "/" in line).split()
    assert up.endswith(f",  0 user,  load average: {load[0]}, {load[1]}, {load[2]}")
    _, err, code = run(twin, "web", "free -x")
    assert code == 1 and err.startswith("free: invalid option -- 'x'\n\nUsage:\n free [options]\n")
    out, _, _ = run(twin, "bb", "free; uptime")
    assert out.splitlines()[0] == "              total        used        free      shared  buff/cache   available"
    assert ",  load average: " in out.splitlines()[3] and " user" not in out


# ------------------------------------------------------------------------------------ /dev/shm
def test_dev_shm_is_a_64mib_tmpfs_charged_to_the_container(twin: Twin) -> None:
    out, err, code = run(twin, "bb", "dd if=/dev/zero of=/dev/shm/x bs=1M count=100; df /dev/shm")
    assert code == 0  # df's status
    assert err.startswith("dd: error writing '/dev/shm/x': No space left on device\n65+0 records in\n"
                          "64+0 records out\n67108864 bytes (64.0MB) copied, ")
    assert out.splitlines()[1].split()[:5] == ["shm", "65536", "65536", "0", "100%"]
    out, err, _ = run(twin, "web", "echo x > /cache/a; printf '%3000000s' y > /cache/b; df -h /cache /dev/shm")
    assert err == "sh: 1: printf: printf: I/O error\n"
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["tmpfs", "shm"]
    assert out.splitlines()[1].split()[1] == "2.0M"
    before = int(run(twin, "web", "cat /sys/fs/cgroup/memory.current")[0])
    run(twin, "web", "dd if=/dev/zero of=/dev/shm/blob bs=1M count=8 2>/dev/null")
    twin.advance(2)
    after = int(run(twin, "web", "cat /sys/fs/cgroup/memory.current")[0])
    assert after - before >= 8 << 20
    assert run(twin, "web", "ls -l /dev/shm/blob")[0].split()[4] == str(8 << 20)  # it stays


# ------------------------------------------------------------------------------------- sockets
def test_ss_summary_and_node_sockstat(twin: Twin) -> None:
    out, _, _ = run(twin, "bb", "cat /proc/net/sockstat")
    assert out.startswith("sockets: used 0\nTCP: inuse 0 orphan 0 tw 0 alloc 0 mem 0\n")
    obj = twin.store.peek("Pod", "default", "web")
    ctx = exec_context(twin, obj, "c")
    ctx.extras["binaries"] = {**ctx.extras["binaries"], "ss": "/usr/bin/ss"}
    ctx.fs.add_file("/usr/bin/ss", "", 0o755)  # an image with iproute2: the file is in its tree
    ctx.files["/usr/bin/ss"] = ""
    out = run_exec(ctx, ["ss", "-s"]).stdout
    assert out.splitlines()[:2] == ["Total: 1", "TCP:   1 (estab 0, closed 0, orphaned 0, timewait 0)"]
    assert out.splitlines()[3:6] == ["Transport Total     IP        IPv6", "RAW\t  0         0         0        ",
                                     "UDP\t  0         0         0        "]
    twin.advance(30)
    node = obj["spec"]["nodeName"]
    engine = Engine(twin.services.tsdb)

    def value(family: str) -> float:
        data = engine.instant(f'{family} and on(instance) node_uname_info{{nodename="{node}"}}',
                              int(twin.clock.now * 1000)).to_api()
        return float(data["result"][0]["value"][1])

    assert value("node_sockstat_TCP_tw") >= 12  # the web pod's readiness probe every 5 s
    assert value("node_sockstat_TCP_alloc") >= value("node_sockstat_TCP_inuse") + 2  # pods' listeners
    assert value("node_sockstat_sockets_used") > value("node_sockstat_TCP_inuse")
