"""Mitigation checks for the Hotel Reservation parity problems: an autoscaler that can compute its
metric.

An HPA whose target's pods declare no CPU request cannot turn CPU usage into a utilisation, so it
reports `ScalingActive=False` (`FailedGetResourceMetric: missing request for cpu`) and never
scales. The check asks what an operator would: is there still an autoscaler on the Deployment, and
does it have a valid metric? Any fix that restores that (a CPU request on every container, a
metric the pods can satisfy) passes; deleting the autoscaler does not.
"""

from __future__ import annotations

from typing import Any

from sregym.oracles.checks import CheckContext, check


def _targets(hpa: dict[str, Any], deployment: str) -> bool:
    ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
    return ref.get("kind") == "Deployment" and ref.get("name") == deployment


def _condition(hpa: dict[str, Any], kind: str) -> dict[str, Any]:
    for cond in (hpa.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return cond
    return {}


@check("autoscaler_active")
def autoscaler_active(ctx: CheckContext, *, deployment: str, namespace: str | None = None) -> tuple[bool, str]:
    """A HorizontalPodAutoscaler targets the Deployment and reports `ScalingActive=True` (it
    found a valid metric and can compute a replica count)."""
    ns = namespace or ctx.namespace
    hpas = [h for h in ctx.cluster.list("HorizontalPodAutoscaler", ns) if _targets(h, deployment)]
    if not hpas:
        return False, f"no HorizontalPodAutoscaler targets Deployment {deployment}"
    for hpa in sorted(hpas, key=lambda h: h["metadata"]["name"]):
        cond = _condition(hpa, "ScalingActive")
        if cond.get("status") == "True":
            return True, f"HorizontalPodAutoscaler {hpa['metadata']['name']} is active ({cond.get('reason')})"
    first = _condition(sorted(hpas, key=lambda h: h["metadata"]["name"])[0], "ScalingActive")
    return False, (f"no HorizontalPodAutoscaler of {deployment} is active: "
                   f"{first.get('reason') or 'no ScalingActive condition'} {first.get('message') or ''}").strip()
