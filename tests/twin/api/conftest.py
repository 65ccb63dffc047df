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

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sregym.twin import Twin
from sregym.twin.api.kubeconfig import context_name, make_tokens, token_for, write_kubeconfig
from sregym.twin.api.serve import TwinServer

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


class KubeHarness:
    """A served twin plus the client helpers tests need."""

    def __init__(self, twin: Twin, server: TwinServer, kubeconfig: Path, cache_dir: Path) -> None:
        self.twin = twin
        self.server = server
        self.kubeconfig = kubeconfig
        self.cache_dir = cache_dir
        self.tokens = server.tokens

    @property
    def url(self) -> str:
        return self.server.url

    def token(self, user: str = "agent") -> str:
        return token_for(self.tokens, user)

    def advance(self, seconds: float) -> None:
        self.server.advance(seconds)

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.server.call(fn, *args)

    def kubectl(self, *args: str, user: str = "agent", input: str | None = None,
                env: dict[str, str] | None = None, check: bool = False,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(self.cache_dir)}
        full_env.pop("KUBERNETES_SERVICE_HOST", None)
        if env:
            full_env.update(env)
        cmd = [KUBECTL, "--context", context_name(user), "--cache-dir", str(self.cache_dir / "cache"),
               *args]
        result = subprocess.run(cmd, input=input, capture_output=True, text=True, env=full_env,
                                timeout=timeout, check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n"
                                 f"{result.stderr}{result.stdout}")
        return result

    def ok(self, *args: str, **kw: Any) -> str:
        return self.kubectl(*args, check=True, **kw).stdout

    def client(self, user: str = "agent") -> Any:
        from kubernetes import client

        config = client.Configuration()
        config.host = self.url
        config.api_key = {"authorization": self.token(user)}
        config.api_key_prefix = {"authorization": "Bearer"}
        config.ssl_ca_cert = str(self.server.tls.ca_file) if self.server.tls else None
        return client.ApiClient(config)


@pytest.fixture
def kube(tmp_path: Path) -> Iterator[KubeHarness]:
    twin = Twin(seed=7)
    tokens = make_tokens()
    server = TwinServer(twin, tokens=tokens, port=0, speed=0,
                        shutdown_grace=0.2).start_in_thread()
    assert server.tls is not None
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url, tokens,
                                  ca_pem=server.tls.ca_pem)
    harness = KubeHarness(twin, server, kubeconfig, tmp_path)
    try:
        yield harness
    finally:
        server.stop()


@pytest.fixture
def kubectl(kube: KubeHarness) -> Callable[..., subprocess.CompletedProcess[str]]:
    return kube.kubectl


@pytest.fixture
def advance(kube: KubeHarness) -> Callable[[float], None]:
    return kube.advance
