"""Credentials and the kubeconfig file that points real clients at the twin's API server.

The kubeconfig has the shape `kind` writes, with kind's names: one cluster `kind-kind`, and two
users with bearer tokens, each with its own context — `kind-admin` (fault injectors, oracles,
humans) and `kind-kind` (the agent under evaluation, and the current context so a shell agent is
the agent by default). Nothing in the file an agent holds names the benchmark.

Tokens are drawn from `secrets` on every start, never derived from the seed or anything else an
agent could know or guess: the admin token is cluster-admin on a port that may be reachable by
others (and by the agent itself). Reproducibility does not suffer, because tokens are not part
of the twin: they live only in the server and the kubeconfig, never in objects, events, logs,
telemetry, dumps or fingerprints, so the same seed still gives the same run.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from sregym.twin.topology import CLUSTER_NAME

USERS = ("admin", "agent")
CURRENT_USER = "agent"


TOKEN_BYTES = 32  # 256 bits of entropy, like a ServiceAccount token's signature


def make_tokens(users: Iterable[str] = USERS) -> dict[str, str]:
    """Fresh random bearer tokens (token → user name), one per user: nothing but the random part,
    so a token an agent reads tells it nothing."""
    if isinstance(users, str):
        users = (users,)
    return {secrets.token_urlsafe(TOKEN_BYTES): user for user in users}


def token_for(tokens: dict[str, str], user: str) -> str:
    for token, name in sorted(tokens.items()):
        if name == user:
            return token
    raise KeyError(f"no token for user {user!r}")


KUBECONFIG_CLUSTER = f"{CLUSTER_NAME}-{CLUSTER_NAME}"  # `kind-kind`, as `kind create cluster` names it


def context_name(user: str) -> str:
    """`kind-kind` for the agent (kind's own context name), `kind-<user>` for the others."""
    return KUBECONFIG_CLUSTER if user == CURRENT_USER else f"{CLUSTER_NAME}-{user}"


def kubeconfig_dict(server: str, tokens: dict[str, str], *, ca_pem: bytes | None = None,
                    namespace: str = "default", current_user: str = CURRENT_USER) -> dict[str, Any]:
    """The kubeconfig document (as a dict) for the API server at `server` (`https://host:port`),
    trusting the CA `ca_pem` (client-go sends bearer tokens only over TLS)."""
    users = [u for u in USERS if u in tokens.values()]
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": KUBECONFIG_CLUSTER, "cluster": cluster}],
        "users": [{"name": context_name(u), "user": {"token": token_for(tokens, u)}} for u in users],
        "contexts": [{"name": context_name(u),
                      "context": {"cluster": KUBECONFIG_CLUSTER, "user": context_name(u),
                                  "namespace": namespace}} for u in users],
        "current-context": context_name(current_user),
    }


def write_kubeconfig(path: str | os.PathLike[str], server: str, tokens: dict[str, str], *,
                     ca_pem: bytes | None = None, namespace: str = "default",
                     current_user: str = CURRENT_USER) -> Path:
    """Write the kubeconfig (mode 0600, as kubectl expects for files holding tokens)."""
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(kubeconfig_dict(server, tokens, ca_pem=ca_pem, namespace=namespace,
                                          current_user=current_user), sort_keys=False)
    target.write_text(text)
    target.chmod(0o600)
    return target


__all__ = ["CURRENT_USER", "USERS", "context_name", "kubeconfig_dict", "make_tokens", "token_for",
           "write_kubeconfig"]
