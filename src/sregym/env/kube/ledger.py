"""What an attempt created on a cluster, recorded as it happens, and its removal.

Every object the admin credential creates (the app's namespaces, a fault's DaemonSet or Chaos
Mesh experiment, the agent's ServiceAccount and RBAC) is appended to a JSON-lines ledger before
the call returns. `cleanup` deletes the recorded objects, newest first (objects inside a recorded
namespace go with it). The conductor runs it when the attempt closes; the command line runs it
again on every ledger left behind by a worker that was killed (Ctrl-C, a watchdog), so nothing
the benchmark created outlives the run. Objects that existed before and were only changed are not
in the ledger: the faults' own `recover` restores those on a normal close.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from sregym.cluster.kube import KubeCluster
from sregym.errors import ApiError


class LedgerCluster(KubeCluster):
    """A `KubeCluster` (admin) that records every object it creates in `ledger`."""

    def __init__(self, kubeconfig: str, *, ledger: Path | None = None, **kw: Any) -> None:
        super().__init__(kubeconfig, **kw)
        self.ledger = ledger
        self.created: list[tuple[str, str | None, str]] = []

    def _record(self, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        if not meta.get("name"):
            return  # a review or another answer-only request: nothing was stored
        key = (str(obj.get("kind")), meta.get("namespace"), str(meta.get("name")))
        if key in self.created:
            return
        self.created.append(key)
        if self.ledger is not None:
            self.ledger.parent.mkdir(parents=True, exist_ok=True)
            with self.ledger.open("a") as fh:
                fh.write(json.dumps({"kind": key[0], "namespace": key[1], "name": key[2]}) + "\n")
                fh.flush()

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        created = super().create(obj)
        self._record(created if created.get("metadata") else obj)
        return created

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        res = self._resource(obj["kind"], obj.get("apiVersion"))
        ns = (meta.get("namespace") or "default") if res.namespaced else None
        existed = self.get(obj["kind"], ns, meta["name"]) is not None
        out = super().apply(obj)
        if not existed:
            self._record({**obj, "metadata": {**meta, "namespace": ns}})
        return out

    def server_side_apply(self, obj: dict[str, Any], *, field_manager: str = "sregym") -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        res = self._resource(obj["kind"], obj.get("apiVersion"))
        ns = (meta.get("namespace") or "default") if res.namespaced else None
        existed = self.get(obj["kind"], ns, meta["name"]) is not None
        out = super().server_side_apply(obj, field_manager=field_manager)
        if not existed:
            self._record({**obj, "metadata": {**meta, "namespace": ns}})
        return out


def read_ledger(path: Path) -> list[tuple[str, str | None, str]]:
    entries = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            item = json.loads(line)
            entries.append((item["kind"], item.get("namespace"), item["name"]))
    return entries


def cleanup(cluster: KubeCluster, created: list[tuple[str, str | None, str]]) -> list[str]:
    """Delete `created` newest first; returns what could not be deleted (already-gone is fine)."""
    namespaces = {name for kind, _, name in created if kind == "Namespace"}
    failed = []
    for kind, namespace, name in reversed(created):
        if namespace in namespaces and kind != "Namespace":
            continue  # deleted with its namespace
        try:
            cluster.delete(kind, namespace, name)
        except ApiError as err:
            if err.code != 404:
                failed.append(f"{kind} {namespace + '/' if namespace else ''}{name}: {err}")
    return failed


def cleanup_ledgers(cluster: KubeCluster, ledger_dir: Path) -> list[str]:
    """Remove what every ledger left in `ledger_dir` recorded, then the ledgers (after a kill)."""
    failed: list[str] = []
    for path in sorted(ledger_dir.glob("*.jsonl")):
        errors = cleanup(cluster, read_ledger(path))
        failed += errors
        if not errors:
            path.unlink(missing_ok=True)
    return failed


__all__ = ["LedgerCluster", "cleanup", "cleanup_ledgers", "read_ledger"]
