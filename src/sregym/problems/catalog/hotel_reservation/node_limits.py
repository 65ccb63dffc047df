"""Hotel Reservation problems where many held connections meet a limit: a per-process open-file
limit (SREGym's file_descriptor_exhaustion) and a node's conntrack table (SREGym's
node_conntrack_exhaustion_hotel_reservation).

Each builder's docstring is the problem card. The faults are Kubernetes writes with the admin
credential: a wrapper command that lowers frontend's `ulimit -n` (`patch_objects`) and a
connection soak test deployed in the cluster (`pinned_workloads`, the `tcp-soak` image of
`twin/node/soak_image.py`). The symptoms come from the twin: the soak client's connections are
open files of the accepting process (`twin/dataplane/open_files.py`: EMFILE) and conntrack
entries of the nodes they cross (`twin/chaos/node_kernel.py`: `table full, dropping packet`).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.problems.builders import deployment_cause

# node_os declares this set's `conntrack` and `file_descriptors` mechanisms and the impact words.
from sregym.problems.catalog.hotel_reservation.node_os import IMPACT
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = "hotel-reservation"
SOAK_IMAGE = "ghcr.io/reservation-platform/tcp-soak:v0.3.1"  # twin/node/soak_image.py
FRONTEND_CONTAINER = "hotel-reserv-frontend"

_deploy = partial(deployment_cause, NS)


def _soak_deployment(name: str, args: list[str], *, replicas: int = 1,
                     ports: list[int] | None = None) -> dict[str, Any]:
    """A Deployment of the soak tool (client or server), labelled `app: <name>`."""
    labels = {"app": name}
    container: dict[str, Any] = {"name": name, "image": SOAK_IMAGE, "args": args,
                                 "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}}}
    if ports:
        container["ports"] = [{"containerPort": p} for p in ports]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NS, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"terminationGracePeriodSeconds": 0, "containers": [container]}}}}


# ======================================================= per-process open-file limit
FD_LIMIT = 1024
FD_CLIENT = "frontend-connection-soak"
FD_CONNECTIONS = 1100


@problem
def frontend_open_file_limit() -> Problem:
    """frontend's container runs through a wrapper, `sh -c 'ulimit -n 1024 && exec frontend'`,
    so the server's open-file limit (RLIMIT_NOFILE) is 1024 instead of containerd's 1048576;
    a connection soak test (`frontend-connection-soak`, the `tcp-soak` tool) keeps 1100
    connections open to frontend:5000.

    frontend is at its limit: `accept4()` fails with EMFILE and frontend logs
    `http: Accept error: accept tcp [::]:5000: accept4: too many open files; retrying in 5ms`
    (then every second). New connections are handshaken into the listen backlog and never
    served, so the load generator's requests time out and the entry SLO fails; frontend stays
    Running and Ready, the node has plenty of file handles (no ENFILE, `fs.file-nr` is low),
    and `cat /proc/1/limits` in frontend shows `Max open files 1024`. Fix: remove the wrapper
    (run `frontend` directly, or raise the limit far above the connections) and let frontend
    roll out; the soak client follows the new pod and is served.
    """
    return Problem(
        id="hotel-reservation/frontend-open-file-limit-v1",
        title="requests through the frontend time out; frontend is Running and Ready",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="hard", sources=("sregym:file_descriptor_exhaustion",)),
        faults=(
            FaultSpec(fault="patch_objects", params={"patches": [
                {"kind": "Deployment", "namespace": NS, "name": "frontend", "patch": {"spec": {"template": {
                    "spec": {"containers": [{"name": FRONTEND_CONTAINER, "command": ["/bin/sh", "-c"],
                                             "args": [f"ulimit -n {FD_LIMIT} && exec frontend"]}]}}}}}]}),
            FaultSpec(fault="pinned_workloads", params={
                "objects": [_soak_deployment(FD_CLIENT, [
                    "hold", "--target", f"frontend.{NS}.svc.cluster.local", "--ports", "5000",
                    "--connections", str(FD_CONNECTIONS)])],
                "wait_for": {"app": FD_CLIENT}}),
        ),
        ground_truth=GroundTruth(
            root_causes=(_deploy("frontend"),),
            mechanism="file_descriptors",
            detail=f"frontend runs under `ulimit -n {FD_LIMIT}` (its command wrapper): with {FD_CONNECTIONS} "
                   "connections held open by a client it is at its per-process open-file limit and accept() "
                   "fails with EMFILE (too many open files)",
            detail_keywords=("ulimit", str(FD_LIMIT), "too many open files", "emfile", "open files", "nofile",
                             "file descriptor"),
            affected=(_deploy("frontend"),), impact_keywords=IMPACT,
            description="frontend's command wrapper limits the server to 1024 open files; a client keeps more "
                        "connections open than that, so frontend cannot accept new connections and requests "
                        "time out."),
        mitigation=MitigationSpec(must_fix=(CheckSpec(check="entry_slo"),)),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="frontend", patch_type="json", patch=[
            {"op": "replace", "path": "/spec/template/spec/containers/0/command", "value": ["frontend"]},
            {"op": "remove", "path": "/spec/template/spec/containers/0/args"}]),),
    )


# ============================================================ conntrack flood from one node
GATEWAY = "rpc-gateway"
CLIENT = "edge-traffic-client"
GATEWAY_PORTS = list(range(9090, 9106))
CONNTRACK_MAX = 131072
CONNTRACK_CONNECTIONS = (CONNTRACK_MAX * 105 + 99) // 100  # SREGym's 105 % of the table


def _gateway_service() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": GATEWAY, "namespace": NS, "labels": {"app": GATEWAY}},
            "spec": {"selector": {"app": GATEWAY},
                     "ports": [{"name": f"tcp-{p}", "port": p, "targetPort": p} for p in GATEWAY_PORTS]}}


@problem
def conntrack_client_flood() -> Problem:
    """A client Deployment (`edge-traffic-client`, the `tcp-soak` tool) pinned to the node
    that runs `frontend` holds 137626 connections to `rpc-gateway` (4 replicas on the same
    node, 16 ports) — more than the node's conntrack table holds (nf_conntrack_max 131072).

    The node's conntrack table is full: the kernel drops new flows and logs
    `nf_conntrack: nf_conntrack: table full, dropping packet` (rate-limited); node-exporter
    shows `node_nf_conntrack_entries` at `node_nf_conntrack_entries_limit` and
    `node_nf_conntrack_stat_drop` rising. Every new connection from that node's pods times
    out (`dial tcp ...: i/o timeout`), so frontend's calls fail; Deployments, pods, Services
    and Endpoints all look healthy. Fix: stop the flood — delete (or scale to 0) the
    edge-traffic-client Deployment; its connections close and the table drains. Raising
    nf_conntrack_max well above the held connections also gives the table its headroom.
    """
    return Problem(
        id="hotel-reservation/conntrack-client-flood-v1",
        title="requests through the frontend time out; every pod and Service looks healthy",
        app=APP, namespace=NS,
        tags=Tags(layers=("os", "network"), difficulty="hard",
                  sources=("sregym:node_conntrack_exhaustion_hotel_reservation",)),
        faults=(FaultSpec(fault="pinned_workloads", params={
            "objects": [
                _gateway_service(),
                _soak_deployment(GATEWAY, ["serve", "--ports", f"{GATEWAY_PORTS[0]}-{GATEWAY_PORTS[-1]}"],
                                 replicas=4, ports=GATEWAY_PORTS),
                _soak_deployment(CLIENT, ["hold", "--target", f"{GATEWAY}.{NS}.svc.cluster.local.",
                                          "--ports", f"{GATEWAY_PORTS[0]}-{GATEWAY_PORTS[-1]}",
                                          "--connections", str(CONNTRACK_CONNECTIONS)]),
            ],
            "pin_namespace": NS, "pin_to_labels": {"io.kompose.service": "frontend"},
            "wait_for": {"app": CLIENT}}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy(CLIENT),),
            mechanism="conntrack",
            detail=f"edge-traffic-client, pinned to frontend's node, holds {CONNTRACK_CONNECTIONS} connections to "
                   "rpc-gateway: the node's conntrack table (nf_conntrack_max 131072) is full and new flows are "
                   "dropped (nf_conntrack: table full, dropping packet)",
            detail_keywords=("conntrack", "table full", "dropping packet", "edge-traffic-client", "connections"),
            affected=(_deploy("frontend"), _deploy(GATEWAY)), impact_keywords=IMPACT,
            description="A client pinned to frontend's node keeps more connections open than the node's conntrack "
                        "table holds; every new connection from that node is dropped and times out."),
        mitigation=MitigationSpec(must_fix=(CheckSpec(check="node_conntrack_headroom"), CheckSpec(check="entry_slo"))),
        gold=(Action(op="delete", kind="Deployment", namespace=NS, name=CLIENT),),
    )


# ====================================================== a worker's clock moved: x509 fails
TLS_SECRET = "hotel-frontend-tls"
TLS_CA = "hotel-frontend-ca"
TLS_NAME = "hotel-reservation.local"
CHECKER = "tls-health-check"
PROBE = "node-probe"
DRIFT_S = 86400 * 30  # SREGym's 30 days
HOST_ENTER = "nsenter -t 1 -m -u -i -n -p --"
RTC_RESTORE = "node-clock-restore"


def _privileged_spec(script: str) -> dict[str, Any]:
    return {"hostPID": True, "hostNetwork": True, "tolerations": [{"operator": "Exists"}],
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "probe", "image": "busybox:1.36", "command": ["sh", "-c", script],
                            "securityContext": {"privileged": True}}]}


def _clock_probe() -> dict[str, Any]:
    """SREGym's injector: stop the node's time sync, move its clock 30 days ahead, stay."""
    script = (f"{HOST_ENTER} systemctl stop systemd-timesyncd || true; "
              f"{HOST_ENTER} date -s '+{DRIFT_S} seconds' && sleep infinity")
    labels = {"app": PROBE}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": PROBE, "namespace": "default", "labels": labels},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": _privileged_spec(script)}}}


def _clock_restore() -> dict[str, Any]:
    """What the node team applies: set every node's system clock from its hardware clock (the
    RTC, which `date -s` does not touch)."""
    labels = {"app.kubernetes.io/name": RTC_RESTORE}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": RTC_RESTORE, "namespace": "kube-system", "labels": labels},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                     "spec": _privileged_spec(f"{HOST_ENTER} hwclock --hctosys && sleep infinity")}}}


@problem
def node_clock_drift_tls() -> Problem:
    """frontend carries a `tls-health-check` sidecar (the `certcheck` tool) that verifies a
    short-lived certificate (`hotel-frontend-tls`, valid for one day, mounted from the
    `hotel-frontend-ca` ConfigMap) every 30 s. A privileged pod (`default/node-probe`, hostPID)
    on frontend's node stops the node's time sync and runs `date -s '+2592000 seconds'`: the
    node's clock is 30 days ahead.

    The sidecar logs `tls: failed to verify certificate: x509: certificate has expired or is not
    yet valid: current time <30 days ahead> is after <tomorrow>` although the certificate is
    valid; `date` in any pod on that node shows the wrong day, node-exporter's
    `node_timex_offset_seconds` for that node is about +2592000, and the same certificate
    verifies from every other node. Fix: bring the node's clock back (re-enable time sync, or
    `hwclock --hctosys` from a privileged pod: the RTC was not touched) and remove the probe
    that moved it. Renewing the certificate does not help: it is valid.
    """
    return Problem(
        id="hotel-reservation/node-clock-drift-tls-v1",
        title="frontend's certificate check reports an expired certificate that is valid",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="hard", sources=("sregym:node_clock_drift_hotel_reservation",)),
        faults=(
            FaultSpec(fault="certificate_check", params={
                "certificate": {"namespace": NS, "name": TLS_SECRET, "hosts": [TLS_NAME],
                                "not_before_days": 0.0, "not_after_days": 1.0},
                "config_map": TLS_CA, "deployment": "frontend",
                "sidecar": {"name": CHECKER, "image": "ghcr.io/reservation-platform/certcheck:v1.0.2",
                            "args": ["--cert", "/etc/tls-ca/ca.crt", "--name", TLS_NAME, "--interval", "30s"],
                            "volumeMounts": [{"name": "tls-ca", "mountPath": "/etc/tls-ca", "readOnly": True}],
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}}),
            FaultSpec(fault="pinned_workloads", params={
                "objects": [_clock_probe()], "pin_namespace": NS,
                "pin_to_labels": {"io.kompose.service": "frontend"}, "wait_for": {"app": PROBE},
                "recover_host_command": "hwclock --hctosys"}),
        ),
        ground_truth=GroundTruth(
            root_causes=(deployment_cause("default", PROBE),),
            mechanism="clock_skew",
            detail="node-probe stopped time sync on frontend's node and set its clock 30 days ahead (date -s): "
                   "the valid one-day certificate fails x509 verification there (certificate has expired or is "
                   "not yet valid: current time ... is after ...)",
            detail_keywords=("clock", "date -s", "time sync", "x509", "expired", "30 days", "ntp", "node-probe"),
            affected=(_deploy("frontend"),), impact_keywords=(*IMPACT, "x509", "expired", "certificate"),
            description="A privileged pod moved the clock of frontend's node 30 days ahead with time sync stopped; "
                        "a valid short-lived certificate looks expired to the checker on that node."),
        mitigation=MitigationSpec(must_fix=(CheckSpec(check="node_clocks_in_sync"),)),
        gold=(Action(op="delete", kind="Deployment", namespace="default", name=PROBE),
              Action(op="apply", manifest=_clock_restore())),
    )
