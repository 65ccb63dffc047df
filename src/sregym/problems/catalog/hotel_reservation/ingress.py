"""Hotel Reservation problems at the entry point: the site's users reach `frontend` through
ingress-nginx (`hotels.example.com`, Ingress `hotel-reservation`), and what breaks is that path.

Each problem's environment (set up before the healthy baseline) installs ingress-nginx, creates
the Ingress (and its TLS Secret) and sends the load generator to the controller's Service with
the site's Host header. The faults are single Kubernetes writes to the Ingress or its Secret;
the symptom is at the entry (nginx's answers and access log), while every app pod stays healthy.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.hotel_reservation import NAMESPACE, PORTS
from sregym.problems.builders import deployment_cause, keep, object_cause
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.twin.dataplane.tls_validity import make_tls_secret
from sregym.types import GroundTruth

APP = "hotel-reservation"
HOST = "hotels.example.com"
INGRESS = "hotel-reservation"
TLS_SECRET = "hotels-example-com-tls"
CONTROLLER = "ingress-nginx-controller.ingress-nginx.svc.cluster.local"
# The frontend's handlers, one Ingress path each (an API gateway's explicit routes).
PATHS = ("/hotels", "/recommendations", "/user", "/reservation")
IMPACT = ("502", "503", "bad gateway", "error", "errors", "fail", "tls", "certificate", "handshake", "outage",
          "unavailable", "cannot", "recommendations")
WINDOW_S = 180.0
YEAR_S = 365 * 86_400.0


def _ingress(tls: bool) -> dict[str, Any]:
    backend = {"service": {"name": "frontend", "port": {"number": PORTS["frontend"]}}}
    spec: dict[str, Any] = {"ingressClassName": "nginx", "rules": [{"host": HOST, "http": {"paths": [
        {"path": path, "pathType": "Prefix", "backend": backend} for path in PATHS]}}]}
    if tls:
        spec["tls"] = [{"hosts": [HOST], "secretName": TLS_SECRET}]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": INGRESS, "namespace": NAMESPACE}, "spec": spec}


def _environment(tls: bool) -> tuple[FaultSpec, ...]:
    certificates = [{"namespace": NAMESPACE, "name": TLS_SECRET, "hosts": [HOST], "not_before_days": -30.0,
                     "not_after_days": 60.0, "serial": 4101}] if tls else []
    return (FaultSpec(fault="serve_through_ingress", params={
        "objects": [_ingress(tls)], "url": f"{'https' if tls else 'http'}://{CONTROLLER}", "host": HOST,
        "certificates": certificates}),)


def _controller() -> Any:
    return deployment_cause("ingress-nginx", "ingress-nginx-controller")


# ------------------------------------------------------------------ 1. misrouted path
@problem
def ingress_misroute() -> Problem:
    """The Ingress in front of the site sends `/recommendations` to the `recommendation` gRPC
    Service (port 8085) instead of `frontend`.

    ingress-nginx reloads with the new rule; from then on every recommendation request is
    proxied as HTTP/1.1 to a gRPC server, which drops it, and nginx answers 502 (its access log
    shows `[hotel-reservation-recommendation-8085]` with status 502). Searches, logins and
    reservations still work, and every pod is Running and Ready. Fix: point the path's backend
    back at `frontend:5000`.
    """
    return Problem(
        id="hotel-reservation/ingress-misroute-v1",
        title="recommendation requests fail at the site's entry point",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",), difficulty="medium", suites=(),
                  sources=("sregym:ingress_misroute",)),
        environment=_environment(tls=False),
        faults=(FaultSpec(fault="set_ingress_backend", params={
            "namespace": NAMESPACE, "ingress": INGRESS, "path": "/recommendations", "service": "recommendation",
            "port": PORTS["recommendation"]}),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(NAMESPACE, "Ingress", INGRESS),), mechanism="ingress_misroute",
            detail="Ingress hotel-reservation routes /recommendations to Service recommendation:8085 instead of "
                   "frontend:5000",
            detail_keywords=("/recommendations", "recommendation", "8085", "backend"),
            affected=(_controller(),), impact_keywords=IMPACT,
            description="Recommendation requests entering through ingress-nginx are proxied to the recommendation "
                        "gRPC Service and fail with 502; the other routes work."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="ingress_routes_to", params={"host": HOST, "paths": list(PATHS),
                                                                    "service": "frontend"}),),
            must_keep=keep(), window_s=WINDOW_S),
        gold=(Action(op="patch", kind="Ingress", namespace=NAMESPACE, name=INGRESS, patch_type="json",
                     patch=[{"op": "replace", "path": "/spec/rules/0/http/paths/1/backend",
                             "value": {"service": {"name": "frontend", "port": {"number": PORTS["frontend"]}}}}]),),
        settle_s=60.0,
    )


# ------------------------------------------------------------------ 2. expired certificate
def _renewed_secret() -> dict[str, Any]:
    """A new certificate for the site, valid for years around the twin's and today's clocks."""
    not_before = 1_735_689_600.0  # 2025-01-01T00:00:00Z
    return make_tls_secret(NAMESPACE, TLS_SECRET, (HOST,), not_before, not_before + 10 * YEAR_S,
                           f"{NAMESPACE}/{TLS_SECRET}/renewed", 4103)


@problem
def expired_ingress_tls() -> Problem:
    """The site's TLS Secret (`hotels-example-com-tls`, named by the Ingress's `tls:` section)
    is overwritten with a certificate whose `notAfter` lies three days in the past.

    ingress-nginx picks the Secret up and serves the expired certificate for
    `hotels.example.com`; every user's client aborts the handshake (Go: `x509: certificate has
    expired or is not yet valid: current time ... is after ...`, curl: `SSL certificate problem:
    certificate has expired`), so no request reaches nginx's access log or the app, and every
    pod stays healthy. Fix: renew the certificate (a new valid tls.crt/tls.key in the Secret);
    the controller reloads it.
    """
    return Problem(
        id="hotel-reservation/expired-ingress-tls-v1",
        title="users cannot connect to the site over HTTPS",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",), difficulty="medium", suites=(),
                  sources=("sregym:expired_tls_hotel_reservation",)),
        environment=_environment(tls=True),
        faults=(FaultSpec(fault="set_tls_certificate", params={
            "namespace": NAMESPACE, "name": TLS_SECRET, "hosts": [HOST], "not_before_days": -368.0,
            "not_after_days": -3.0, "serial": 4102}),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(NAMESPACE, "Secret", TLS_SECRET),), mechanism="certificate_expiry",
            detail="Secret hotels-example-com-tls holds an x509 certificate for hotels.example.com whose notAfter "
                   "is three days in the past",
            detail_keywords=("three days", "x509", "notAfter", "expired", TLS_SECRET),
            affected=(object_cause(NAMESPACE, "Ingress", INGRESS), _controller()), impact_keywords=IMPACT,
            description="Every HTTPS client of hotels.example.com rejects the expired certificate ingress-nginx "
                        "serves, so no request reaches the site."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="ingress_certificate_valid", params={"host": HOST}),),
            must_keep=keep(), window_s=WINDOW_S),
        gold=(Action(op="apply", kind="Secret", namespace=NAMESPACE, name=TLS_SECRET, manifest=_renewed_secret()),),
        settle_s=60.0,
    )


__all__ = ["expired_ingress_tls", "ingress_misroute"]
