"""A container's own Kubernetes API client: calls made as the pod's ServiceAccount.

Operators, CronJobs running `kubectl`, init containers that read a ConfigMap: programs inside
pods act on the cluster with the credential the kubelet mounted for them. This client is what
such a program holds (client-go's in-cluster config): it reads the projected token and the
namespace from `/var/run/secrets/kubernetes.io/serviceaccount`, authenticates as the token's
subject (`system:serviceaccount:NS:NAME`, checked by `fs.projected_token_subject` as the API server
checks the same token over the wire; without a token, `system:anonymous`; a token whose pod or
ServiceAccount is gone gets 401 Unauthorized), and every call is
authorized by `authz.authorize` against the cluster's stored Roles and bindings, exactly as the API
server decides for the same token over the wire. A denial raises `Forbidden` carrying the API
server's text (`configmaps "x" is forbidden: User "system:serviceaccount:..." cannot patch
resource "configmaps" in API group "" in the namespace "..."`), which programs print as they
would. Writes go through the twin's own write path (admission, finalizers, watch events) under the
ServiceAccount's name, so managed fields and audit-like traces show who changed what.
"""

from __future__ import annotations

from typing import Any

from sregym.errors import Forbidden, Unauthorized
from sregym.twin.machinery.authz import authorize, forbidden_message, is_hidden
from sregym.twin.machinery.kinds import ResourceKind
from sregym.twin.machinery.rbac_objects import authorizing_with
from sregym.twin.userland.fs import SA_DIR, mounted_token, projected_token_subject

ANONYMOUS = "system:anonymous"


class InClusterClient:
    """The API as one container sees it through its mounted ServiceAccount credential."""

    def __init__(self, ctx: Any) -> None:
        self.twin = ctx.twin
        files = ctx.files
        pod_meta = (ctx.pod or {}).get("metadata") or {}
        token = files.get(f"{SA_DIR}/token") or (mounted_token(self.twin, ctx.pod, ctx.container)
                                                  if ctx.pod and self.twin is not None else None)
        self.token = token or ""
        self.namespace = (files.get(f"{SA_DIR}/namespace") or "").strip() or pod_meta.get("namespace", "default")

    @property
    def user(self) -> str:
        """Who the token is now (checked on every call, like the API server): anonymous without a
        token, "" (every call 401, as client-go reports it) once its pod or ServiceAccount is gone."""
        return ANONYMOUS if not self.token else (projected_token_subject(self.twin, self.token) or "")

    # ------------------------------------------------------------------ authz
    def kind(self, resource: str) -> ResourceKind:
        """What `resource` names (`deploy`, `configmaps`, `Deployment`, `deployments.apps`)."""
        return self.twin.kinds.resolve(resource)

    def _check(self, verb: str, k: ResourceKind, namespace: str | None, name: str | None = None) -> str | None:
        user = self.user
        if not user:
            raise Unauthorized("Unauthorized")
        ns = (namespace or self.namespace) if k.namespaced else None
        with authorizing_with(self.twin.store):
            allowed, _ = authorize(user, verb, k.group, k.plural, ns, name)
        if not allowed:
            raise Forbidden(forbidden_message(user, verb, k.group, k.plural, ns, name))
        return ns

    # ------------------------------------------------------------------ calls
    def get(self, resource: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        k = self.kind(resource)
        ns = self._check("get", k, namespace, name)
        return self.twin.store.get(k, ns, name)

    def list(self, resource: str, namespace: str | None = None, *,
             label_selector: str | None = None) -> list[dict[str, Any]]:
        k = self.kind(resource)
        ns = self._check("list", k, namespace)
        items = self.twin.store.list(k, ns, label_selector, None)
        return [o for o in items if not is_hidden(self.user, k.group, (o.get("metadata") or {}).get("namespace"),
                                                  k.plural, (o.get("metadata") or {}).get("name"))]

    def patch(self, resource: str, name: str, patch: Any, *, namespace: str | None = None,
              patch_type: str = "strategic") -> dict[str, Any]:
        k = self.kind(resource)
        ns = self._check("patch", k, namespace, name)
        return self.twin.patch(k, ns, name, patch, patch_type=patch_type, user=self.user)

    def delete(self, resource: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        k = self.kind(resource)
        ns = self._check("delete", k, namespace, name)
        return self.twin.store.delete(k, ns, name, user=self.user)


__all__ = ["ANONYMOUS", "InClusterClient"]
