"""`KubeTarget`: where `--backend kube` runs — a kubeconfig (and context) plus the URLs of the
cluster's Prometheus, Loki and Jaeger — and the admin `KubeCluster` built from it.

It travels as plain JSON inside `AttemptConfig.kube` (so worker processes and `run.json` carry it);
`ledger_dir` is where each attempt records what it creates, so whoever survives an interrupt can
remove it (`env/kube/ledger.py`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ClusterNotReady(RuntimeError):
    """The cluster cannot run this attempt (unreachable, a permission or a CRD missing, an
    observability URL not answering, the app not becoming ready): an environment failure."""


@dataclass(frozen=True)
class KubeTarget:
    """A cluster reached by kubeconfig, and its observability endpoints."""

    kubeconfig: str
    context: str | None = None
    prometheus_url: str = ""
    loki_url: str = ""
    jaeger_url: str = ""
    speed: float = 1.0
    """The cluster clock's rate against the wall (1 on a real cluster; N for `twin up --speed N`)."""
    ledger_dir: str = ""
    ready_timeout_s: float = 600.0
    """Seconds (on the cluster's clock) the app may take to become ready after install."""

    def __post_init__(self) -> None:
        if not self.kubeconfig:
            raise ValueError("--backend kube needs --kubeconfig")
        if not self.prometheus_url:
            raise ValueError("--backend kube needs --prometheus-url (the oracles query it)")
        if self.speed <= 0:
            raise ValueError("the cluster speed must be positive")

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KubeTarget:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    @property
    def urls(self) -> dict[str, str]:
        """The query APIs the agent's tools use, by name (only those given)."""
        return {name: url.rstrip("/") for name, url in (("prometheus", self.prometheus_url),
                                                        ("loki", self.loki_url),
                                                        ("jaeger", self.jaeger_url)) if url}

    def ledger_path(self, key: str) -> Path | None:
        if not self.ledger_dir:
            return None
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)
        return Path(self.ledger_dir) / f"{safe}.jsonl"

    def admin_cluster(self, ledger: Path | None = None) -> Any:
        """The admin credential as a `Cluster` (recording what it creates in `ledger`)."""
        from sregym.env.kube.ledger import LedgerCluster

        return LedgerCluster(str(Path(self.kubeconfig).expanduser()), context=self.context,
                             prometheus_url=self.prometheus_url, speed=self.speed, ledger=ledger)


__all__ = ["ClusterNotReady", "KubeTarget"]
