"""TLS verification of a webhook backend against the webhook's `clientConfig.caBundle`.

The API server dials a webhook over HTTPS and trusts only the CAs in `caBundle`. When a webhook's
serving certificate is rotated (or its CA is) without updating the configuration, every call
fails the handshake and, with `failurePolicy: Fail`, every matching write is rejected while the
webhook pods look perfectly healthy. The twin reads the certificate the serving container
actually presents (the `tls.crt` of a Secret mounted into it, as cert-manager and most webhook
charts do) and verifies it the way Go's crypto/x509 does: validity window, host name against the
SANs, then a chain to one of the bundle's CAs. Errors carry Go's wording.

A configuration without `caBundle`, or a backend that mounts no certificate, is not verified
(the twin's built-in webhook images predate this check).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

_MAX_CHAIN = 4


def _secret_data(twin: Twin, namespace: str, name: str) -> dict[str, str]:
    secret = twin.store.peek("Secret", namespace, name) or {}
    out = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            out[key] = base64.b64decode(value).decode()
        except (ValueError, UnicodeDecodeError):
            continue
    out.update(secret.get("stringData") or {})
    return out


def served_certificate(twin: Twin, pod: dict[str, Any], container: dict[str, Any]) -> str | None:
    """The PEM chain `container` serves: `tls.crt` of the first Secret volume it mounts that has one."""
    namespace = pod["metadata"].get("namespace", "")
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name")) or {}
        secret = volume.get("secret")
        if not secret:
            continue
        data = _secret_data(twin, namespace, secret.get("secretName", ""))
        if data.get("tls.crt"):
            return data["tls.crt"]
    return None


def _go_time(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _issued_by(cert: Any, issuer: Any) -> bool:
    try:
        cert.verify_directly_issued_by(issuer)
    except Exception:
        return False
    return True


def _chains_to(leaf: Any, intermediates: list[Any], roots: list[Any]) -> bool:
    frontier = [leaf]
    for _ in range(_MAX_CHAIN):
        nxt = []
        for cert in frontier:
            if any(cert == root or _issued_by(cert, root) for root in roots):
                return True
            nxt.extend(i for i in intermediates if i != cert and _issued_by(cert, i))
        if not nxt:
            return False
        frontier = nxt
    return False


def verify(ca_bundle: str, served_pem: str, host: str, now: float) -> str | None:
    """Why a client trusting `ca_bundle` (base64 PEM, as stored) refuses `served_pem` for `host`
    at `now` (epoch seconds) -- the text after `Post "...": ` -- or None when it is trusted."""
    from cryptography import x509

    try:
        bundle = base64.b64decode(ca_bundle, validate=False)
        roots = x509.load_pem_x509_certificates(bundle)
    except (ValueError, binascii.Error):
        return "unable to load root certificates: unable to parse bytes as PEM block"
    try:
        chain = x509.load_pem_x509_certificates(served_pem.encode())
    except ValueError:
        return "remote error: tls: internal error"
    leaf, intermediates = chain[0], chain[1:]
    prefix = "tls: failed to verify certificate: x509: "
    moment = dt.datetime.fromtimestamp(now, tz=dt.UTC)
    if moment > leaf.not_valid_after_utc:
        return (f"{prefix}certificate has expired or is not yet valid: current time {_go_time(moment)} "
                f"is after {_go_time(leaf.not_valid_after_utc)}")
    if moment < leaf.not_valid_before_utc:
        return (f"{prefix}certificate has expired or is not yet valid: current time {_go_time(moment)} "
                f"is before {_go_time(leaf.not_valid_before_utc)}")
    try:
        names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value \
            .get_values_for_type(x509.DNSName)
    except x509.ExtensionNotFound:
        names = []
    if not names:
        return f"{prefix}certificate relies on legacy Common Name field, use SANs instead"
    if host.lower() not in (n.lower() for n in names):
        return f"{prefix}certificate is valid for {', '.join(names)}, not {host}"
    if not _chains_to(leaf, intermediates, roots):
        return f"{prefix}certificate signed by unknown authority"
    return None
