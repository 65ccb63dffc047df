"""A throwaway certificate authority and serving certificate for the twin's API server.

kubectl (client-go) only sends bearer tokens over TLS, so the twin serves HTTPS. Each server gets
a fresh CA (named like kind's `kubernetes` CA) and a serving certificate for the loopback names;
the kubeconfig carries the CA as `certificate-authority-data`, so clients verify the server
exactly as they would a real cluster. Keys are P-256 (fast to generate) and never leave the
server's temporary directory. Certificates do not influence the simulation, so they need not
be deterministic.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_HOSTS = ("127.0.0.1", "::1", "localhost", "kubernetes", "kubernetes.default",
                 "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")


@dataclass(frozen=True)
class ServingCert:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes
    directory: Path

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def cert_file(self) -> Path:
        return self.directory / "apiserver.crt"

    @property
    def key_file(self) -> Path:
        return self.directory / "apiserver.key"

    def client_context(self) -> ssl.SSLContext:
        """An SSL context that trusts this server (for httpx and other Python clients)."""
        return ssl.create_default_context(cadata=self.ca_pem.decode())


def generate(hosts: tuple[str, ...] = DEFAULT_HOSTS, directory: str | Path | None = None,
             *, valid_days: int = 365) -> ServingCert:
    """Create a CA and a serving certificate for `hosts`, written as PEM files to `directory`
    (a new temporary directory by default)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)  # wall time: certificates only
    until = now + dt.timedelta(days=valid_days)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")])
    ca_cert = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now).not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True,
                                     key_cert_sign=True, crl_sign=True, content_commitment=False,
                                     data_encipherment=False, key_agreement=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(until)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    target = Path(directory) if directory is not None else Path(tempfile.mkdtemp(prefix="sregym-tls-"))
    target.mkdir(parents=True, exist_ok=True)
    serving = ServingCert(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()),
        directory=target,
    )
    serving.ca_file.write_bytes(serving.ca_pem)
    serving.cert_file.write_bytes(serving.cert_pem)
    serving.key_file.write_bytes(serving.key_pem)
    serving.key_file.chmod(0o600)
    return serving


__all__ = ["DEFAULT_HOSTS", "ServingCert", "generate"]
