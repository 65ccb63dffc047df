"""Valkey (the demo's valkey-cart): the Redis model under Valkey's banner and INFO fields."""

from __future__ import annotations

import pytest

import sregym.twin.userland  # noqa: F401 - registers valkey-cli
from sregym.twin.twin import Twin
from sregym.twin.userland.context import exec_context, run_exec

MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: valkey-cart, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: valkey-cart}}
  template:
    metadata: {labels: {app: valkey-cart}}
    spec:
      containers:
      - {name: valkey-cart, image: "valkey/valkey:8.1.3-alpine", ports: [{containerPort: 6379}]}
"""


@pytest.fixture(scope="module")
def twin() -> Twin:
    twin = Twin(seed=2)
    twin.apply(MANIFEST)
    twin.advance(10)
    return twin


def _run(twin: Twin, *argv: str) -> str:
    pod = next(p for p in twin.list("pods", "default") if p["metadata"]["name"].startswith("valkey-cart-"))
    result = run_exec(exec_context(twin, pod, "valkey-cart"), list(argv))
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_info_server_names_valkey_and_keeps_the_redis_version(twin: Twin) -> None:
    lines = _run(twin, "valkey-cli", "INFO", "server").split("\r\n")
    assert lines[:4] == ["# Server", "redis_version:7.2.4", "server_name:valkey", "valkey_version:8.1.3"]
    assert "tcp_port:6379" in lines
    # `INFO` with no section starts with the server section, then memory with the eviction policy.
    everything = _run(twin, "redis-cli", "INFO")
    assert everything.startswith("# Server\r\n") and "\r\nmaxmemory_policy:noeviction\r\n" in everything


def test_banner_and_eviction_policy(twin: Twin) -> None:
    pod = next(p for p in twin.list("pods", "default") if p["metadata"]["name"].startswith("valkey-cart-"))
    logs = twin.logs("default", pod["metadata"]["name"], "valkey-cart")
    assert "* oO0OoO0OoO0Oo Valkey is starting oO0OoO0OoO0Oo" in logs
    assert "* Valkey version=8.1.3, bits=64," in logs
    assert _run(twin, "valkey-cli", "CONFIG", "SET", "maxmemory-policy", "allkeys-lru") == "OK\n"
    assert _run(twin, "valkey-cli", "CONFIG", "GET", "maxmemory-policy") == "maxmemory-policy\nallkeys-lru\n"
