"""Disk and IO fault signals: node disk metrics, /proc/diskstats, slow-query logs, ENOSPC, KernelChaos.

A MongoDB on a PersistentVolume serves a steady class of finds, driven tick by tick through its
store model (what the data plane does), so the disk counters follow a known IO rate.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.datastores import MongoServer, datastore_for
from sregym.twin.datastores.disk import pg_min_duration
from sregym.twin.telemetry.promql import Engine
from sregym.twin.userland.context import exec_context, run_exec
from support.chaos_web import chaos

DB = """
apiVersion: v1
kind: Namespace
metadata: {name: chaos-mesh}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: db-data, namespace: default}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: db, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: mongo
        image: mongo:4.4.6
        volumeMounts: [{name: data, mountPath: /data/db}, {name: scratch, mountPath: /scratch}]
      volumes:
      - {name: data, persistentVolumeClaim: {claimName: db-data}}
      - {name: scratch, emptyDir: {}}
"""
SELECT = {"mode": "one", "selector": {"labelSelectors": {"app": "db"}, "namespaces": ["default"]}}
FIND_RATE = 40.0


@pytest.fixture
def twin() -> Twin:
    t = Twin(seed=7)
    t.apply(DB)
    t.advance(20)
    return t


def _pod(twin: Twin) -> dict[str, Any]:
    pods = [p for p in twin.list("pods", "default", label_selector="app=db") if not p["metadata"].get("deletionTimestamp")]
    assert pods
    return pods[0]


def _serve(twin: Twin, seconds: int, op: str = "find") -> Any:
    out = None
    for _ in range(seconds):
        store = datastore_for(twin, _pod(twin))
        if isinstance(store, MongoServer):
            out = store.request(op, db="geo-db", collection="geo", rate=FIND_RATE)
        twin.advance(1)
    return out


def _q(twin: Twin, query: str) -> float:
    result = Engine(twin.services.tsdb).instant(query, int(twin.clock.now * 1000)).to_api()["result"]
    assert result, query
    return float(result[0]["value"][1])


def _logs(twin: Twin) -> str:
    pod = _pod(twin)
    return twin.logs("default", pod["metadata"]["name"], "mongo")


def test_iochaos_latency_moves_node_disk_metrics_and_the_slow_query_log(twin: Twin) -> None:
    node = _pod(twin)["spec"]["nodeName"]
    sel = f'device="sdb",node="{node}"'
    _serve(twin, 75)
    healthy = _q(twin, f"rate(node_disk_io_time_seconds_total{{{sel}}}[1m])")
    per_read = _q(twin, f"rate(node_disk_read_time_seconds_total{{{sel}}}[1m]) / "
                        f"rate(node_disk_reads_completed_total{{{sel}}}[1m])")
    assert healthy < 0.1 and per_read < 0.005
    assert '"msg":"Slow query"' not in _logs(twin)

    twin.create(chaos("IOChaos", "slow", {**SELECT, "action": "latency", "volumePath": "/data/db",
                                          "path": "/data/db/**", "delay": "150ms", "percent": 100}))
    out = _serve(twin, 75)
    assert out.ok and out.service_ms >= 150
    assert _q(twin, f"rate(node_disk_io_time_seconds_total{{{sel}}}[1m])") > 0.9  # the disk is saturated
    per_read = _q(twin, f"rate(node_disk_read_time_seconds_total{{{sel}}}[1m]) / "
                        f"rate(node_disk_reads_completed_total{{{sel}}}[1m])")
    assert 0.14 < per_read < 0.16
    assert _q(twin, f"rate(node_disk_reads_completed_total{{{sel}}}[1m])") == pytest.approx(FIND_RATE, rel=0.2)
    assert _q(twin, f"rate(node_disk_io_time_weighted_seconds_total{{{sel}}}[1m])") > 5  # ~6 requests queued
    slow = [line for line in _logs(twin).splitlines() if '"msg":"Slow query"' in line]
    assert slow and '"c":"COMMAND",  "id":51803' in slow[-1] and '"ns":"geo-db.geo"' in slow[-1]
    assert '"durationMillis":150' in slow[-1] and '"timeReadingMicros":150000' in slow[-1]


def test_proc_diskstats_has_the_kernel_layout_and_the_exporters_numbers(twin: Twin) -> None:
    _serve(twin, 30)
    pod = _pod(twin)
    result = run_exec(exec_context(twin, pod, "mongo"), ["cat", "/proc/diskstats"])
    assert result.exit_code == 0
    rows = [line.split() for line in result.stdout.splitlines()]
    assert [r[:3] for r in rows] == [["8", "0", "sda"], ["8", "1", "sda1"], ["8", "16", "sdb"], ["8", "17", "sdb1"]]
    assert all(len(r) == 20 and all(f.isdigit() for f in r[3:]) for r in rows)
    assert result.stdout.splitlines()[0].startswith("   8       0 sda ")
    sdb = rows[2]
    reads = _q(twin, f'node_disk_reads_completed_total{{device="sdb",node="{pod["spec"]["nodeName"]}"}}')
    assert int(sdb[3]) >= reads > 0  # the file is read after the last scrape
    assert int(sdb[12]) >= int(sdb[6])  # io_ticks (ms busy) vs ms reading at a healthy disk: both counted


ENOSPC_CASES = [
    ("dd if=/dev/zero of=/scratch/blob bs=1M count=8",
     "dd: error writing '/scratch/blob': No space left on device\n4+0 records in\n3+0 records out\n"
     "3145728 bytes (3.1 MB, 3.0 MiB) copied", 1, 3 << 20),
    ("fallocate -l 1G /scratch/big", "fallocate: fallocate failed: No space left on device\n", 1, 0),
    ("echo hello > /scratch/note", "", 0, 6),
    ("dd if=/dev/zero of=/scratch/small bs=1k count=2", "2+0 records in\n2+0 records out\n2048 bytes (2.0 kB, "
     "2.0 KiB) copied", 0, 2048),
]


def test_writes_to_a_full_node_disk_fail_with_enospc(twin: Twin) -> None:
    pod = _pod(twin)
    root = nodeos_of(twin).disk(pod["spec"]["nodeName"], "sda")  # emptyDir lives on the nodefs
    for command, stderr, code, taken in ENOSPC_CASES:
        root.used_bytes = root.size_bytes - (3 << 20) - 100
        before = root.used_bytes
        result = run_exec(exec_context(twin, pod, "mongo"), ["sh", "-c", command])
        assert (result.exit_code, result.stderr[:len(stderr)]) == (code, stderr), command
        assert root.used_bytes - before == taken, command  # fallocate is all or nothing
    root.used_bytes = root.size_bytes - 2
    result = run_exec(exec_context(twin, pod, "mongo"), ["sh", "-c", "echo hello > /scratch/full; echo $?"])
    assert result.stdout == "1\n" and result.stderr == "sh: 1: echo: echo: I/O error\n"  # dash's echo on ENOSPC
    held = root.used_bytes
    assert run_exec(exec_context(twin, pod, "mongo"), ["sh", "-c", "rm /scratch/blob"]).exit_code == 0
    assert held - root.used_bytes == 3 << 20  # a deleted file gives its space back
    root.used_bytes -= root.size_bytes // 2  # room again, so the kubelet has no disk pressure to reclaim
    held = root.used_bytes
    twin.delete("pods", "default", pod["metadata"]["name"])
    twin.advance(40)
    assert held - root.used_bytes == 6 + 2048  # so does the pod's emptyDir when it goes


def test_a_full_data_disk_stops_mongod_writes() -> None:
    t = Twin(seed=7)
    t.apply(DB)
    t.advance(20)
    pod = _pod(t)
    data = nodeos_of(t).disk(pod["spec"]["nodeName"], "sdb")
    data.used_bytes = data.size_bytes
    out = _serve(t, 1, op="insert")
    assert not out.ok and "No space left on device" in out.message
    assert "No space left on device" in _logs(t) or "No space left on device" in t.logs(
        "default", pod["metadata"]["name"], "mongo", previous=True)


def test_kernelchaos_fsync_eio_aborts_mongod_until_the_pod_is_recreated(twin: Twin) -> None:
    pod = _pod(twin)
    node = pod["spec"]["nodeName"]
    twin.create(chaos("KernelChaos", "k", {**SELECT, "failKernRequest": {
        "callchain": [{"funcname": "__x64_sys_fsync"}], "failtype": 2, "probability": 100, "times": 0}}))
    twin.advance(40)
    status = twin.get("pods", "default", pod["metadata"]["name"])["status"]["containerStatuses"][0]
    assert status["restartCount"] >= 1
    assert status["lastState"]["terminated"]["exitCode"] == 134
    previous = twin.logs("default", pod["metadata"]["name"], "mongo", previous=True)
    assert "handle-sync: fdatasync: Input/output error" in previous and '"msg":"Fatal assertion"' in previous
    assert not [line for line in twin.services.logs.node_lines(node, "kernel") if "bpf" in line.text.lower()]
    twin.delete("pods", "default", pod["metadata"]["name"])
    twin.advance(40)
    fresh = _pod(twin)
    assert fresh["metadata"]["uid"] != pod["metadata"]["uid"]
    assert fresh["status"]["containerStatuses"][0]["restartCount"] == 0  # a new pod is not selected


@pytest.mark.parametrize(("argv", "conf", "ms"), [
    (["postgres", "-c", "log_min_duration_statement=250"], "", 250.0),
    (["postgres", "-clog_min_duration_statement=1s"], "", 1000.0),
    (["postgres"], "log_min_duration_statement = '100ms'   # slow\n", 100.0),
    (["postgres"], "", None),
])
def test_postgres_slow_statement_threshold(argv: list[str], conf: str, ms: float | None) -> None:
    assert pg_min_duration(argv, conf) == ms


def test_iostat_where_the_image_ships_sysstat(twin: Twin) -> None:
    from sregym.twin.node.images import ImageSpec, catalogue_of

    catalogue_of(twin).register(ImageSpec(repository="docker.io/library/sysstat-box", tags=("1",), shell="dash",
                                          extras={"binaries": ["sh", "cat", "iostat"]}))
    twin.create(chaos("IOChaos", "slow", {**SELECT, "action": "latency", "volumePath": "/data/db",
                                          "path": "/data/db/**", "delay": "50ms", "percent": 100}))
    _serve(twin, 70)
    pod = _pod(twin)
    ctx = exec_context(twin, pod, "mongo")
    assert run_exec(ctx, ["iostat", "-x"]).exit_code == 127  # mongo's image has no sysstat
    # The same container as if its image shipped sysstat (the executables come from the image).
    with_sysstat = copy.deepcopy(pod)
    next(c for c in with_sysstat["spec"]["containers"] if c["name"] == "mongo")["image"] = "sysstat-box:1"
    ctx = exec_context(twin, with_sysstat, "mongo")
    out = run_exec(ctx, ["iostat", "-x", "-d", "1", "2"])
    assert out.exit_code == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("Linux 6.1.0-") and f" ({pod['spec']['nodeName']}) \t" in lines[0]
    assert lines[0].endswith(" CPU)") and "\t_x86_64_\t(" in lines[0]
    headers = [i for i, line in enumerate(lines) if line.startswith("Device            r/s     rkB/s")]
    assert len(headers) == 2 and "avg-cpu" not in out.stdout
    now = {line.split()[0]: line.split() for line in lines[headers[1] + 1:] if line.strip()}
    assert float(now["sdb"][5]) == pytest.approx(50.35, abs=1.0)  # r_await: the injected latency
    assert float(now["sdb"][-1]) > 90  # %util
    sdb = next(line for line in lines[headers[1]:] if line.startswith("sdb "))
    assert len(now["sdb"]) == len(lines[headers[1]].split()) == 23
    assert sdb[:21].endswith(" " + now["sdb"][1]) and len(sdb) == len(lines[headers[1]])  # columns align
    bad = run_exec(ctx, ["iostat", "-Q"])
    assert bad.exit_code == 1 and bad.stderr.startswith("Usage: iostat [ options ] [ <interval> [ <count> ] ]")


def test_attr_override_and_mistake_reach_mongod(twin: Twin) -> None:
    twin.create(chaos("IOChaos", "attr", {**SELECT, "action": "attrOverride", "volumePath": "/data/db",
                                          "path": "/data/db/**", "attr": {"perm": 0o200}, "percent": 100}))
    out = _serve(twin, 3)
    assert not out.ok and out.error == "EACCES" and out.message.endswith("Permission denied")
    twin.delete("IOChaos", "chaos-mesh", "attr")
    twin.advance(3)
    assert _serve(twin, 2).ok
    pod = _pod(twin)
    twin.create(chaos("IOChaos", "mistake", {**SELECT, "action": "mistake", "volumePath": "/data/db",
                                             "path": "/data/db/**", "percent": 100, "mistake": {
                                                 "filling": "zero", "maxOccurrences": 1, "maxLength": 4096}}))
    out = _serve(twin, 3)
    assert not out.ok
    twin.advance(5)
    status = twin.get("pods", "default", pod["metadata"]["name"])["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["exitCode"] == 134  # WiredTiger panics on a bad checksum
    previous = twin.logs("default", pod["metadata"]["name"], "mongo", previous=True)
    assert "read checksum error for 4096B block at offset" in previous and '"msgid":50853' in previous


def test_kernelchaos_open_eio_fails_redis_snapshots_and_then_its_writes() -> None:
    t = Twin(seed=7)
    t.apply("""
apiVersion: v1
kind: Namespace
metadata: {name: chaos-mesh}
---
apiVersion: v1
kind: Pod
metadata: {name: cache, namespace: default, labels: {app: cache}}
spec:
  containers: [{name: redis, image: "redis:7.2.4"}]
""")
    t.advance(10)
    pod = t.get("pods", "default", "cache")
    t.create(chaos("KernelChaos", "rdb", {"mode": "one", "selector": {"labelSelectors": {"app": "cache"},
                                                                       "namespaces": ["default"]},
                                          "failKernRequest": {"callchain": [{"funcname": "__x64_sys_openat"}],
                                                              "failtype": 2, "probability": 100}}))
    outcomes = []
    for _ in range(70):
        outcomes.append(datastore_for(t, pod).request("SET", rate=200.0))
        t.advance(1)
    assert outcomes[10].ok and not outcomes[-1].ok and outcomes[-1].message.startswith("MISCONF Redis is configured")
    logs = t.logs("default", "cache", "redis")
    assert "10000 changes in 60 seconds. Saving..." in logs
    assert ("C " in logs and "# Failed opening the RDB file dump.rdb (in server root dir /data) for saving: "
            "Input/output error" in logs and "# Background saving error" in logs)
