"""Astronomy Shop services that log over OTLP: their records are in the log backend (Loki, with the
resource labels Loki's OTLP ingestion makes) and not in `kubectl logs`; Envoy's access log goes
through its OpenTelemetry access logger while its own startup lines stay on stdout; checkout's
per-order records name the order the consumers log; the Kafka pod is Alpine with bash."""

from __future__ import annotations

import re
from typing import Any

import pytest
from starlette.testclient import TestClient

from sregym.apps import deploy_app
from sregym.apps.astronomy_shop.log_channels import LOG_SINKS
from sregym.twin import Twin
from sregym.twin.api.kubeconfig import make_tokens, token_for
from sregym.twin.api.loki import create_loki_app
from sregym.twin.userland.context import exec_context, run_exec

pytestmark = pytest.mark.xdist_group("astro_otlp_logs")  # one twin shared read-only
NS = "astronomy-shop"
TOKENS = make_tokens()
ADMIN = {"Authorization": f"Bearer {token_for(TOKENS, 'admin')}"}


@pytest.fixture(scope="module")
def shop() -> tuple[Twin, TestClient]:
    twin = Twin(seed=11)
    deploy_app(twin, NS)
    twin.advance(100)
    return twin, TestClient(create_loki_app(twin, tokens=TOKENS))


def _pod(twin: Twin, prefix: str) -> dict[str, Any]:
    return next(p for p in twin.store.scan("Pod", NS) if p["metadata"]["name"].startswith(prefix + "-"))


def _query(client: TestClient, twin: Twin, query: str, since_s: float = 100.0) -> list[dict[str, Any]]:
    params = {"query": query, "start": str(int((twin.clock.now - since_s) * 1e9)),
              "end": str(int((twin.clock.now + 1) * 1e9)), "limit": "5000"}
    response = client.get("/loki/api/v1/query_range", params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    return response.json()["data"]["result"]


def test_envoy_access_log_is_in_the_backend_not_in_kubectl_logs(shop: tuple[Twin, TestClient]) -> None:
    twin, client = shop
    pod = _pod(twin, "frontend-proxy")["metadata"]["name"]
    # each record's attributes are structured metadata (one response stream per distinct set, as
    # Loki 3 answers): keep the stream labels to see the pod's one stream
    streams = _query(client, twin, '{service_name="frontend-proxy"} |= "HTTP/1.1" | keep k8s_pod_name, '
                                   'k8s_namespace_name, k8s_deployment_name, service_namespace, service_name')
    assert len(streams) == 1
    labels = streams[0]["stream"]
    assert labels["k8s_pod_name"] == pod and labels["k8s_namespace_name"] == NS
    assert labels["k8s_deployment_name"] == "frontend-proxy" and labels["service_namespace"] == "otel-demo"
    lines = [line for _ts, line in streams[0]["values"]]
    assert len(lines) > 20 and re.match(r'\[\d{4}-\d\d-\d\dT[\d:.]+Z\] "GET /', lines[-1])
    stdout = twin.logs(NS, pod, "frontend-proxy")
    assert "HTTP/1.1" not in stdout
    # Envoy's own log: `[%Y-%m-%d %T.%e][%t][%l][%n] %v`
    assert re.search(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\]\[1\]\[info\]\[main\] "
                     r"\[source/server/server\.cc:\d+\] starting main dispatch loop$", stdout, re.M)


def test_envoy_records_carry_the_template_attributes(shop: tuple[Twin, TestClient]) -> None:
    from sregym.twin.telemetry.otlp_logs import otlp_logs

    twin, _client = shop
    records = [r for res, recs in otlp_logs(twin).resources() if res["service.name"] == "frontend-proxy" for r in recs]
    attributes = dict(records[-1].attributes)
    assert attributes["event.name"] == "proxy.access" and attributes["upstream.cluster"] == "frontend"
    assert attributes["url.full"].startswith("http://frontend-proxy:8080/")
    assert attributes["server.address"].endswith(":8080")


def test_checkout_orders_are_records_naming_the_consumed_order(shop: tuple[Twin, TestClient]) -> None:
    from sregym.twin.telemetry.otlp_logs import otlp_logs

    twin, client = shop
    pod = _pod(twin, "checkout")["metadata"]["name"]
    assert twin.logs(NS, pod, "checkout") == ""  # slog → otelslog: nothing on stdout
    placed = [r for res, recs in otlp_logs(twin).resources() if res["k8s.pod.name"] == pod for r in recs
              if r.body == "order placed"]
    assert placed and placed[-1].severity_text == "INFO" and placed[-1].severity_number == 9
    attributes = dict(placed[0].attributes)
    assert set(attributes) == {"app.order.id", "app.shipping.amount", "app.order.amount", "app.order.items.count",
                               "app.shipping.tracking.id"}
    accounting = twin.logs(NS, _pod(twin, "accounting")["metadata"]["name"], "accounting")
    assert f'Order details: {{ "orderId": "{attributes["app.order.id"]}", "shippingTrackingId": ' \
           f'"{attributes["app.shipping.tracking.id"]}"' in accounting
    bodies = [line for s in _query(client, twin, '{service_name="checkout"}') for _ts, line in s["values"]]
    assert "order placed" in bodies and "sending to postProcessor" in bodies
    assert any(line.startswith('starting to listen on tcp: "[::]:') for line in bodies)


@pytest.mark.parametrize("service", ["shipping", "currency", "quote", "product-catalog", "accounting", "frontend"])
def test_each_service_logs_on_its_channel(shop: tuple[Twin, TestClient], service: str) -> None:
    twin, client = shop
    sinks = LOG_SINKS.get(service, "stdout")
    exported = [line for s in _query(client, twin, f'{{service_name="{service}"}}', since_s=200)
                for _ts, line in s["values"]]
    printed = twin.logs(NS, _pod(twin, service)["metadata"]["name"], service)
    assert bool(exported) == (sinks in ("otlp", "both"))
    assert bool(printed.strip()) == (sinks in ("stdout", "both"))


def _exec(twin: Twin, *argv: str) -> Any:
    return run_exec(exec_context(twin, _pod(twin, "kafka"), "kafka"), list(argv))


def test_kafka_image_is_alpine_with_bash(shop: tuple[Twin, TestClient]) -> None:
    twin, _client = shop
    assert 'PRETTY_NAME="Alpine Linux v3.21"' in _exec(twin, "cat", "/etc/os-release").stdout
    assert _exec(twin, "cat", "/etc/alpine-release").exit_code == 0
    assert _exec(twin, "sh", "-c", "echo $0").stdout == "sh\n"
    banner = _exec(twin, "busybox")
    assert banner.exit_code == 0 and banner.stdout.startswith("BusyBox v1.")
    assert _exec(twin, "busybox", "echo", "hi").stdout == "hi\n"
    bash = _exec(twin, "bash", "--version")
    assert bash.exit_code == 0 and bash.stdout.startswith("GNU bash, version 5.2.37(1)-release "
                                                          "(x86_64-alpine-linux-musl)\n")
    assert _exec(twin, "which", "bash").stdout == "/bin/bash\n"


def test_snapshot_rows_carry_the_records_back_to_the_backend(shop: tuple[Twin, TestClient], tmp_path: Any) -> None:
    from sregym.snapshot import layout
    from sregym.snapshot.collect import log_rows
    from sregym.snapshot.replay_load import SnapshotRuntime, _load_logs
    from sregym.snapshot.tsv import write_tsv
    from sregym.twin.telemetry.logindex import LogIndex
    from sregym.twin.telemetry.tsdb import TSDB

    twin, _client = shop
    rows = log_rows(twin, 0, twin.clock.now)
    placed = [r for r in rows if r[1] == "otlp" and r[4] == "checkout" and r[-1] == "order placed"]
    assert placed and placed[0][3].startswith("checkout-")
    write_tsv(tmp_path / layout.LOGS_TSV, layout.LOG_COLUMNS, rows)
    replay = Twin(seed=11)
    _load_logs(replay, SnapshotRuntime(TSDB(), twin.clock.now), tmp_path)
    streams = {labels["k8s_pod_name"]: entries() for labels, entries in LogIndex(replay).streams(lambda _l: True)
               if labels.get("service_name") == "checkout"}
    assert [line for _ts, line in streams[placed[0][3]]].count("order placed") == len(placed)
