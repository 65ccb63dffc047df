"""The `Cluster` protocol: everything fault injectors, noise and oracles may do to a cluster.

Injectors and oracles are written once against this protocol and run unchanged on the in-process
twin (`TwinCluster`) and on anything that speaks the Kubernetes API (`KubeCluster`: a real
cluster, or the twin's own API server). That is what keeps them honest: they can only create,
patch, delete, exec and read, the way a human operator with an admin kubeconfig would, so a
symptom can only come from the cluster's own behaviour.

Kinds are named by their Kind (`Deployment`) or resource name (`deployments`, `deploy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

ADMIN = "admin"
AGENT = "agent"


@dataclass(frozen=True)
class ExecResult:
    """What `kubectl exec` returns: output streams and the exit code."""

    stdout: str
    stderr: str
    exit_code: int

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class ProbeResult:
    """One TCP connection attempt from inside the cluster (a semantic reachability probe)."""

    ok: bool
    error: str | None = None  # "refused" | "timeout" | "nxdomain" | ... (connect.ERRORS)
    message: str = ""
    dst_pod: str = ""  # "namespace/name" of the pod that answered, when known


@dataclass(frozen=True)
class EntryStats:
    """Entry-point health over a window: for SLO checks."""

    requests: float
    success_ratio: float
    p95_ms: float


@runtime_checkable
class Cluster(Protocol):
    """Kubernetes operations with one credential, plus time and the observability queries."""

    user: str

    # ---------------------------------------------------------------- objects
    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None: ...

    def list(self, kind: str, namespace: str | None = None, *,
             label_selector: str | None = None) -> list[dict[str, Any]]: ...

    def create(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def replace(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def patch(self, kind: str, namespace: str | None, name: str, patch: Any, *,
              patch_type: str = "strategic") -> dict[str, Any]: ...

    def delete(self, kind: str, namespace: str | None, name: str, *,
               grace_period: int | None = None) -> None: ...

    # ------------------------------------------------------------- containers
    def exec(self, namespace: str, pod: str, command: list[str], *,
             container: str | None = None) -> ExecResult: ...

    def logs(self, namespace: str, pod: str, container: str | None = None, *,
             tail: int | None = None) -> str: ...

    # ------------------------------------------------------------------ time
    def advance(self, seconds: float) -> None: ...

    def now(self) -> float: ...

    # ------------------------------------------------------------ observation
    def connect(self, namespace: str, host: str, port: int) -> ProbeResult: ...

    def entry_stats(self, window_s: float) -> EntryStats | None: ...

    def promql(self, query: str) -> list[dict[str, Any]]: ...

    def as_user(self, user: str) -> Cluster: ...
