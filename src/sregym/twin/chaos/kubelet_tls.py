"""Whether a node's kubelet can talk to the API server: its process runs and its clock lets TLS
verify the API server's certificate.

kubeadm (and so kind) issues the API server's serving certificate with a NotBefore backdated 5
minutes before the cluster was created and a NotAfter one year later. A kubelet whose node clock
(`NodeOS.clock_offset`) is outside that window cannot complete a TLS handshake: Go's verifier
fails with `x509: certificate has expired or is not yet valid: current time ... is after ...`
(or `is before ...`). Such a kubelet is alive (`systemctl` shows it active) but renews no lease,
posts no status and syncs no pods, so the node lifecycle controller marks the node `Unknown`,
exactly as for a stopped kubelet; it logs the failed requests every lease period. Setting the
clock back restores the handshake and the kubelet reports in again.

The controllers that act for a kubelet (kubelet, leases, node status, eviction manager) ask
`kubelet_online`; the lease controller calls `report_failure` when a renewal fails this way.
`backend_error` is what the API server answers an exec into a pod whose kubelet process is
down: it cannot dial the kubelet's port 10250.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.clock import parse_time
from sregym.twin.node.logs import log_store
from sregym.twin.topology import CLUSTER_NAME

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

CERT_BACKDATE = 300.0  # kubeadm backdates NotBefore by 5 minutes
CERT_VALIDITY = 365 * 86400.0  # kubeadm's default certificate validity: one year
API_SERVER = f"https://{CLUSTER_NAME}-control-plane:6443"


def rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(int(ts), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def apiserver_cert_window(twin: Twin) -> tuple[float, float]:
    """(NotBefore, NotAfter) of the API server's serving certificate, from the cluster's birth."""
    created = twin.clock.start
    for node in twin.store.scan("Node"):
        if "node-role.kubernetes.io/control-plane" in (node["metadata"].get("labels") or {}):
            stamp = node["metadata"].get("creationTimestamp")
            if stamp:
                created = parse_time(stamp)
            break
    return created - CERT_BACKDATE, created + CERT_VALIDITY


def tls_error(twin: Twin, node: str) -> str | None:
    """The x509 verification error the node's kubelet gets from the API server, if any."""
    nodeos = twin.services.nodeos
    offset = nodeos.clock_offset(node) if nodeos is not None else 0.0
    if not offset:
        return None
    now = twin.clock.now + offset
    not_before, not_after = apiserver_cert_window(twin)
    if now < not_before:
        detail = f"current time {rfc3339(now)} is before {rfc3339(not_before)}"
    elif now > not_after:
        detail = f"current time {rfc3339(now)} is after {rfc3339(not_after)}"
    else:
        return None
    return f"tls: failed to verify certificate: x509: certificate has expired or is not yet valid: {detail}"


def kubelet_online(twin: Twin, node: str) -> bool:
    """The node's kubelet runs and reaches the API server."""
    nodeos = twin.services.nodeos
    if nodeos is None:
        return True
    return nodeos.kubelet_running(node) and tls_error(twin, node) is None


def backend_error(twin: Twin, node: str, host_ip: str) -> str | None:
    """The API server's error for a kubelet-proxied request (exec, attach) to a stopped kubelet."""
    nodeos = twin.services.nodeos
    if nodeos is None or nodeos.kubelet_running(node):
        return None
    return f"error dialing backend: dial tcp {host_ip or '172.18.0.2'}:10250: connect: connection refused"


def report_failure(twin: Twin, node: str) -> None:
    """What the kubelet logs when a lease renewal and a status update fail their handshake:
    klog lines stamped with the node's own (wrong) clock."""
    error = tls_error(twin, node)
    if error is None:
        return
    nodeos = nodeos_of(twin)
    if not nodeos.kubelet_running(node):
        return
    now = twin.clock.now
    local = now + nodeos.clock_offset(node)
    stamp = datetime.fromtimestamp(local, tz=UTC).strftime("%m%d %H:%M:%S.%f")
    pid = nodeos.node(node).kubelet_pid
    lease = (f'Get \\"{API_SERVER}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node}'
             f'?timeout=10s\\": {error}')
    status = (f'error getting node \\"{node}\\": Get \\"{API_SERVER}/api/v1/nodes/{node}'
              f'?resourceVersion=0&timeout=10s\\": {error}')
    logs = log_store(twin)
    logs.node_append(node, "kubelet", now, f'E{stamp} {pid:>7} controller.go:145] "Failed to ensure lease exists, '
                                           f'will retry" err="{lease}" interval="7s"')
    logs.node_append(node, "kubelet", now, f'E{stamp} {pid:>7} kubelet_node_status.go:549] "Error updating node '
                                           f'status, will retry" err="{status}"')
