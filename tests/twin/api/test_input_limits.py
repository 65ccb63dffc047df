"""The Kubernetes API server's input bounds, with the real components' errors and codes.

A 4 MiB body is refused before decoding (413), a 2 MiB ConfigMap by validation (422, also through
real kubectl), an object past etcd's request limit with etcd's message, a billion-laughs YAML
document and a deeply nested JSON body by their decoders, and JSON patches by the patch limits.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from sregym.twin import Twin
from sregym.twin.api.kube.limits import ETCD_MAX_REQUEST_BYTES, MAX_REQUEST_BODY_BYTES
from sregym.twin.api.kube.server import create_app
from sregym.twin.api.kubeconfig import make_tokens, token_for

CM_PATH = "/api/v1/namespaces/default/configmaps"
JSON_TYPE = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[TestClient, dict[str, str]]]:
    twin = Twin(seed=31)
    tokens = make_tokens()
    headers = {"Authorization": f"Bearer {token_for(tokens, 'admin')}"}
    with TestClient(create_app(twin, tokens=tokens), base_url="https://testserver",
                    raise_server_exceptions=False) as client:
        yield client, headers


def _configmap(name: str, size: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"blob": "x" * size}}


def _status(response: Any) -> dict[str, Any]:
    body = response.json()
    assert body["kind"] == "Status" and body["code"] == response.status_code
    return body


def test_request_body_limit(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    response = client.post(CM_PATH, content=json.dumps(_configmap("huge", 4 << 20)),
                           headers={**headers, **JSON_TYPE})
    assert response.status_code == 413
    body = _status(response)
    assert body["reason"] == "RequestEntityTooLarge"
    assert body["message"] == f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"
    assert MAX_REQUEST_BODY_BYTES == 3145728


def test_configmap_and_secret_size_validation(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    response = client.post(CM_PATH, content=json.dumps(_configmap("big", 2 << 20)),
                           headers={**headers, **JSON_TYPE})
    assert response.status_code == 422
    body = _status(response)
    assert body["message"] == 'ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes'
    assert body["details"]["causes"] == [{"reason": "FieldValueTooLong", "field": "[]",
                                          "message": "Too long: must have at most 1048576 bytes"}]
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "big"},
              "stringData": {"key": "s" * ((1 << 20) + 1)}}
    response = client.post("/api/v1/namespaces/default/secrets", content=json.dumps(secret),
                           headers={**headers, **JSON_TYPE})
    assert response.status_code == 422
    assert _status(response)["message"] == ('Secret "big" is invalid: data: Too long: must have at most '
                                            "1048576 bytes")
    fits = client.post(CM_PATH, content=json.dumps(_configmap("fits", 1 << 20)),
                       headers={**headers, **JSON_TYPE})
    assert fits.status_code == 201
    grown = client.patch(f"{CM_PATH}/fits", content=json.dumps({"data": {"more": "y"}}),
                         headers={**headers, "Content-Type": "application/merge-patch+json"})
    assert grown.status_code == 422


def test_etcd_request_limit(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fat"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "fat"}},
                 "template": {"metadata": {"labels": {"app": "fat"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.27", "env": [
                                  {"name": "BLOB", "value": "z" * (ETCD_MAX_REQUEST_BYTES + 1)}]}]}}}}
    response = client.post("/apis/apps/v1/namespaces/default/deployments", content=json.dumps(deployment),
                           headers={**headers, **JSON_TYPE})
    # etcd refuses the write and the real API server relays it unclassified (500, no reason).
    assert response.status_code == 500
    assert response.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                               "message": "etcdserver: request is too large", "code": 500}
    assert client.get("/apis/apps/v1/namespaces/default/deployments/fat", headers=headers).status_code == 404


def test_billion_laughs_is_refused_quickly(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nx0: &x0 [lol, lol, lol, lol, lol]\n"
    for i in range(1, 12):  # 5^12 nodes once expanded
        doc += f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 5)}]\n"
    doc += "data: {k: v}\nz: *x11\n"
    response = client.post(CM_PATH, content=doc, headers={**headers, "Content-Type": "application/yaml"})
    assert response.status_code == 400
    # The codec cannot find the kind, so the create handler words it as an unrecognized object.
    assert _status(response)["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): error converting YAML to "
        "JSON: yaml: document contains excessive aliasing (")
    ok = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aliases}\ndata: &d {k: v}\n"
    assert client.post(CM_PATH, content=ok, headers={**headers, "Content-Type": "application/yaml"}
                       ).status_code == 201


def test_nesting_depth(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    deep_json = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deep"}, "x": ' + \
        "[" * 50_000 + "]" * 50_000 + "}"
    response = client.post(CM_PATH, content=deep_json, headers={**headers, **JSON_TYPE})
    assert response.status_code == 400
    assert _status(response)["message"] == "couldn't get version/kind; json parse error: exceeded max depth"
    deep_yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nx: " + "[" * 5000 + "]" * 5000
    response = client.post(CM_PATH, content=deep_yaml, headers={**headers, "Content-Type": "application/yaml"})
    assert response.status_code == 400
    assert _status(response)["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): error converting YAML to "
        "JSON: yaml: exceeded max depth of 10000 (")


def test_json_patch_limits(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    assert client.post(CM_PATH, content=json.dumps(_configmap("patched", 300_000)),
                       headers={**headers, **JSON_TYPE}).status_code == 201
    patch_type = {**headers, "Content-Type": "application/json-patch+json"}
    many = [{"op": "test", "path": "/metadata/name", "value": "patched"}] * 10_001
    response = client.patch(f"{CM_PATH}/patched", content=json.dumps(many), headers=patch_type)
    assert response.status_code == 413
    assert _status(response)["message"] == ("Request entity too large: The allowed maximum operations in a "
                                            "JSON patch is 10000, got 10001")
    doubling = [{"op": "copy", "from": "/data/blob", "path": f"/data/c{i}"} for i in range(12)]
    response = client.patch(f"{CM_PATH}/patched", content=json.dumps(doubling), headers=patch_type)
    assert response.status_code == 422
    cause = _status(response)["details"]["causes"][0]["message"]
    assert cause.startswith("Unable to complete the copy, the accumulated size increase of copy is ")
    assert cause.endswith("exceeding the limit 3145728")


def test_list_limit_pages(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    first = client.get("/api/v1/namespaces/kube-system/pods", params={"limit": "1"}, headers=headers).json()
    assert len(first["items"]) == 1 and first["metadata"]["continue"]
    rest = client.get("/api/v1/namespaces/kube-system/pods",
                      params={"limit": "500", "continue": first["metadata"]["continue"]}, headers=headers).json()
    assert first["items"][0]["metadata"]["name"] not in {p["metadata"]["name"] for p in rest["items"]}


def test_kubectl_refuses_a_2mib_configmap(kube: Any, tmp_path: Path) -> None:
    blob = tmp_path / "blob.txt"
    blob.write_text("x" * (2 << 20))
    result = kube.kubectl("create", "configmap", "big", f"--from-file={blob}", user="admin")
    assert result.returncode == 1
    assert 'ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes' in result.stderr


def test_unresponsive_watcher_is_closed(kube: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that opens a watch and stops reading does not make the server queue events
    forever: past the per-watcher backlog its subscription is closed, as the watch cache does."""
    import socket
    import ssl

    from sregym.twin.api.kube import watch as watch_module

    monkeypatch.setattr(watch_module, "MAX_PENDING_EVENTS", 50)
    store = kube.twin.store
    before = kube.call(lambda: len(store._watches))
    context = ssl.create_default_context(cafile=str(kube.server.tls.ca_file))
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.connect(("127.0.0.1", kube.server.port))
    conn = context.wrap_socket(raw, server_hostname="127.0.0.1")
    try:
        conn.sendall(f"GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\n"
                     f"Authorization: Bearer {kube.token('admin')}\r\n\r\n".encode())
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")  # then never read again
        for _ in range(200):
            if kube.call(lambda: len(store._watches)) > before:
                break
            threading_wait(0.01)
        assert kube.call(lambda: len(store._watches)) == before + 1

        def flood() -> None:
            for i in range(600):  # ~6 MB of events: more than the socket buffers hold
                kube.twin.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": f"flood-{i}", "namespace": "default"},
                                  "data": {"blob": "x" * 10_000}})

        kube.call(flood)
        assert kube.call(lambda: len(store._watches)) == before
    finally:
        conn.close()


def threading_wait(seconds: float) -> None:
    import threading

    threading.Event().wait(seconds)
