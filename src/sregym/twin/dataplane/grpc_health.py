"""What a program's grpc.health.v1 `Check` answers right now: SERVING, or NOT_SERVING while one of
its settings says the health check fails (the Astronomy Shop cart's `failedReadinessProbe`).

Why a module: the demo's cart registers a health check (`readinessCheck`) that evaluates the flag
on every `Check` and reports Unhealthy ("connection failed") while it is on, which its
`HealthServiceImpl` turns into NOT_SERVING. A kubelet gRPC probe that reaches it then fails with
the kubelet's wording (`service unhealthy (responded with "NOT_SERVING")`, pkg/probe/grpc), the
pod goes NotReady and leaves the Service's endpoints. The chart itself declares no probe on cart:
only a probe someone adds (or any other health client) sees the answer.
"""

from __future__ import annotations

from typing import Any

from sregym.twin.dataplane.codepaths import CodePath

SERVING = "SERVING"
NOT_SERVING = "NOT_SERVING"


def health_status(spec: Any, settings: dict[str, str]) -> str:
    """The status a program's health service reports under its current settings."""
    when = getattr(spec, "not_serving_when", "")
    if when and CodePath(when=when).factor(settings) > 0:
        return NOT_SERVING
    return SERVING


def probe_status(engine: Any, ip: str, port: int) -> str | None:
    """The status of the program serving ip:port, or None when no program serves it."""
    proc = engine.proc_at(ip, port)
    if proc is None:
        return None
    return health_status(proc.inst.spec, proc.inst.settings)


__all__ = ["NOT_SERVING", "SERVING", "health_status", "probe_status"]
