"""Mitigation checks for the Hotel Reservation parity problems: an autoscaler that can compute its
metric.

An HPA whose target's pods declare no CPU request cannot turn CPU usage into a utilisation, so it
reports `ScalingActive=False` (`FailedGetResourceMetric: missing request for cpu`) and never
scales. The checks ask what an operator would: does every autoscaler of the Deployment have a valid
metric (`autoscaler_active`, the must_fix), and is the autoscaler still there (`autoscaler_kept`,
a must_keep)? Any fix that restores a metric (a CPU request on every container, a metric the pods
can satisfy) passes; deleting the autoscaler does not.
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


def _autoscalers(ctx: CheckContext, deployment: str, namespace: str | None) -> list[dict[str, Any]]:
    ns = namespace or ctx.namespace
    hpas = [h for h in ctx.cluster.list("HorizontalPodAutoscaler", ns) if _targets(h, deployment)]
    return sorted(hpas, key=lambda h: h["metadata"]["name"])


@check("autoscaler_active")
def autoscaler_active(ctx: CheckContext, *, deployment: str, namespace: str | None = None) -> tuple[bool, str]:
    """Every HorizontalPodAutoscaler that targets the Deployment reports `ScalingActive=True` (it
    found a valid metric and can compute a replica count). With no autoscaler there is nothing
    broken to report; `autoscaler_kept` is the must_keep that forbids deleting it as a fix."""
    inactive = []
    for hpa in _autoscalers(ctx, deployment, namespace):
        cond = _condition(hpa, "ScalingActive")
        if cond.get("status") != "True":
            inactive.append(f"{hpa['metadata']['name']}: {cond.get('reason') or 'no ScalingActive condition'} "
                            f"{cond.get('message') or ''}".strip())
    if inactive:
        return False, f"inactive HorizontalPodAutoscaler of {deployment}: " + "; ".join(inactive)
    return True, f"every HorizontalPodAutoscaler of {deployment} is active"


@check("autoscaler_kept")
def autoscaler_kept(ctx: CheckContext, *, deployment: str, namespace: str | None = None) -> tuple[bool, str]:
    """At least one HorizontalPodAutoscaler still targets the Deployment: removing the autoscaler
    hides its error but is not a fix."""
    hpas = _autoscalers(ctx, deployment, namespace)
    if not hpas:
        return False, f"no HorizontalPodAutoscaler targets Deployment {deployment}"
    return True, f"HorizontalPodAutoscaler {hpas[0]['metadata']['name']} targets {deployment}"
