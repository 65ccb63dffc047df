"""Checks for what users reach through an Ingress: the rules send a path to the right Service,
and the certificate served for a host is within its validity window.

Both are semantic, read through the cluster API: any fix that gets there passes (patching the
path back, recreating the Ingress, a new certificate in the same or another Secret the Ingress
names), and deleting the Ingress or its `tls:` section never does.
"""

from __future__ import annotations

from sregym.oracles.checks import CheckContext, check
from sregym.twin.dataplane import ingress_routes
from sregym.twin.dataplane.tls_validity import check_validity, secret_certificate

DAY_S = 86_400.0


def _ingresses(ctx: CheckContext, namespace: str) -> list[dict]:
    classes = ctx.cluster.list("IngressClass", None)
    return [i for i in ctx.cluster.list("Ingress", namespace) if ingress_routes.of_class(i, classes)]


@check("ingress_routes_to")
def ingress_routes_to(ctx: CheckContext, *, host: str, paths: tuple[str, ...] | list[str], service: str,
                      namespace: str | None = None) -> tuple[bool, str]:
    """Every one of `paths` on `host` is routed by the Ingresses of class nginx to `service`,
    which has ready endpoints."""
    ns = namespace or ctx.namespace
    ingresses = _ingresses(ctx, ns)
    for path in paths:
        backend = ingress_routes.route(ingresses, host, path)
        if backend is None:
            return False, f"no Ingress rule routes {host}{path}: nginx answers 404"
        if backend.service != service:
            return False, f"{host}{path} is routed to Service {backend.service} by Ingress {backend.ingress}, " \
                          f"not to {service}"
    endpoints = ctx.cluster.get("Endpoints", ns, service) or {}
    if not any(s.get("addresses") for s in endpoints.get("subsets") or []):
        return False, f"Service {service} has no ready endpoints"
    return True, f"{len(paths)} path(s) of {host} are routed to {service}"


@check("ingress_certificate_valid")
def ingress_certificate_valid(ctx: CheckContext, *, host: str, namespace: str | None = None,
                              min_days: float = 1.0) -> tuple[bool, str]:
    """The Secret an Ingress names for `host` holds a certificate valid now and for at least
    `min_days` more."""
    ns = namespace or ctx.namespace
    ref = ingress_routes.tls_secret_for(_ingresses(ctx, ns), host)
    if ref is None:
        return False, f"no Ingress terminates TLS for {host}"
    pem = secret_certificate(ctx.cluster.get("Secret", ref[0], ref[1]))
    if pem is None:
        return False, f"Secret {ref[0]}/{ref[1]} holds no tls.crt"
    now = ctx.cluster.now()
    validity = check_validity(pem, now)
    if not validity.ok:
        return False, f"the certificate in Secret {ref[1]} is not valid: {validity.go_error}"
    if validity.not_after - now < min_days * DAY_S:
        return False, f"the certificate in Secret {ref[1]} expires in less than {min_days:g} day(s)"
    return True, f"Secret {ref[1]} holds a certificate for {host} valid until {validity.not_after:.0f}"


__all__ = ["ingress_certificate_valid", "ingress_routes_to"]
