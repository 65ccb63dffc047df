"""Hotel Reservation problems in the node's operating system: kernel limits that a well-meant
tuning change set too low.

Each builder's docstring is the problem card. The faults are Kubernetes writes with the admin
credential: a privileged hostPID DaemonSet in kube-system that runs `nsenter -t 1 ... sysctl -w`
on one node (`sregym.faults.node_os`), or a pod-level sysctl patched into a Deployment. The
symptoms come from the twin's kernel model (`twin/chaos/node_kernel.py`): dropped flows and
`nf_conntrack: table full` in dmesg, ENFILE and `VFS: file-max limit N reached`, EADDRNOTAVAIL.
A sysctl outlives the pod that set it, so deleting the DaemonSet alone fixes nothing; the gold
solutions set the value back from a privileged DaemonSet, as an operator would.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.faults.node_os import HOST_ENTER, IMAGE
from sregym.problems.builders import deployment_cause, object_cause
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = "hotel-reservation"
SYSTEM = "kube-system"
IMPACT = ("unavailable", "fail", "error", "down", "latency", "slow", "timeout", "cannot", "outage", "degraded",
          "drop", "refused")

mechanisms({
    "conntrack": ("conntrack", "nf_conntrack", "table full", "dropping packet", "connection tracking"),
    "ephemeral_ports": ("ephemeral port", "ip_local_port_range", "local port range", "port range",
                        "cannot assign requested address", "eaddrnotavail", "port exhaustion", "source port"),
    "file_descriptors": ("file-max", "file_max", "file descriptor", "too many open files", "enfile", "emfile",
                         "file handle", "open files", "nofile"),
    "thread_exhaustion": ("threads-max", "threads_max", "pid_max", "pid exhaustion", "thread exhaustion",
                          "failed to create new os thread", "newosproc", "pthread_create", "can't fork",
                          "cannot fork", "resource temporarily unavailable", "eagain", "errno=11",
                          "max user processes", "too many threads", "too many processes"),
})

_deploy = partial(deployment_cause, NS)


def _restore_daemonset(name: str, key: str, value: str) -> dict[str, Any]:
    """What an operator applies to put a kernel setting back on every node."""
    labels = {"app.kubernetes.io/name": name}
    script = f"sysctl -w {key}='{value}' && sleep infinity"
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": SYSTEM, "labels": labels},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "hostPID": True, "hostNetwork": True, "tolerations": [{"operator": "Exists"}],
                "containers": [{"name": "sysctl", "image": IMAGE, "command": [*HOST_ENTER, "sh", "-c", script],
                                "securityContext": {"privileged": True}}]}}}}


def _sysctl_fault(name: str, key: str, value: str, restore: str, target: str) -> FaultSpec:
    return FaultSpec(fault="node_sysctl", params={
        "name": name, "key": key, "value": value, "restore": restore,
        "target_namespace": NS, "target_labels": {"io.kompose.service": target}})


# ============================================================ conntrack table exhaustion
CONNTRACK_DS = "node-conntrack-tuning"


@problem
def conntrack_exhaustion() -> Problem:
    """A node-tuning DaemonSet (`kube-system/node-conntrack-tuning`, privileged, hostPID) lowers
    `net.netfilter.nf_conntrack_max` to 128 on the node that runs `frontend`, below the flows
    the node's own daemons and pods already keep.

    The node's conntrack table is full: the kernel drops new flows and logs
    `nf_conntrack: nf_conntrack: table full, dropping packet` (rate-limited, then
    `net_ratelimit: N callbacks suppressed`); node-exporter shows `node_nf_conntrack_entries`
    at `node_nf_conntrack_entries_limit` and `node_nf_conntrack_stat_drop` rising. Every new
    connection from that node's pods times out (`dial tcp ...: i/o timeout`), so frontend's
    calls fail and searches time out; every pod stays Running and Ready. The setting is in the
    kernel: deleting the DaemonSet or restarting pods changes nothing, and pods rescheduled on
    the node fail the same way. Fix: set nf_conntrack_max back (131072) on the node — e.g. a
    privileged DaemonSet running `nsenter -t 1 -m -u -i -n -p -- sysctl -w
    net.netfilter.nf_conntrack_max=131072` — and remove the tuning DaemonSet.
    """
    key = "net.netfilter.nf_conntrack_max"
    return Problem(
        id="hotel-reservation/conntrack-exhaustion-v1",
        title="requests through the frontend time out; pods are healthy",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="hard"),
        faults=(_sysctl_fault(CONNTRACK_DS, key, "128", "131072", "frontend"),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(SYSTEM, "DaemonSet", CONNTRACK_DS),),
            mechanism="conntrack",
            detail="net.netfilter.nf_conntrack_max=128 on frontend's node: the conntrack table is full and new "
                   "flows are dropped (nf_conntrack: table full, dropping packet)",
            detail_keywords=("nf_conntrack_max", "conntrack", "table full", "128", "dropping packet"),
            affected=(_deploy("frontend"),), impact_keywords=IMPACT,
            description="A node-tuning DaemonSet shrank the conntrack table of frontend's node below what the node "
                        "already tracks; every new connection from that node is dropped and times out."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="node_conntrack_headroom"), CheckSpec(check="entry_slo"))),
        gold=(Action(op="delete", kind="DaemonSet", namespace=SYSTEM, name=CONNTRACK_DS),
              Action(op="apply", manifest=_restore_daemonset("conntrack-max-restore", key, "131072"))),
    )


# =========================================================== ephemeral port exhaustion
PORT_RANGE = "60000 60015"


@problem
def ephemeral_port_exhaustion() -> Problem:
    """`search`'s pods get a pod-level sysctl `net.ipv4.ip_local_port_range: "60000 60015"`
    (`securityContext.sysctls`, a "safe" sysctl the kubelet allows): 16 local ports for a
    process that keeps more than that busy with pooled and TIME-WAIT connections.

    A share of search's outbound connects fails at once with EADDRNOTAVAIL: search logs
    `dial tcp 10.96.x.x:8083: connect: cannot assign requested address` for geo and rate, and
    a large share of searches fail; geo and rate are healthy and see fewer calls. Nothing is
    wrong on the nodes (the setting is per network namespace). Fix: remove the sysctl (or give
    the pods the default range 32768–60999) and let search roll out.
    """
    return Problem(
        id="hotel-reservation/ephemeral-port-exhaustion-v1",
        title="many searches fail with connection errors; geo and rate look healthy",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="medium"),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
            {"kind": "Deployment", "namespace": NS, "name": "search", "patch": {"spec": {"template": {"spec": {
                "securityContext": {"sysctls": [{"name": "net.ipv4.ip_local_port_range",
                                                 "value": PORT_RANGE}]}}}}}}]}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("search"),),
            mechanism="ephemeral_ports",
            detail=f"search's pods set net.ipv4.ip_local_port_range={PORT_RANGE}: 16 ephemeral ports, outbound "
                   "connects fail with EADDRNOTAVAIL (cannot assign requested address)",
            detail_keywords=("ip_local_port_range", PORT_RANGE, "cannot assign requested address", "eaddrnotavail",
                             "ephemeral port"),
            affected=(_deploy("frontend"),), impact_keywords=IMPACT,
            description="search runs out of local ports for its outgoing connections, so many of its calls to geo "
                        "and rate fail before they are sent, and searches through the frontend fail."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="service_calls_succeed", params={"service": "search"}),)),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="search", patch_type="json",
                     patch=[{"op": "remove", "path": "/spec/template/spec/securityContext/sysctls"}]),),
    )


# =================================================================== fs.file-max exhaustion
FILE_MAX_DS = "node-file-limits"


@problem
def file_max_exhaustion() -> Problem:
    """A DaemonSet meant to raise open-file limits (`kube-system/node-file-limits`,
    privileged, hostPID) sets `fs.file-max=1024` on the node that runs `profile` — the
    system-wide table of file handles, not a per-process limit — below the handles the node
    already has open.

    Every unprivileged process on that node fails to open files and sockets with ENFILE: the
    node's services log `dial tcp ...: socket: too many open files in system`, the kernel logs
    `VFS: file-max limit 1024 reached`, node-exporter shows `node_filefd_allocated` above
    `node_filefd_maximum`. profile's calls to its memcached and MongoDB fail, hotel profiles
    are missing from searches; pods stay Running. Deleting the DaemonSet leaves the limit in
    place. Fix: set fs.file-max back (9223372036854775807, systemd's default) on the node
    and remove the DaemonSet.
    """
    key = "fs.file-max"
    return Problem(
        id="hotel-reservation/file-max-exhaustion-v1",
        title="searches fail with errors from services on one node; pods are healthy",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="hard"),
        faults=(_sysctl_fault(FILE_MAX_DS, key, "1024", "9223372036854775807", "profile"),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(SYSTEM, "DaemonSet", FILE_MAX_DS),),
            mechanism="file_descriptors",
            detail="fs.file-max=1024 on profile's node: the node's file handle table is full, sockets fail with "
                   "ENFILE (too many open files in system)",
            detail_keywords=("file-max", "1024", "too many open files", "enfile", "file handle"),
            affected=(_deploy("profile"), _deploy("frontend")), impact_keywords=IMPACT,
            description="A tuning DaemonSet set the node-wide file handle limit of profile's node to 1024; every "
                        "process there fails to open sockets, so profile's calls and searches fail."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="node_filefd_headroom"),
                      CheckSpec(check="service_calls_succeed", params={"service": "profile"}))),
        gold=(Action(op="delete", kind="DaemonSet", namespace=SYSTEM, name=FILE_MAX_DS),
              Action(op="apply", manifest=_restore_daemonset("file-max-restore", key, "9223372036854775807"))),
    )


# ================================================================= thread / PID exhaustion
THREADS_DS = "node-process-limits"
THREADS_MAX = "300"
THREADS_MAX_DEFAULT = "63474"


@problem
def thread_exhaustion() -> Problem:
    """A hardening DaemonSet (`kube-system/node-process-limits`, privileged, hostPID) meant to
    cap processes per user sets `kernel.threads-max=300` on the node that runs `geo` — the
    system-wide limit on tasks, which the node's kernel threads and daemons alone exceed.

    Every `clone()` on that node fails with EAGAIN. The Go services there die at their next OS
    thread (`runtime: failed to create new OS thread (have 11 already; errno=11)`,
    `runtime: may need to increase max user processes (ulimit -u)`, `fatal error: newosproc`,
    exit code 2) and crash-loop at start; a MongoDB there logs `pthread_create failed` /
    `Thread creation failed` for new connections; a shell exec'd into a pod there cannot fork
    (`sh: can't fork: Resource temporarily unavailable`). node-exporter's processes collector
    shows `node_processes_threads` above `node_processes_max_threads`. The node stays Ready and
    never reports PIDPressure (no default PID eviction threshold). Searches fail while geo is
    down. Deleting the DaemonSet leaves the limit in place. Fix: set kernel.threads-max back
    (63474 on these nodes) from a privileged pod on the node and remove the DaemonSet; the
    crash-looping pods then start (deleting them skips the back-off).
    """
    key = "kernel.threads-max"
    return Problem(
        id="hotel-reservation/thread-exhaustion-v1",
        title="services on one node keep crashing at start; searches fail",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="hard"),
        faults=(_sysctl_fault(THREADS_DS, key, THREADS_MAX, THREADS_MAX_DEFAULT, "geo"),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(SYSTEM, "DaemonSet", THREADS_DS),),
            mechanism="thread_exhaustion",
            detail=f"kernel.threads-max={THREADS_MAX} on geo's node: the node's tasks exceed it, every new thread or "
                   "process fails with EAGAIN (runtime: failed to create new OS thread, errno=11)",
            detail_keywords=("threads-max", THREADS_MAX, "failed to create new os thread", "eagain",
                             "resource temporarily unavailable", "newosproc"),
            affected=(_deploy("geo"), _deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="A tuning DaemonSet set the node-wide thread limit of geo's node below the tasks the node "
                        "already runs; the Go services there cannot start threads and crash-loop, so searches "
                        "fail."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="node_threads_headroom"), CheckSpec(check="entry_slo"))),
        gold=(Action(op="delete", kind="DaemonSet", namespace=SYSTEM, name=THREADS_DS),
              Action(op="apply", manifest=_restore_daemonset("threads-max-restore", key, THREADS_MAX_DEFAULT))),
    )
