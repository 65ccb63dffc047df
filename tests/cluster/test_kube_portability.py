"""What `--backend kube` decides without a cluster: which problems need the twin, and the agent's
RBAC rules (cluster-scoped kinds only in the cluster-wide role, nothing of Chaos Mesh anywhere)."""

from __future__ import annotations

from sregym.env.kube.credential import agent_rules
from sregym.problems import PROBLEMS, get_problem
from sregym.problems.portability import needs_chaos_mesh, twin_only_reason


def test_problems_with_twin_extensions_are_marked_with_a_reason() -> None:
    marked = {pid: twin_only_reason(get_problem(pid)) for pid in PROBLEMS.names()}
    assert "device-scoped IOChaos" in marked["hotel-reservation/slow-disk-geo-v1"]
    assert "device-scoped IOChaos" in marked["hotel-reservation/disk-sector-errors-geo-v1"]
    assert "repairing the node" in marked["hotel-reservation/kubelet-stopped-by-host-agent-v1"]
    assert marked["demo-shop/missing-configmap-key-v1"] == ""
    assert marked["hotel-reservation/service-target-port-geo-v1"] == ""
    assert 0 < sum(bool(r) for r in marked.values()) < len(marked) // 4  # the exception, not the rule


def test_chaos_mesh_is_required_only_by_problems_that_create_experiments() -> None:
    assert needs_chaos_mesh(get_problem("hotel-reservation/slow-disk-geo-v1"))
    assert not needs_chaos_mesh(get_problem("demo-shop/service-selector-mismatch-v1"))


def test_agent_rules_split_cluster_and_namespaced_rights_and_grant_chaos_mesh_only_per_namespace() -> None:
    cluster, namespaced = agent_rules()
    cluster_resources = {r for rule in cluster for r in rule["resources"]}
    assert {"nodes", "namespaces", "persistentvolumes", "validatingwebhookconfigurations"} <= cluster_resources
    assert not {"pods", "secrets", "deployments", "configmaps"} & cluster_resources  # those only per namespace
    assert namespaced[0] == {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}
    assert any("pods/exec" in rule["resources"] for rule in namespaced)
    # Chaos Mesh's objects are the agent's in the namespaces its RoleBindings reach (never the
    # hidden ones, which get no binding), and nowhere cluster-wide.
    assert "chaos-mesh.org" not in {g for rule in cluster for g in rule["apiGroups"]}
    chaos = [rule for rule in namespaced if rule["apiGroups"] == ["chaos-mesh.org"]]
    assert len(chaos) == 1 and {"schedules", "podchaos", "networkchaos", "stresschaos"} <= set(chaos[0]["resources"])
    assert {"delete", "patch", "update"} <= set(chaos[0]["verbs"])
    assert not any(r.endswith("/status") for r in chaos[0]["resources"])
    assert not any("clusterroles" in rule["resources"] and "create" in rule["verbs"] for rule in cluster)
