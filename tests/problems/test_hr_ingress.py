"""The Hotel Reservation problems at the ingress: registration, the new mechanisms read from an
engineer's words, and the two checks against the fault and its fix (the full check protocol of
each problem runs with the registry-wide tests; the data plane's side is in
tests/twin/test_ingress_nginx.py)."""

from __future__ import annotations

from sregym.oracles.checks_ingress import ingress_certificate_valid, ingress_routes_to
from sregym.oracles.mechanisms import RELATED, classify
from sregym.problems.catalog.hotel_reservation.ingress import HOST, PATHS
from sregym.problems.registry import PROBLEMS
from support.problem_runs import deployed

MISROUTE = "hotel-reservation/ingress-misroute-v1"
EXPIRED = "hotel-reservation/expired-ingress-tls-v1"


def test_registered_with_their_sources_and_environment() -> None:
    for pid, mechanism, source in ((MISROUTE, "ingress_misroute", "sregym:ingress_misroute"),
                                   (EXPIRED, "certificate_expiry", "sregym:expired_tls_hotel_reservation")):
        problem = PROBLEMS.get(pid)
        assert problem.ground_truth.mechanism == mechanism and problem.tags.sources == (source,)
        assert [spec.fault for spec in problem.environment] == ["serve_through_ingress"]
        assert problem.card and problem.settle_s <= 60 and problem.mitigation.window_s <= 180


def test_mechanisms_read_from_an_engineers_words() -> None:
    assert "ingress_misroute" in classify("the ingress path /recommendations points at the wrong backend")
    assert "certificate_expiry" in classify("the TLS secret holds an expired certificate (notAfter is past)")
    assert "certificate_expiry" in RELATED["clock_skew"] and "clock_skew" in RELATED["certificate_expiry"]


def test_route_check_fails_on_the_misroute_and_passes_after_the_fix() -> None:
    cluster, run = deployed(MISROUTE)
    ctx = run.check_context()
    assert ingress_routes_to(ctx, host=HOST, paths=PATHS, service="frontend")[0]
    run.inject()
    ok, detail = ingress_routes_to(ctx, host=HOST, paths=PATHS, service="frontend")
    assert not ok and "/recommendations is routed to Service recommendation" in detail
    run.apply_gold()
    assert ingress_routes_to(ctx, host=HOST, paths=PATHS, service="frontend")[0]
    cluster.delete("Ingress", "hotel-reservation", "hotel-reservation")  # removing the rules is no fix
    assert "nginx answers 404" in ingress_routes_to(ctx, host=HOST, paths=PATHS, service="frontend")[1]


def test_certificate_check_fails_on_the_expired_secret_and_passes_after_renewal() -> None:
    _cluster, run = deployed(EXPIRED)
    ctx = run.check_context()
    assert ingress_certificate_valid(ctx, host=HOST)[0]
    run.inject()
    ok, detail = ingress_certificate_valid(ctx, host=HOST)
    assert not ok and "x509: certificate has expired or is not yet valid: current time" in detail
    run.recover()
    assert ingress_certificate_valid(ctx, host=HOST)[0]
    run.inject()
    run.apply_gold()
    assert ingress_certificate_valid(ctx, host=HOST)[0]
