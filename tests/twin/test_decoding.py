"""Decoding writes like the Go types: Go's JSON syntax errors, type errors, unknown fields, and
Quantity's canonical form (the table facts are apimachinery's and encoding/json's)."""

from __future__ import annotations

import pytest

from sregym.twin.api.kube.gojson import syntax_error
from sregym.twin.machinery.decoding import decode
from sregym.twin.machinery.quantity import canonical_quantity
from sregym.twin.machinery.schemas import closure, schema_name
from sregym.twin.telemetry.logql.pipeline import JSON_OBJECT_ERROR


@pytest.mark.parametrize(("raw", "message"), [
    (b"{bad", "invalid character 'b' looking for beginning of object key string"),
    (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
    (b"[1 2]", "invalid character '2' after array element"),
    (b'[{"op":', "unexpected end of JSON input"),
    (b"trux", "invalid character 'x' in literal true (expecting 'e')"),
    (b'{"a":1}x', "invalid character 'x' after top-level value"),
    (b"1.x", "invalid character 'x' after decimal point in numeric literal"),
    (b"{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
    (b'{"a":[]}', ""),
])
def test_go_json_syntax_errors(raw: bytes, message: str) -> None:
    assert syntax_error(raw) == message


@pytest.mark.parametrize(("written", "stored"), [
    ("1000m", "1"), ("1024Mi", "1Gi"), ("0.5", "500m"), ("1e3", "1e3"), ("2000", "2k"),
    ("1500", "1500"), ("1536Mi", "1536Mi"), ("0.5Gi", "512Mi"), ("1000M", "1G"), ("1.5Ki", "1536"),
    ("16777216Ki", "16Gi"), ("250m", "250m"), ("-1500m", "-1500m"), ("0", "0"), (1, "1"), (0.25, "250m"),
])
def test_quantities_in_canonical_form(written: str | float, stored: str) -> None:
    assert canonical_quantity(written) == stored


def test_the_first_type_error_and_every_unknown_field() -> None:
    obj = {"metadata": {"name": "x", "bogus": 1},
           "spec": {"replicas": "x", "paused": "no",
                    "template": {"spec": {"containers": [{"name": "c", "foo": 1}]}}}}
    found = decode(obj, "apps", "v1", "Deployment")
    assert found.type_error == ("json: cannot unmarshal string into Go struct field "
                                "DeploymentSpec.spec.replicas of type int32")
    assert found.strict == ['unknown field "metadata.bogus"',
                            'unknown field "spec.template.spec.containers[0].foo"']
    assert obj["spec"]["template"]["spec"]["containers"] == [{"name": "c"}]  # pruned
    assert obj["metadata"] == {"name": "x"}


def test_kinds_without_an_upstream_schema_are_left_alone() -> None:
    assert schema_name("chaos-mesh.org", "v1alpha1", "NetworkChaos") is None
    obj = {"spec": {"anything": True}}
    assert decode(obj, "chaos-mesh.org", "v1alpha1", "NetworkChaos").strict == []
    assert "io.k8s.api.core.v1.PodSpec" in closure(["io.k8s.api.apps.v1.Deployment"])


def test_logql_json_errors_are_lokis() -> None:
    assert "Python" not in JSON_OBJECT_ERROR and JSON_OBJECT_ERROR.startswith("Value looks like object")
