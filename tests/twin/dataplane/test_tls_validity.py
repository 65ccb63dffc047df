"""x509 validity against a given clock: before notBefore, inside the window, after notAfter, with
the real Go and curl error texts; deterministic certificates; the certificate served per SNI."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from cryptography import x509

from sregym.twin.dataplane.tls_validity import (
    CURL_EXPIRED,
    CURL_NOT_YET,
    check_validity,
    make_certificate,
    make_tls_secret,
    secret_certificate,
    served_certificate,
)

START = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
END = datetime(2026, 1, 31, tzinfo=UTC).timestamp()


def _pem(seed: str = "s", serial: int = 7) -> str:
    return make_certificate("hotels.example.com", ("hotels.example.com",), START, END, seed, serial)[0]


def test_valid_inside_the_window_and_on_its_edges() -> None:
    for now in (START, START + 86_400, END):
        result = check_validity(_pem(), now)
        assert result.ok and result.reason == "" and result.not_after == END


def test_after_not_after_is_expired_with_gos_and_curls_messages() -> None:
    now = datetime(2026, 2, 3, 9, 30, tzinfo=UTC).timestamp()
    result = check_validity(_pem(), now)
    assert not result.ok and result.reason == "expired"
    assert result.go_error == ("x509: certificate has expired or is not yet valid: current time "
                               "2026-02-03T09:30:00Z is after 2026-01-31T00:00:00Z")
    assert result.curl_error == CURL_EXPIRED == "SSL certificate problem: certificate has expired"
    assert not check_validity(_pem(), END + 1).ok  # one second past notAfter


def test_before_not_before_is_not_yet_valid() -> None:
    result = check_validity(_pem(), START - 60)
    assert not result.ok and result.reason == "not_yet_valid" and result.curl_error == CURL_NOT_YET
    assert "current time 2025-12-31T23:59:00Z is before 2026-01-01T00:00:00Z" in result.go_error


def test_garbage_is_not_a_certificate() -> None:
    assert check_validity("not a pem", START).reason == "unparsable"


def test_certificates_are_deterministic_and_say_what_they_are() -> None:
    assert _pem() == _pem()
    assert _pem("other") != _pem()
    cert = x509.load_pem_x509_certificate(_pem().encode())
    assert cert.serial_number == 7
    assert cert.not_valid_after_utc.timestamp() == END
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["hotels.example.com"]


def test_a_tls_secret_has_the_kubernetes_shape_and_round_trips() -> None:
    secret = make_tls_secret("ns", "site-tls", ("hotels.example.com",), START, END, "s", 7)
    assert secret["type"] == "kubernetes.io/tls" and set(secret["data"]) == {"tls.crt", "tls.key"}
    assert base64.b64decode(secret["data"]["tls.key"]).startswith(b"-----BEGIN PRIVATE KEY-----")
    assert secret_certificate(secret) == _pem()
    assert secret_certificate({"data": {}}) is None


def test_the_certificate_served_follows_sni() -> None:
    certs = {"hotels.example.com": "exact", "*.example.com": "wild", "": "default"}
    assert served_certificate(certs, "hotels.example.com") == "exact"
    assert served_certificate(certs, "api.example.com") == "wild"
    assert served_certificate(certs, "a.b.example.com") == "default"  # a wildcard covers one label
    assert served_certificate(certs, "other.org") == "default"
    assert served_certificate({}, "hotels.example.com") is None
