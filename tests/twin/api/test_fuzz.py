"""Property-based fuzzing of the Kubernetes API app, in-process (no server thread).

Whatever arrives — random JSON for create/update of several kinds, patches of the three types,
random query strings and paths — the server must answer like an API server: never a 500, and
every error is a JSON `Status` whose `code` is the HTTP status. Streaming requests (watch,
follow) are left out so that every request returns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from sregym.twin import Twin
from sregym.twin.api.kube.server import create_app
from sregym.twin.api.kubeconfig import make_tokens, token_for

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# (collection path, apiVersion, kind) of the kinds bodies are aimed at.
TARGETS = [
    ("/api/v1/namespaces/default/pods", "v1", "Pod"),
    ("/api/v1/namespaces/default/configmaps", "v1", "ConfigMap"),
    ("/api/v1/namespaces/default/secrets", "v1", "Secret"),
    ("/api/v1/namespaces/default/services", "v1", "Service"),
    ("/api/v1/namespaces", "v1", "Namespace"),
    ("/apis/apps/v1/namespaces/default/deployments", "apps/v1", "Deployment"),
    ("/apis/batch/v1/namespaces/default/jobs", "batch/v1", "Job"),
    ("/apis/networking.k8s.io/v1/namespaces/default/networkpolicies", "networking.k8s.io/v1",
     "NetworkPolicy"),
    ("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "authorization.k8s.io/v1",
     "SelfSubjectAccessReview"),
]
EXISTING = {  # an object of each kind that exists, so PUT/PATCH reach the real code paths
    "Pod": "/api/v1/namespaces/default/pods/fuzz-pod",
    "ConfigMap": "/api/v1/namespaces/default/configmaps/fuzz-cm",
    "Deployment": "/apis/apps/v1/namespaces/default/deployments/fuzz-deploy",
    "Service": "/api/v1/namespaces/default/services/fuzz-svc",
}
SEED = """
apiVersion: v1
kind: ConfigMap
metadata: {name: fuzz-cm, namespace: default}
data: {a: "1"}
---
apiVersion: v1
kind: Service
metadata: {name: fuzz-svc, namespace: default}
spec: {selector: {app: fuzz}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: fuzz-pod, namespace: default, labels: {app: fuzz}}
spec:
  nodeName: kind-worker
  containers: [{name: c, image: busybox:1.36, command: [sleep, "3600"]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: fuzz-deploy, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: fuzz}}
  template:
    metadata: {labels: {app: fuzz}}
    spec: {containers: [{name: c, image: nginx:1.27}]}
"""
PATCH_TYPES = {
    "strategic": "application/strategic-merge-patch+json",
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
}
QUERY_KEYS = ["labelSelector", "fieldSelector", "limit", "continue", "resourceVersion",
              "resourceVersionMatch", "dryRun", "propagationPolicy", "gracePeriodSeconds",
              "fieldValidation", "fieldManager", "force", "pretty", "tailLines", "sinceSeconds",
              "sinceTime", "container", "previous", "timestamps", "limitBytes", "command",
              "stdout", "allowWatchBookmarks", "orphanDependents"]


# Random per process (like every sregym token): the API and the requests share this one set.
TOKENS = make_tokens()


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[TestClient, dict[str, str]]]:
    twin = Twin(seed=11)
    twin.apply(SEED)
    twin.advance(5)
    tokens = TOKENS
    app = create_app(twin, tokens=tokens)
    headers = {"Authorization": f"Bearer {token_for(tokens, 'admin')}"}
    with TestClient(app, base_url="https://testserver", raise_server_exceptions=False) as client:
        yield client, headers


def assert_api_answer(response: Any) -> None:
    """No 500, and any error is a Status object carrying the same code."""
    assert response.status_code < 500 or response.status_code in (503, 504), response.text
    if response.status_code >= 400:
        body = json.loads(response.content)
        assert body.get("kind") == "Status", body
        assert body.get("status") == "Failure"
        assert body.get("code") == response.status_code


# ----------------------------------------------------------------------------- strategies
scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**40), max_value=2**40)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=16)
names = st.one_of(st.sampled_from(["fuzz-a", "web", "x" * 70, "Bad_Name", "", "a.b", "-x"]),
                  st.text(max_size=12))
field_names = st.sampled_from(["spec", "data", "stringData", "status", "selector", "replicas",
                               "template", "containers", "ports", "type", "metadata", "labels",
                               "image", "name", "resourceAttributes", "rules", "immutable"])
structured = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(field_names | st.text(max_size=6),
                                                                 inner, max_size=4),
    max_leaves=20)


@st.composite
def object_bodies(draw: Any) -> tuple[str, Any]:
    path, api_version, kind = draw(st.sampled_from(TARGETS))
    body: dict[str, Any] = {}
    if draw(st.booleans()):
        body["apiVersion"] = draw(st.sampled_from([api_version, "v1", "apps/v1", "nope/v9", ""]))
    if draw(st.booleans()):
        body["kind"] = draw(st.sampled_from([kind, "Pod", "Nope", ""]))
    if draw(st.booleans()):
        body["metadata"] = draw(st.fixed_dictionaries(
            {}, optional={"name": names, "namespace": names, "labels": json_values,
                          "annotations": json_values, "generateName": names,
                          "resourceVersion": st.text(max_size=5), "finalizers": json_values}))
    extra = draw(st.dictionaries(field_names, structured, max_size=3))
    body.update({k: v for k, v in extra.items() if k not in ("apiVersion", "kind")})
    if draw(st.integers(0, 9)) == 0:
        return path, draw(json_values)
    return path, body


json_patch_ops = st.lists(st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"])},
    optional={"path": st.sampled_from(["/spec", "/metadata/labels/x", "/spec/replicas", "/data/a",
                                       "/spec/containers/0/image", "/spec/containers/-", "",
                                       "/nope/deeper", "/metadata/name", "~1bad"]),
              "from": st.sampled_from(["/data/a", "/spec", "/missing"]),
              "value": structured}), max_size=4)


# ---------------------------------------------------------------------------------- tests
@FUZZ
@given(target=object_bodies(), query=st.dictionaries(st.sampled_from(QUERY_KEYS),
                                                     st.text(max_size=8), max_size=2))
def test_create_with_random_bodies(api: tuple[TestClient, dict[str, str]], target: tuple[str, Any],
                                   query: dict[str, str]) -> None:
    client, headers = api
    path, body = target
    response = client.post(path, content=json.dumps(body), params=query,
                           headers={**headers, "Content-Type": "application/json"})
    assert_api_answer(response)


@FUZZ
@given(kind=st.sampled_from(sorted(EXISTING)), body=st.one_of(json_values, object_bodies()))
def test_update_with_random_bodies(api: tuple[TestClient, dict[str, str]], kind: str,
                                   body: Any) -> None:
    client, headers = api
    if isinstance(body, tuple):
        body = body[1]
    response = client.put(EXISTING[kind], content=json.dumps(body),
                          headers={**headers, "Content-Type": "application/json"})
    assert_api_answer(response)


@FUZZ
@given(kind=st.sampled_from(sorted(EXISTING)), patch_type=st.sampled_from(sorted(PATCH_TYPES)),
       body=st.one_of(structured, json_patch_ops, st.binary(max_size=20)))
def test_patches_of_every_type(api: tuple[TestClient, dict[str, str]], kind: str, patch_type: str,
                               body: Any) -> None:
    client, headers = api
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = client.patch(EXISTING[kind], content=content,
                            headers={**headers, "Content-Type": PATCH_TYPES[patch_type]})
    assert_api_answer(response)


segments = st.one_of(
    st.sampled_from(["pods", "fuzz-pod", "log", "exec", "status", "scale", "namespaces", "default",
                     "configmaps", "deployments", "nodes", "metrics.k8s.io", "v1beta1", "v1",
                     "apps", "apis", "api", "..", "%2F", "selfsubjectaccessreviews", "chaos-mesh",
                     "podchaos", "chaos-mesh.org", "v1alpha1", "proxy", "eviction"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/?#"),
            max_size=8))


@FUZZ
@given(prefix=st.sampled_from(["/api/v1", "/apis", "/apis/apps/v1", "/api/v1/namespaces/default",
                               "/apis/metrics.k8s.io/v1beta1", ""]),
       parts=st.lists(segments, max_size=5),
       method=st.sampled_from(["GET", "DELETE", "POST", "PUT"]),
       query=st.dictionaries(st.sampled_from(QUERY_KEYS), st.text(max_size=8), max_size=3),
       user=st.sampled_from(["admin", "agent"]))
def test_random_paths_and_queries(api: tuple[TestClient, dict[str, str]], prefix: str,
                                  parts: list[str], method: str, query: dict[str, str],
                                  user: str) -> None:
    client, _headers = api
    if "watch" in parts:
        return
    tokens = TOKENS
    headers = {"Authorization": f"Bearer {token_for(tokens, user)}",
               "Content-Type": "application/json"}
    path = "/".join([prefix, *(quote(p, safe="") for p in parts)]) or "/"
    body = "{}" if method in ("POST", "PUT") else None
    response = client.request(method, path, params=query, headers=headers, content=body)
    assert_api_answer(response)


@FUZZ
@given(query=st.dictionaries(st.sampled_from(["container", "previous", "tailLines", "sinceSeconds",
                                              "sinceTime", "timestamps", "limitBytes"]),
                             st.one_of(st.text(max_size=6),
                                       st.integers(-5, 50).map(str),
                                       st.sampled_from(["true", "false", "c", "2026-01-05T09:00:00Z"])),
                             max_size=4))
def test_log_options(api: tuple[TestClient, dict[str, str]], query: dict[str, str]) -> None:
    client, headers = api
    response = client.get("/api/v1/namespaces/default/pods/fuzz-pod/log", params=query,
                          headers=headers)
    assert_api_answer(response)
    if response.status_code == 200:
        assert response.headers["content-type"].startswith("text/plain")
