"""Conformance: writes validated and decoded like the 1.32 API server, and `kubectl explain`.

Every expectation is what a real 1.32 cluster answers (the Go decoders' wording, field validation
as in kubernetes/test/integration/apiserver/field_validation_test.go, Quantity's canonical form,
the upstream OpenAPI descriptions). Writes use the admin credential in `default`, with names of
their own, and leave nothing behind.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from support.kube import KubeHarness

NS = "default"


def deployment(name: str, *, replicas: str = "1", container_extra: str = "",
               resources: str = "") -> str:
    return textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {name}
          namespace: {NS}
        spec:
          replicas: {replicas}
          selector:
            matchLabels: {{app: {name}}}
          template:
            metadata:
              labels: {{app: {name}}}
            spec:
              containers:
              - name: app
                image: nginx:1.27
        """) + container_extra + resources


def created_error(kind: str, detail: str) -> str:
    return (f'Error from server (BadRequest): error when creating "STDIN": {kind} in version "v1" '
            f"cannot be handled as a {kind}: {detail}")


def cleanup(cluster: KubeHarness, *names: str) -> None:
    for name in names:
        cluster.kubectl("delete", name, "-n", NS, "--ignore-not-found", "--wait=false", user="admin")


# ----------------------------------------------------------------------------- explain
EXPLAIN = [
    (("explain", "deployment.spec.strategy"),
     ["GROUP:      apps", "KIND:       Deployment", "VERSION:    v1",
      "FIELD: strategy <DeploymentStrategy>",
      "The deployment strategy to use to replace existing pods with new ones.",
      "rollingUpdate\t<RollingUpdateDeployment>", "type\t<string>"]),
    (("explain", "pod"),
     ["KIND:       Pod", "VERSION:    v1",
      "Pod is a collection of containers that can run on a host. This resource is",
      "spec\t<PodSpec>", "status\t<PodStatus>"]),
    (("explain", "svc.spec.ports", "--recursive"),
     ["KIND:       Service", "FIELD: ports <[]ServicePort>", "port\t<integer> -required-",
      "targetPort\t<IntOrString>", "nodePort\t<integer>"]),
    (("explain", "deploy", "--api-version=apps/v1"),
     ["GROUP:      apps", "KIND:       Deployment",
      "Deployment enables declarative updates for Pods and ReplicaSets."]),
    (("explain", "pods.spec.containers.resources.limits"),
     ["FIELD: limits <map[string]Quantity>",
      "Limits describes the maximum amount of compute resources allowed."]),
    (("explain", "deployment.spec.replicas"),
     ["FIELD: replicas <integer>", "Number of desired pods."]),
    (("explain", "configmap.data"), ["FIELD: data <map[string]string>"]),
    (("explain", "statefulset.spec.volumeClaimTemplates"),
     ["FIELD: volumeClaimTemplates <[]PersistentVolumeClaim>"]),
]


@pytest.mark.parametrize(("args", "expected"), EXPLAIN, ids=[" ".join(a) for a, _ in EXPLAIN])
def test_explain_prints_the_upstream_schema(cluster: KubeHarness, args: tuple[str, ...],
                                            expected: list[str]) -> None:
    out = cluster.ok(*args)
    for text in expected:
        assert text in out, f"{text!r} not in:\n{out}"


def test_explain_of_an_unknown_field_names_it(cluster: KubeHarness) -> None:
    result = cluster.kubectl("explain", "deployment.spec.nosuch")
    assert result.returncode == 1
    assert 'field "nosuch" does not exist' in result.stderr


def test_openapi_v3_shows_the_agent_what_the_admin_sees(cluster: KubeHarness) -> None:
    root = json.loads(cluster.ok("get", "--raw", "/openapi/v3"))
    assert "apis/apps/v1" in root["paths"]
    # Chaos Mesh is a platform add-on every problem's cluster shows alike; no group is hidden.
    assert "apis/chaos-mesh.org/v1alpha1" in root["paths"]
    admin = json.loads(cluster.ok("get", "--raw", "/openapi/v3", user="admin"))
    assert set(admin["paths"]) == set(root["paths"])
    doc = json.loads(cluster.ok("get", "--raw", "/openapi/v3/apis/apps/v1"))
    assert doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"][
        "x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]


# --------------------------------------------------------------------------- bad types
BAD_TYPES = [
    ("Deployment", deployment("cv-bad-replicas", replicas='"x"'),
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ("Deployment", deployment("cv-bad-replicas-float", replicas="1.5"),
     "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ("Deployment", deployment("cv-bad-port", container_extra='        ports:\n        - containerPort: "80"\n'),
     "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers."
     "ports.containerPort of type int32"),
    ("Service", textwrap.dedent("""\
        apiVersion: v1
        kind: Service
        metadata: {name: cv-bad-svc}
        spec:
          ports:
          - port: "eighty"
        """),
     "json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32"),
    ("ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cv-bad-cm}\ndata: {a: 1}\n",
     "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
    ("Pod", textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: cv-bad-pod}
        spec:
          containers: {name: app, image: nginx}
        """),
     "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container"),
    ("Job", textwrap.dedent("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: cv-bad-job}
        spec:
          suspend: "yes"
          template:
            spec:
              restartPolicy: Never
              containers: [{name: app, image: busybox}]
        """),
     "json: cannot unmarshal string into Go struct field JobSpec.spec.suspend of type bool"),
    ("Deployment", deployment("cv-bad-cpu", resources="        resources:\n          limits: {cpu: lots}\n"),
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
]


@pytest.mark.parametrize(("kind", "manifest", "detail"), BAD_TYPES,
                         ids=[d[:60] for _k, _m, d in BAD_TYPES])
def test_a_mistyped_field_is_refused_in_the_decoders_words(cluster: KubeHarness, kind: str,
                                                           manifest: str, detail: str) -> None:
    result = cluster.kubectl("apply", "-n", NS, "-f", "-", input=manifest, user="admin")
    assert result.returncode == 1
    assert result.stderr.strip() == created_error(kind, detail)


def test_a_mistyped_field_is_refused_by_a_server_side_dry_run_too(cluster: KubeHarness) -> None:
    result = cluster.kubectl("create", "--dry-run=server", "-f", "-", user="admin",
                             input=deployment("cv-dry", replicas='"x"'))
    assert result.stderr.strip() == created_error(
        "Deployment", "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas "
                      "of type int32")


# ----------------------------------------------------------------------- unknown fields
UNKNOWN = deployment("cv-unknown", container_extra="        foo: bar\n")
UNKNOWN_FIELD = 'unknown field "spec.template.spec.containers[0].foo"'


@pytest.mark.parametrize("flags", [(), ("--validate=strict",), ("--validate=true",)])
@pytest.mark.parametrize("verb", ["apply", "create"])
def test_strict_validation_refuses_an_unknown_field(cluster: KubeHarness, verb: str,
                                                    flags: tuple[str, ...]) -> None:
    result = cluster.kubectl(verb, *flags, "-f", "-", input=UNKNOWN, user="admin")
    assert result.returncode == 1
    assert result.stderr.strip() == created_error("Deployment", f"strict decoding error: {UNKNOWN_FIELD}")
    assert cluster.kubectl("get", "deploy", "cv-unknown", "-n", NS, user="admin").returncode == 1


@pytest.mark.parametrize(("flag", "warning"), [("--validate=warn", True), ("--validate=ignore", False),
                                               ("--validate=false", False)])
def test_warn_and_ignore_store_the_object_without_the_unknown_field(
        cluster: KubeHarness, flag: str, warning: bool) -> None:
    try:
        result = cluster.kubectl("apply", flag, "-f", "-", input=UNKNOWN, user="admin")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "deployment.apps/cv-unknown created"
        assert result.stderr.strip() == (f"Warning: {UNKNOWN_FIELD}" if warning else "")
        container = json.loads(cluster.ok("get", "deploy", "cv-unknown", "-n", NS, "-o",
                                          "jsonpath={.spec.template.spec.containers[0]}", user="admin"))
        assert "foo" not in container and container["name"] == "app"
    finally:
        cleanup(cluster, "deploy/cv-unknown")


def test_duplicate_and_unknown_fields_in_a_json_body_are_all_named(cluster: KubeHarness) -> None:
    """kubectl re-encodes what it sends, so the duplicate key goes over plain HTTP."""
    import httpx

    body = ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cv-dup","name":"cv-dup",'
            '"nope":1},"data":{"a":"1"},"dta":{}}')
    answer = httpx.post(f"{cluster.url}/api/v1/namespaces/{NS}/configmaps?fieldValidation=Strict",
                        content=body, headers={"Authorization": f"Bearer {cluster.token('admin')}",
                                               "Content-Type": "application/json"},
                        verify=str(cluster.server.tls.ca_file))
    assert answer.status_code == 400
    assert answer.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'duplicate field "metadata.name", unknown field "metadata.nope", unknown field "dta"')


# --------------------------------------------------------------------------- quantities
def test_quantities_are_stored_in_canonical_form(cluster: KubeHarness) -> None:
    resources = textwrap.indent(textwrap.dedent("""\
        resources:
          limits: {cpu: 1000m, memory: 1536Mi, ephemeral-storage: "2000"}
          requests: {cpu: "0.5", memory: 1024Mi, ephemeral-storage: 1e3}
        """), "        ")
    try:
        cluster.ok("apply", "-f", "-", input=deployment("cv-quantities", resources=resources),
                   user="admin")
        got = json.loads(cluster.ok("get", "deploy", "cv-quantities", "-n", NS, "-o",
                                    "jsonpath={.spec.template.spec.containers[0].resources}", user="admin"))
        assert got == {"limits": {"cpu": "1", "memory": "1536Mi", "ephemeral-storage": "2k"},
                       "requests": {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "1k"}}
        # Re-applying sends the written form again; what is stored stays canonical.
        cluster.ok("apply", "-f", "-", input=deployment("cv-quantities", resources=resources),
                   user="admin")
        again = cluster.ok("get", "deploy", "cv-quantities", "-n", NS, "-o",
                           "jsonpath={.spec.template.spec.containers[0].resources.limits.cpu}",
                           user="admin")
        assert again == "1"
    finally:
        cleanup(cluster, "deploy/cv-quantities")


# ------------------------------------------------------------------------------ patches
@pytest.fixture
def target(cluster: KubeHarness):
    cluster.ok("create", "deployment", "cv-patch", "--image=nginx:1.27", "-n", NS, user="admin")
    try:
        yield "cv-patch"
    finally:
        cleanup(cluster, "deploy/cv-patch")


MALFORMED = [
    ("strategic", "{bad", "invalid character 'b' looking for beginning of object key string"),
    ("merge", "{bad", "error decoding patch: invalid character 'b' looking for beginning of object key string"),
    ("strategic", '{"spec":{"replicas":1,}}',
     "invalid character '}' looking for beginning of object key string"),
    ("merge", '{"spec" {}}', "error decoding patch: invalid character '{' after object key"),
]


@pytest.mark.parametrize(("patch_type", "body", "message"), MALFORMED,
                         ids=[f"{t}:{b}" for t, b, _ in MALFORMED])
def test_a_malformed_patch_gets_the_go_decoder_text(cluster: KubeHarness, target: str,
                                                    patch_type: str, body: str, message: str) -> None:
    result = cluster.kubectl("patch", "deploy", target, "-n", NS, f"--type={patch_type}", "-p", body,
                             user="admin")
    assert result.returncode == 1
    assert result.stderr.strip() == f"Error from server (BadRequest): {message}"


def test_a_mistyped_patch_is_an_invalid_patch(cluster: KubeHarness, target: str) -> None:
    detail = "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    result = cluster.kubectl("patch", "deploy", target, "-n", NS, "-p", '{"spec":{"replicas":"x"}}',
                             user="admin")
    assert result.stderr.strip() == ('The request is invalid: patch: Invalid value: '
                                     f'"map[spec:map[replicas:x]]": {detail}')
    result = cluster.kubectl("patch", "deploy", target, "-n", NS, "--type=json", "-p",
                             '[{"op":"replace","path":"/spec/replicas","value":"x"}]', user="admin")
    assert result.returncode == 1
    assert result.stderr.startswith('The request is invalid: patch: Invalid value: "{\\"apiVersion\\":')
    assert result.stderr.strip().endswith(detail)


def test_an_unknown_field_in_a_patch_warns_and_is_dropped(cluster: KubeHarness, target: str) -> None:
    result = cluster.kubectl("patch", "deploy", target, "-n", NS, "--type=merge", "-p",
                             '{"spec":{"replicaz":3}}', user="admin")
    assert result.returncode == 0
    assert result.stderr.strip() == 'Warning: unknown field "spec.replicaz"'
    assert "replicaz" not in cluster.ok("get", "deploy", target, "-n", NS, "-o", "json", user="admin")


# ------------------------------------------------------------------------ python client
def test_the_python_client_sees_the_same_answers(cluster: KubeHarness) -> None:
    """The official client's typed models cannot carry an unknown field, so the body goes through
    its request layer (auth, TLS, serialisation) as a plain dict."""
    api = cluster.client("admin")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cv-client"},
            "data": {"a": "1"}, "dta": {"b": "2"}}

    def post(validation: str | None) -> tuple[int, dict, dict]:
        query = [("fieldValidation", validation)] if validation else []
        request = api.param_serialize(method="POST", resource_path="/api/v1/namespaces/{namespace}/configmaps",
                                      path_params={"namespace": NS}, query_params=query,
                                      header_params={"Content-Type": "application/json"}, body=body,
                                      auth_settings=["BearerToken"])
        response = api.call_api(*request)
        response.read()
        return response.status, json.loads(response.data), dict(response.getheaders())

    status, answer, _ = post("Strict")
    assert status == 400 and answer["reason"] == "BadRequest"
    assert answer["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                                 'strict decoding error: unknown field "dta"')
    try:
        status, answer, headers = post(None)  # the server's default is Warn
        assert status == 201
        assert headers.get("warning") or headers.get("Warning") == '299 - "unknown field \\"dta\\""'
        assert "dta" not in answer and answer["data"] == {"a": "1"}
        from kubernetes import client

        stored = client.CoreV1Api(api).read_namespaced_config_map("cv-client", NS)
        assert stored.data == {"a": "1"}
    finally:
        cleanup(cluster, "configmap/cv-client")


# ---------------------------------------------------------------------------------- loki
def test_logql_json_on_plain_lines_is_a_parser_error_in_lokis_words(cluster: KubeHarness) -> None:
    import httpx

    answer = httpx.get(cluster.observability["loki"] + "/loki/api/v1/query_range",
                       params={"query": '{namespace=~".+"} | json', "limit": "50", "since": "1h"})
    assert answer.status_code == 200, answer.text
    streams = answer.json()["data"]["result"]
    failed = [s["stream"] for s in streams if "__error__" in s["stream"]]
    assert failed, "the app's plain-text lines should fail the json parser"
    for labels in failed:
        assert labels["__error__"] == "JSONParserErr"
        assert labels["__error_details__"] == "Value looks like object, but can't find closing '}' symbol"
