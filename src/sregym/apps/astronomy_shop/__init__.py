"""Astronomy Shop (the OpenTelemetry demo, Helm chart 0.40.4 / app 2.2.0) in namespace
`astronomy-shop`: the twin's third app.

`manifests.py` renders the chart's objects from its values (`chart/`), `programs.py` holds each
service's behaviour, `frontend_api.py` the frontend's API bodies (data in `catalogue.py`), `images.py` the images pushed to the twin, `loadgen.py` the demo's Locust
flows, run by the chart's own `load-generator` Deployment (not a hidden one), `kafka_programs.py` checkout's
producer and the `orders` consumers (what their records hold and log: `order_records.py`). Feature-flag semantics
come in a later wave.
"""

from __future__ import annotations

from pathlib import Path

from sregym.apps.astronomy_shop import loadgen, runtime_metrics
from sregym.apps.astronomy_shop.checkout_logs import checkout_lines
from sregym.apps.astronomy_shop.envoy_config import FRONTEND_PROXY
from sregym.apps.astronomy_shop.frontend_api import frontend_page, proxy_page
from sregym.apps.astronomy_shop.images import demo_images
from sregym.apps.astronomy_shop.kafka_programs import TOPIC
from sregym.apps.astronomy_shop.manifests import NAMESPACE, component_port, objects, values
from sregym.apps.astronomy_shop.order_records import (
    accounting_lines,
    accounting_records,
    fraud_detection_lines,
    fraud_detection_records,
)
from sregym.apps.astronomy_shop.programs import PREFIX, astronomy_programs
from sregym.apps.astronomy_shop.site import shop_site
from sregym.apps.catalog import AppSpec, Slo, app
from sregym.twin.dataplane.browser import register_site
from sregym.twin.dataplane.consumer_records import register_record_log
from sregym.twin.dataplane.envoy import register_envoy
from sregym.twin.dataplane.envoy_admin import admin_page
from sregym.twin.dataplane.locust_web import locust_web_page
from sregym.twin.dataplane.pages import register_pages
from sregym.twin.dataplane.port_pages import register_port_handler
from sregym.twin.dataplane.producer_records import register_publish_log
from sregym.twin.telemetry.app_rules import register_app_rules

SERVICES = ("accounting", "ad", "cart", "checkout", "currency", "email", "flagd", "fraud-detection", "frontend",
            "frontend-proxy", "image-provider", "kafka", "llm", "payment", "postgresql", "product-catalog",
            "product-reviews", "quote", "recommendation", "shipping", "valkey-cart")
PORTS = {name: component_port(name) for name in (*SERVICES, "load-generator")
         if name not in ("accounting", "fraud-detection")}
DESCRIPTION = (
    "The Astronomy Shop is the OpenTelemetry demo: an online telescope shop of polyglot microservices. "
    "Users reach `frontend-proxy` (Envoy, port 8080), which routes `/` to the Next.js `frontend`, "
    "`/images/` to `image-provider` and `/flagservice/` to `flagd` (feature flags from the "
    "`flagd-config` ConfigMap, key `demo.flagd.json`). The frontend calls `ad`, `cart` (carts in "
    "`valkey-cart`), `checkout`, `currency`, `product-catalog` (PostgreSQL), `product-reviews` "
    "(PostgreSQL and `llm`), `recommendation` and `shipping` (which prices via `quote`). `checkout` "
    "places orders through cart, product-catalog, currency, shipping, `payment` and `email`, and "
    "publishes them to Kafka (`kafka:9092`), consumed by `accounting` and `fraud-detection`. "
    "Services find each other through `*_ADDR` env vars and export telemetry to `otel-collector`."
)
RULES = Path(__file__).with_name("rules") / "astronomy-shop.yaml"
BASELINE = {name: 1 for name in (*SERVICES, "jaeger", "load-generator")}
WORKLOAD = loadgen.workload(f"http://frontend-proxy.{NAMESPACE}.svc.cluster.local:{PORTS['frontend-proxy']}")


@app
def astronomy_shop() -> AppSpec:
    register_pages(PREFIX + "frontend", frontend_page)  # the Next.js API routes' bodies
    register_pages(PREFIX + "frontend-proxy", proxy_page)
    register_envoy(PREFIX + "frontend-proxy", FRONTEND_PROXY)  # its router, access log and stats (envoy.py)
    register_port_handler(PREFIX + "frontend-proxy:admin", admin_page)  # ENVOY_ADMIN_PORT
    register_port_handler("locust-web", locust_web_page)  # load-generator's web UI API on LOCUST_WEB_PORT
    register_site(PREFIX + "frontend-proxy", shop_site)  # what the browser users' pages fetch
    # what each consumer prints and exports per record
    register_record_log(PREFIX + "accounting", "accounting", accounting_lines, accounting_records)
    register_record_log(PREFIX + "fraud-detection", "fraud-detection", fraud_detection_lines, fraud_detection_records)
    register_publish_log(PREFIX + "checkout", "kafka", TOPIC, checkout_lines)  # its OTLP lines per order
    runtime_metrics.register(PREFIX)  # what each service's runtime instrumentation pushes
    register_app_rules(NAMESPACE, RULES)  # the alerts this app's operators run
    # No hidden generator: the chart's load-generator Deployment runs these flows (loadgen.py).
    return AppSpec(name="astronomy-shop", namespace=NAMESPACE, description=DESCRIPTION, objects_fn=objects,
                   entry_service="frontend-proxy", entry_port=PORTS["frontend-proxy"],
                   load_generators=(f"Deployment/{NAMESPACE}/load-generator",),
                   slo=Slo(success_ratio=0.99, p95_latency_ms=1000.0, window_s=60.0, entry_service="frontend-proxy"),
                   baseline=BASELINE, ports=PORTS, images=demo_images(), programs=astronomy_programs)


__all__ = ["BASELINE", "DESCRIPTION", "NAMESPACE", "PORTS", "SERVICES", "WORKLOAD", "astronomy_shop", "values"]
