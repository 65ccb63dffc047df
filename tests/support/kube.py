"""A twin served on a loopback port, driven by real clients: the harness API and conformance tests share.

`KubeHarness` wraps a running `TwinServer` and a kubeconfig with both credentials:

- `kubectl(*args, user="agent", input=None, env=None, check=False, timeout=60)` → the
  `subprocess.CompletedProcess` (text) of the real kubectl binary against the twin;
  `ok(*args, ...)` does the same, asserts exit 0 and returns stdout;
- `advance(seconds)` steps the twin on the server's loop (watch streams see every tick);
  `with ticking(step):` keeps stepping it in the background while a command waits;
- `call(fn, *args)` runs any twin access on the server's loop (never touch `twin` from the test
  thread while requests may be in flight);
- `client(user="agent")` → an official `kubernetes.client.ApiClient`;
- `url`, `kubeconfig` (path), `tokens`, `token(user)`; `observability` maps "prometheus", "loki",
  "jaeger" to their base URLs when the server serves them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sregym.twin import Twin
from sregym.twin.api.kubeconfig import context_name, make_tokens, token_for, write_kubeconfig
from sregym.twin.api.serve import TwinServer
from sregym.twin.api.wall_time import WallAnchor

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
    def observability(self) -> dict[str, str]:
        return self.server.observability_urls()

    @property
    def url(self) -> str:
        return self.server.url

    def token(self, user: str = "agent") -> str:
        return token_for(self.tokens, user)

    def advance(self, seconds: float) -> None:
        self.server.advance(seconds)

    @contextmanager
    def ticking(self, step: float = 1.0) -> Iterator[None]:
        """Advance simulated time by `step` every 50 ms while a command waits on it (a pod
        starting, `kubectl run --rm` waiting for Running)."""
        stop = threading.Event()

        def run() -> None:
            while not stop.is_set():
                self.advance(step)
                time.sleep(0.05)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

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


def serve_twin(twin: Twin, directory: Path, *, observability: bool = False,
               wall: WallAnchor | None = None) -> KubeHarness:
    """Serve `twin` in manual clock mode on free loopback ports and write a kubeconfig in `directory`;
    the caller stops it with `harness.server.stop()`. Timestamps are presented on the machine's
    clock (the server's default wall anchor) unless `wall` says otherwise: `WallAnchor.fixed()`
    serves simulated time as stored, for tests that assert exact timestamps."""
    tokens = make_tokens()
    ports = {"prometheus": 0, "loki": 0, "jaeger": 0} if observability else None
    server = TwinServer(twin, tokens=tokens, port=0, speed=0, shutdown_grace=0.2,
                        observability_ports=ports, wall=wall).start_in_thread()
    assert server.tls is not None
    kubeconfig = write_kubeconfig(directory / "kubeconfig", server.url, tokens,
                                  ca_pem=server.tls.ca_pem)
    return KubeHarness(twin, server, kubeconfig, directory)
