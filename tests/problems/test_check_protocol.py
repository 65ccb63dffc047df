"""The check protocol over the whole registry, plus registry/CLI behaviour."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.problems import PROBLEMS, all_problem_ids, get_problem, load_problems_dir, select
from sregym.problems.model import Problem
from support.problem_batch import batch_result, group_of, isolation_sample, verifies_warmup


@pytest.mark.parametrize("problem_id", [pytest.param(pid, marks=pytest.mark.xdist_group(group_of(pid)))
                                        for pid in all_problem_ids()])
def test_check_protocol(problem_id: str) -> None:
    steps = batch_result(problem_id)["check"]
    failed = [f"{name}: {detail}" for name, passed, detail in steps if not passed]
    assert not failed, failed
    common = {"gold passes every check"}
    if verifies_warmup(group_of(problem_id)):  # one group per app builds the warm start twice
        common.add("same seed, identical warm-up")
    if problem_id in isolation_sample():  # the batch replicates the gold run once per fault and app
        common |= {"same seed, identical telemetry", "same seed, identical scores"}
    if get_problem(problem_id).is_control:  # nothing to break or undo: the protocol reads the other way
        expected = {"noop passes mitigation (nothing is broken)", "recover is a no-op"}
    else:
        expected = {"must_fix fail after injection", "noop fails mitigation", "recover restores the baseline"}
    assert {name for name, _, _ in steps} >= common | expected


def test_registry_has_cards_and_lite_suite() -> None:
    problems = [get_problem(pid) for pid in all_problem_ids()]
    assert len(problems) >= 6
    assert all(p.card for p in problems)
    lite = select(suite="lite")
    layers = {layer for p in lite for layer in p.tags.layers}
    assert {"config", "network", "k8s", "control-plane"} <= layers
    assert all("network" in p.tags.layers for p in select(tag="network"))


def test_problem_spec_rejects_unknown_fields_and_bad_ids() -> None:
    data = json.loads(get_problem("demo-shop/bad-image-tag-v1").model_dump_json())
    with pytest.raises(ValueError):
        Problem(**{**data, "surprise": 1})
    with pytest.raises(ValueError):
        Problem(**{**data, "id": "Bad Id"})


PROBLEM_FILE = textwrap.dedent('''
    from sregym.problems import problem, get_problem

    @problem
    def extra():
        """A third-party variant."""
        base = get_problem("demo-shop/service-selector-mismatch-v1")
        return base.model_copy(update={"id": "demo-shop/third-party-selector-v1", "card": ""})
''')


def test_problems_dir_is_loaded(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(PROBLEM_FILE)
    result = CliRunner().invoke(app, ["list", "problems", "--problems-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "demo-shop/third-party-selector-v1" in result.output
    assert get_problem("demo-shop/third-party-selector-v1").card == "A third-party variant."
    assert load_problems_dir(tmp_path) == []  # idempotent
    PROBLEMS._entries.pop("demo-shop/third-party-selector-v1")


def test_show_hides_ground_truth_unless_revealed() -> None:
    runner = CliRunner()
    plain = runner.invoke(app, ["show", "demo-shop/validating-webhook-outage-v1"])
    assert plain.exit_code == 0
    assert "pod-policy" not in plain.output and "ground_truth" not in plain.output
    revealed = runner.invoke(app, ["show", "demo-shop/validating-webhook-outage-v1", "--reveal"])
    assert "ground_truth" in revealed.output and "pod-policy.platform.io" in revealed.output
    missing = runner.invoke(app, ["show", "demo-shop/nope-v1"])
    assert missing.exit_code == 2


def test_cli_check_runs_one_problem() -> None:
    result = CliRunner().invoke(app, ["check", "demo-shop/service-selector-mismatch-v1", "--seed", "2"])
    assert result.exit_code == 0, result.output
    assert "PASS demo-shop/service-selector-mismatch-v1" in result.output
