"""A cluster handed to one agent: the kubeconfig with only the agent's ServiceAccount token, the
real kubectl, and an HTTP client for the cluster's Prometheus, Loki and Jaeger.

A kind of `env/agent_access.AgentAccess` (which serves an in-process twin): it keeps that class's
HOME, query client and clean-up, so the conductor drives either one. Nothing is served here: the
cluster, its API server and its observability stack already run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from sregym.env.agent_access import AgentAccess


class KubeAgentAccess(AgentAccess):
    """Credentials for one attempt in a temporary directory; `urls` are the target's."""

    def __init__(self, *, kubeconfig_writer: Any, token: str, urls: dict[str, str], namespace: str,
                 prefix: str = "sregym-attempt-") -> None:
        """`kubeconfig_writer(path, token, namespace)` writes the agent's kubeconfig."""
        import httpx

        from sregym.tools.kubectl import KubectlRunner, require_kubectl

        require_kubectl()
        self.token = token
        self.server: Any = None  # nothing is served: the conductor calls the cluster directly
        self.urls = dict(urls)
        self.workdir: Path | None = Path(tempfile.mkdtemp(prefix=prefix))
        self.http: Any = None
        try:
            self.home.mkdir()
            kubeconfig = kubeconfig_writer(self.workdir / "kubeconfig", token, namespace)
            self.kubectl: Any = KubectlRunner(kubeconfig=kubeconfig, home=self.home)
            # The agent's token goes along, as a proxy in front of the query APIs would want it.
            self.http = httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=60.0)
        except BaseException:
            self.close()
            raise

    def present(self, sim_s: float) -> float:
        """The cluster's instants are already on the clock the agent's clients see."""
        return sim_s


__all__ = ["KubeAgentAccess"]
