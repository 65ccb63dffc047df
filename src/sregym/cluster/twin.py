"""`TwinCluster`: the `Cluster` protocol over an in-process `Twin`.

Writes go through the twin's store with the same admission chain the API server uses, and with
the agent credential they are authorised by the same RBAC table (`twin.machinery.authz`), so an
in-process run and a run over the wire accept and refuse exactly the same operations. Time is the
twin's simulated clock: `advance()` steps the controllers.
"""

from __future__ import annotations

import hashlib
import struct
from typing import TYPE_CHECKING, Any

from sregym.cluster.base import ADMIN, EntryStats, ExecResult, ProbeResult
from sregym.errors import BadRequest, Forbidden, NotFound
from sregym.twin.machinery.objects import clone

if TYPE_CHECKING:
    from sregym.twin.machinery.kinds import ResourceKind
    from sregym.twin.twin import Twin


class TwinCluster:
    """A twin seen through one credential (`admin` by default)."""

    def __init__(self, twin: Twin, user: str = ADMIN) -> None:
        self.twin = twin
        self.user = user

    @classmethod
    def new(cls, seed: int = 0) -> TwinCluster:
        from sregym.twin.twin import Twin

        return cls(Twin(seed=seed))

    def as_user(self, user: str) -> TwinCluster:
        return TwinCluster(self.twin, user)

    # ------------------------------------------------------------------ authz
    def _kind(self, kind: str) -> ResourceKind:
        return self.twin.store.kind(kind)

    def _authorize(self, verb: str, k: ResourceKind, namespace: str | None, name: str | None = None,
                   subresource: str | None = None) -> None:
        if self.user == ADMIN:
            return
        from sregym.twin.machinery.authz import authorize, forbidden_message

        ns = namespace if k.namespaced else None
        allowed, _ = authorize(self.user, verb, k.group, k.plural, ns, name, subresource)
        if not allowed:
            raise Forbidden(forbidden_message(self.user, verb, k.group, k.plural, ns, name, subresource))

    def _visible(self, k: ResourceKind, obj: dict[str, Any]) -> bool:
        if self.user == ADMIN:
            return True
        from sregym.twin.machinery.authz import is_hidden

        meta = obj.get("metadata") or {}
        return not is_hidden(self.user, k.group, meta.get("namespace"), k.plural, meta.get("name"))

    # ---------------------------------------------------------------- objects
    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        k = self._kind(kind)
        ns = namespace if k.namespaced else None
        self._authorize("get", k, ns, name)
        return self.twin.store.try_get(k, ns, name)

    def list(self, kind: str, namespace: str | None = None, *,
             label_selector: str | None = None) -> list[dict[str, Any]]:
        k = self._kind(kind)
        ns = namespace if k.namespaced else None
        self._authorize("list", k, ns)
        items = self.twin.store.list(k, ns, label_selector, None)
        return [o for o in items if self._visible(k, o)]

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        k = self.twin.store.kind_of(obj)
        meta = obj.get("metadata") or {}
        self._authorize("create", k, meta.get("namespace") or "default", meta.get("name"))
        return self.twin.store.create(clone(obj), user=self.user)

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create, or replace spec/data of an existing object (status and identity kept)."""
        k = self.twin.store.kind_of(obj)
        meta = obj.get("metadata") or {}
        ns = (meta.get("namespace") or "default") if k.namespaced else None
        existing = self.twin.store.peek(k, ns, meta.get("name", ""))
        self._authorize("create" if existing is None else "update", k, ns, meta.get("name"))
        return self.twin.apply(clone(obj), user=self.user)[0]

    def replace(self, obj: dict[str, Any]) -> dict[str, Any]:
        k = self.twin.store.kind_of(obj)
        meta = obj.get("metadata") or {}
        self._authorize("update", k, meta.get("namespace"), meta.get("name"))
        return self.twin.store.update(clone(obj), user=self.user)

    def patch(self, kind: str, namespace: str | None, name: str, patch: Any, *,
              patch_type: str = "strategic") -> dict[str, Any]:
        k = self._kind(kind)
        ns = namespace if k.namespaced else None
        self._authorize("patch", k, ns, name)
        return self.twin.patch(k, ns, name, patch, patch_type=patch_type, user=self.user)  # type: ignore[arg-type]

    def delete(self, kind: str, namespace: str | None, name: str, *,
               grace_period: int | None = None) -> None:
        k = self._kind(kind)
        ns = namespace if k.namespaced else None
        self._authorize("delete", k, ns, name)
        self.twin.store.delete(k, ns, name, grace_period=grace_period, user=self.user)

    # ------------------------------------------------------------- containers
    def exec(self, namespace: str, pod: str, command: list[str], *,
             container: str | None = None) -> ExecResult:
        from sregym.twin.userland.context import exec_context, executable_exists, run_exec
        from sregym.twin.userland.exec_target import container_running, exec_start_error, resolve_container

        k = self._kind("Pod")
        self._authorize("create", k, namespace, pod, "exec")
        obj = self.twin.store.peek("Pod", namespace, pod)
        if obj is None:
            raise NotFound(f'pods "{pod}" not found')
        name = resolve_container(obj, pod, container or "")
        if not container_running(obj, name):
            raise BadRequest(f'unable to upgrade connection: container not found ("{name}")')
        ctx = exec_context(self.twin, obj, name)
        if not executable_exists(ctx, command[0]):
            return ExecResult("", exec_start_error(self.twin, obj, name, command[0]), 126)
        result = run_exec(ctx, list(command))
        return ExecResult(result.stdout, result.stderr, result.exit_code)

    def logs(self, namespace: str, pod: str, container: str | None = None, *,
             tail: int | None = None) -> str:
        self._authorize("get", self._kind("Pod"), namespace, pod, "log")
        return self.twin.logs(namespace, pod, container, tail=tail)

    # ------------------------------------------------------------------ time
    def advance(self, seconds: float) -> None:
        self.twin.advance(seconds)

    def now(self) -> float:
        return float(self.twin.clock.now)

    # ------------------------------------------------------------ observation
    def connect(self, namespace: str, host: str, port: int) -> ProbeResult:
        """A TCP connect from a throwaway client in `namespace`, through the twin's data plane
        (DNS from that namespace's view, Service, endpoints, NetworkPolicy, chaos, listener)."""
        dataplane = self.twin.services.dataplane
        if dataplane is None:
            from sregym.twin.dataplane.connect import router_of

            dataplane = router_of(self.twin)
        fqdn = host if "." in host else f"{host}.{namespace}.svc.cluster.local"
        result = dataplane.connect(None, fqdn, int(port))
        dst = result.dst_pod or {}
        meta = dst.get("metadata") or {}
        name = f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("name") else ""
        return ProbeResult(ok=bool(result.ok), error=result.error, message=result.message, dst_pod=name)

    def entry_stats(self, window_s: float) -> EntryStats | None:
        dataplane = self.twin.services.dataplane
        if dataplane is None or not hasattr(dataplane, "entry_stats"):
            return None
        stats = dataplane.entry_stats(window_s)
        if stats is None:
            return None
        if isinstance(stats, dict):
            return EntryStats(float(stats.get("requests", 0.0)), float(stats.get("success_ratio", 1.0)),
                              float(stats.get("p95_ms", stats.get("p95_latency_ms", 0.0))))
        return EntryStats(float(getattr(stats, "requests", 0.0)), float(stats.success_ratio),
                          float(getattr(stats, "p95_ms", getattr(stats, "p95_latency_ms", 0.0))))

    def entry_stats_between(self, start: float, end: float) -> EntryStats | None:
        """Entry statistics over the simulated interval (start, end] (twin only; None without a
        data plane). For the after-the-fact SLO record of an attempt (`env.slo_series`)."""
        dataplane = self.twin.services.dataplane
        if dataplane is None or not hasattr(dataplane, "entry_stats_between"):
            return None
        stats = dataplane.entry_stats_between(start, end)
        return EntryStats(float(stats.requests), float(stats.success_ratio), float(stats.p95_ms))

    def promql(self, query: str) -> list[dict[str, Any]]:
        """An instant query at the current simulated time, as the HTTP API's `result` list."""
        tsdb = self.twin.services.tsdb
        if tsdb is None:
            return []
        from sregym.twin.telemetry.promql import Engine

        result = Engine(tsdb).instant(query, int(self.twin.clock.now * 1000))
        data = result.to_api()
        return list(data.get("result", [])) if isinstance(data.get("result"), list) else [data]

    # ------------------------------------------------------------- twin-only
    def fingerprint(self) -> str:
        """A digest of everything observable: objects, events, logs and TSDB samples. Equal
        fingerprints mean two runs were identical."""
        digest = hashlib.sha256(self.twin.dump().encode())
        logs = self.twin.services.logs
        if logs is not None:
            for container_id, _labels in sorted(logs.instances(), key=lambda i: i[0]):
                for line in logs.lines(container_id):
                    digest.update(repr(line).encode())
        tsdb = self.twin.services.tsdb
        if tsdb is not None and hasattr(tsdb, "all_series"):
            # Every sample, exactly (the bits of each value), series in label order.
            for series in sorted(tsdb.all_series(), key=lambda s: sorted(s.labels.items())):
                digest.update(repr(sorted(series.labels.items())).encode())
                digest.update(struct.pack(f"<{len(series.timestamps)}q", *series.timestamps))
                digest.update(struct.pack(f"<{len(series.values)}d", *series.values))
        return digest.hexdigest()
