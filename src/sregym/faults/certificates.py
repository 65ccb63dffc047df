"""Deterministic X.509 material (a CA and the serving certificates it signs) for objects that
faults and problems write: TLS Secrets mounted by webhook servers, `caBundle` fields.

The same label always yields byte-identical PEM, so a problem's objects (and everything the
agent sees) are the same for the same seed. Keys are Ed25519 derived from the label (Ed25519
signatures are deterministic) and the validity window is fixed, so nothing depends on the wall
clock. Real clients (Go's crypto/x509, OpenSSL) accept these certificates, so the same objects
work unchanged on a real cluster.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from dataclasses import dataclass
from functools import lru_cache

NOT_BEFORE = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
NOT_AFTER = dt.datetime(2035, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class CertificateAuthority:
    """A CA: its PEM certificate and the label its key is derived from."""

    label: str
    common_name: str
    cert_pem: bytes

    @property
    def bundle(self) -> str:
        """The CA as a `caBundle` value (base64 of the PEM)."""
        return base64.b64encode(self.cert_pem).decode()


@dataclass(frozen=True)
class ServingCertificate:
    cert_pem: bytes
    key_pem: bytes

    def secret(self, name: str, namespace: str) -> dict[str, object]:
        """A `kubernetes.io/tls` Secret holding this certificate and its key."""
        return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                "metadata": {"name": name, "namespace": namespace},
                "data": {"tls.crt": base64.b64encode(self.cert_pem).decode(),
                         "tls.key": base64.b64encode(self.key_pem).decode()}}


def _key(label: str):
    from cryptography.hazmat.primitives.asymmetric import ed25519

    seed = hashlib.sha256(f"sregym-x509-key:{label}".encode()).digest()
    return ed25519.Ed25519PrivateKey.from_private_bytes(seed)


def _serial(label: str) -> int:
    return int.from_bytes(hashlib.sha256(f"sregym-x509-serial:{label}".encode()).digest()[:16], "big") >> 1


@lru_cache(maxsize=64)
def certificate_authority(label: str, common_name: str) -> CertificateAuthority:
    """A self-signed CA named `common_name`; `label` picks its key (two labels, two CAs)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.x509.oid import NameOID

    key = _key(f"ca:{label}")
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(_serial(f"ca:{label}"))
        .not_valid_before(NOT_BEFORE).not_valid_after(NOT_AFTER)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, key_cert_sign=True,
                                     crl_sign=True, content_commitment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False),
                       critical=True)
        .sign(key, None)
    )
    return CertificateAuthority(label, common_name, cert.public_bytes(serialization.Encoding.PEM))


@lru_cache(maxsize=64)
def serving_certificate(ca: CertificateAuthority, dns_names: tuple[str, ...], *,
                        not_after: dt.datetime = NOT_AFTER) -> ServingCertificate:
    """A server certificate for `dns_names` (first one is the common name), signed by `ca`."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    label = f"leaf:{ca.label}:{','.join(dns_names)}"
    key = _key(label)
    issuer = x509.load_pem_x509_certificate(ca.cert_pem).subject
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_names[0])]))
        .issuer_name(issuer).public_key(key.public_key()).serial_number(_serial(label))
        .not_valid_before(NOT_BEFORE).not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in dns_names]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(_key(f"ca:{ca.label}"), None)
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return ServingCertificate(cert.public_bytes(serialization.Encoding.PEM), key_pem)


def service_dns_names(service: str, namespace: str) -> tuple[str, ...]:
    """The names a webhook serving certificate for a Service is issued for."""
    return (f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local")
