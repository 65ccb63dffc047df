"""Processes, /proc, /sys/fs/cgroup, loopback and stock app answers inside a container,
in-process against one small live twin (module-scoped: the checks only read)."""

from __future__ import annotations

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.userland.context import exec_context, run_exec

NS = "apiVersion: v1\nkind: Namespace\nmetadata: {name: chaos-mesh}\n---\n"
APP = """
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: "nginx:1.27", resources: {limits: {cpu: 500m, memory: 256Mi},
                requests: {cpu: 250m, memory: 64Mi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default}
spec:
  containers: [{name: c, image: "mongo:4.4.6", args: ["--auth"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: bb, namespace: default}
spec:
  containers: [{name: c, image: "busybox:1.36", command: [sleep, "3600"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: hog, namespace: default}
spec:
  containers: [{name: c, image: "nginx:1.27", resources: {limits: {cpu: "1", memory: 512Mi}}}]
"""

STRESS = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "StressChaos",
          "metadata": {"name": "burn", "namespace": "chaos-mesh"},
          "spec": {"mode": "all", "selector": {"pods": {"default": ["hog"]}}, "containerNames": ["c"],
                   "stressors": {"cpu": {"workers": 2, "load": 40}, "memory": {"workers": 1, "size": "64MB"}}}}


@pytest.fixture(scope="module")
def twin() -> Twin:
    twin = Twin(seed=5)
    twin.apply(NS + APP)
    twin.advance(30)
    twin.create(STRESS)
    twin.advance(20)
    return twin


def run(twin: Twin, pod: str, script: str) -> tuple[str, str, int]:
    obj = twin.store.peek("Pod", "default", pod)
    assert obj is not None
    result = run_exec(exec_context(twin, obj, "c"), ["sh", "-c", script])
    return result.stdout, result.stderr, result.exit_code


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


# ---------------------------------------------------------------------------------- processes
def test_ps_aux_shows_the_entrypoint_server_and_every_process(twin: Twin) -> None:
    out, _, code = run(twin, "db", "ps aux")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND"
    assert lines[1].startswith("mongodb        1 ") and lines[1].endswith(" mongod --auth")
    assert lines[-1].endswith(" ps aux") and " Rs " in lines[-1]
    out, _, _ = run(twin, "web", "ps -ef")
    assert out.splitlines()[0] == "UID          PID    PPID  C STIME TTY          TIME CMD"
    assert "nginx: master process nginx -g daemon off;" in out
    assert out.count("nginx: worker process") == 4


def test_ps_lists_the_stressors_of_a_stresschaos(twin: Twin) -> None:
    out, _, _ = run(twin, "hog", "ps aux")
    commands = [" ".join(r[10:]) for r in rows(out)[1:]]
    assert "stress-ng --cpu 2 --cpu-load 40" in commands
    assert commands.count("stress-ng-cpu") == 2
    assert "memStress --size 64MB --workers 1" in commands
    workers = [r for r in rows(out) if r[-1] == "stress-ng-cpu"]
    assert all(float(r[2]) > 10 for r in workers)  # each burns ~40% of a core
    mem = next(r for r in rows(out) if r[10] == "memStress")
    assert int(mem[5]) >= 64_000_000 // 1024  # RSS (KiB) holds the stressor's allocation
    out, _, _ = run(twin, "web", "ps aux")
    assert "stress-ng" not in out  # only the targeted pod


@pytest.mark.parametrize(("script", "expected"), [
    ("ps -o pid,comm,rss | head -1", "    PID COMMAND           RSS\n"),
    ("ps -p 1 -o comm=", "nginx\n"),
    ("ps", None),
    ("pidof nginx", "32 31 30 29 1\n"),
    ("pgrep -l stress-ng", None),
])
def test_ps_columns_and_finders(twin: Twin, script: str, expected: str | None) -> None:
    out, _, code = run(twin, "hog" if "stress" in script else "web", script)
    if expected is not None:
        assert out == expected
    elif script == "ps":
        assert out.splitlines()[0] == "    PID TTY          TIME CMD"
        assert [r[-1] for r in rows(out)[1:]] == ["nginx", "ps"]  # not the nginx user's workers
    else:
        assert code == 0 and [r[1] for r in rows(out)] == ["stress-ng", "stress-ng-cpu", "stress-ng-cpu"]


def test_ps_errors_and_busybox_flavour(twin: Twin) -> None:
    _, err, code = run(twin, "web", "ps --bogus")
    assert code == 1 and err.startswith("error: unknown gnu long option\n\nUsage:\n ps [options]\n")
    _, err, code = run(twin, "web", "ps -o pid,bogus")
    assert code == 1 and err.startswith('error: unknown user-defined format specifier "bogus"\n')
    out, _, _ = run(twin, "bb", "ps")
    assert out.splitlines()[0] == "PID   USER     TIME  COMMAND"
    assert out.splitlines()[1] == "    1 root      0:00 sleep 3600"


def test_top_batch_layout(twin: Twin) -> None:
    out, _, code = run(twin, "hog", "top -b -n 1")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("top - ") and ",  0 user,  load average: " in lines[0]
    assert lines[1].startswith("Tasks:") and lines[2].startswith("%Cpu(s):")
    assert lines[3].startswith("MiB Mem :  16384.0 total,")
    assert lines[6] == "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"
    assert lines[7].split()[-1] == "stress-n+"  # sorted by %CPU; cut at 80 columns as without a tty
    assert all(len(line) <= 80 for line in lines)


# ---------------------------------------------------------------------------------------- /proc
def test_proc_per_process_files(twin: Twin) -> None:
    out, _, _ = run(twin, "db", "cat /proc/1/cmdline")
    assert out == "mongod\0--auth\0"
    out, _, _ = run(twin, "db", "cat /proc/1/status")
    fields = dict(line.split(":\t", 1) for line in out.splitlines())
    assert list(fields)[:8] == ["Name", "Umask", "State", "Tgid", "Ngid", "Pid", "PPid", "TracerPid"]
    assert fields["Name"] == "mongod" and fields["Pid"] == "1" and fields["PPid"] == "0"
    assert fields["VmRSS"].endswith(" kB") and len(fields["VmRSS"]) == 11 and fields["Threads"] == "33"
    assert fields["Cpus_allowed_list"] == "0-3"
    out, _, _ = run(twin, "db", "cat /proc/self/status | head -1")
    assert out == "Name:\tcat\n"
    out, _, _ = run(twin, "web", "cat /proc/1/limits")
    assert out.splitlines()[0] == "Limit                     Soft Limit           Hard Limit           Units     "
    assert "Max open files            1048576              1048576              files     " in out.splitlines()
    out, _, _ = run(twin, "db", "cat /proc/1/environ")
    assert out.endswith("\0") and all("=" in item for item in out.rstrip("\0").split("\0"))
    _, err, code = run(twin, "web", "cat /proc/4242/status")
    assert code == 1 and err == "cat: /proc/4242/status: No such file or directory\n"


def test_proc_listing_and_fds(twin: Twin) -> None:
    out, _, _ = run(twin, "web", "ls /proc")
    names = out.split()
    assert names[:5] == ["1", "29", "30", "31", "32"] and {"meminfo", "self", "net", "version"} <= set(names)
    out, _, _ = run(twin, "web", "ls /proc/1/fd | wc -l")
    assert int(out) >= 4  # stdio plus the listening socket
    out, _, _ = run(twin, "web", "ls -l /proc/1/fd/0")
    assert out.rstrip().endswith("/proc/1/fd/0 -> /dev/null")


def test_proc_node_files(twin: Twin) -> None:
    out, _, _ = run(twin, "hog", "cat /proc/meminfo")
    lines = out.splitlines()
    assert lines[0] == "MemTotal:       16777216 kB"  # the node's memory, not the 512Mi limit
    assert lines[1].startswith("MemFree:") and lines[2].startswith("MemAvailable:")
    out, _, _ = run(twin, "web", "cat /proc/loadavg")
    load = out.split()
    assert len(load) == 5 and "/" in load[3]
    out, _, _ = run(twin, "web", "cat /proc/uptime")
    assert float(out.split()[0]) > 3 * 3600
    out, _, _ = run(twin, "web", "grep -c ^processor /proc/cpuinfo")
    assert out == "4\n"
    out, _, _ = run(twin, "web", "head -1 /proc/stat")
    assert out.startswith("cpu  ") and len(out.split()) == 11
    out, _, _ = run(twin, "web", "cat /proc/version")
    assert out.startswith("Linux version 6.1.0-28-amd64 ")


def test_proc_net_tcp_and_mounts(twin: Twin) -> None:
    out, _, _ = run(twin, "web", "cat /proc/net/tcp")
    lines = out.splitlines()
    assert lines[0].startswith("  sl  local_address rem_address   st tx_queue") and len(lines[0]) == 149
    assert lines[1].startswith("   0: 00000000:0050 00000000:0000 0A ") and len(lines[1]) == 149
    out, _, _ = run(twin, "db", "cat /proc/net/tcp")
    assert ":6989 00000000:0000 0A " in out  # 27017
    out, _, _ = run(twin, "web", "grep ' / ' /proc/mounts")
    assert out.startswith("overlay / overlay rw,relatime,lowerdir=")


# ------------------------------------------------------------------------------------- cgroup
def test_cgroup_limits_and_cpu_stat(twin: Twin) -> None:
    out, _, _ = run(twin, "web", "cat /sys/fs/cgroup/cpu.max /sys/fs/cgroup/memory.max")
    assert out == "50000 100000\n268435456\n"
    out, _, _ = run(twin, "db", "cat /sys/fs/cgroup/cpu.max /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max")
    assert out == "max 100000\nmax\nmax\n"
    out, _, _ = run(twin, "hog", "cat /sys/fs/cgroup/cpu.stat")
    stat = dict(line.split() for line in out.splitlines())
    assert list(stat) == ["usage_usec", "user_usec", "system_usec", "core_sched.force_idle_usec", "nr_periods",
                          "nr_throttled", "throttled_usec", "nr_bursts", "burst_usec"]
    assert int(stat["usage_usec"]) == int(stat["user_usec"]) + int(stat["system_usec"]) > 0
    assert int(stat["nr_periods"]) > 0
    out, _, _ = run(twin, "hog", "cat /sys/fs/cgroup/cgroup.procs")
    procs, _, _ = run(twin, "hog", "ps -e -o pid=")
    assert len(out.split()) == len(procs.split())


def test_cgroup_memory_after_an_oom_kill() -> None:
    twin = Twin(seed=7)
    twin.apply(NS + APP.split("---")[-1])
    twin.advance(20)
    over = {**STRESS, "metadata": {"name": "oom", "namespace": "chaos-mesh"},
            "spec": {**STRESS["spec"], "stressors": {"memory": {"workers": 1, "size": "600MB"}}}}
    twin.create(over)
    twin.advance(5)
    status = twin.get("pods", "default", "hog")["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["reason"] == "OOMKilled"
    out, _, _ = run(twin, "hog", "cat /sys/fs/cgroup/memory.max; cat /sys/fs/cgroup/memory.events")
    lines = out.splitlines()
    assert lines[0] == "536870912"
    # The restarted container is a new cgroup: the kill happened in its predecessor's.
    assert lines[1:] == ["low 0", "high 0", "max 0", "oom 0", "oom_kill 0", "oom_group_kill 0"]
    out, _, _ = run(twin, "hog", "ps aux")
    assert "memStress" not in out  # the stressor died with the killed instance


# -------------------------------------------------------------------------------- loopback/apps
@pytest.mark.parametrize(("pod", "script", "code", "needle"), [
    ("web", "curl -s localhost", 0, "<title>Welcome to nginx!</title>"),
    ("web", "curl -sI http://127.0.0.1/", 0, "Server: nginx/1.27.4"),
    ("web", "curl -s localhost/missing", 0, "<head><title>404 Not Found</title></head>"),
    ("web", "curl -sS localhost:5000", 7,
     "curl: (7) Failed to connect to localhost port 5000 after 0 ms: Couldn't connect to server"),
    ("bb", "wget -qO- 127.0.0.1:80", 1, "wget: can't connect to remote host (127.0.0.1): Connection refused"),
])
def test_loopback_and_stock_pages(twin: Twin, pod: str, script: str, code: int, needle: str) -> None:
    out, err, rc = run(twin, pod, script)
    assert rc == code and needle in out + err
