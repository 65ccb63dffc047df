"""Which API groups and versions the server serves to a user, in the real server's order.

Discovery (`api-versions`, `api-resources`), the OpenAPI documents and the APIService objects a
fresh cluster holds all list the same groups and versions; this is the one place that decides
them, below the API layer so the twin's default objects can use it too.
"""

from __future__ import annotations

import re

from sregym.twin.machinery.authz import hidden_groups
from sregym.twin.machinery.kinds import KindRegistry, ResourceKind

_GROUP_ORDER = (
    "", "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
    "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io",
    "policy", "rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io",
    "apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io",
    "discovery.k8s.io", "flowcontrol.apiserver.k8s.io", "metrics.k8s.io",
)


def version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes' version ordering: GA > beta > alpha, higher numbers first (sort ascending)."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, 0, 0)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0))


def visible_kinds(kinds: KindRegistry, user: str) -> list[ResourceKind]:
    hidden = hidden_groups(user)
    return [k for k in kinds.kinds if k.group not in hidden and not (k.hidden_from_agent and hidden)]


def group_versions(kinds: KindRegistry, user: str) -> dict[str, list[str]]:
    """group → served versions, preferred first, groups in the real server's order."""
    found: dict[str, set[str]] = {}
    for k in visible_kinds(kinds, user):
        found.setdefault(k.group, set()).add(k.version)
    rank = {g: i for i, g in enumerate(_GROUP_ORDER)}
    ordered = sorted(found, key=lambda g: (rank.get(g, len(rank)), g))
    return {g: sorted(found[g], key=version_priority) for g in ordered}


__all__ = ["group_versions", "version_priority", "visible_kinds"]
