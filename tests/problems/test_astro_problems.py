"""The first Astronomy Shop problems: the flag table, the three ITBench-AA ground truths, the
flag edit, and the three tasks exported as snapshots and scored on the baseline agent's answer. The
check protocol of every problem runs in the registry-wide batch (`support/problem_batch.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sregym.faults.feature_flags import set_default_variant
from sregym.problems.catalog.astronomy_shop.common import chart_object
from sregym.problems.catalog.astronomy_shop.feature_flags import COMBOS, FLAGS
from sregym.problems.registry import get_problem, select

AA = {  # ITBench-AA task -> (problem, ITBench scenario, the entities ITBench's ground truth names)
    "ad-high-cpu": ("astronomy-shop/flag-ad-high-cpu-v1", 3, [("ConfigMap", "flagd-config")]),
    "shipping-quote": ("astronomy-shop/shipping-quote-address-v1", 16, [("Deployment", "shipping")]),
    "product-catalog-image": ("astronomy-shop/product-catalog-missing-image-v1", 20,
                              [("Deployment", "product-catalog")]),
}


def _entities(problem_id: str) -> list[tuple[str, str]]:
    gt = get_problem(problem_id).ground_truth
    return [(rc.entity.kind, rc.entity.name) for rc in gt.root_causes]


@pytest.mark.parametrize("task", sorted(AA))
def test_itbench_aa_ground_truth(task: str) -> None:
    problem_id, scenario, entities = AA[task]
    problem = get_problem(problem_id)
    assert _entities(problem_id) == entities
    assert {rc.entity.namespace for rc in problem.ground_truth.root_causes} == {"astronomy-shop"}
    assert f"itbench:{scenario}" in problem.tags.sources and "itbench-aa" in problem.tags.sources
    assert {"astronomy-shop", "itbench-aa"} <= set(problem.suites)


def test_itbench_aa_suite_holds_the_three_tasks() -> None:
    assert {v[0] for v in AA.values()} <= {p.id for p in select(suite="itbench-aa")}


def test_every_flag_and_combo_is_a_problem_rooted_in_flagd_config() -> None:
    flag_problems = [p for p in select(suite="astronomy-shop") if [f.fault for f in p.faults] == ["set_flag_variant"]]
    turned_on = sorted(tuple(sorted(p.faults[0].params["flags"])) for p in flag_problems)
    expected = sorted([(f,) for f in FLAGS] + [tuple(sorted((a, b))) for _, a, b in COMBOS])
    assert turned_on == expected
    for p in flag_problems:
        assert _entities(p.id) == [("ConfigMap", "flagd-config")]
        services = {FLAGS[f].service for f in p.faults[0].params["flags"]}
        assert {a.entity.name for a in p.ground_truth.affected} == services
        assert [a.name for a in p.gold] == ["flagd-config", "flagd"]  # the definitions back, flagd restarted
        assert p.gold[0].patch["data"]["demo.flagd.json"] == chart_object("ConfigMap", "flagd-config")["data"][
            "demo.flagd.json"]
        assert p.tags.difficulty and p.tags.layers


def test_no_problem_text_names_the_injection() -> None:
    for p in select(suite="astronomy-shop"):
        seen = (p.title + p.public_card()).lower()
        assert not any(word in seen for word in ("inject", "fault", "sregym", "benchmark")), p.id


def test_flag_edit_changes_only_the_variant() -> None:
    text = chart_object("ConfigMap", "flagd-config")["data"]["demo.flagd.json"]
    edited = set_default_variant(text, "paymentFailure", "50%")
    assert json.loads(edited)["flags"]["paymentFailure"]["defaultVariant"] == "50%"
    before, after = json.loads(text)["flags"], json.loads(edited)["flags"]
    assert [k for k in before if before[k] != after[k]] == ["paymentFailure"]
    assert len(edited) - len(text) == len('"50%"') - len('"off"')
    with pytest.raises(LookupError, match="no variant"):
        set_default_variant(text, "adFailure", "sometimes")
    with pytest.raises(LookupError, match="no flag"):
        set_default_variant(text, "noSuchFlag", "on")


@pytest.mark.parametrize("task", sorted(AA))
def test_itbench_aa_task_exports_in_itbench_lite_layout_and_the_baseline_answer_is_scored(
        task: str, tmp_path: Path) -> None:
    """Each ITBench-AA task as `Scenario-N/` with ITBench's ground_truth.yaml; the baseline agent's
    answer over it through the offline scorer (precision at full recall: positive exactly when every
    ground-truth entity was named)."""
    from sregym.snapshot.index import load_ground_truth
    from sregym.snapshot.itbench_lite import export_scenario
    from sregym.snapshot.replay import run_baseline
    from sregym.snapshot.score import score_repeat

    problem_id, number, entities = AA[task]
    scenario = export_scenario(problem_id, tmp_path, seed=0, window_s=60.0, baseline_s=120.0)
    assert scenario == tmp_path / f"Scenario-{number}" and (scenario / "k8s_objects.tsv").is_file()
    itbench = yaml.safe_load((scenario / "ground_truth.yaml").read_text())
    assert (itbench["apiVersion"], itbench["kind"]) == ("itbench.io/v2", "GroundTruth")
    assert [(e["kind"], e["metadata"]["name"], e["metadata"]["namespace"]) for e in itbench["spec"]["entities"]] \
        == [(kind, name, "astronomy-shop") for kind, name in entities]
    repeat = tmp_path / "run" / "repeat-1"
    status = run_baseline(scenario, repeat / "output.json", repeat / "trajectory.jsonl")
    scored = score_repeat(load_ground_truth(tmp_path / "ground_truth" / f"Scenario-{number}.json"), repeat, 1)
    assert scored.valid, (scored.reason, status)
    assert scored.entities, "the baseline named no root cause"
    found = all(any(name in e for e in scored.entities) for _kind, name in entities)
    assert (scored.score > 0) == found and 0.0 <= scored.score <= 1.0, (scored.score, scored.entities)
    print(f"ITBench-AA {task}: baseline named {scored.entities}, score {scored.score:.3f}")


def test_cli_itbench_lite_layout_needs_a_scenario(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sregym.cli.main import app

    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["snapshot", "export", "hotel-reservation/env-var-shadowed-v1", "--out",
                                      str(tmp_path / "x"), "--layout", "itbench-lite", "--window", "60s"])
    assert result.exit_code != 0 and "reproduces no ITBench scenario" in result.output
    bad = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["snapshot", "export", AA["ad-high-cpu"][0], "--out", str(tmp_path / "y"),
                                   "--layout", "itbench"])
    assert bad.exit_code != 0 and "--layout" in bad.output


class _Prom:
    """A cluster whose Prometheus answers each query from a table (no match: no series)."""

    def __init__(self, answers: dict[str, float]) -> None:
        self.answers = answers

    def promql(self, query: str) -> list[dict]:
        for needle, value in self.answers.items():
            if needle in query:
                return [{"metric": {}, "value": [0, str(value)]}]
        return []


@pytest.mark.parametrize(("check", "params", "answers", "passed"), [
    ("container_cpu_within", {"container": "ad", "max_cores": 0.1}, {}, False),  # no samples: fail closed
    ("container_cpu_within", {"container": "ad", "max_cores": 0.1}, {"rate(": 2.5, "container_cpu": 1}, False),
    ("container_cpu_within", {"container": "ad", "max_cores": 0.1}, {"rate(": 0.01, "container_cpu": 1}, True),
    ("memory_not_growing", {"container": "email"}, {}, False),
    ("memory_not_growing", {"container": "email"}, {"deriv(": 90_000.0, "working_set": 1}, False),
    ("memory_not_growing", {"container": "email"}, {"deriv(": -300.0, "working_set": 1}, True),
])
def test_resource_checks(check: str, params: dict, answers: dict[str, float], passed: bool) -> None:
    from sregym.oracles.checks import CHECKS, CheckContext

    ctx = CheckContext(cluster=_Prom(answers), namespace="astronomy-shop")  # type: ignore[arg-type]
    assert CHECKS.get(check)(ctx, **params)[0] is passed
