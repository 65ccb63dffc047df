"""The two credentials: the agent cannot see the benchmark's internals; admin sees everything.
Chaos Mesh is a platform add-on the agent sees like any other: its experiments in user namespaces
are the agent's to read and change, the benchmark's (in the hidden `chaos-mesh` namespace) are
never visible."""

from __future__ import annotations

import json

import httpx
import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from sregym.twin.machinery.authz import authorize

CHAOS = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos",
         "metadata": {"name": "kill-one", "namespace": "chaos-mesh"},
         "spec": {"action": "pod-kill", "mode": "one", "selector": {"namespaces": ["default"]}}}


def _seed_hidden(kube) -> None:
    def setup() -> None:
        twin = kube.twin
        for ns in ("chaos-mesh", "sregym-system"):
            twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        twin.create({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "loadgen", "namespace": "sregym-system"}})
        twin.create(CHAOS)

    kube.call(setup)


@pytest.mark.parametrize(("args", "expected"), [
    (("agent", "list", "", "pods", "default"), True),
    (("agent", "list", "", "pods", None), True),
    (("agent", "get", "", "pods", "chaos-mesh", "x"), False),
    (("agent", "list", "", "configmaps", "sregym-system"), False),
    (("agent", "get", "", "namespaces", None, "chaos-mesh"), False),
    (("agent", "get", "", "namespaces", None, "default"), True),
    (("agent", "list", "chaos-mesh.org", "podchaos", "default"), True),
    (("agent", "delete", "chaos-mesh.org", "schedules", "default", "x"), True),
    (("agent", "patch", "chaos-mesh.org", "schedules", "default", "x"), True),
    (("agent", "list", "chaos-mesh.org", "podchaos", "chaos-mesh"), False),
    (("agent", "delete", "chaos-mesh.org", "schedules", "chaos-mesh", "x"), False),
    (("agent", "update", "chaos-mesh.org", "schedules", "default", "x", "status"), False),
    (("system:serviceaccount:default:viewer", "create", "authorization.k8s.io", "selfsubjectaccessreviews",
      None), True),
    (("system:serviceaccount:default:viewer", "create", "authorization.k8s.io", "selfsubjectrulesreviews",
      None), True),
    (("system:serviceaccount:default:viewer", "list", "", "pods", "default"), False),
    (("system:anonymous", "create", "authorization.k8s.io", "selfsubjectaccessreviews", None), False),
    (("agent", "patch", "apps", "deployments", "default", "web"), True),
    (("agent", "patch", "apps", "deployments", "default", "web", "scale"), True),
    (("agent", "update", "apps", "deployments", "default", "web", "status"), False),
    (("agent", "patch", "", "nodes", None, "kind-worker"), True),
    (("agent", "update", "", "nodes", None, "kind-worker", "status"), False),
    (("agent", "delete", "", "nodes", None, "kind-worker"), False),
    (("agent", "delete", "", "namespaces", None, "default"), False),
    (("agent", "create", "", "namespaces", None), True),
    (("agent", "create", "apiextensions.k8s.io", "customresourcedefinitions", None), False),
    (("agent", "create", "rbac.authorization.k8s.io", "clusterrolebindings", None), False),
    (("agent", "delete", "networking.k8s.io", "networkpolicies", "default", "deny"), True),
    (("agent", "create", "", "pods", "default", "web-0", "exec"), True),
    (("agent", "*", "*", "*", None), False),
    (("admin", "*", "*", "*", None), True),
    (("admin", "delete", "chaos-mesh.org", "podchaos", "chaos-mesh", "x"), True),
    (("anonymous", "get", "", "pods", "default"), False),
])
def test_authorize_table(args, expected):
    assert authorize(*args)[0] is expected


def test_agent_cannot_see_hidden_namespaces_or_chaos_resources(kube):
    _seed_hidden(kube)
    namespaces = kube.ok("get", "ns", "-o", "name").split()
    assert "namespace/chaos-mesh" not in namespaces and "namespace/sregym-system" not in namespaces
    assert "namespace/default" in namespaces
    all_cms = kube.ok("get", "cm", "-A")
    assert "loadgen" not in all_cms and "sregym-system" not in all_cms
    # A hidden namespace answers like one that does not exist.
    direct = kube.kubectl("get", "cm", "-n", "sregym-system")
    assert direct.returncode == 0 and direct.stderr == "No resources found in sregym-system namespace.\n"
    ns_get = kube.kubectl("get", "ns", "chaos-mesh")
    assert ns_get.returncode != 0
    assert ns_get.stderr == 'Error from server (NotFound): namespaces "chaos-mesh" not found\n'
    chaos = kube.kubectl("get", "podchaos", "-A")  # the kind exists; the benchmark's object does not show
    assert (chaos.returncode, chaos.stdout, chaos.stderr) == (0, "", "No resources found\n")
    direct_chaos = kube.kubectl("get", "podchaos", "kill-one", "-n", "chaos-mesh")
    assert direct_chaos.returncode != 0 and "NotFound" in direct_chaos.stderr
    delete = kube.kubectl("delete", "ns", "chaos-mesh")
    assert delete.returncode != 0 and "Forbidden" in delete.stderr
    # admin sees everything
    admin_ns = kube.ok("get", "ns", "-o", "name", user="admin").split()
    assert {"namespace/chaos-mesh", "namespace/sregym-system"} <= set(admin_ns)
    assert "loadgen" in kube.ok("get", "cm", "-A", user="admin")
    assert "kill-one" in kube.ok("get", "podchaos", "-A", user="admin")


def test_agent_can_act_like_an_on_call_engineer_but_not_beyond(kube):
    assert "cordoned" in kube.ok("cordon", "kind-worker2")
    assert kube.ok("get", "node", "kind-worker2", "-o", "jsonpath={.spec.unschedulable}") == "true"
    crd = kube.kubectl("delete", "crd", "anything")
    assert crd.returncode != 0 and "Forbidden" in crd.stderr
    binding = kube.kubectl("create", "clusterrolebinding", "me", "--clusterrole=cluster-admin",
                           "--user=agent")
    assert binding.returncode != 0 and "forbidden" in binding.stderr.lower()
    assert kube.ok("auth", "can-i", "patch", "deployments").strip() == "yes"
    denied = kube.kubectl("auth", "can-i", "delete", "nodes")
    assert denied.returncode == 1 and denied.stdout.strip() == "no"


def test_python_client_agent_forbidden_admin_allowed(kube):
    _seed_hidden(kube)
    agent = client.CoreV1Api(kube.client("agent"))
    admin = client.CoreV1Api(kube.client("admin"))
    assert agent.list_namespaced_config_map("sregym-system").items == []
    with pytest.raises(ApiException) as err:
        agent.read_namespaced_config_map("loadgen", "sregym-system")
    assert err.value.status == 404
    body = json.loads(err.value.body)
    assert body["reason"] == "NotFound" and body["message"] == 'configmaps "loadgen" not found'
    assert [c.metadata.name for c in admin.list_namespaced_config_map("sregym-system").items
            if c.metadata.name == "loadgen"] == ["loadgen"]
    custom = client.CustomObjectsApi(kube.client("agent"))
    assert custom.list_cluster_custom_object("chaos-mesh.org", "v1alpha1", "podchaos")["items"] == []
    with pytest.raises(ApiException) as hidden:
        custom.get_namespaced_custom_object("chaos-mesh.org", "v1alpha1", "chaos-mesh", "podchaos", "kill-one")
    assert hidden.value.status == 404
    chaos_events = list(watch.Watch().stream(custom.list_cluster_custom_object, "chaos-mesh.org", "v1alpha1",
                                             "podchaos", timeout_seconds=1))
    assert chaos_events == []
    admin_custom = client.CustomObjectsApi(kube.client("admin"))
    items = admin_custom.list_cluster_custom_object("chaos-mesh.org", "v1alpha1", "podchaos")["items"]
    assert [i["metadata"]["name"] for i in items] == ["kill-one"]
    # An all-namespaces watch never leaks hidden objects either.
    events = list(watch.Watch().stream(agent.list_config_map_for_all_namespaces, timeout_seconds=1))
    assert events and all(e["object"].metadata.namespace != "sregym-system" for e in events)


def test_discovery_shows_the_chaos_group_to_both_credentials(kube):
    agent_groups = httpx.get(f"{kube.url}/apis", headers={"Authorization": f"Bearer {kube.token()}"},
                             verify=kube.server.tls.client_context()).json()
    names = {g["name"] for g in agent_groups["groups"]}
    assert "apps" in names and "chaos-mesh.org" in names
    admin_groups = httpx.get(f"{kube.url}/apis",
                             headers={"Authorization": f"Bearer {kube.token('admin')}"},
                             verify=kube.server.tls.client_context()).json()
    assert "chaos-mesh.org" in {g["name"] for g in admin_groups["groups"]}


def test_missing_or_invalid_token_is_401_status(kube):
    ctx = kube.server.tls.client_context()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic abc"}):
        response = httpx.get(f"{kube.url}/api/v1/pods", headers=headers, verify=ctx)
        assert response.status_code == 401
        assert response.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                   "status": "Failure", "message": "Unauthorized",
                                   "reason": "Unauthorized", "code": 401}
    assert httpx.get(f"{kube.url}/version", verify=ctx).json()["gitVersion"].startswith("v1.32")
