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


def _node_tuning(problem_id: str, title: str, *, daemonset: str, key: str, value: str, default: str,
                 target: str, restore: str, must_fix: tuple[CheckSpec, ...], sources: tuple[str, ...] = (),
                 **truth: Any) -> Problem:
    """A tuning DaemonSet in kube-system sets `key=value` on the node that runs `target`. It is
    the root cause; the gold deletes it and sets `default` back from a privileged DaemonSet
    named `restore`, as an operator would (the setting outlives the DaemonSet that set it)."""
    return Problem(
        id=problem_id, title=title, app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="hard", sources=sources),
        faults=(FaultSpec(fault="node_sysctl", params={
            "name": daemonset, "key": key, "value": value, "restore": default,
            "target_namespace": NS, "target_labels": {"io.kompose.service": target}}),),
        ground_truth=GroundTruth(root_causes=(object_cause(SYSTEM, "DaemonSet", daemonset),),
                                 impact_keywords=IMPACT, **truth),
        mitigation=MitigationSpec(must_fix=must_fix),
        gold=(Action(op="delete", kind="DaemonSet", namespace=SYSTEM, name=daemonset),
              Action(op="apply", manifest=_restore_daemonset(restore, key, default))),
    )


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
    return _node_tuning(
        "hotel-reservation/conntrack-exhaustion-v1",
        "requests through the frontend time out; pods are healthy",
        sources=("sregym:node_conntrack_exhaustion_hotel_reservation",),
        daemonset=CONNTRACK_DS, key="net.netfilter.nf_conntrack_max", value="128", default="131072",
        target="frontend", restore="conntrack-max-restore",
        must_fix=(CheckSpec(check="node_conntrack_headroom"), CheckSpec(check="entry_slo")),
        mechanism="conntrack",
        detail="net.netfilter.nf_conntrack_max=128 on frontend's node: the conntrack table is full and new "
               "flows are dropped (nf_conntrack: table full, dropping packet)",
        detail_keywords=("nf_conntrack_max", "conntrack", "table full", "128", "dropping packet"),
        affected=(_deploy("frontend"),),
        description="A node-tuning DaemonSet shrank the conntrack table of frontend's node below what the node "
                    "already tracks; every new connection from that node is dropped and times out.")


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
        tags=Tags(layers=("os",), difficulty="medium", sources=("sregym:ephemeral_port_range_hotel_reservation",)),
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
    return _node_tuning(
        "hotel-reservation/file-max-exhaustion-v1",
        "searches fail with errors from services on one node; pods are healthy",
        sources=("sregym:file_descriptor_exhaustion",),
        daemonset=FILE_MAX_DS, key="fs.file-max", value="1024", default="9223372036854775807",
        target="profile", restore="file-max-restore",
        must_fix=(CheckSpec(check="node_filefd_headroom"),
                  CheckSpec(check="service_calls_succeed", params={"service": "profile"})),
        mechanism="file_descriptors",
        detail="fs.file-max=1024 on profile's node: the node's file handle table is full, sockets fail with "
               "ENFILE (too many open files in system)",
        detail_keywords=("file-max", "1024", "too many open files", "enfile", "file handle"),
        affected=(_deploy("profile"), _deploy("frontend")),
        description="A tuning DaemonSet set the node-wide file handle limit of profile's node to 1024; every "
                    "process there fails to open sockets, so profile's calls and searches fail.")


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
    return _node_tuning(
        "hotel-reservation/thread-exhaustion-v1",
        "services on one node keep crashing at start; searches fail",
        daemonset=THREADS_DS, key="kernel.threads-max", value=THREADS_MAX, default=THREADS_MAX_DEFAULT,
        target="geo", restore="threads-max-restore",
        must_fix=(CheckSpec(check="node_threads_headroom"), CheckSpec(check="entry_slo")),
        mechanism="thread_exhaustion",
        detail=f"kernel.threads-max={THREADS_MAX} on geo's node: the node's tasks exceed it, every new thread or "
               "process fails with EAGAIN (runtime: failed to create new OS thread, errno=11)",
        detail_keywords=("threads-max", THREADS_MAX, "failed to create new os thread", "eagain",
                         "resource temporarily unavailable", "newosproc"),
        affected=(_deploy("geo"), _deploy("search"), _deploy("frontend")),
        description="A tuning DaemonSet set the node-wide thread limit of geo's node below the tasks the node "
                    "already runs; the Go services there cannot start threads and crash-loop, so searches "
                    "fail.")
