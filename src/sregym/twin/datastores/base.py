"""What every backing-store model shares: outcomes, where state lives, and the per-twin bank.

A database's data, users and passwords live on its volume, not in its process: delete the pod of
a MongoDB that mounts a PVC and the new pod sees the same users (and the same revoked role); a
memcached restart, on the other hand, starts cold. `volume_key` decides which: the PV bound to
the claim mounted at the data directory, else the pod uid for an emptyDir, else the container
instance (the writable layer dies with it).

Requests are answered with a `DbOutcome`: ok or not, the driver's exact error text (what the
client service logs), the mean service time, and for caches the fraction of hits. The data plane
works in rates, so outcomes describe a *class* of requests, not one request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.objects import get_path
from sregym.twin.workloads.volumes import bound_volume

if TYPE_CHECKING:
    from sregym.twin.twin import Twin


@dataclass(frozen=True)
class DbOutcome:
    """How a class of requests to a store fares this tick.

    `error` is a short code ("Unauthorized", "AuthenticationFailed", "NOAUTH", "WRONGPASS",
    "OOM", "EIO", "NotFound" ...) or None; `message` is the text the client library returns
    (what the calling service puts in its logs and span); `service_ms` the mean time the store
    spends per request; `hit_ratio` the cache hit fraction (None for databases); `error_ratio` the
    fraction of requests that fail (1.0 for auth errors, the chaos percent for IO faults).
    """

    ok: bool
    error: str | None = None
    message: str = ""
    service_ms: float = 0.5
    hit_ratio: float | None = None
    error_ratio: float = 0.0

    @staticmethod
    def fail(error: str, message: str, service_ms: float = 0.3, ratio: float = 1.0) -> DbOutcome:
        return DbOutcome(False, error, message, service_ms, None, ratio)


@dataclass
class Load:
    """Requests served per second and CPU they cost, accumulated during one tick."""

    rate: float = 0.0
    cpu_seconds: float = 0.0  # CPU-seconds per second = cores

    def add(self, rate: float, service_ms: float) -> None:
        self.rate += rate
        self.cpu_seconds += rate * service_ms / 1000.0


ERROR_CLASSES = {"AuthenticationFailed": "auth", "Unauthorized": "auth", "NOAUTH": "auth", "WRONGPASS": "auth",
                 "OOM": "server_error", "EIO": "server_error"}


@dataclass(frozen=True)
class StoreReply:
    """The data plane's view of an outcome (`dataplane.backends.StoreOutcome` fields):
    `error` is the driver text, `error_class` the retry class."""

    ok: bool
    latency_ms: float
    error: str = ""
    error_class: str = ""
    hit_ratio: float | None = None
    error_ratio: float = 0.0
    code: str = ""


class DataStore:
    """A running store process bound to its state. Subclasses: MongoServer, Memcached, Redis.

    `request(...)` takes keyword arguments and returns a `DbOutcome`, or takes the data plane's
    `StoreRequest` object and returns a `StoreReply` (see `serve`)."""

    kind = "store"

    def __init__(self, twin: Twin, pod: dict[str, Any], container: str, state: Any,
                 config: dict[str, Any]) -> None:
        self.twin = twin
        self.pod = pod
        self.container = container
        self.state = state
        self.config = config

    @property
    def port(self) -> int:
        return int(self.config.get("port", 0))

    @property
    def pod_name(self) -> str:
        return str(get_path(self.pod, "metadata", "name", default=""))

    @property
    def namespace(self) -> str:
        return str(get_path(self.pod, "metadata", "namespace", default="default"))

    def account(self, rate: float, service_ms: float) -> None:
        """Charge served load to this container (CPU usage via the runtime usage hook)."""
        bank_of(self.twin).load_for(self.namespace, self.pod_name, self.container).add(rate, service_ms)

    def io_effect(self, mount_path: str) -> Any:
        """D3's IOChaos on this pod's data volume, or None without chaos."""
        chaos = self.twin.services.chaos
        if chaos is None:
            return None
        try:
            return chaos.io(self.pod, mount_path)
        except Exception:
            return None

    def memory_bytes(self) -> int:
        return 0

    def serve(self, req: Any) -> StoreReply:
        """Answer the data plane's `StoreRequest` (kind, operation, database, collection,
        username, password, auth_source, rate)."""
        out: DbOutcome = self.request(  # type: ignore[attr-defined]
            req.operation, db=getattr(req, "database", "") or "", collection=getattr(req, "collection", "") or "",
            user=getattr(req, "username", None) or None, password=getattr(req, "password", None),
            auth_source=getattr(req, "auth_source", "") or "admin", rate=float(getattr(req, "rate", 0.0) or 0.0))
        return StoreReply(ok=out.ok and out.error_ratio < 0.5, latency_ms=out.service_ms,
                          error=out.message, error_class=ERROR_CLASSES.get(out.error or "", "server_error")
                          if out.error else "", hit_ratio=out.hit_ratio, error_ratio=out.error_ratio,
                          code=out.error or "")


@dataclass
class StateBank:
    """Per-twin store states by volume key, and per-tick load by container."""

    states: dict[str, Any] = field(default_factory=dict)
    loads: dict[tuple[str, str, str], Load] = field(default_factory=dict)
    last_loads: dict[tuple[str, str, str], Load] = field(default_factory=dict)
    instances: dict[tuple[str, str, str], DataStore] = field(default_factory=dict)

    def state(self, key: str, factory: Any) -> Any:
        found = self.states.get(key)
        if found is None:
            found = factory()
            self.states[key] = found
        return found

    def load_for(self, namespace: str, pod: str, container: str) -> Load:
        key = (namespace, pod, container)
        load = self.loads.get(key)
        if load is None:
            load = self.loads[key] = Load()
        return load

    def roll(self) -> None:
        """End of tick: what was served becomes the usage the runtime reports."""
        self.last_loads = self.loads
        self.loads = {}


def bank_of(twin: Twin) -> StateBank:
    bank = twin.services.datastores
    if bank is None:
        bank = twin.services.datastores = StateBank()
    return bank


def volume_key(twin: Twin, pod: dict[str, Any], container: dict[str, Any], mount_path: str,
               instance_id: str) -> str:
    """Where the data under `mount_path` lives: `pv:<name>`, `emptydir:<uid>/<vol>`,
    `hostpath:<node>:<path>`, or `container:<id>` when nothing is mounted there."""
    mounts = {m.get("mountPath", "").rstrip("/"): m.get("name") for m in container.get("volumeMounts") or []}
    volume_name = mounts.get(mount_path.rstrip("/"))
    uid = get_path(pod, "metadata", "uid", default="")
    if volume_name is None:
        return f"container:{instance_id}"
    volume = next((v for v in get_path(pod, "spec", "volumes", default=[]) or []
                   if v.get("name") == volume_name), {})
    claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
    if claim:
        ns = get_path(pod, "metadata", "namespace", default="default")
        pvc = twin.store.peek("PersistentVolumeClaim", ns, claim)
        pv = bound_volume(twin, pvc) if pvc is not None else None
        if pv is not None:
            return f"pv:{pv['metadata']['name']}"
        return f"pvc:{ns}/{claim}"
    host = (volume.get("hostPath") or {}).get("path")
    if host:
        return f"hostpath:{get_path(pod, 'spec', 'nodeName', default='')}:{host}"
    return f"emptydir:{uid}/{volume_name}"


def container_spec(pod: dict[str, Any], name: str) -> dict[str, Any]:
    for c in get_path(pod, "spec", "containers", default=[]) or []:
        if c.get("name") == name:
            return c
    return {}


def flag(argv: list[str], *names: str, default: str | None = None) -> str | None:
    """Value of `--name value`, `--name=value` in argv (last occurrence wins, like the servers)."""
    found = default
    for index, arg in enumerate(argv):
        for name in names:
            if arg == name and index + 1 < len(argv):
                found = argv[index + 1]
            elif arg.startswith(name + "="):
                found = arg[len(name) + 1:]
    return found

def state_key(twin: Twin, pod: dict[str, Any], container: str, mount_path: str, started_at: float) -> str:
    """The key of a container's store state (same from the server program and from clients)."""
    uid = (pod.get("metadata") or {}).get("uid", "")
    return volume_key(twin, pod, container_spec(pod, container), mount_path,
                      f"{uid}/{container}@{started_at:.3f}")
