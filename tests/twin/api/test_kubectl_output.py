"""What a person sees from the real kubectl against the twin: columns, formats, describe, patches."""

from __future__ import annotations

import json

import pytest

APP = """
apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: demo, labels: {app: web}}
data: {MODE: prod}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
        env: [{name: MODE, value: prod}, {name: LEVEL, value: info}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo, labels: {app: web}}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: v1
kind: Pod
metadata: {name: badimage, namespace: demo}
spec:
  containers: [{name: app, image: "nginx:does-not-exist"}]
---
apiVersion: v1
kind: Pod
metadata: {name: crasher, namespace: demo}
spec:
  containers: [{name: app, image: "busybox:1.36", command: [sh, -c, "echo boom; exit 1"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: demo}
spec:
  restartPolicy: Never
  containers: [{name: app, image: "busybox:1.36", command: [sh, -c, "echo ok"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: initfail, namespace: demo}
spec:
  initContainers: [{name: init, image: "busybox:1.36", command: [sh, -c, "exit 1"]}]
  containers: [{name: app, image: "nginx:1.27"}]
---
apiVersion: v1
kind: Pod
metadata: {name: noconfig, namespace: demo}
spec:
  containers:
  - name: app
    image: nginx:1.27
    env: [{name: X, valueFrom: {configMapKeyRef: {name: missing, key: k}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: toobig, namespace: demo}
spec:
  containers: [{name: app, image: "nginx:1.27", resources: {requests: {cpu: "64"}}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "demo:reader"}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
"""


@pytest.fixture
def demo(kube):  # type: ignore[no-untyped-def]
    kube.call(kube.twin.apply, APP)
    kube.advance(90)
    return kube


def rows(text: str) -> dict[str, list[str]]:
    """`kubectl get` output as {name: columns} (columns split on runs of 2+ spaces)."""
    import re

    lines = [line for line in text.splitlines() if line.strip()]
    return {re.split(r"\s{2,}", line)[0]: re.split(r"\s{2,}", line) for line in lines[1:]}


def header(text: str) -> list[str]:
    import re

    return re.split(r"\s{2,}", text.splitlines()[0].strip())


def test_pod_status_column_for_each_failure_mode(demo) -> None:  # type: ignore[no-untyped-def]
    out = demo.ok("get", "pods", "-n", "demo")
    assert header(out) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    table = rows(out)
    status = {name: cols[2] for name, cols in table.items()}
    assert status["badimage"] in ("ImagePullBackOff", "ErrImagePull")
    assert status["crasher"] in ("CrashLoopBackOff", "Error")
    assert status["initfail"] in ("Init:Error", "Init:CrashLoopBackOff")
    assert status["noconfig"] == "CreateContainerConfigError"
    assert status["toobig"] == "Pending"
    web = [cols for name, cols in table.items() if name.startswith("web-")]
    assert len(web) == 2 and all(cols[1] == "1/1" and cols[2] == "Running" for cols in web)
    # restarts carry the age of the last termination once a container restarted
    assert table["crasher"][3].startswith(("1", "2", "3", "4", "5")) and "ago)" in table["crasher"][3]
    demo.ok("delete", "pod", "crasher", "-n", "demo", "--wait=false")
    assert rows(demo.ok("get", "pod", "crasher", "-n", "demo"))["crasher"][2] == "Terminating"


def test_completed_pod_status(demo) -> None:  # type: ignore[no-untyped-def]
    # A restartPolicy=Never pod whose only container exited 0 (needs the kubelet to report the
    # container as terminated with reason Completed).
    assert rows(demo.ok("get", "pods", "-n", "demo"))["done"][1:3] == ["0/1", "Completed"]


def test_wide_columns_labels_and_output_formats(demo) -> None:  # type: ignore[no-untyped-def]
    wide = demo.ok("get", "pods", "-n", "demo", "-o", "wide")
    assert header(wide) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE",
                            "READINESS GATES"]
    assert rows(wide)["toobig"][6] == "<none>"
    deploy = demo.ok("get", "deploy", "-n", "demo", "-o", "wide")
    assert header(deploy) == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert rows(deploy)["web"][1:4] == ["2/2", "2", "2"]
    assert rows(deploy)["web"][5:] == ["web", "nginx:1.27", "app=web"]
    svc = demo.ok("get", "svc", "-n", "demo", "-o", "wide")
    assert header(svc) == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    assert rows(svc)["web"][4] == "80/TCP"
    nodes = demo.ok("get", "nodes", "-o", "wide")
    assert header(nodes)[:5] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert rows(nodes)["kind-control-plane"][1:3] == ["Ready", "control-plane"]
    labels = demo.ok("get", "cm", "web-config", "-n", "demo", "--show-labels")
    assert header(labels) == ["NAME", "DATA", "AGE", "LABELS"]
    assert rows(labels)["web-config"][-1] == "app=web"
    as_json = json.loads(demo.ok("get", "deploy", "web", "-n", "demo", "-o", "json"))
    assert as_json["kind"] == "Deployment" and as_json["spec"]["replicas"] == 2
    assert "kind: Deployment" in demo.ok("get", "deploy", "web", "-n", "demo", "-o", "yaml")
    names = demo.ok("get", "pods", "-n", "demo", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}")
    assert len(names.split()) == 2


@pytest.mark.parametrize(("resource", "columns"), [
    ("replicasets", ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]),
    ("daemonsets", ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"]),
    ("endpoints", ["NAME", "ENDPOINTS", "AGE"]),
    ("endpointslices", ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]),
    ("configmaps", ["NAME", "DATA", "AGE"]),
    ("namespaces", ["NAME", "STATUS", "AGE"]),
    ("events", ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]),
    ("storageclasses", ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]),
    ("serviceaccounts", ["NAME", "SECRETS", "AGE"]),
    ("clusterroles", ["NAME", "CREATED AT"]),
])
def test_columns_of_other_kinds(demo, resource: str, columns: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = demo.kubectl("get", resource, "-A", user="admin")
    assert result.returncode == 0, result.stderr
    assert header(result.stdout) == ["NAMESPACE", *columns] or header(result.stdout) == columns


def test_describe_has_events(demo) -> None:  # type: ignore[no-untyped-def]
    pod = demo.ok("describe", "pod", "badimage", "-n", "demo")
    assert "Events:" in pod and "Failed" in pod
    for args in (["deployment", "web", "-n", "demo"], ["service", "web", "-n", "demo"]):
        assert "Events:" in demo.ok("describe", *args)
    assert "Events:" in demo.ok("describe", "node", "kind-worker", user="admin")


def test_patch_types_and_set_commands(demo) -> None:  # type: ignore[no-untyped-def]
    demo.ok("patch", "deployment", "web", "-n", "demo", "-p",
            '{"spec":{"template":{"spec":{"containers":[{"name":"web","env":[{"name":"NEW","value":"1"}]}]}}}}')
    env = json.loads(demo.ok("get", "deploy", "web", "-n", "demo", "-o",
                             "jsonpath={.spec.template.spec.containers[0].env}"))
    assert [e["name"] for e in env] == ["NEW", "MODE", "LEVEL"]  # merged by name, not replaced
    demo.ok("patch", "deployment", "web", "-n", "demo", "--type", "merge", "-p", '{"spec":{"replicas":3}}')
    demo.ok("patch", "deployment", "web", "-n", "demo", "--type", "json",
            "-p", '[{"op":"replace","path":"/metadata/labels/app","value":"web2"}]')
    got = json.loads(demo.ok("get", "deploy", "web", "-n", "demo", "-o", "json"))
    assert got["spec"]["replicas"] == 3 and got["metadata"]["labels"]["app"] == "web2"
    failed = demo.kubectl("patch", "deployment", "web", "-n", "demo", "--type", "json",
                          "-p", '[{"op":"test","path":"/spec/replicas","value":7}]')
    assert failed.returncode != 0 and "invalid" in failed.stderr.lower()
    demo.ok("set", "env", "deployment/web", "-n", "demo", "LEVEL=debug")
    demo.ok("set", "image", "deployment/web", "-n", "demo", "web=nginx:1.28")
    demo.ok("set", "resources", "deployment/web", "-n", "demo", "--limits=cpu=500m,memory=256Mi")
    container = json.loads(demo.ok("get", "deploy", "web", "-n", "demo", "-o", "json"))[
        "spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:1.28"
    assert {e["name"]: e.get("value") for e in container["env"]}["LEVEL"] == "debug"
    assert container["resources"]["limits"] == {"cpu": "500m", "memory": "256Mi"}
    assert "MODE" in {e["name"] for e in container["env"]}


def test_invalid_object_reports_like_a_real_server(kube) -> None:  # type: ignore[no-untyped-def]
    manifest = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: Web_1}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
"""
    result = kube.kubectl("create", "-f", "-", input=manifest)
    assert result.returncode != 0
    assert 'The Deployment "Web_1" is invalid' in result.stderr
    assert "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters" in result.stderr
