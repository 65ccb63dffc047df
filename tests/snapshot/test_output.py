"""The offline agent output: schema, validation messages, round trip, conversion to the oracle's refs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from sregym.snapshot.output import (
    EXAMPLE,
    AgentOutput,
    OutputEntity,
    OutputError,
    json_schema,
    load_output,
    validate_output,
    write_output,
)
from sregym.types import DiagnosisSubmission, EntityRef, RootCause


def _file(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "output.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _error(tmp_path: Path, data: object) -> OutputError:
    with pytest.raises(OutputError) as info:
        load_output(_file(tmp_path, data))
    return info.value


def test_valid_output_loads_and_round_trips(tmp_path: Path) -> None:
    data = {"entities": [{"kind": "ResourceQuota", "namespace": "hotel-reservation", "name": "q"},
                         {"kind": "Node", "name": "kind-worker"}],
            "explanation": "quota q rejects pods"}
    out = load_output(_file(tmp_path, data))
    assert out.entities[1] == OutputEntity(kind="Node", namespace=None, name="kind-worker")
    assert out.explanation == "quota q rejects pods"
    target = write_output(tmp_path / "sub" / "copy.json", out)
    text = target.read_text()
    assert text.endswith("}\n") and '"namespace": null' not in text  # nulls left out
    assert json.loads(text) == {**data, "entities": [data["entities"][0], {"kind": "Node", "name": "kind-worker"}]}
    assert load_output(target) == out
    assert write_output(tmp_path / "again.json", load_output(target)).read_text() == text  # stable bytes


def test_empty_entities_and_no_explanation_are_valid(tmp_path: Path) -> None:
    out = load_output(_file(tmp_path, {"entities": []}))
    assert out.entities == () and out.explanation is None and not out.has_explanation


def test_missing_entities_names_the_path_and_the_fix(tmp_path: Path) -> None:
    err = _error(tmp_path, {"explanation": "x"})
    msg = str(err)
    assert str(tmp_path / "output.json") in msg
    assert "entities: missing" in msg and "an empty array is allowed" in msg
    assert "Field required" not in msg and "pydantic" not in msg  # not pydantic's raw dump


def test_entity_without_kind_names_its_index(tmp_path: Path) -> None:
    err = _error(tmp_path, {"entities": [{"kind": "Pod", "namespace": "a", "name": "p"},
                                         {"kind": "Pod", "namespace": "a", "name": "p2"},
                                         {"namespace": "a", "name": "x"}]})
    assert len(err.problems) == 1 and err.problems[0].startswith("entities[2].kind: missing; add ")
    assert '"Deployment"' in err.problems[0]


def test_extra_keys_are_rejected_at_both_levels(tmp_path: Path) -> None:
    err = _error(tmp_path, {"entities": [{"Kind": "Pod", "kind": "Pod", "name": "p"}], "entites": []})
    assert "entities[0].Kind: unknown key; remove it (allowed keys here: kind, namespace, name)" in err.problems
    assert "entites: unknown key; remove it (allowed keys here: entities, explanation)" in err.problems
    assert str(err).count("\n") == 2  # header + one line per problem


def test_not_json_and_not_an_object(tmp_path: Path) -> None:
    err = _error(tmp_path, '{"entities": [}')
    assert "not valid JSON" in str(err) and "line 1 column" in str(err) and '{"entities": [' in str(err)
    assert "the top level: not a JSON object" in str(_error(tmp_path, [1, 2]))
    assert "entities: not a JSON array" in str(_error(tmp_path, {"entities": {"kind": "Pod"}}))
    assert "entities[0]: not a JSON object" in str(_error(tmp_path, {"entities": ["ns/Pod/p"]}))


def test_wrong_types_empty_strings_and_missing_file(tmp_path: Path) -> None:
    err = _error(tmp_path, {"entities": [{"kind": " ", "name": 3}], "explanation": 5})
    assert err.problems[0].startswith("entities[0].kind: empty; write the Kubernetes kind")
    assert err.problems[1].startswith("entities[0].name: not a string")
    assert err.problems[2].startswith("explanation: not a string")
    with pytest.raises(OutputError, match="no such file"):
        load_output(tmp_path / "nope.json")
    with pytest.raises(OutputError, match=r"^invalid agent output tool call: entities: missing"):
        validate_output({}, source="tool call")


def test_kind_is_lenient_like_the_live_oracle_and_blank_namespace_is_none() -> None:
    truth = RootCause(entity=EntityRef(kind="Deployment", namespace="hr", name="geo"))
    for kind in ("Deployment", "deployment", "deploy", "deployments", "deployment.apps"):
        entity = OutputEntity(kind=kind, namespace="hr", name="geo")
        assert entity.to_ref() == EntityRef(kind="Deployment", namespace="hr", name="geo")
        # the same object a live `submit_diagnosis("hr/<kind>/geo")` builds
        assert entity.to_ref() == EntityRef.parse(f"hr/{kind}/geo")
        assert truth.matches(entity.to_ref())
    assert not truth.matches(OutputEntity(kind="Deployment", namespace="hr", name="Geo").to_ref())  # names exact
    assert OutputEntity(kind="Node", namespace="", name="n").namespace is None
    assert truth.matches(OutputEntity(kind="deploy", name="geo").to_ref())  # no namespace: any namespace


def test_the_snapshots_cluster_scoped_namespace_means_none() -> None:
    """The snapshot writes `_` for the namespace of cluster-scoped entities (topology ids, metric
    file names); an answer copying that convention names the Node, not a namespace called `_`."""
    node = RootCause(entity=EntityRef(kind="Node", name="kind-worker2"))
    entity = OutputEntity(kind="Node", namespace="_", name="kind-worker2")
    assert entity.namespace is None and node.matches(entity.to_ref())


def test_submission_conversion_puts_the_explanation_where_the_judge_reads_it() -> None:
    out = AgentOutput(entities=(OutputEntity(kind="cm", namespace="hr", name="c"),), explanation=" key removed ")
    sub = out.to_submission()
    assert sub.root_causes == (EntityRef(kind="ConfigMap", namespace="hr", name="c"),)
    assert sub.mechanism == sub.explanation == "key removed" and sub.affected == ()
    back = AgentOutput.from_submission(DiagnosisSubmission(root_causes=sub.root_causes, mechanism="missing key",
                                                           explanation="configmap c lost key x"))
    assert back.explanation == "missing key\nconfigmap c lost key x"
    assert back.entities == (OutputEntity(kind="ConfigMap", namespace="hr", name="c"),)
    assert AgentOutput.from_submission(DiagnosisSubmission()).explanation is None


def test_json_schema_agrees_with_the_validator() -> None:
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "$ref" not in json.dumps(schema) and schema["required"] == ["entities"]
    validator = jsonschema.Draft202012Validator(schema)
    good = [EXAMPLE, {"entities": []}, {"entities": [{"kind": "Node", "namespace": None, "name": "n"}],
                                        "explanation": None}]
    bad = [{}, [], {"entities": [{"name": "x"}]}, {"entities": [{"kind": "Pod", "name": "p", "x": 1}]},
           {"entities": [], "extra": 1}, {"entities": [{"kind": "", "name": "p"}]}, {"entities": "x"},
           {"entities": [], "explanation": 3}]
    for data in good:
        assert validator.is_valid(data) and validate_output(data)
    for data in bad:
        assert not validator.is_valid(data), data
        with pytest.raises(OutputError):
            validate_output(data)
    assert set(schema["properties"]) == set(AgentOutput.model_fields)
    assert set(schema["properties"]["entities"]["items"]["properties"]) == set(OutputEntity.model_fields)


def test_docs_carry_the_schema() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "snapshots.md").read_text()
    assert json.dumps(json_schema(), indent=2, sort_keys=True) in docs
