"""The kind table is the one place that knows a kind: every served kind has a complete row, and
the printers, the store and the agent-facing kind aliases read that row, not copies of it."""

from __future__ import annotations

import dataclasses

import pytest

from sregym.twin.machinery import authz, printers
from sregym.twin.machinery.kinds import BUILTIN_KINDS, CHAOS_GROUP, AgentGrant, KindRegistry
from sregym.twin.machinery.store import ObjectStore
from sregym.types import _KIND_ALIASES, canonical_kind

STORED = [k for k in BUILTIN_KINDS if not k.virtual]


@pytest.mark.parametrize("kind", STORED, ids=lambda k: f"{k.kind}.{k.version}")
def test_every_served_kind_has_a_complete_row(kind) -> None:
    assert kind.printer is not None, f"{kind.kind} names no printer"
    if kind.group == CHAOS_GROUP:
        assert kind.printer is printers.CUSTOM_RESOURCE
    else:
        assert any(c["name"] == "Name" for c in kind.printer.columns)
    assert {"get", "list"} <= set(kind.verbs)
    for alias in (kind.kind.lower(), kind.plural, kind.singular, *kind.short_names):
        assert canonical_kind(alias) == kind.kind
        assert KindRegistry().resolve(alias).kind == kind.kind


@pytest.mark.parametrize("kind", BUILTIN_KINDS, ids=lambda k: f"{k.kind}.{k.group or 'core'}.{k.version}")
def test_every_served_kind_declares_agent_grants(kind) -> None:
    assert kind.agent_grants is not None, f"{kind.kind} does not say what the agent may change"
    for grant in kind.agent_grants:
        assert set(grant.verbs) <= set(authz.ALL_VERBS)
    if kind.group == CHAOS_GROUP:
        # A team's experiments are the on-call engineer's to pause, edit or delete.
        assert {v for g in kind.agent_grants for v in g.verbs} >= {"patch", "delete"}
        assert all(g.subresource != "status" for g in kind.agent_grants)


def test_the_agent_rules_follow_the_rows() -> None:
    deploy = next(k for k in BUILTIN_KINDS if k.kind == "Deployment")
    lease = next(k for k in BUILTIN_KINDS if k.kind == "Lease")
    assert authz.authorize("agent", "patch", "apps", "deployments")[0]
    assert not authz.authorize("agent", "patch", "coordination.k8s.io", "leases")[0]
    # Take Deployment's grants away and give Lease a rule of its own: the derived rules follow.
    kinds = tuple(dataclasses.replace(k, agent_grants=()) if k is deploy else
                  dataclasses.replace(k, agent_grants=(AgentGrant(99, 0, ("patch",)),)) if k is lease
                  else k for k in BUILTIN_KINDS)
    rules = authz.agent_rules(kinds)
    assert not any(r.allows("patch", "apps", "deployments", "") for r in rules)
    assert rules[-1] == authz.PolicyRule(("coordination.k8s.io",), ("leases",), ("patch",))
    # Grants sharing a rule number must agree on group and verbs.
    clash = dataclasses.replace(lease, agent_grants=(dataclasses.replace(deploy.agent_grants[0], at=9,
                                                                         verbs=("get",)),))
    with pytest.raises(ValueError, match="share group and verbs"):
        authz.agent_rules((*BUILTIN_KINDS, clash))


def test_types_aliases_are_the_kind_tables() -> None:
    expected: dict[str, str] = {}
    for k in STORED:
        for name in (k.kind.lower(), k.plural, *k.short_names):
            expected.setdefault(name, k.kind)
    assert expected == _KIND_ALIASES
    assert canonical_kind("deployments.apps") == "Deployment"
    assert canonical_kind("sa") == "ServiceAccount"


def test_the_table_prints_with_the_rows_printer() -> None:
    registry = KindRegistry()
    pod = registry.resolve("pods")
    assert [c["name"] for c in printers.columns_for(pod)] == ["Name", "Ready", "Status", "Restarts", "Age"]
    # Swap the row's printer: the table follows the row (no other table keyed by kind remains).
    as_lease = dataclasses.replace(pod, printer=printers.LEASE)
    assert [c["name"] for c in printers.columns_for(as_lease)] == ["Name", "Holder", "Age"]
    table = printers.table(as_lease, [{"metadata": {"name": "p"}, "spec": {}}], now=0.0)
    assert "conditions" not in table["rows"][0]


def test_create_resets_status_by_the_row(twin_store: ObjectStore) -> None:
    status = {"replicas": 7}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
          "status": status}
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "d", "namespace": "default"},
              "spec": {"selector": {"matchLabels": {"a": "b"}},
                       "template": {"metadata": {"labels": {"a": "b"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
              "status": status}
    assert twin_store.create(cm).get("status") == status
    assert "replicas" not in (twin_store.create(deploy).get("status") or {})
    resets = {k.kind for k in STORED if k.reset_status_on_create}
    assert resets == {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob",
                      "HorizontalPodAutoscaler", "PersistentVolumeClaim", "PodDisruptionBudget"}


@pytest.fixture
def twin_store() -> ObjectStore:
    from sregym.twin import Twin

    return Twin(seed=1).store
