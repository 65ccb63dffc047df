"""The real kubectl binary against the twin's API server: reads, writes, watch, rollout, CRDs."""

from __future__ import annotations

import json
import os
import subprocess
import time

import yaml

from sregym.twin.clock import format_age

WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
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
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default, labels: {team: a}}
data: {mode: "1"}
"""


def _apply(kube, text: str = WEB, user: str = "agent") -> str:
    return kube.ok("apply", "-f", "-", input=text, user=user)


def test_get_builtin_kinds_with_output_formats(kube):
    nodes = kube.ok("get", "nodes")
    assert nodes.splitlines()[0].split()[:2] == ["NAME", "STATUS"]
    assert sum("kind-worker" in line for line in nodes.splitlines()) == 3
    pods = kube.ok("get", "pods", "-A")
    assert pods.splitlines()[0].split()[:3] == ["NAMESPACE", "NAME", "READY"]
    assert "coredns-" in pods
    names = kube.ok("get", "ns", "-o", "name").split()
    assert "namespace/kube-system" in names and "namespace/default" in names
    doc = json.loads(kube.ok("get", "deploy", "coredns", "-n", "kube-system", "-o", "json"))
    assert doc["kind"] == "Deployment" and doc["metadata"]["name"] == "coredns"
    listed = yaml.safe_load(kube.ok("get", "svc", "-n", "kube-system", "-o", "yaml"))
    assert listed["kind"] == "List"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["kube-dns", "kube-prometheus-stack-kubelet"]
    ip = kube.ok("get", "svc", "kube-dns", "-n", "kube-system", "-o", "jsonpath={.spec.clusterIP}")
    assert ip == "10.96.0.10"
    # Several kinds at once, as agents often ask.
    many = kube.ok("get", "deploy,ds,svc,cm", "-n", "kube-system")
    assert "deployment.apps/coredns" in many and "daemonset.apps/kube-proxy" in many
    assert "service/kube-dns" in many and "configmap/coredns" in many


def test_label_and_field_selectors(kube):
    _apply(kube)
    kube.advance(2)
    selected = kube.ok("get", "cm", "-l", "team=a", "-o", "name").split()
    assert selected == ["configmap/settings"]
    assert kube.ok("get", "cm", "-l", "team=b", "-o", "name").strip() == ""
    by_name = kube.ok("get", "pods", "-A", "--field-selector", "metadata.namespace=kube-system",
                      "-o", "name")
    assert by_name and all(line.startswith("pod/") for line in by_name.split())
    node = kube.ok("get", "nodes", "--field-selector", "metadata.name=kind-worker2", "-o", "name")
    assert node.strip() == "node/kind-worker2"
    bad = kube.kubectl("get", "pods", "--field-selector", "spec.bogus=x")
    assert bad.returncode != 0 and "field label not supported: spec.bogus" in bad.stderr
    shown = kube.ok("get", "cm", "settings", "--show-labels")
    assert "team=a" in shown


def test_apply_creates_then_updates_the_same_file(kube):
    assert "deployment.apps/web created" in _apply(kube)
    again = _apply(kube)
    assert "deployment.apps/web unchanged" in again and "configmap/settings unchanged" in again
    changed = WEB.replace('mode: "1"', 'mode: "2"').replace("replicas: 2", "replicas: 4")
    out = _apply(kube, changed)
    assert "deployment.apps/web configured" in out and "configmap/settings configured" in out
    assert kube.ok("get", "cm", "settings", "-o", "jsonpath={.data.mode}") == "2"
    assert kube.ok("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}") == "4"
    last = kube.ok("get", "cm", "settings", "-o",
                   "jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}")
    assert json.loads(last)["data"] == {"mode": "2"}


def test_edit_with_an_editor_script(kube, tmp_path):
    _apply(kube)
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/mode: \"1\"/mode: \"edited\"/' \"$1\"\n")
    editor.chmod(0o755)
    out = kube.ok("edit", "cm", "settings", env={"KUBE_EDITOR": str(editor), "EDITOR": str(editor)})
    assert "configmap/settings edited" in out
    assert kube.ok("get", "cm", "settings", "-o", "jsonpath={.data.mode}") == "edited"


def test_create_configmap_secret_namespace_label_annotate(kube):
    # kubectl's typed clients send these as protobuf.
    assert "configmap/c1 created" in kube.ok("create", "configmap", "c1", "--from-literal=k=v")
    assert "secret/s1 created" in kube.ok("create", "secret", "generic", "s1", "--from-literal=p=q")
    assert "namespace/team1 created" in kube.ok("create", "namespace", "team1")
    assert kube.ok("get", "secret", "s1", "-o", "jsonpath={.data.p}") == "cQ=="
    assert kube.ok("get", "ns", "team1", "-o", "jsonpath={.status.phase}") == "Active"
    out = kube.ok("create", "deployment", "d1", "--image=nginx:1.27", "--replicas=3", "--port=80",
                  "-n", "team1")
    assert "deployment.apps/d1 created" in out
    deploy = json.loads(kube.ok("get", "deploy", "d1", "-n", "team1", "-o", "json"))
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert deploy["spec"]["replicas"] == 3
    assert container["image"] == "nginx:1.27" and container["ports"] == [{"containerPort": 80,
                                                                          "protocol": "TCP"}]
    assert "configmap/c1 labeled" in kube.ok("label", "cm", "c1", "tier=db")
    assert "configmap/c1 annotated" in kube.ok("annotate", "cm", "c1", "owner=sre")
    meta = json.loads(kube.ok("get", "cm", "c1", "-o", "json"))["metadata"]
    assert meta["labels"]["tier"] == "db" and meta["annotations"]["owner"] == "sre"
    assert "configmap/c1 unlabeled" in kube.ok("label", "cm", "c1", "tier-")
    dup = kube.kubectl("create", "configmap", "c1")
    assert dup.returncode != 0 and 'configmaps "c1" already exists' in dup.stderr


def test_patch_in_all_three_types_and_dry_run(kube):
    _apply(kube)
    kube.ok("patch", "cm", "settings", "-p", '{"data":{"a":"1"}}')
    kube.ok("patch", "cm", "settings", "--type", "merge", "-p", '{"data":{"b":"2"}}')
    kube.ok("patch", "cm", "settings", "--type", "json", "-p",
            '[{"op":"remove","path":"/data/mode"}]')
    data = json.loads(kube.ok("get", "cm", "settings", "-o", "jsonpath={.data}"))
    assert data == {"a": "1", "b": "2"}
    out = kube.ok("create", "configmap", "ghost", "--dry-run=server", "-o", "name")
    assert out.strip() == "configmap/ghost"
    missing = kube.kubectl("get", "cm", "ghost")
    assert missing.returncode != 0 and 'configmaps "ghost" not found' in missing.stderr


def test_scale_and_cascading_delete(kube):
    _apply(kube)
    kube.advance(5)
    assert "deployment.apps/web scaled" in kube.ok("scale", "deploy", "web", "--replicas=3")
    kube.advance(5)
    assert kube.ok("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}") == "3"
    pods = kube.ok("get", "pods", "-l", "app=web", "-o", "name").split()
    assert len(pods) == 3
    assert kube.ok("get", "rs", "-l", "app=web", "-o", "name").strip()
    assert 'deployment.apps "web" deleted' in kube.ok("delete", "deploy", "web")
    kube.advance(40)
    assert kube.ok("get", "rs", "-l", "app=web", "-o", "name").strip() == ""
    assert kube.ok("get", "pods", "-l", "app=web", "-o", "name").strip() == ""


def test_rollout_status_restart_history_undo(kube):
    _apply(kube)
    kube.advance(30)
    status = kube.ok("rollout", "status", "deploy/web", "--timeout=20s")
    assert 'deployment "web" successfully rolled out' in status
    kube.ok("set", "image", "deploy/web", "web=nginx:1.28")
    kube.advance(60)
    assert "successfully rolled out" in kube.ok("rollout", "status", "deploy/web", "--timeout=20s")
    history = kube.ok("rollout", "history", "deploy/web")
    assert "REVISION" in history and len([ln for ln in history.splitlines() if ln[:1].isdigit()]) == 2
    assert "deployment.apps/web rolled back" in kube.ok("rollout", "undo", "deploy/web")
    kube.advance(60)
    image = kube.ok("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
    assert image == "nginx:1.27"
    assert "deployment.apps/web restarted" in kube.ok("rollout", "restart", "deploy/web")
    annotations = json.loads(kube.ok("get", "deploy", "web", "-o",
                                     "jsonpath={.spec.template.metadata.annotations}"))
    assert "kubectl.kubernetes.io/restartedAt" in annotations


def test_rollout_status_follows_a_watch_while_time_advances(kube):
    _apply(kube)
    env = {"KUBECONFIG": str(kube.kubeconfig)}
    proc = subprocess.Popen(
        ["kubectl", "--context", "kind-kind", "--cache-dir", str(kube.cache_dir / "cache"),
         "rollout", "status", "deploy/web", "--timeout=60s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **env})
    try:
        for _ in range(60):
            if proc.poll() is not None:
                break
            kube.advance(2)
            time.sleep(0.05)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert 'deployment "web" successfully rolled out' in out


def test_get_watch_streams_changes(kube):
    env = {**os.environ, "KUBECONFIG": str(kube.kubeconfig)}
    proc = subprocess.Popen(
        ["kubectl", "--context", "kind-kind", "--cache-dir", str(kube.cache_dir / "cache"),
         "get", "configmaps", "-w", "--request-timeout=30s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(1.5)  # kubectl lists, then opens the watch
        kube.call(kube.twin.create, {"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": "watched", "namespace": "default"}})
        time.sleep(1.0)
    finally:
        proc.terminate()
        out, _err = proc.communicate(timeout=10)
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "DATA", "AGE"]
    assert any(line.startswith("kube-root-ca.crt") for line in lines)
    assert any(line.split()[:2] == ["watched", "0"] for line in lines)


def test_api_resources_lists_served_kinds(kube):
    out = kube.ok("api-resources")
    rows = {line.split()[0] for line in out.splitlines()[1:]}
    assert {"pods", "deployments", "configmaps", "nodes", "customresourcedefinitions",
            "horizontalpodautoscalers", "networkpolicies"} <= rows
    assert "podchaos" in rows and "schedules" in rows  # Chaos Mesh: an add-on every problem shows
    assert kube.ok("api-resources", user="admin") == out
    namespaced = kube.ok("api-resources", "--namespaced=false", "-o", "name").split()
    assert "nodes" in namespaced and "pods" not in namespaced


def test_crd_create_then_custom_resources_print_name_and_age(kube):
    crd = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wg]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""
    assert "widgets.example.com created" in kube.ok("apply", "-f", "-", input=crd, user="admin")
    kube.advance(1)
    widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n"
    assert "widget.example.com/w1 created" in kube.ok("apply", "-f", "-", input=widget)
    kube.advance(90)
    table = kube.ok("get", "wg")
    assert table.splitlines()[0].split() == ["NAME", "AGE"]
    assert table.splitlines()[1].split() == ["w1", format_age(90)]
    kube.ok("patch", "widget", "w1", "--type", "merge", "-p", '{"spec":{"size":5}}')
    assert kube.ok("get", "widgets.example.com", "w1", "-o", "jsonpath={.spec.size}") == "5"
    conditions = kube.ok("get", "crd", "widgets.example.com", "-o",
                         "jsonpath={.status.conditions[?(@.type=='Established')].status}")
    assert conditions == "True"
    kube.ok("delete", "crd", "widgets.example.com", user="admin")
    gone = kube.kubectl("get", "widgets.example.com")
    assert gone.returncode != 0


def test_missing_objects_and_bad_requests_are_status_errors(kube):
    missing = kube.kubectl("get", "pod", "nope")
    assert missing.returncode != 0
    assert 'Error from server (NotFound): pods "nope" not found' in missing.stderr
    bad = kube.kubectl("get", "pods", "-l", "a in (")
    assert bad.returncode != 0
