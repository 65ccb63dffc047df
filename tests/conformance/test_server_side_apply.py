"""Server-side apply and managedFields as real kubectl 1.32 sees them.

Every write records its field manager (`kubectl-client-side-apply`, `kubectl-patch`,
`kubectl-label`, `kubectl-set` ..., `kube-controller-manager` and `kubelet` with `subresource:
status`); `kubectl apply --server-side` owns fields, conflicts with upstream's text, takes them
with `--force-conflicts`, and drops fields it stops applying; `kubectl get -o yaml` hides
managedFields unless `--show-managed-fields`.
"""

from __future__ import annotations

import json

import pytest

from support.kube import KubeHarness

ADVICE = "Please review the fields above--they currently have other managers."
MANAGERS = ('{range .metadata.managedFields[*]}{.manager}/{.operation}/{.subresource}{"\\n"}{end}')


def deployment(name: str, replicas: int = 2, *, image: str = "nginx:1.25", extra_label: str = "") -> str:
    labels = f"{{app: {name}{', ' + extra_label if extra_label else ''}}}"
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: default
  labels: {labels}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: {name}
        image: {image}
"""


def admin(cluster: KubeHarness, *args: str, **kw: object) -> str:
    return cluster.ok(*args, user="admin", **kw)  # type: ignore[arg-type]


def managers(cluster: KubeHarness, *target: str) -> list[str]:
    out = admin(cluster, "get", *target, "-o", f"jsonpath={MANAGERS}")
    return [line for line in out.splitlines() if line]


def managed(cluster: KubeHarness, *target: str) -> list[dict]:
    return json.loads(admin(cluster, "get", *target, "-o", "json", "--show-managed-fields"))[
        "metadata"]["managedFields"]


def test_server_side_apply_creates_and_records_an_apply_entry(cluster: KubeHarness) -> None:
    out = admin(cluster, "apply", "--server-side", "-f", "-", input=deployment("ssa-create"))
    assert out == "deployment.apps/ssa-create serverside-applied\n"
    entries = managed(cluster, "deploy", "ssa-create", "-n", "default")
    assert [(e["manager"], e["operation"]) for e in entries] == [("kubectl", "Apply")]
    entry = entries[0]
    assert entry["apiVersion"] == "apps/v1" and entry["fieldsType"] == "FieldsV1"
    assert "subresource" not in entry and entry["time"].endswith("Z")
    fields = entry["fieldsV1"]
    assert fields["f:spec"]["f:replicas"] == {} and fields["f:spec"]["f:selector"] == {}
    assert fields["f:metadata"]["f:labels"] == {"f:app": {}}  # an Apply set has no "." on maps
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"ssa-create"}']
    assert container == {".": {}, "f:image": {}, "f:name": {}}
    admin(cluster, "delete", "deploy", "ssa-create", "-n", "default")


def test_get_yaml_hides_managed_fields_unless_asked(cluster: KubeHarness) -> None:
    admin(cluster, "apply", "--server-side", "-f", "-", input=deployment("ssa-show"))
    plain = admin(cluster, "get", "deploy", "ssa-show", "-n", "default", "-o", "yaml")
    assert "managedFields" not in plain
    shown = admin(cluster, "get", "deploy", "ssa-show", "-n", "default", "-o", "yaml",
                  "--show-managed-fields")
    for line in ("  managedFields:\n  - apiVersion: apps/v1\n    fieldsType: FieldsV1\n    fieldsV1:\n",
                 "        f:replicas: {}\n", "    manager: kubectl\n    operation: Apply\n    time: \""):
        assert line in shown
    assert "managedFields" not in admin(cluster, "get", "deploy", "ssa-show", "-n", "default", "-o", "json")
    admin(cluster, "delete", "deploy", "ssa-show", "-n", "default")


def test_conflict_force_and_field_removal(cluster: KubeHarness) -> None:
    admin(cluster, "apply", "--server-side", "-f", "-", input=deployment("ssa-own", extra_label="tier: web"))
    admin(cluster, "scale", "deploy", "ssa-own", "-n", "default", "--replicas=3")
    scale = [m for m in managers(cluster, "deploy", "ssa-own", "-n", "default") if m.endswith("/scale")]
    assert scale and scale[0].endswith("/Update/scale")
    scaler = scale[0].split("/")[0]
    failed = cluster.kubectl("apply", "--server-side", "-f", "-", user="admin",
                             input=deployment("ssa-own", extra_label="tier: web"))
    assert failed.returncode == 1
    assert failed.stderr.startswith(
        f'error: Apply failed with 1 conflict: conflict with "{scaler}" with subresource "scale" '
        'using apps/v1: .spec.replicas\n' + ADVICE)
    assert admin(cluster, "get", "deploy", "ssa-own", "-n", "default", "-o",
                 "jsonpath={.spec.replicas}") == "3"
    # --force-conflicts takes the field: the scaler's entry owned only replicas and goes away.
    admin(cluster, "apply", "--server-side", "--force-conflicts", "-f", "-",
          input=deployment("ssa-own", extra_label="tier: web"))
    assert admin(cluster, "get", "deploy", "ssa-own", "-n", "default", "-o",
                 "jsonpath={.spec.replicas}") == "2"
    assert not [m for m in managers(cluster, "deploy", "ssa-own", "-n", "default") if m.endswith("/scale")]
    # Dropping a label from the applied configuration removes it (nobody else owns it) ...
    admin(cluster, "apply", "--server-side", "-f", "-", input=deployment("ssa-own"))
    assert admin(cluster, "get", "deploy", "ssa-own", "-n", "default", "-o",
                 "jsonpath={.metadata.labels}") == '{"app":"ssa-own"}'
    # ... but a label another manager also owns stays.
    admin(cluster, "label", "deploy", "ssa-own", "-n", "default", "team=a")
    admin(cluster, "apply", "--server-side", "-f", "-", input=deployment("ssa-own", extra_label="team: a"))
    admin(cluster, "apply", "--server-side", "-f", "-", input=deployment("ssa-own"))
    assert admin(cluster, "get", "deploy", "ssa-own", "-n", "default", "-o",
                 "jsonpath={.metadata.labels.team}") == "a"
    admin(cluster, "delete", "deploy", "ssa-own", "-n", "default")


def test_conflict_with_client_side_apply_and_dry_run(cluster: KubeHarness) -> None:
    assert admin(cluster, "apply", "-f", "-", input=deployment("ssa-csa")) == \
        "deployment.apps/ssa-csa created\n"
    assert managers(cluster, "deploy", "ssa-csa", "-n", "default")[0] == "kubectl-client-side-apply/Update/"
    failed = cluster.kubectl("apply", "--server-side", "--field-manager=ci", "-f", "-", user="admin",
                             input=deployment("ssa-csa", replicas=4))
    assert failed.returncode == 1
    assert ('error: Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using '
            'apps/v1: .spec.replicas\n') in failed.stderr
    # Co-owning a field with the same value is no conflict; server-side dry run writes nothing.
    out = admin(cluster, "apply", "--server-side", "--field-manager=ci", "--dry-run=server", "-f", "-",
                input=deployment("ssa-csa", replicas=2, extra_label="tier: x"))
    assert out == "deployment.apps/ssa-csa serverside-applied (server dry run)\n"
    assert "ci/Apply/" not in managers(cluster, "deploy", "ssa-csa", "-n", "default")
    assert admin(cluster, "get", "deploy", "ssa-csa", "-n", "default", "-o",
                 "jsonpath={.metadata.labels}") == '{"app":"ssa-csa"}'
    admin(cluster, "apply", "--server-side", "--field-manager=ci", "-f", "-",
          input=deployment("ssa-csa", replicas=2))
    assert "ci/Apply/" in managers(cluster, "deploy", "ssa-csa", "-n", "default")
    admin(cluster, "delete", "deploy", "ssa-csa", "-n", "default")


@pytest.mark.parametrize(("command", "manager"), [
    (("patch", "deploy", "ssa-imp", "-n", "default", "-p", '{"spec":{"minReadySeconds":5}}'), "kubectl-patch"),
    (("label", "deploy", "ssa-imp", "-n", "default", "owner=sre"), "kubectl-label"),
    (("annotate", "deploy", "ssa-imp", "-n", "default", "note=x"), "kubectl-annotate"),
    (("set", "image", "deploy/ssa-imp", "-n", "default", "nginx=nginx:1.26"), "kubectl-set"),
    (("rollout", "restart", "deploy/ssa-imp", "-n", "default"), "kubectl-rollout"),
    (("create", "deployment", "ssa-imp", "-n", "default", "--image=nginx:1.25"), "kubectl-create"),
])
def test_imperative_commands_record_their_manager(cluster: KubeHarness, command: tuple[str, ...],
                                                  manager: str) -> None:
    if command[0] != "create":
        admin(cluster, "create", "deployment", "ssa-imp", "-n", "default", "--image=nginx:1.25")
    try:
        admin(cluster, *command)
        found = managers(cluster, "deploy", "ssa-imp", "-n", "default")
        assert f"{manager}/Update/" in found
    finally:
        admin(cluster, "delete", "deploy", "ssa-imp", "-n", "default")


def test_edit_records_kubectl_edit(cluster: KubeHarness) -> None:
    admin(cluster, "create", "deployment", "ssa-edit", "-n", "default", "--image=nginx:1.25")
    try:
        admin(cluster, "edit", "deploy", "ssa-edit", "-n", "default",
              env={"KUBE_EDITOR": "sed -i s/nginx:1.25/nginx:1.26/"})
        entries = managed(cluster, "deploy", "ssa-edit", "-n", "default")
        edit = [e for e in entries if e["manager"] == "kubectl-edit"]
        assert edit and edit[0]["operation"] == "Update"
        container = edit[0]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
        assert container == {'k:{"name":"nginx"}': {"f:image": {}}}
        creator = next(e for e in entries if e["manager"] == "kubectl-create")
        assert "f:image" not in creator["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"][
            'k:{"name":"nginx"}']  # the edit took the field from its creator
    finally:
        admin(cluster, "delete", "deploy", "ssa-edit", "-n", "default")


def test_status_managers_of_pods_and_deployments(cluster: KubeHarness) -> None:
    pod = admin(cluster, "get", "pods", "-n", "hotel-reservation", "-l", "io.kompose.service=frontend",
                "-o", "jsonpath={.items[0].metadata.name}")
    found = managers(cluster, "pod", pod, "-n", "hotel-reservation")
    assert found[0] == "kube-controller-manager/Update/"
    assert "kubelet/Update/status" in found
    kubelet = next(e for e in managed(cluster, "pod", pod, "-n", "hotel-reservation") if e["manager"] == "kubelet")
    assert set(kubelet["fieldsV1"]) == {"f:status"}
    assert 'k:{"type":"Ready"}' in kubelet["fieldsV1"]["f:status"]["f:conditions"]
    deploy = managers(cluster, "deploy", "frontend", "-n", "hotel-reservation")
    assert "kube-controller-manager/Update/status" in deploy
    status = next(e for e in managed(cluster, "deploy", "frontend", "-n", "hotel-reservation")
              if e.get("subresource") == "status")
    assert {"f:availableReplicas", "f:conditions", "f:observedGeneration", "f:replicas"} <= \
        set(status["fieldsV1"]["f:status"])


def test_python_client_sees_managed_fields(cluster: KubeHarness) -> None:
    from kubernetes import client

    api = client.AppsV1Api(cluster.client("admin"))
    dep = api.read_namespaced_deployment("frontend", "hotel-reservation")
    entries = dep.metadata.managed_fields
    assert entries and all(e.fields_type == "FieldsV1" for e in entries)
    assert {e.manager for e in entries} >= {"kube-controller-manager"}
