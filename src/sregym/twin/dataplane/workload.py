"""The open-loop load generator: request rates per entry operation, bursts, run-time multipliers.

Like wrk2, the generator sends at a fixed rate whatever the latency (open loop), so an overloaded
system sees the same offered load and queues build up instead of the load backing off. A workload
targets a URL as a client would (through DNS and the Service), optionally from a client pod (the
load generator Deployment: no traffic while it is not running), with a request mix, scheduled
bursts, and multipliers set at run time by tests and fault injectors
(`dataplane.set_load(app, x)`, `dataplane.burst(app, x, seconds)`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from sregym.twin.machinery.selectors import selector_from_map

if TYPE_CHECKING:
    from sregym.twin.twin import Twin


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RequestMix(_Frozen):
    """One kind of request in the mix: the entry program's operation (HTTP path or gRPC method)."""

    operation: str
    method: str = "GET"
    weight: float = Field(1.0, gt=0.0)


class Burst(_Frozen):
    at_s: float  # seconds after the workload started
    seconds: float
    multiplier: float


class WorkloadSpec(_Frozen):
    name: str  # usually the app name; `set_load`/`burst` address it
    target: str  # "http://frontend.hotel-reservation.svc.cluster.local:5000"
    rps: float
    mix: tuple[RequestMix, ...]
    timeout_ms: float = 10_000.0  # the client gives up after this (counted as an error)
    source_namespace: str | None = None  # the load-generator pod, if traffic comes from one
    source_labels: dict[str, str] = Field(default_factory=dict)
    bursts: tuple[Burst, ...] = ()
    host_header: str = ""  # `-H "Host: ..."`: the name routed on and sent as SNI (default: the URL's host)
    verify_tls: bool = True  # an https client that checks the server's certificate (tls_validity.py)

    @property
    def server_name(self) -> str:
        """The host the client asks for (Host header and TLS SNI)."""
        return self.host_header or self.host_port[0]

    @property
    def scheme(self) -> str:
        return urlsplit(self.target if "://" in self.target else "http://" + self.target).scheme

    @property
    def host_port(self) -> tuple[str, int]:
        parts = urlsplit(self.target if "://" in self.target else "http://" + self.target)
        default = 443 if parts.scheme == "https" else 80
        return parts.hostname or "", parts.port or default


@dataclass
class Workload:
    spec: WorkloadSpec
    started_at: float
    multiplier: float = 1.0
    bursts: list[tuple[float, float, float]] = field(default_factory=list)  # (start, end, multiplier)

    def rate(self, now: float) -> float:
        factor = self.multiplier
        elapsed = now - self.started_at
        for burst in self.spec.bursts:
            if burst.at_s <= elapsed < burst.at_s + burst.seconds:
                factor *= burst.multiplier
        for start, end, mult in self.bursts:
            if start <= now < end:
                factor *= mult
        return self.spec.rps * factor

    def source_pod(self, twin: Twin) -> tuple[bool, dict[str, Any] | None]:
        """(traffic flows, client pod). External traffic has no pod; a configured load
        generator must have a running, ready pod."""
        if self.spec.source_namespace is None:
            return True, None
        selector = selector_from_map(self.spec.source_labels)
        for pod in twin.store.scan("Pod", self.spec.source_namespace):
            if selector.matches(pod["metadata"].get("labels")) and \
                    (pod.get("status") or {}).get("phase") == "Running" and \
                    not pod["metadata"].get("deletionTimestamp"):
                return True, pod
        return False, None


__all__ = ["Burst", "RequestMix", "Workload", "WorkloadSpec"]
