"""RBAC from stored objects: what a ServiceAccount token may do, read from the cluster's own
Roles, ClusterRoles, RoleBindings and ClusterRoleBindings.

The twin's two built-in credentials (`admin`, `agent`) have fixed rule tables (`authz.py`). A
ServiceAccount that authenticates with a TokenRequest token (`api/kube/token_request.py`) is any
other user, `system:serviceaccount:NS:NAME`, and gets exactly what the RBAC objects bind to it,
the way the real RBAC authorizer decides: ClusterRoleBindings grant their role everywhere,
RoleBindings only in their own namespace. That is what lets `sregym run --backend kube` be
tested against a served twin: the agent credential it creates as real RBAC objects is enforced.

The resolver is installed per request task (`bind_store`), so `authz.rbac_authorize` stays a pure
function of its arguments for the built-in users and consults the store only for others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

# One PolicyRule as (apiGroups, resources, verbs); `authz.py` makes its `PolicyRule` from it.
Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]

SA_PREFIX = "system:serviceaccount:"

Resolver = Callable[[str, "str | None"], "tuple[Rule, ...]"]
_RESOLVER: ContextVar[Resolver | None] = ContextVar("sregym_rbac_resolver", default=None)


def subject_matches(subject: dict[str, Any], user: str, binding_namespace: str | None) -> bool:
    """Whether one binding subject names `user` (a ServiceAccount or a User)."""
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace or ""
        return user == f"{SA_PREFIX}{namespace}:{subject.get('name')}"
    if kind == "User":
        return user == subject.get("name")
    if kind == "Group":
        group = subject.get("name")
        return (group == "system:serviceaccounts" and user.startswith(SA_PREFIX)) or \
            (isinstance(group, str) and group.startswith("system:serviceaccounts:")
             and user.startswith(SA_PREFIX + group.rsplit(":", 1)[1] + ":"))
    return False


def _rules_of(role: dict[str, Any] | None) -> list[Rule]:
    out: list[Rule] = []
    for rule in (role or {}).get("rules") or []:
        if not isinstance(rule, dict) or rule.get("resourceNames") or rule.get("nonResourceURLs"):
            continue  # name-restricted rules grant less than a rule without names: never more
        out.append((tuple(rule.get("apiGroups") or ()), tuple(rule.get("resources") or ()),
                    tuple(rule.get("verbs") or ())))
    return out


def rules_from_store(store: Any, user: str, namespace: str | None) -> tuple[Rule, ...]:
    """The rules bound to `user` for a request in `namespace` (None: cluster scope)."""
    rules: list[Rule] = []
    for binding in store.list("ClusterRoleBinding"):
        if any(subject_matches(s, user, None) for s in binding.get("subjects") or []):
            ref = binding.get("roleRef") or {}
            if ref.get("kind") == "ClusterRole":
                rules += _rules_of(store.peek("ClusterRole", None, ref.get("name", "")))
    if namespace:
        for binding in store.list("RoleBinding", namespace):
            if not any(subject_matches(s, user, namespace) for s in binding.get("subjects") or []):
                continue
            ref = binding.get("roleRef") or {}
            if ref.get("kind") == "ClusterRole":
                rules += _rules_of(store.peek("ClusterRole", None, ref.get("name", "")))
            elif ref.get("kind") == "Role":
                rules += _rules_of(store.peek("Role", namespace, ref.get("name", "")))
    return tuple(rules)


def bind_store(store: Any) -> None:
    """For the current request's task, authorize users other than the built-in ones by `store`'s
    RBAC objects (like `wall_time.bind`, the request task's context ends with the request)."""
    _RESOLVER.set(lambda user, namespace: rules_from_store(store, user, namespace))


@contextmanager
def authorizing_with(store: Any) -> Iterator[None]:
    """For the calls inside the block, authorize ServiceAccounts by `store`'s RBAC objects, then
    put back whatever was bound before: how an in-process caller acting as a pod's ServiceAccount
    (`userland/kube_client.py`) is held to the same rules as a request over the wire."""
    token = _RESOLVER.set(lambda user, namespace: rules_from_store(store, user, namespace))
    try:
        yield
    finally:
        _RESOLVER.reset(token)


def bound_rules(user: str, namespace: str | None) -> tuple[Rule, ...]:
    """The stored rules of `user`, or none when no store is bound (in-process callers)."""
    resolver = _RESOLVER.get()
    return resolver(user, namespace) if resolver is not None else ()


__all__ = ["SA_PREFIX", "Rule", "authorizing_with", "bind_store", "bound_rules", "rules_from_store", "subject_matches"]
