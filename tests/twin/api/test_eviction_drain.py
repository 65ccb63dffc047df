"""Pod eviction (`pods/eviction`), PodDisruptionBudget status, and `kubectl drain`.

The eviction subresource decides from the budget's status, which the disruption controller keeps;
`kubectl drain` (as the agent) cordons, evicts, retries on 429 and waits for the pods to go.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from typing import Any

import httpx

from sregym.twin import Twin
from sregym.twin.api.kubeconfig import context_name
from sregym.twin.workloads.shared import is_ready

VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


def _deployment(name: str, replicas: int, labels: dict[str, str], **container: Any) -> str:
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"deploy": name}},
                 "template": {"metadata": {"labels": {**labels, "deploy": name}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.25",
                                                       **container}]}}}})


def _pdb(name: str, selector: dict[str, str] | None, **spec: Any) -> str:
    body: dict[str, Any] = dict(spec)
    if selector is not None:
        body["selector"] = {"matchLabels": selector}
    return json.dumps({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                       "metadata": {"name": name, "namespace": "default"}, "spec": body})


def _pods(kube: Any, deploy: str = "web") -> list[dict[str, Any]]:
    items = json.loads(kube.ok("get", "pods", "-l", f"deploy={deploy}", "-o", "json"))["items"]
    return sorted(items, key=lambda p: p["metadata"]["name"])


def _evict(kube: Any, pod: str, *, query: str = "", body: dict[str, Any] | None = None,
           user: str = "agent") -> httpx.Response:
    eviction = body or {"apiVersion": "policy/v1", "kind": "Eviction",
                        "metadata": {"name": pod, "namespace": "default"}}
    return httpx.post(f"{kube.url}/api/v1/namespaces/default/pods/{pod}/eviction{query}",
                      json=eviction, headers={"Authorization": f"Bearer {kube.token(user)}"},
                      verify=kube.server.tls.client_context(), timeout=30)


def _pdb_status(kube: Any, name: str = "web") -> dict[str, Any]:
    return json.loads(kube.ok("get", "pdb", name, "-o", "json")).get("status") or {}


def _drain(kube: Any, node: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run `kubectl drain` as the agent while simulated time passes (about 1 s per 0.1 s)."""
    env = {**os.environ, "KUBECONFIG": str(kube.kubeconfig), "HOME": str(kube.cache_dir)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    proc = subprocess.Popen([KUBECTL, "--context", context_name("agent"), "drain", node,
                             "--ignore-daemonsets", "--delete-emptydir-data", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        kube.advance(1)
        time.sleep(0.1)
    if proc.poll() is None:
        proc.kill()
    out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_drain_is_held_by_the_budget_until_it_allows_a_disruption(kube: Any) -> None:
    kube.ok("apply", "-f", "-", input=_deployment("web", 3, {"app": "web"}))
    kube.advance(30)
    kube.ok("apply", "-f", "-", input=_pdb("web", {"app": "web"}, minAvailable=3))
    kube.advance(2)
    on_worker = [p["metadata"]["name"] for p in _pods(kube) if p["spec"]["nodeName"] == "kind-worker"]
    assert len(on_worker) == 1
    victim = on_worker[0]

    held = _drain(kube, "kind-worker", "--timeout=7s")
    assert held.returncode != 0
    assert "node/kind-worker cordoned" in held.stdout
    assert (f'error when evicting pods/"{victim}" -n "default" (will retry after 5s): {VIOLATION}'
            in held.stderr)
    assert "Warning: ignoring DaemonSet-managed Pods: kube-system/kube-proxy-" in held.stderr
    assert victim in [p["metadata"]["name"] for p in _pods(kube)]
    assert "SchedulingDisabled" in kube.ok("get", "node", "kind-worker")

    kube.ok("patch", "pdb", "web", "--type=merge", "-p", '{"spec":{"minAvailable":2}}')
    kube.advance(2)
    assert _pdb_status(kube)["disruptionsAllowed"] == 1
    drained = _drain(kube, "kind-worker", "--timeout=60s")
    assert drained.returncode == 0, drained.stderr
    assert f"pod/{victim} evicted" in drained.stdout
    assert "node/kind-worker drained" in drained.stdout
    kube.advance(30)
    pods = _pods(kube)
    assert victim not in [p["metadata"]["name"] for p in pods]
    assert len(pods) == 3 and all(p["spec"]["nodeName"] != "kind-worker" for p in pods)
    assert all(is_ready(p) for p in pods)
    status = _pdb_status(kube)
    assert (status["currentHealthy"], status["desiredHealthy"], status["disruptionsAllowed"]) == (3, 2, 1)


def test_a_denied_eviction_is_a_429_with_the_budget_as_cause(kube: Any) -> None:
    kube.ok("apply", "-f", "-", input=_deployment("web", 2, {"app": "web"}))
    kube.advance(30)
    kube.ok("apply", "-f", "-", input=_pdb("web", {"app": "web"}, maxUnavailable=0))
    pod = _pods(kube)[0]["metadata"]["name"]
    # Before the disruption controller has seen the budget: retry later (and say when).
    early = _evict(kube, pod)
    assert early.status_code == 429
    assert early.headers["Retry-After"] == "10"
    assert early.json()["details"] == {
        "causes": [{"reason": "DisruptionBudget",
                    "message": "The disruption budget web is still being processed by the server."}],
        "retryAfterSeconds": 10}
    kube.advance(2)
    denied = _evict(kube, pod)
    assert denied.status_code == 429
    assert "Retry-After" not in denied.headers
    assert denied.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": VIOLATION,
        "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget",
                                "message": "The disruption budget web needs 2 healthy pods and has 2 "
                                           "currently"}]},
        "code": 429}
    assert not _pods(kube)[0]["metadata"].get("deletionTimestamp")


def test_an_approved_eviction_spends_the_budget_and_deletes_gracefully(kube: Any) -> None:
    kube.ok("apply", "-f", "-", input=_deployment("web", 3, {"app": "web"}))
    kube.advance(30)
    kube.ok("apply", "-f", "-", input=_pdb("web", {"app": "web"}, maxUnavailable=1))
    kube.advance(2)
    status = _pdb_status(kube)
    assert (status["expectedPods"], status["desiredHealthy"], status["disruptionsAllowed"]) == (3, 2, 1)
    pod = _pods(kube)[0]["metadata"]["name"]
    dry = _evict(kube, pod, query="?dryRun=All")
    assert dry.status_code == 201
    assert _pdb_status(kube)["disruptionsAllowed"] == 1
    assert not _pods(kube)[0]["metadata"].get("deletionTimestamp")

    done = _evict(kube, pod)
    assert done.status_code == 201
    assert done.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                           "code": 201}
    status = _pdb_status(kube)
    assert status["disruptionsAllowed"] == 0 and list(status["disruptedPods"]) == [pod]
    cond = next(c for c in status["conditions"] if c["type"] == "DisruptionAllowed")
    assert (cond["status"], cond["reason"]) == ("False", "InsufficientPods")
    evicted = json.loads(kube.ok("get", "pod", pod, "-o", "json"))
    assert evicted["metadata"]["deletionTimestamp"]
    target = next(c for c in evicted["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (target["status"], target["reason"], target["message"]) == (
        "True", "EvictionByEvictionAPI", "Eviction API: evicting")
    # A second pod may not go while the first one's replacement is not ready.
    other = _pods(kube)[1]["metadata"]["name"]
    assert _evict(kube, other).status_code == 429
    kube.advance(1)
    assert "disruptedPods" not in _pdb_status(kube)  # the pod is terminating: no longer pending
    kube.advance(45)
    assert pod not in [p["metadata"]["name"] for p in _pods(kube)]
    assert _pdb_status(kube)["disruptionsAllowed"] == 1
    assert _evict(kube, "gone").status_code == 404
    assert _evict(kube, "gone").json()["message"] == 'pods "gone" not found'


def test_eviction_request_shape_and_two_budgets(kube: Any) -> None:
    kube.ok("apply", "-f", "-", input=_deployment("web", 2, {"app": "web", "tier": "front"}))
    kube.advance(30)
    pod = _pods(kube)[0]["metadata"]["name"]
    wrong = _evict(kube, pod, body={"apiVersion": "policy/v1", "kind": "Eviction",
                                    "metadata": {"name": "other"}})
    assert wrong.status_code == 400
    assert wrong.json()["message"] == "name in URL does not match name in Eviction object"
    kube.ok("apply", "-f", "-", input=_pdb("by-app", {"app": "web"}, minAvailable=1))
    kube.ok("apply", "-f", "-", input=_pdb("by-tier", {"tier": "front"}, minAvailable=1))
    kube.ok("apply", "-f", "-", input=_pdb("everything", None, minAvailable=1))  # nil: selects nothing
    kube.advance(2)
    both = _evict(kube, pod)
    assert both.status_code == 500
    assert both.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                           "message": "This pod has more than one PodDisruptionBudget, which the "
                                      "eviction subresource does not support.", "code": 500}
    # The disruption controller warns about a pod that matches two budgets when it sees it change.
    kube.ok("scale", "deployment", "web", "--replicas=3")
    kube.advance(5)
    events = json.loads(kube.ok("get", "events", "--field-selector",
                                "reason=MultiplePodDisruptionBudgets", "-o", "json"))["items"]
    assert events and events[0]["involvedObject"]["kind"] == "Pod"
    assert events[0]["message"].endswith('matches multiple PodDisruptionBudgets.  Chose "by-app" '
                                         "arbitrarily.")
    assert _pdb_status(kube, "everything")["expectedPods"] == 0
    assert kube.ok("auth", "can-i", "create", "pods", "--subresource=eviction").strip() == "yes"


def test_an_unready_pod_goes_without_spending_a_met_budget(kube: Any) -> None:
    kube.ok("apply", "-f", "-", input=_deployment("web", 2, {"app": "web"}))
    kube.ok("apply", "-f", "-", input=_deployment("bad", 1, {"app": "web"}, readinessProbe={
        "httpGet": {"path": "/", "port": 8081}, "periodSeconds": 5}))
    kube.ok("apply", "-f", "-", input=_pdb("web", {"app": "web"}, minAvailable=2))
    kube.advance(40)
    status = _pdb_status(kube)
    assert (status["expectedPods"], status["currentHealthy"], status["desiredHealthy"],
            status["disruptionsAllowed"]) == (3, 2, 2, 0)
    ready = _pods(kube, "web")[0]["metadata"]["name"]
    assert _evict(kube, ready).status_code == 429
    unready = _pods(kube, "bad")[0]["metadata"]["name"]
    assert _evict(kube, unready).status_code == 201
    assert "disruptedPods" not in _pdb_status(kube)


def test_disruption_controller_counts_through_controllers() -> None:
    twin = Twin(seed=11)
    twin.apply(_deployment("web", 4, {"app": "web"}))
    twin.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "namespace": "default",
                                                                 "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}})
    twin.apply(_pdb("web", {"app": "web"}, maxUnavailable="50%"))
    twin.apply({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": "proxy", "namespace": "kube-system"},
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"k8s-app": "kube-proxy"}}}})
    twin.advance(40)
    status = twin.get("PodDisruptionBudget", "default", "web")["status"]
    # 4 expected (the Deployment's replicas; the stray pod has no controller), 50 % rounded up.
    assert (status["expectedPods"], status["desiredHealthy"], status["currentHealthy"],
            status["disruptionsAllowed"]) == (4, 2, 5, 3)
    reasons = {e["reason"]: e["message"] for e in twin.event_list("default", involved_name="web")}
    assert reasons["UnmanagedPods"].startswith(
        "Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:"
        "map[string]string{app: web,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be "
        "unmanaged.")
    proxy = twin.get("PodDisruptionBudget", "kube-system", "proxy")["status"]
    cond = proxy["conditions"][0]
    assert (proxy["disruptionsAllowed"], cond["status"], cond["reason"], cond["message"]) == (
        0, "False", "SyncFailed", "daemonsets.apps does not implement the scale subresource")
    failed = twin.event_list("kube-system", reason="CalculateExpectedPodCountFailed")
    assert failed[0]["message"] == ("Failed to calculate the number of expected pods: daemonsets.apps "
                                    "does not implement the scale subresource")
    # Scaling the Deployment changes what is expected once its pods change.
    twin.patch("deployments", "default", "web", {"spec": {"replicas": 6}}, patch_type="merge")
    twin.advance(40)
    status = twin.get("PodDisruptionBudget", "default", "web")["status"]
    assert (status["expectedPods"], status["desiredHealthy"]) == (6, 3)
