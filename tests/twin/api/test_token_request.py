"""`kubectl create token`: the serviceaccounts/token subresource (TokenRequest)."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx

from sregym.twin import Twin
from sregym.twin.api.kube.handlers import RequestContext
from sregym.twin.api.kube.token_request import issue_token
from sregym.twin.userland.fs import service_account_token


def _part(token: str, index: int) -> dict[str, Any]:
    piece = token.split(".")[index]
    return json.loads(base64.urlsafe_b64decode(piece + "=" * (-len(piece) % 4)))


def test_create_token_prints_a_jwt_with_the_real_claims(kube: Any) -> None:
    kube.ok("create", "serviceaccount", "deployer", "-n", "default")
    token = kube.ok("create", "token", "deployer", "-n", "default").strip()
    assert token.count(".") == 2
    header, claims = _part(token, 0), _part(token, 1)
    sa = json.loads(kube.ok("get", "sa", "deployer", "-o", "json"))
    assert header["alg"] == "RS256"
    assert claims["sub"] == "system:serviceaccount:default:deployer"
    assert claims["aud"] == ["https://kubernetes.default.svc.cluster.local"]
    assert claims["iss"] == "https://kubernetes.default.svc.cluster.local"
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"]
    assert claims["kubernetes.io"] == {"namespace": "default", "serviceaccount": {
        "name": "deployer", "uid": sa["metadata"]["uid"]}}
    assert len(base64.urlsafe_b64decode(token.split(".")[2] + "==")) == 256
    # Same signing key as the tokens projected into pods.
    pod_token = kube.call(lambda: service_account_token(kube.twin, {"metadata": {
        "name": "p", "namespace": "default", "uid": "u"}, "spec": {}}))
    assert _part(pod_token, 0)["kid"] == header["kid"]
    # A second token differs (fresh jti and signature).
    again = kube.ok("create", "token", "deployer", "-n", "default").strip()
    assert again != token and _part(again, 1)["jti"] != claims["jti"]


def test_token_request_options_and_errors(kube: Any) -> None:
    full = json.loads(kube.ok("create", "token", "default", "-n", "default", "--audience=vault",
                              "--duration=2h", "-o", "json"))
    assert full["kind"] == "TokenRequest" and full["apiVersion"] == "authentication.k8s.io/v1"
    assert full["metadata"] == {"name": "default", "namespace": "default", "creationTimestamp": None}
    assert full["spec"] == {"audiences": ["vault"], "expirationSeconds": 7200, "boundObjectRef": None}
    assert _part(full["status"]["token"], 1)["aud"] == ["vault"]
    assert full["status"]["expirationTimestamp"] == "2026-01-05T11:00:01Z"

    short = kube.kubectl("create", "token", "default", "-n", "default", "--duration=5m")
    assert short.returncode != 0
    assert ('TokenRequest.authentication.k8s.io "default" is invalid: spec.expirationSeconds: Invalid '
            "value: 300: may not specify a duration less than 10 minutes") in short.stderr
    missing = kube.kubectl("create", "token", "ghost", "-n", "default")
    assert 'error: failed to create token: serviceaccounts "ghost" not found' in missing.stderr
    hidden = kube.kubectl("create", "token", "default", "-n", "chaos-mesh")  # as if absent
    assert hidden.stderr == 'error: failed to create token: serviceaccounts "default" not found\n'


def test_a_pod_bound_token_names_the_pod_and_its_node(kube: Any) -> None:
    kube.ok("run", "box", "--image=nginx:1.25", "-n", "default")
    kube.advance(20)
    pod = json.loads(kube.ok("get", "pod", "box", "-o", "json"))
    claims = _part(kube.ok("create", "token", "default", "-n", "default", "--bound-object-kind=Pod",
                           "--bound-object-name=box").strip(), 1)
    private = claims["kubernetes.io"]
    assert private["pod"] == {"name": "box", "uid": pod["metadata"]["uid"]}
    assert private["node"]["name"] == pod["spec"]["nodeName"]
    wrong_uid = kube.kubectl("create", "token", "default", "-n", "default", "--bound-object-kind=Pod",
                             "--bound-object-name=box", "--bound-object-uid=nope")
    assert "the UID in the bound object reference (nope) does not match" in wrong_uid.stderr
    absent = kube.kubectl("create", "token", "default", "-n", "default", "--bound-object-kind=Secret",
                          "--bound-object-name=nothing")
    assert 'secrets "nothing" not found' in absent.stderr


def test_the_token_authenticates_its_service_account_with_the_rights_rbac_binds(kube: Any) -> None:
    token = kube.ok("create", "token", "default", "-n", "default").strip()

    def list_pods(namespace: str) -> httpx.Response:
        return httpx.get(f"{kube.url}/api/v1/namespaces/{namespace}/pods", headers={"Authorization": f"Bearer {token}"},
                         verify=kube.server.tls.client_context(), timeout=30)

    unbound = list_pods("default")  # authenticated, but nothing is bound to it yet
    assert unbound.status_code == 403
    assert 'User "system:serviceaccount:default:default" cannot list resource "pods"' in unbound.json()["message"]
    kube.ok("create", "role", "pod-reader", "--verb=list", "--resource=pods", "-n", "default")
    kube.ok("create", "rolebinding", "pod-reader", "--role=pod-reader", "--serviceaccount=default:default",
            "-n", "default")
    assert list_pods("default").status_code == 200
    assert list_pods("kube-system").status_code == 403  # a RoleBinding grants in its namespace only
    kube.ok("delete", "serviceaccount", "default", "-n", "default")
    assert list_pods("default").status_code == 401  # the account is gone: so is the token
    bogus = httpx.get(f"{kube.url}/api/v1/namespaces/default/pods", headers={"Authorization": "Bearer x.y.z"},
                      verify=kube.server.tls.client_context(), timeout=30)
    assert bogus.status_code == 401


def test_tokens_are_deterministic_per_seed() -> None:
    def first_token(seed: int) -> str:
        twin = Twin(seed=seed)
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
        return issue_token(RequestContext(twin, "agent"), "default", "default", body)["status"]["token"]

    assert first_token(5) == first_token(5)
    assert first_token(5) != first_token(6)


def test_any_service_account_may_ask_what_it_may_do(kube: Any) -> None:
    """`system:basic-user`: self access and rules reviews need no binding of their own, so
    `kubectl auth can-i` answers yes/no for a bare ServiceAccount instead of failing with 403."""
    kube.ok("create", "serviceaccount", "asker", "-n", "default")
    token = kube.ok("create", "token", "asker", "-n", "default").strip()
    before = kube.kubectl("auth", "can-i", "list", "pods", "-n", "default", f"--token={token}")
    assert (before.returncode, before.stdout.strip()) == (1, "no"), before.stderr
    assert "forbidden" not in before.stderr.lower()
    rules = kube.kubectl("auth", "can-i", "--list", "-n", "default", f"--token={token}")
    assert rules.returncode == 0 and "selfsubjectaccessreviews.authorization.k8s.io" in rules.stdout, rules.stderr
    kube.ok("create", "role", "pod-lister", "--verb=list", "--resource=pods", "-n", "default")
    kube.ok("create", "rolebinding", "pod-lister", "--role=pod-lister", "--serviceaccount=default:asker",
            "-n", "default")
    after = kube.kubectl("auth", "can-i", "list", "pods", "-n", "default", f"--token={token}")
    assert (after.returncode, after.stdout.strip()) == (0, "yes"), after.stderr
