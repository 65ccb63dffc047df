"""The agent's credential on a real cluster: a ServiceAccount, RBAC that mirrors the twin's
on-call role, and a kubeconfig holding a TokenRequest token for it.

The twin's `agent` user reads everything except the hidden namespaces, and may change what an
on-call engineer changes (Chaos Mesh experiments and Schedules included) (`twin/machinery/authz.py`, built from the kind table).
RBAC cannot say "everything except", so the same rules are split: a ClusterRole with the
cluster-scoped kinds' rules, bound cluster-wide, and a ClusterRole with the namespaced rules,
bound by a RoleBinding in every namespace that is not hidden. The hidden namespaces get no
binding, so the token is forbidden there (and the benchmark's Chaos Mesh experiments live only
there, while a team's experiments in an app namespace are the agent's to pause or delete). Names are
those a platform team would give an on-call role; none names the benchmark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sregym.cluster.kube import KubeCluster

ACCOUNT_NAMESPACE = "kube-system"
ACCOUNT = "oncall"
CLUSTER_ROLE = "oncall-cluster"
NAMESPACED_ROLE = "oncall"
TOKEN_SECONDS = 86400
RBAC_API = "rbac.authorization.k8s.io/v1"
# What `system:basic-user` grants every authenticated user on a real cluster (`kubectl auth can-i`,
# `kubectl auth whoami`); stated here too so a cluster without that default binding answers alike.
SELF_REVIEWS = ({"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews",
                                                                     "selfsubjectrulesreviews"], "verbs": ["create"]},
                {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]})


def agent_rules() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(cluster-scoped rules, namespaced rules) of the on-call role, from the twin's kind table."""
    from sregym.twin.machinery.kinds import BUILTIN_KINDS, READ

    cluster: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    namespaced: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for k in BUILTIN_KINDS:
        if k.virtual:
            continue
        table = namespaced if k.namespaced else cluster
        if not k.namespaced:
            table.setdefault((k.group, READ), [])
            if k.plural not in table[(k.group, READ)]:
                table[(k.group, READ)].append(k.plural)
        for grant in k.agent_grants or ():
            target = f"{k.plural}/{grant.subresource}" if grant.subresource else k.plural
            resources = table.setdefault((k.group, tuple(grant.verbs)), [])
            if target not in resources:
                resources.append(target)

    def rules(table: dict[tuple[str, tuple[str, ...]], list[str]]) -> list[dict[str, Any]]:
        return [{"apiGroups": [group], "resources": sorted(res), "verbs": list(verbs)}
                for (group, verbs), res in sorted(table.items()) if res]

    read_all = {"apiGroups": ["*"], "resources": ["*"], "verbs": list(READ)}
    return [*rules(cluster), *SELF_REVIEWS], [read_all, *rules(namespaced)]


def _binding(kind: str, name: str, role: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": RBAC_API, "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": ACCOUNT_NAMESPACE}]}


def grant_agent(cluster: KubeCluster, hidden: tuple[str, ...]) -> None:
    """Create the ServiceAccount and its RBAC: cluster-scoped rules everywhere, namespaced rules
    in every namespace except `hidden`."""
    cluster_rules, namespaced_rules = agent_rules()
    cluster.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                   "metadata": {"name": ACCOUNT, "namespace": ACCOUNT_NAMESPACE}})
    cluster.apply({"apiVersion": RBAC_API, "kind": "ClusterRole", "metadata": {"name": CLUSTER_ROLE},
                   "rules": cluster_rules})
    cluster.apply({"apiVersion": RBAC_API, "kind": "ClusterRole", "metadata": {"name": NAMESPACED_ROLE},
                   "rules": namespaced_rules})
    cluster.apply(_binding("ClusterRoleBinding", CLUSTER_ROLE, CLUSTER_ROLE))
    for ns in cluster.list("Namespace"):
        name = ns["metadata"]["name"]
        if name not in hidden and not ns["metadata"].get("deletionTimestamp"):
            cluster.apply(_binding("RoleBinding", NAMESPACED_ROLE, NAMESPACED_ROLE, name))


def request_token(cluster: KubeCluster) -> str:
    """A TokenRequest for the agent's ServiceAccount (what `kubectl create token` does)."""
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": TOKEN_SECONDS}}
    answer = cluster._call(cluster.core.create_namespaced_service_account_token, ACCOUNT, ACCOUNT_NAMESPACE, body)
    return str(answer.status.token)


def write_agent_kubeconfig(cluster: KubeCluster, token: str, path: Path, namespace: str) -> Path:
    """A kubeconfig with the admin kubeconfig's server and CA and nothing but the agent's token."""
    from sregym.twin.api.kubeconfig import write_kubeconfig

    config = cluster.api_client.configuration
    ca_pem = None
    if config.ssl_ca_cert and Path(config.ssl_ca_cert).is_file():
        ca_pem = Path(config.ssl_ca_cert).read_bytes()
    return write_kubeconfig(path, config.host, {token: "agent"}, ca_pem=ca_pem, namespace=namespace)


__all__ = ["ACCOUNT", "ACCOUNT_NAMESPACE", "CLUSTER_ROLE", "NAMESPACED_ROLE", "agent_rules", "grant_agent",
           "request_token", "write_agent_kubeconfig"]
