"""`sregym list agents|suites|problems`: a header row each, filters that refuse typos, and the
agents' needs (extras, binaries) shown before a run fails on them."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.problems import select

runner = CliRunner(env={"COLUMNS": "200"})


def _rows(argv: list[str]) -> list[list[str]]:
    result = runner.invoke(app, argv)
    assert result.exit_code == 0, result.stderr
    return [line.split() for line in result.stdout.splitlines()]


def test_list_problems_has_a_header_and_filters_by_suite_and_tag() -> None:
    rows = _rows(["list", "problems"])
    assert rows[0] == ["ID", "KIND", "LAYERS", "DIFFICULTY", "SUITES", "TITLE"]
    assert [r[0] for r in rows[1:]] == [p.id for p in select()]
    assert {r[0]: r[1] for r in rows[1:]}["hotel-reservation/no-incident-rollout-v1"] == "control"
    assert {r[1] for r in rows[1:]} == {"incident", "control"}
    lite = _rows(["list", "problems", "--suite", "lite"])
    assert lite[0][0] == "ID" and len(lite) - 1 == len(select(suite="lite")) > 0
    assert all("lite" in r[4].split(",") for r in lite[1:])
    network = _rows(["list", "problems", "--tag", "network"])
    assert len(network) - 1 == len(select(tag="network")) > 0
    assert all("network" in r[2].split(",") for r in network[1:])
    hard = _rows(["list", "problems", "--tag", "hard"])
    assert all(r[3] == "hard" for r in hard[1:])


def test_an_unknown_suite_or_tag_lists_the_known_ones() -> None:
    result = runner.invoke(app, ["list", "problems", "--suite", "lightweight"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "sregym list problems: --suite: unknown suite 'lightweight'; known: astronomy-shop, controls, demo, detection, itbench-aa, lite, social-network"
    result = runner.invoke(app, ["list", "problems", "--tag", "dns"])
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert line.startswith("sregym list problems: --tag: unknown tag 'dns'; known: app, config,") and "hard" in line


def test_list_suites_counts_problems() -> None:
    rows = _rows(["list", "suites"])
    assert rows[0] == ["SUITE", "PROBLEMS"]
    counts = {name: int(n) for name, n in rows[1:]}
    assert counts["lite"] == len(select(suite="lite")) == 29
    assert counts["itbench-aa"] == len(select(suite="itbench-aa")) >= 3
    assert counts["demo"] == len(select(suite="demo"))


def test_list_agents_shows_description_and_needs() -> None:
    result = runner.invoke(app, ["list", "agents"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "NEEDS", "DESCRIPTION"]
    by_name = {line.split()[0]: line for line in lines[1:]}
    assert set(by_name) >= {"noop", "gold", "baseline", "react", "command", "claude-code", "codex"}
    assert "Returns at once without calling a tool." in by_name["noop"]
    assert "sregym[llm]" in by_name["react"]  # installed with [test]: shown without "(missing)"
    assert "(missing)" not in by_name["react"]
    assert "claude on PATH" in by_name["claude-code"] and "codex on PATH" in by_name["codex"]
    assert by_name["baseline"].split()[1] == "-"


def test_list_agents_marks_a_missing_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    monkeypatch.setattr(shutil, "which", lambda _name: None)
    result = runner.invoke(app, ["list", "agents"])
    line = next(x for x in result.stdout.splitlines() if x.startswith("codex "))
    assert "codex on PATH (missing)" in line
