"""The benchmark's Chaos Mesh resources (in the hidden `chaos-mesh` namespace) exist for the admin
credential and are invisible to the agent's, although the agent sees Chaos Mesh's kinds."""

from __future__ import annotations

from typing import Any

from support.chaos_web import chaos


def test_chaos_crs_hidden_from_agent(kube: Any) -> None:
    from sregym.twin.chaos import install_chaos_mesh

    kube.call(install_chaos_mesh, kube.twin)
    manifest = chaos("NetworkChaos", "hidden-delay", {
        "action": "delay", "mode": "all", "selector": {"namespaces": ["kube-system"],
                                                       "labelSelectors": {"k8s-app": "kube-dns"}},
        "delay": {"latency": "50ms"}})
    import json

    kube.ok("apply", "-f", "-", user="admin", input=json.dumps(manifest))
    kube.advance(2)
    admin = kube.ok("get", "networkchaos", "-n", "chaos-mesh", "-o", "json", user="admin")
    items = json.loads(admin)["items"]
    assert [i["metadata"]["name"] for i in items] == ["hidden-delay"]
    assert items[0]["status"]["experiment"]["desiredPhase"] == "Run"
    denied = kube.kubectl("get", "networkchaos", "-n", "chaos-mesh", user="agent")
    assert (denied.returncode, denied.stdout, denied.stderr) == (0, "", "No resources found in chaos-mesh namespace.\n")
    everywhere = kube.kubectl("get", "networkchaos", "-A", user="agent")
    assert (everywhere.returncode, everywhere.stdout, everywhere.stderr) == (0, "", "No resources found\n")
    pods = kube.kubectl("get", "pods", "-n", "chaos-mesh", user="agent")
    # As for a namespace that does not exist.
    assert (pods.returncode, pods.stdout, pods.stderr) == (0, "", "No resources found in chaos-mesh namespace.\n")
    all_ns = kube.ok("get", "pods", "-A", user="agent")
    assert "chaos-daemon" not in all_ns and "chaos-mesh" not in all_ns
    resources = kube.ok("api-resources", user="agent")
    assert "chaos-mesh.org" in resources  # the add-on's kinds are there, its namespace is not
