"""The Astronomy Shop's failure flags flipped in the `flagd-config` ConfigMap, as an SRE does it on
the demo chart: edit `defaultVariant`, then restart flagd (its init container copies the ConfigMap
into the emptyDir flagd watches). Each flag's symptom shows in PromQL and logs; flipping back
recovers. One shared twin: the tests run in order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sregym.twin import Twin
from sregym.twin.telemetry.promql import Engine
from support.astro_twin import warm_astro_twin

pytestmark = pytest.mark.xdist_group("astro_flag_flagd")

NS = "astronomy-shop"
SERVER_ERRORS = ('sum(rate(traces_span_metrics_calls_total{{service_name="{svc}",span_name="{span}",'
                 'span_kind="SPAN_KIND_SERVER",status_code="STATUS_CODE_ERROR"}}[1m]))')


@pytest.fixture(scope="module")
def shop() -> Twin:
    return warm_astro_twin(seed=7, advance_s=90)


def _flip(twin: Twin, flag: str, variant: str, *, restart: bool = True) -> None:
    cm = twin.get("configmaps", NS, "flagd-config")
    data = json.loads(cm["data"]["demo.flagd.json"])
    data["flags"][flag]["defaultVariant"] = variant
    twin.patch("configmaps", NS, "flagd-config", {"data": {"demo.flagd.json": json.dumps(data, indent=2)}})
    if restart:  # kubectl rollout restart deployment flagd
        twin.patch("deployments", NS, "flagd", {"spec": {"template": {"metadata": {"annotations": {
            "kubectl.kubernetes.io/restartedAt": str(twin.clock.now)}}}}})


def _value(twin: Twin, expr: str) -> float:
    result: Any = Engine(twin.services.tsdb).instant(expr, int(twin.clock.now * 1000))
    return sum(sample.value for sample in result.value)


def _settings(twin: Twin, service: str) -> dict[str, str]:
    procs = twin.services.dataplane.procs.values()
    return next(dict(p.inst.settings) for p in procs if p.inst.spec.trace_name == service)


def _logs(twin: Twin, prefix: str, container: str) -> str:
    """What the pod logged: its stdout and what it sent over OTLP to the log backend (checkout)."""
    from sregym.twin.telemetry.otlp_logs import otlp_logs

    pod = next(p["metadata"]["name"] for p in twin.list("pods", NS) if p["metadata"]["name"].startswith(prefix))
    exported = "".join(r.body + "\n" for res, records in otlp_logs(twin).resources()
                       if res.get("k8s.pod.name") == pod for r in records)
    return twin.logs(NS, pod, container) + exported


def test_a_configmap_edit_alone_does_not_reach_flagd(shop: Twin) -> None:
    """flagd reads the emptyDir copy: without a restart the services keep the old value."""
    _flip(shop, "adFailure", "on", restart=False)
    shop.advance(90)
    assert _settings(shop, "ad")["adFailure"] == "false"
    _flip(shop, "adFailure", "off", restart=False)


FLAGS = [
    ("adFailure", "on", "ad", SERVER_ERRORS.format(svc="ad", span="oteldemo.AdService/GetAds"),
     ("ad-", "ad", "GetAds Failed with status Status{code=UNAVAILABLE")),
    ("paymentFailure", "50%", "payment",
     SERVER_ERRORS.format(svc="payment", span="oteldemo.PaymentService/Charge"),
     ("payment-", "payment", "Payment request failed. Invalid token. app.loyalty.level=gold")),
    ("cartFailure", "on", "cart", SERVER_ERRORS.format(svc="cart", span="oteldemo.CartService/EmptyCart"),
     ("cart-", "cart", "Can't access cart storage.")),
    ("productCatalogFailure", "on", "product-catalog",
     SERVER_ERRORS.format(svc="product-catalog", span="oteldemo.ProductCatalogService/GetProduct"), None),
    ("paymentUnreachable", "on", "checkout",
     SERVER_ERRORS.format(svc="checkout", span="oteldemo.CheckoutService/PlaceOrder"),
     ("checkout-", "checkout", "could not charge the card: ")),
    ("adHighCpu", "on", "ad",
     'sum(rate(container_cpu_usage_seconds_total{namespace="astronomy-shop",container="ad"}[1m])) > 0.25', None),
]


@pytest.mark.parametrize(("flag", "variant", "service", "expr", "log"), FLAGS, ids=[f[0] for f in FLAGS])
def test_flag_symptom_and_recovery(shop: Twin, flag: str, variant: str, service: str, expr: str,
                                   log: tuple[str, str, str] | None) -> None:
    _flip(shop, flag, variant)
    shop.advance(90)  # ad's 1-in-10 failures at ~0.15 GetAds/s log about once a minute
    assert _settings(shop, service)[flag] not in ("false", "0")
    assert _value(shop, expr) > 0
    if log is not None:
        assert log[2] in _logs(shop, log[0], log[1])
    _flip(shop, flag, "off")
    shop.advance(90)
    assert _settings(shop, service)[flag] in ("false", "0")
    assert _value(shop, expr) == 0


def test_flagd_down_falls_back_to_code_defaults(shop: Twin) -> None:
    _flip(shop, "adFailure", "on")
    shop.advance(45)
    assert _settings(shop, "ad")["adFailure"] == "true"
    shop.patch("deployments", NS, "flagd", {"spec": {"replicas": 0}})
    shop.advance(30)
    assert _settings(shop, "ad")["adFailure"] == "false"
    assert "code = Unavailable desc = connection error" in _logs(shop, "ad-", "ad")
    shop.patch("deployments", NS, "flagd", {"spec": {"replicas": 1}})
    _flip(shop, "adFailure", "off", restart=False)
    shop.advance(45)
    assert _settings(shop, "ad")["adFailure"] == "false"
    assert "watching filepath: file:./etc/flagd/demo.flagd.json" in _logs(shop, "flagd-", "flagd")
