"""Discovery documents, built from the twin's kind table on every request.

kubectl resolves `deploy`, `po`, `networkchaos` ... through discovery, so these documents decide
what the client believes exists. They are computed from `twin.kinds` each time (CRDs come and go)
and filtered by the caller's credential (`authz.hidden_groups`: none today, since Chaos Mesh is an
add-on every problem's cluster shows alike).
Both forms are served: the legacy per-group-version documents and the aggregated
`apidiscovery.k8s.io/v2` list kubectl 1.32 asks for first (two requests instead of thirty).
"""

from __future__ import annotations

import hashlib
from typing import Any

from sregym.twin.api.kube.encoding import media_types
from sregym.twin.machinery.kinds import KindRegistry, ResourceKind
from sregym.twin.machinery.served_versions import group_versions, version_priority, visible_kinds
from sregym.twin.topology import KUBERNETES_VERSION

# Group order of a real v1.32 API server's /apis (unknown and CRD groups follow, sorted).

# subresource → (group, version, kind, verbs); group/version None means "the parent's".
_SUBRESOURCES: dict[str, tuple[str | None, str | None, str | None, tuple[str, ...]]] = {
    "status": (None, None, None, ("get", "patch", "update")),
    "scale": ("autoscaling", "v1", "Scale", ("get", "patch", "update")),
    "log": ("", "v1", "Pod", ("get",)),
    "exec": ("", "v1", "PodExecOptions", ("create", "get")),
    "attach": ("", "v1", "PodAttachOptions", ("create", "get")),
    "portforward": ("", "v1", "PodPortForwardOptions", ("create", "get")),
    "eviction": ("policy", "v1", "Eviction", ("create",)),
    "binding": ("", "v1", "Binding", ("create",)),
    "ephemeralcontainers": ("", "v1", "Pod", ("get", "patch", "update")),
    "proxy": ("", "v1", None, ("create", "delete", "get", "patch", "update")),
    "token": ("authentication.k8s.io", "v1", "TokenRequest", ("create",)),
    "finalize": ("", "v1", "Namespace", ("update",)),
    "approval": (None, None, None, ("get", "patch", "update")),
}

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"


def version_info() -> dict[str, str]:
    major, minor = KUBERNETES_VERSION.lstrip("v").split(".")[:2]
    return {"major": major, "minor": minor, "gitVersion": KUBERNETES_VERSION,
            "gitCommit": hashlib.sha1(KUBERNETES_VERSION.encode()).hexdigest(),
            "gitTreeState": "clean", "buildDate": "2025-02-12T21:19:47Z", "goVersion": "go1.23.6",
            "compiler": "gc", "platform": "linux/amd64"}


def _gv(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                            "serverAddress": server_address}]}


def api_group(group: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": _gv(group, v), "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(kinds: KindRegistry, user: str) -> dict[str, Any]:
    groups = [api_group(g, vs) for g, vs in group_versions(kinds, user).items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group_doc(kinds: KindRegistry, user: str, group: str) -> dict[str, Any] | None:
    versions = group_versions(kinds, user).get(group)
    if not versions or not group:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **api_group(group, versions)}


def _kinds_of(kinds: KindRegistry, user: str, group: str, version: str) -> list[ResourceKind]:
    return sorted((k for k in visible_kinds(kinds, user) if k.group == group and k.version == version),
                  key=lambda k: k.plural)


def _storage_hash(kind: ResourceKind) -> str:
    import base64

    digest = hashlib.sha256(f"{kind.group}/{kind.version}/{kind.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def _sub_info(kind: ResourceKind, sub: str) -> tuple[str, str, str, tuple[str, ...]]:
    group, version, sub_kind, verbs = _SUBRESOURCES.get(sub, (None, None, None, ("get",)))
    return (kind.group if group is None else group, kind.version if version is None else version,
            sub_kind or kind.kind, verbs)


def api_resource_list(kinds: KindRegistry, user: str, group: str,
                      version: str) -> dict[str, Any] | None:
    served = _kinds_of(kinds, user, group, version)
    if not served:
        return None
    resources: list[dict[str, Any]] = []
    for k in served:
        entry: dict[str, Any] = {"name": k.plural, "singularName": k.singular,
                                 "namespaced": k.namespaced, "kind": k.kind, "verbs": list(k.verbs)}
        if k.short_names:
            entry["shortNames"] = list(k.short_names)
        if k.categories:
            entry["categories"] = list(k.categories)
        if not k.virtual:
            entry["storageVersionHash"] = _storage_hash(k)
        resources.append(entry)
        for sub in k.subresources:
            sub_group, sub_version, sub_kind, verbs = _sub_info(k, sub)
            sub_entry: dict[str, Any] = {"name": f"{k.plural}/{sub}", "singularName": "",
                                         "namespaced": k.namespaced, "kind": sub_kind,
                                         "verbs": list(verbs)}
            if (sub_group, sub_version) != (k.group, k.version):
                sub_entry["group"] = sub_group
                sub_entry["version"] = sub_version
            resources.append(sub_entry)
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": _gv(group, version),
            "resources": resources}


def aggregated_format(accept: str | None) -> str | None:
    """`v2`/`v2beta1` when the client asked for aggregated discovery in JSON, else None."""
    for media, params in media_types(accept):
        if media == "application/json" and params.get("as") == "APIGroupDiscoveryList" \
                and params.get("g") == "apidiscovery.k8s.io" and params.get("v") in ("v2", "v2beta1"):
            return params["v"]
    return None


def aggregated(kinds: KindRegistry, user: str, *, core: bool, version: str = "v2") -> dict[str, Any]:
    """`APIGroupDiscoveryList` for `/api` (core=True) or `/apis`."""
    items = []
    for group, versions in group_versions(kinds, user).items():
        if (group == "") != core:
            continue
        entries = []
        for v in versions:
            resources = []
            for k in _kinds_of(kinds, user, group, v):
                res: dict[str, Any] = {
                    "resource": k.plural,
                    "responseKind": {"group": k.group, "version": k.version, "kind": k.kind},
                    "scope": "Namespaced" if k.namespaced else "Cluster",
                    "singularResource": k.singular,
                    "verbs": list(k.verbs),
                }
                if k.short_names:
                    res["shortNames"] = list(k.short_names)
                if k.categories:
                    res["categories"] = list(k.categories)
                subs = []
                for sub in k.subresources:
                    sub_group, sub_version, sub_kind, verbs = _sub_info(k, sub)
                    subs.append({"subresource": sub, "responseKind": {
                        "group": sub_group, "version": sub_version, "kind": sub_kind},
                        "verbs": list(verbs)})
                if subs:
                    res["subresources"] = subs
                resources.append(res)
            entries.append({"version": v, "resources": resources, "freshness": "Current"})
        meta: dict[str, Any] = {"creationTimestamp": None}
        if group:
            meta["name"] = group
        items.append({"metadata": meta, "versions": entries})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}",
            "metadata": {}, "items": items}


__all__ = ["AGGREGATED_V2", "AGGREGATED_V2BETA1", "aggregated", "aggregated_format", "api_group_doc",
           "api_group_list", "api_resource_list", "api_versions", "group_versions", "version_info",
           "version_priority", "visible_kinds"]
