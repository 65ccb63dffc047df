"""Conformance fixtures: one warm Hotel Reservation twin per test module, served to real clients.

The conformance tests drive the twin the way SREs and agents do (real kubectl 1.32, the official
Python client, plain HTTP to Prometheus, Loki and Jaeger) and assert what a real 1.32 cluster with
that monitoring stack answers. Deploying and warming the app takes seconds, so a module shares one
cluster: tests that write use their own namespace or names and clean up after themselves.

- `cluster` → a `support.kube.KubeHarness` (see its docstring): Hotel Reservation deployed, its
  load generator declared, five simulated minutes run, Prometheus/Loki/Jaeger served
  (`cluster.observability["prometheus"]` is the base URL);
- `fresh` → a bare twin (no app) served for one test, for checks that need a pristine cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sregym.apps import deploy_app
from sregym.twin import Twin
from support.kube import KubeHarness, serve_twin

WARMUP_SECONDS = 300.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHarness]:
    twin = Twin(seed=11)
    deploy_app(twin, "hotel-reservation")
    harness = serve_twin(twin, tmp_path_factory.mktemp("conformance"), observability=True)
    try:
        harness.advance(WARMUP_SECONDS)
        yield harness
    finally:
        harness.server.stop()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[KubeHarness]:
    harness = serve_twin(Twin(seed=7), tmp_path, observability=True)
    try:
        yield harness
    finally:
        harness.server.stop()
