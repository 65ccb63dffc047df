"""Cost per attempt and per run: a real `sregym run` of the react agent against a scripted
OpenAI-compatible endpoint that reports token usage, priced from the table (by model name) or
from --price-in/--price-out; no price or no tokens give no cost (null), never 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.runner.pricing import PRICES, Price, override_price, table_price
from support.scripted_openai import ScriptedModel, tool_call

PROBLEM = "demo-shop/bad-image-tag-v1"
TOKENS = (1000, 50)  # per model turn


def _run(out: Path, *extra: str, env: dict[str, str] | None = None):
    args = ["run", "-p", PROBLEM, "--phases", "diagnosis", "--max-steps", "2", "--no-progress", "--out", str(out),
            *extra]
    return CliRunner(env={"COLUMNS": "200", "SREGYM_TEST_KEY": "k", **(env or {})}).invoke(app, args)


def _react(model_server: ScriptedModel, model: str) -> list[str]:
    return ["--agent", "react", "--model", model, "--base-url", model_server.base_url, "--api-key-env", "SREGYM_TEST_KEY"]


@pytest.fixture
def llm() -> ScriptedModel:
    turn = lambda: tool_call("kubectl", {"command": "get pods -n demo-shop"}, tokens=TOKENS)  # noqa: E731
    with ScriptedModel([], default=turn) as server:
        yield server


def _line_and_summary(out: Path) -> tuple[dict, dict]:
    line = json.loads((out / "results.jsonl").read_text().splitlines()[-1])
    return line, json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def priced_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A react run on a table model (tokens and price known) and a gold run (no tokens)."""
    root = tmp_path_factory.mktemp("priced")
    turn = lambda: tool_call("kubectl", {"command": "get pods -n demo-shop"}, tokens=TOKENS)  # noqa: E731
    with ScriptedModel([], default=turn) as server:
        result = _run(root / "react-mini", *_react(server, "gpt-4o-mini"))
    assert result.exit_code in (0, 1), result.output
    result = _run(root / "gold", "--agent", "gold", "--price-in", "1", "--price-out", "1")
    assert result.exit_code == 0, result.output
    return {"react": root / "react-mini", "gold": root / "gold"}


def test_a_table_model_is_priced_per_attempt_and_per_run(priced_runs: dict[str, Path]) -> None:
    line, summary = _line_and_summary(priced_runs["react"])
    assert line["tokens_in"] == 2 * TOKENS[0] and line["tokens_out"] == 2 * TOKENS[1]
    usd_in, usd_out = PRICES["gpt-4o-mini"]
    expected = round((line["tokens_in"] * usd_in + line["tokens_out"] * usd_out) / 1e6, 6)
    assert line["cost_usd"] == expected > 0
    assert summary["cost_usd"] == expected and summary["mean_cost_usd"] == expected


def test_no_tokens_no_cost_even_with_a_price(priced_runs: dict[str, Path]) -> None:
    line, summary = _line_and_summary(priced_runs["gold"])
    assert line["tokens_in"] is None and line.get("cost_usd") is None and summary["cost_usd"] is None


def test_the_report_leaderboard_and_the_viewer_show_the_cost(priced_runs: dict[str, Path]) -> None:
    from starlette.testclient import TestClient

    from sregym.report import build_report, numbers_of
    from sregym.viewer import create_app

    react_cost = _line_and_summary(priced_runs["react"])[1]["cost_usd"]
    board = {row["name"]: row for row in numbers_of([priced_runs["react"], priced_runs["gold"]])["comparison"]["leaderboard"]}
    assert board["react-mini"]["cost_usd"] == react_cost and board["gold"]["cost_usd"] is None
    markdown = build_report([priced_runs["react"], priced_runs["gold"]], "md")
    board_rows = [[c.strip() for c in line.strip("|").split("|")] for line in markdown.splitlines()
                  if line.startswith("| ") and line.split("|")[1].strip().isdigit()]  # "| rank | agent | run | ..."
    costs = {cells[2]: cells[-1] for cells in board_rows if len(cells) == 12}
    assert costs == {"react-mini": f"{react_cost:,.4f}", "gold": "—"}  # blank, not 0, when unknown

    client = TestClient(create_app([priced_runs["react"].parent]))
    view = client.get("/api/runs/react-mini").json()
    assert view["cost_usd"] == react_cost and view["problems"][0]["seeds"][0]["cost_usd"] == react_cost
    assert client.get("/api/runs/gold").json()["cost_usd"] is None


def test_price_options_override_the_table_and_are_kept_for_a_resume(llm: ScriptedModel, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _run(out, *_react(llm, "gpt-4o-mini"), "--price-in", "3", "--price-out", "20")
    assert result.exit_code in (0, 1), result.output
    line, summary = _line_and_summary(out)
    assert line["cost_usd"] == round((line["tokens_in"] * 3 + line["tokens_out"] * 20) / 1e6, 6)
    assert summary["cost_usd"] == line["cost_usd"]
    stored = json.loads((out / "run.json").read_text())["price_override"]
    assert stored == {"usd_per_m_in": 3.0, "usd_per_m_out": 20.0, "source": "option"}


def test_an_unknown_model_has_no_cost(llm: ScriptedModel, tmp_path: Path) -> None:
    assert _run(tmp_path / "a", *_react(llm, "my-own-model")).exit_code in (0, 1)
    line, summary = _line_and_summary(tmp_path / "a")
    assert line["tokens_in"] > 0 and line.get("cost_usd") is None and summary["cost_usd"] is None


def test_half_a_price_is_refused(tmp_path: Path) -> None:
    result = _run(tmp_path / "out", "--agent", "gold", "--price-in", "1")
    assert result.exit_code == 2 and "--price-out" in result.output
    assert not (tmp_path / "out").exists()


def test_the_price_table_matches_the_longest_model_prefix_and_the_environment() -> None:
    assert table_price("gpt-4o-mini-2024-07-18").source == "table:gpt-4o-mini"
    assert table_price("openai/gpt-4o").source == "table:gpt-4o"
    assert table_price("claude-opus-4-5-20251101").usd_per_m_in == PRICES["claude-opus-4-5"][0]
    assert table_price("gpt-4o2") is None and table_price(None) is None and table_price("llama-3") is None
    assert override_price(None, None, {}) is None
    assert override_price(None, None, {"SREGYM_PRICE_IN": "2", "SREGYM_PRICE_OUT": "8"}) == Price(2.0, 8.0, "environment")
    with pytest.raises(ValueError, match="both"):
        override_price(None, None, {"SREGYM_PRICE_IN": "2"})
    assert Price(1.0, 2.0, "option").cost(None, 5) is None
    assert Price(1.0, 2.0, "option").cost(1_000_000, 500_000) == 2.0
