"""Fixtures for API server tests: a twin served on a free loopback port, driven by real clients.

`kube` starts a fresh twin (seed 7) in manual clock mode behind the real API server on a
background thread and writes a kubeconfig with both credentials. Tests use:

- `kube.kubectl(*args, user="agent", input=None, env=None, check=False, timeout=60)` → the
  `subprocess.CompletedProcess` (text) of the real kubectl binary against the twin;
  `kube.ok(*args, ...)` does the same, asserts exit 0 and returns stdout;
- `kube.advance(seconds)` steps the twin on the server's loop (watch streams see every tick);
- `kube.call(fn, *args)` runs any twin access on the server's loop (never touch `kube.twin`
  from the test thread while requests may be in flight);
- `kube.client(user="agent")` → an official `kubernetes.client.ApiClient`;
- `kube.url`, `kube.kubeconfig` (path), `kube.tokens`, `kube.token(user)`.

Fixtures `kubectl` and `advance` are shortcuts to `kube.kubectl` and `kube.advance`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sregym.twin import Twin
from sregym.twin.api.wall_time import WallAnchor
from support.kube import KubeHarness, serve_twin


@pytest.fixture
def kube(tmp_path: Path) -> Iterator[KubeHarness]:
    # These tests assert exact simulated timestamps (2026-01-05T09:00:30Z): the fixed anchor serves
    # them as stored; tests/conformance/test_time.py covers the machine's clock.
    harness = serve_twin(Twin(seed=7), tmp_path, wall=WallAnchor.fixed())
    try:
        yield harness
    finally:
        harness.server.stop()


@pytest.fixture
def kubectl(kube: KubeHarness) -> Callable[..., subprocess.CompletedProcess[str]]:
    return kube.kubectl


@pytest.fixture
def advance(kube: KubeHarness) -> Callable[[float], None]:
    return kube.advance
