"""The conformance cluster itself: the app is up and every wire API answers."""

from __future__ import annotations

import json
import urllib.request

from support.kube import KubeHarness


def test_hotel_reservation_pods_run(cluster: KubeHarness) -> None:
    out = cluster.ok("get", "pods", "-n", "hotel-reservation", "--no-headers")
    statuses = [line.split()[2] for line in out.splitlines()]
    assert statuses and all(s == "Running" for s in statuses), out


def test_observability_apis_answer(cluster: KubeHarness) -> None:
    urls = cluster.observability
    with urllib.request.urlopen(urls["prometheus"] + "/api/v1/query?query=up", timeout=30) as resp:
        assert json.load(resp)["status"] == "success"
    with urllib.request.urlopen(urls["loki"] + "/ready", timeout=30) as resp:
        assert resp.status == 200
    with urllib.request.urlopen(urls["jaeger"] + "/api/services", timeout=30) as resp:
        assert "frontend" in json.load(resp)["data"]
