"""A twin served to one agent: the API server and query APIs, a kubeconfig holding only the
agent's token, the real kubectl and an HTTP client with the same credential.

Both places that put an agent in front of a twin need exactly this — the conductor (a live
attempt) and the snapshot replay (a frozen cluster) — so it lives once, here.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sregym.tools.session import QueryApi

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

OBSERVABILITY_PORTS = {"prometheus": 0, "loki": 0, "jaeger": 0}


class AgentAccess:
    """Serves `twin` on loopback ports and prepares the agent's credentials in a temporary
    directory. `server_tokens` are all tokens the server accepts (token → user); the kubeconfig
    and the HTTP client only ever hold `agent_token`."""

    def __init__(self, twin: Twin, *, server_tokens: dict[str, str], agent_token: str, speed: float,
                 namespace: str, prefix: str, fixed_time: bool = False) -> None:
        """Timestamps are presented on the machine's clock (`twin/api/wall_time.py`), or as
        simulated time unchanged with `fixed_time` (a frozen snapshot)."""
        import httpx

        from sregym.tools.kubectl import KubectlRunner, require_kubectl
        from sregym.twin.api.kubeconfig import write_kubeconfig
        from sregym.twin.api.serve import TwinServer
        from sregym.twin.api.wall_time import WallAnchor

        require_kubectl()
        self.token = agent_token
        self.server: Any = None
        self.http: Any = None
        self.urls: dict[str, str] = {}
        self.workdir: Path | None = None
        self.kubectl: Any = None
        try:
            self.server = TwinServer(twin, tokens=server_tokens, port=0, speed=speed, shutdown_grace=0.2,
                                     observability_ports=dict(OBSERVABILITY_PORTS),
                                     wall=WallAnchor.fixed() if fixed_time else None)
            self.server.start_in_thread()
            self.urls = self.server.observability_urls()
            self.workdir = Path(tempfile.mkdtemp(prefix=prefix))
            self.home.mkdir()
            kubeconfig = write_kubeconfig(self.workdir / "kubeconfig", self.server.url, {agent_token: "agent"},
                                          ca_pem=self.server.tls.ca_pem, namespace=namespace)
            self.kubectl = KubectlRunner(kubeconfig=kubeconfig, home=self.home)
            self.http = httpx.Client(headers={"Authorization": f"Bearer {agent_token}"}, timeout=60.0)
        except BaseException:
            self.close()
            raise

    @property
    def home(self) -> Path:
        """The agent's HOME (kubectl's cache, files the gold commands write)."""
        assert self.workdir is not None
        return self.workdir / "home"

    def present(self, sim_s: float) -> float:
        """A simulated instant as the agent's clients see it (the server's wall anchor)."""
        return self.server.wall.present(sim_s) if self.server is not None else sim_s

    def query(self, api: QueryApi, path: str, params: list[tuple[str, str]]) -> tuple[int, Any]:
        """GET one of the query APIs with the agent's token: (status, JSON body)."""
        if self.http is None or api not in self.urls:
            return 503, {"error": f"the {api} API is not available"}
        response = self.http.get(self.urls[api] + path, params=params)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, {"error": response.text[:500]}

    def stop(self) -> None:
        """Stop serving (idempotent); the temporary files stay until `close()`."""
        if self.http is not None:
            with contextlib.suppress(Exception):
                self.http.close()
            self.http = None
        if self.server is not None:
            with contextlib.suppress(Exception):
                self.server.stop()
            self.server = None

    def close(self) -> None:
        """Stop serving and remove the temporary files (idempotent)."""
        self.stop()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None


__all__ = ["AgentAccess"]
