"""The judge's labelled set, Cohen's κ, and the deterministic judge's agreement with the labels."""

from __future__ import annotations

from collections import Counter

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.oracles.agreement import QUESTION_IDS, agreement, cohen_kappa, deterministic, evaluate, load_set
from sregym.problems import all_problem_ids
from support.scripted_openai import ScriptedModel

ITEMS, HELD_OUT = load_set()


def test_the_set_covers_enough_problems_and_categories() -> None:
    problems = {i.problem for i in ITEMS}
    assert len(ITEMS) >= 300 and len(problems) >= 40
    assert problems <= set(all_problem_ids())
    hand = [i for i in ITEMS if i.source == "hand"]
    assert len(hand) >= 60 and len({i.problem for i in hand}) >= 20
    categories = Counter(i.category for i in ITEMS)
    for needed in ("correct_verbose", "correct_terse", "right_entity_wrong_mechanism", "symptom_as_cause",
                   "extra_healthy_blamed", "missing_affected", "right_mechanism_wrong_entity", "vague_impact",
                   "wrong"):
        assert categories[needed] >= 20, needed
    # Every item answers all nine questions, and both answers occur for every question.
    for q in QUESTION_IDS:
        assert {i.expected[q] for i in ITEMS} == {True, False}


def test_the_split_holds_out_about_a_third_of_the_problems() -> None:
    problems = {i.problem for i in ITEMS}
    held = problems & HELD_OUT
    assert 0.25 <= len(held) / len(problems) <= 0.42
    assert set(all_problem_ids()) >= HELD_OUT


def test_kappa_matches_a_hand_computed_example() -> None:
    a = [True, True, False, False, True, False, True, True, False, False]
    b = [True, False, False, False, True, False, True, True, True, False]
    # agreement 8/10; both say yes half the time, so chance agreement is 0.5: (0.8 - 0.5) / 0.5
    assert cohen_kappa(a, b) == pytest.approx(0.6)
    # unbalanced: a says yes 3/4, b 1/4; observed 2/4; chance 3/16 + 3/16 = 0.375
    assert cohen_kappa([True, True, True, False], [True, False, False, False]) == pytest.approx(0.2)
    assert cohen_kappa([True, True], [True, True]) == 1.0
    assert cohen_kappa([True, False], [False, True]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa([True], [])


def test_a_judge_that_always_says_yes_agrees_by_chance_only() -> None:
    pairs = [(item, dict.fromkeys(QUESTION_IDS, True)) for item in ITEMS]
    result = agreement(pairs)
    assert result.kappa["overall"] == pytest.approx(0.0)
    assert result.raw["overall"] == pytest.approx(sum(sum(i.expected.values()) for i in ITEMS) / (9 * len(ITEMS)))


def test_the_deterministic_judge_reaches_kappa_085_overall_and_held_out() -> None:
    results = evaluate(deterministic, ITEMS, HELD_OUT)
    assert results["all"].kappa["overall"] >= 0.85
    assert results["held-out"].kappa["overall"] >= 0.85
    hand = [i for i in ITEMS if i.source == "hand"]
    assert evaluate(deterministic, hand, HELD_OUT)["all"].kappa["overall"] >= 0.85


def test_cli_prints_kappa_and_measures_an_llm_judge(llm_server: ScriptedModel) -> None:
    runner = CliRunner(env={"COLUMNS": "200"})
    plain = runner.invoke(app, ["judge-eval"])
    assert plain.exit_code == 0, plain.output
    assert "held-out" in plain.output and "κ all" in plain.output
    assert plain.output.strip().splitlines()[-1].startswith("LLM judge: not measured")
    result = runner.invoke(app, ["judge-eval", "--base-url", llm_server.base_url, "--model", "judge-m", "--limit", "4"],
                           env={"SREGYM_JUDGE_API_KEY": "k-eval", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    seen = llm_server.received()
    assert "LLM judge (judge-m)" in result.output and len(seen) == 4
    assert seen[0]["auth"] == "Bearer k-eval" and seen[0]["body"]["model"] == "judge-m"
    half = runner.invoke(app, ["judge-eval", "--model", "m"])
    assert half.exit_code == 2 and "needs both --base-url and --model" in half.output
