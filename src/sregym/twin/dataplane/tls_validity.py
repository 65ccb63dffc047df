"""x509 validity as TLS clients check it, against the clock of the node the client runs on.

A server in the twin presents the certificate of a `kubernetes.io/tls` Secret (`tls.crt`, PEM).
A client verifying it compares its own clock (`client_clock.client_now`: the twin's simulated
"now" plus its node's offset, so a worker whose clock moved sees valid certificates expire)
with the leaf's `notBefore` / `notAfter`, the way Go's `crypto/x509` and OpenSSL do, and fails with their real messages:

* Go:   `x509: certificate has expired or is not yet valid: current time 2026-01-05T09:00:00Z is
  after 2025-12-31T00:00:00Z`
* curl: `SSL certificate problem: certificate has expired` (or `... is not yet valid`)

Certificates are made here too (`make_tls_secret_data`), deterministically: the key is Ed25519
derived from a seed string (Ed25519 signatures are deterministic as well), the serial and the
validity window come from the caller (the seed stream and the twin's clock), so the same seed
gives byte-identical PEM. Anything in the twin that terminates TLS can reuse `check_validity`.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

GO_EXPIRED = "x509: certificate has expired or is not yet valid: current time {now} is after {not_after}"
GO_NOT_YET = "x509: certificate has expired or is not yet valid: current time {now} is before {not_before}"
CURL_EXPIRED = "SSL certificate problem: certificate has expired"
CURL_NOT_YET = "SSL certificate problem: certificate is not yet valid"


@dataclass(frozen=True)
class Validity:
    """The outcome of checking one certificate at one moment."""

    ok: bool
    reason: str = ""  # "", "expired", "not_yet_valid", "unparsable"
    go_error: str = ""
    curl_error: str = ""
    not_before: float = 0.0
    not_after: float = 0.0


def _rfc3339(at: float) -> str:
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_certificate(pem: str | bytes) -> Any:
    """The leaf certificate of a PEM bundle (the first block), or None when it does not parse."""
    from cryptography import x509

    data = pem.encode() if isinstance(pem, str) else pem
    try:
        return x509.load_pem_x509_certificate(data)
    except ValueError:
        return None


def check_validity(pem: str | bytes, now: float) -> Validity:
    """Is the leaf certificate in `pem` valid at `now` (seconds since the epoch)?"""
    cert = load_certificate(pem)
    if cert is None:
        return Validity(False, "unparsable", "x509: malformed certificate",
                        "SSL certificate problem: unable to get local issuer certificate")
    before = cert.not_valid_before_utc.timestamp()
    after = cert.not_valid_after_utc.timestamp()
    if now > after:
        return Validity(False, "expired", GO_EXPIRED.format(now=_rfc3339(now), not_after=_rfc3339(after)),
                        CURL_EXPIRED, before, after)
    if now < before:
        return Validity(False, "not_yet_valid", GO_NOT_YET.format(now=_rfc3339(now), not_before=_rfc3339(before)),
                        CURL_NOT_YET, before, after)
    return Validity(True, not_before=before, not_after=after)


def secret_certificate(secret: dict[str, Any] | None) -> str | None:
    """The PEM in a TLS Secret's `tls.crt` (data is base64 as the API stores it), or None."""
    data = (secret or {}).get("data") or {}
    encoded = data.get("tls.crt")
    if not encoded:
        return None
    try:
        return base64.b64decode(encoded).decode()
    except (ValueError, UnicodeDecodeError):
        return None


def served_certificate(certificates: dict[str, str], server_name: str) -> str | None:
    """The PEM a TLS server with `certificates` (SNI host -> PEM, "" the default) presents."""
    if server_name in certificates:
        return certificates[server_name]
    for host, pem in sorted(certificates.items()):
        if host.startswith("*.") and server_name.endswith(host[1:]) and "." not in server_name[: -len(host) + 1]:
            return pem
    return certificates.get("")


def handshake(leg: Any, proc: Any, workload: Any, now: float) -> tuple[Any, Any]:
    """A workload's TLS handshake on an established leg: the leg and process unchanged when the
    client accepts the certificate (or does not verify), else a failed leg (no process) whose
    message is the Go client's x509 error."""
    if not workload.verify_tls or proc.inst.tls_port != leg.result.target_port:
        return leg, proc
    pem = served_certificate(proc.inst.certificates, workload.server_name)
    if pem is None:
        return leg, proc
    validity = check_validity(pem, now)
    if validity.ok:
        return leg, proc
    failed = replace(leg.result, ok=False, error="tls", stage="tls",
                     message=f"Get \"https://{workload.server_name}/\": tls: failed to verify certificate: "
                             f"{validity.go_error}")
    return replace(leg, result=failed), None


def make_certificate(common_name: str, hosts: tuple[str, ...], not_before: float, not_after: float,
                     seed: str, serial: int) -> tuple[str, str]:
    """(certificate PEM, private key PEM): a self-signed Ed25519 certificate for `hosts`, the same
    bytes for the same arguments."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.x509.oid import NameOID

    key = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed.encode()).digest())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (x509.CertificateBuilder()
            .subject_name(name).issuer_name(name)
            .public_key(key.public_key())
            .serial_number(max(1, serial))
            .not_valid_before(datetime.fromtimestamp(not_before, tz=UTC))
            .not_valid_after(datetime.fromtimestamp(not_after, tz=UTC))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(key, None))
    cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    return cert_pem, key_pem


def make_tls_secret(namespace: str, name: str, hosts: tuple[str, ...], not_before: float, not_after: float,
                    seed: str, serial: int) -> dict[str, Any]:
    """A `kubernetes.io/tls` Secret holding a certificate for `hosts` valid in [not_before, not_after]."""
    cert_pem, key_pem = make_certificate(hosts[0], hosts, not_before, not_after, seed, serial)
    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
            "metadata": {"name": name, "namespace": namespace},
            "data": {"tls.crt": base64.b64encode(cert_pem.encode()).decode(),
                     "tls.key": base64.b64encode(key_pem.encode()).decode()}}


__all__ = ["CURL_EXPIRED", "CURL_NOT_YET", "Validity", "check_validity", "handshake", "load_certificate", "make_certificate",
           "make_tls_secret", "secret_certificate", "served_certificate"]
