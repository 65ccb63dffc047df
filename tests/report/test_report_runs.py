"""`sregym report` over two real runs (baseline and noop on the same problems and seeds): every
number of the HTML, Markdown and JSON reports equals the runs' `summary.json`, the paired
comparison equals what the two `results.jsonl` files say, the HTML carries its figures and nothing
external, `--plots` writes real PNGs, and bad input gets one clear line."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from support.report_page import ReportPage, markdown_tables

CHARTS = {"overall", "by-layer", "score-distribution", "pass-k"}


def _report(*args: str) -> str:
    result = CliRunner().invoke(app, ["report", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _summary(run: Path) -> dict[str, Any]:
    return json.loads((run / "summary.json").read_text())


def _lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in (run / "results.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def numbers(two_runs: tuple[Path, Path]) -> dict[str, Any]:
    return json.loads(_report(*map(str, two_runs), "--format", "json"))


@pytest.fixture(scope="module")
def page(two_runs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ReportPage]:
    out = tmp_path_factory.mktemp("html") / "report.html"
    _report(*map(str, two_runs), "--out", str(out))
    text = out.read_text()
    return text, ReportPage(text)


def test_the_runs_are_what_the_comparison_needs(two_runs: tuple[Path, Path]) -> None:
    baseline, noop = map(_summary, two_runs)
    assert baseline["overall"]["end_to_end"] == 1.0 and noop["overall"]["end_to_end"] == 0.0
    assert baseline["overall"]["environment_failures"] == noop["overall"]["environment_failures"] == 0


def test_json_numbers_equal_each_summary(two_runs: tuple[Path, Path], numbers: dict[str, Any]) -> None:
    assert [s["name"] for s in numbers["sources"]] == [p.name for p in two_runs]
    for run, source in zip(two_runs, numbers["sources"], strict=True):
        summary = _summary(run)
        assert source["agent"] == summary["agent"] and source["noise"] == summary["noise"]
        assert source["columns"] == summary["seeds"] and source["problems"] == summary["problems"]
        for key in ("attempts", "environment_failures"):
            assert source["overall"][key] == summary["overall"][key]
        for metric in ("diagnosis", "mitigation", "end_to_end"):
            block = source["overall"][metric]
            assert block["estimate"] == summary["overall"][metric]
            assert block["low"] <= block["estimate"] <= block["high"]
        for grouping in ("by_layer", "by_app", "by_difficulty"):
            assert set(source[grouping]) == set(summary[grouping])
            for name, rates in summary[grouping].items():
                for metric in ("diagnosis", "mitigation", "end_to_end"):
                    assert source[grouping][name][metric]["estimate"] == rates[metric], (grouping, name, metric)
                assert source[grouping][name]["attempts"] == rates["attempts"]
        assert source["by_noise"] == {summary["noise"]: {k: v for k, v in source["overall"].items()
                                                         if k != "end_to_end_clustered"}}
        assert source["pass_hat_k"] == summary["pass_hat_k"]
        assert source["mean_steps"] == summary["mean_steps"]
        assert source["mean_tool_calls"] == summary["mean_tool_calls"]
        assert {r["problem"]: r["cells"] for r in source["matrix"]} == \
            {r["problem_id"]: r["verdicts"] for r in summary["per_problem"]}
        assert {r["problem"]: r["passed"] for r in source["matrix"]} == \
            {r["problem_id"]: r["passed"] for r in summary["per_problem"]}


def test_paired_comparison_counts_match_the_results_files(two_runs: tuple[Path, Path],
                                                          numbers: dict[str, Any]) -> None:
    a = {(ln["problem_id"], ln["seed"]): ln["passed"] for ln in _lines(two_runs[0]) if not ln["environment_failure"]}
    b = {(ln["problem_id"], ln["seed"]): ln["passed"] for ln in _lines(two_runs[1]) if not ln["environment_failure"]}
    shared = a.keys() & b.keys()
    (pair,) = numbers["comparison"]["pairs"]
    assert (pair["a"], pair["b"]) == (two_runs[0].name, two_runs[1].name)
    assert pair["pairs"] == len(shared) == 4
    assert pair["a_only"] == sum(a[k] and not b[k] for k in shared)
    assert pair["b_only"] == sum(b[k] and not a[k] for k in shared)
    assert pair["both"] == sum(a[k] and b[k] for k in shared)
    assert pair["neither"] == sum(not a[k] and not b[k] for k in shared)
    # 4 discordant pairs all one way: exact two-sided McNemar p = 2 / 2**4.
    assert pair["p_value"] == pytest.approx(0.125)
    assert pair["a_better"] == sorted({k[0] for k in shared}) and pair["b_better"] == []
    board = numbers["comparison"]["leaderboard"]
    assert [r["name"] for r in board] == [two_runs[0].name, two_runs[1].name]
    for row, run in zip(board, two_runs, strict=True):
        summary = _summary(run)
        assert row["end_to_end"]["estimate"] == summary["overall"]["end_to_end"]
        assert row["pass_hat_k"] == summary["pass_hat_k"] and row["mean_steps"] == summary["mean_steps"]
    wins = {r["problem"]: r for r in numbers["comparison"]["per_problem"]}
    for row in _summary(two_runs[0])["per_problem"]:
        assert wins[row["problem_id"]]["sources"][two_runs[0].name]["passed"] == row["passed"]
        assert wins[row["problem_id"]]["best"] == [two_runs[0].name]


def test_html_shows_the_summary_numbers(two_runs: tuple[Path, Path], page: tuple[str, ReportPage],
                                        numbers: dict[str, Any]) -> None:
    _, html = page
    assert json.loads(html.data_json) == numbers
    baseline, noop = map(_summary, two_runs)
    board = {k: v for k, v in html.values.items() if k.startswith("leaderboard.")}
    for run, summary in ((two_runs[0], baseline), (two_runs[1], noop)):
        for metric in ("diagnosis", "mitigation", "end_to_end"):
            assert board[f"leaderboard.{run.name}.{metric}"] == summary["overall"][metric]
            shown = html.texts[f"leaderboard.{run.name}.{metric}"]
            assert shown.startswith(f"{100 * summary['overall'][metric]:.1f} %")
        for metric in ("diagnosis", "mitigation", "end_to_end"):
            assert html.values[f"{run.name}.overall.{metric}"] == summary["overall"][metric]
            assert html.values[f"{run.name}.by_layer.network.{metric}"] == summary["by_layer"]["network"][metric]
        for k, value in summary["pass_hat_k"].items():
            assert html.values[f"{run.name}.pass_hat_k.{k}"] == value
        for row in summary["per_problem"]:
            for seed, verdict in row["verdicts"].items():
                assert html.values[f"{run.name}.matrix.{row['problem_id']}.{seed}"] == verdict
    pair = f"paired.{two_runs[0].name}.{two_runs[1].name}"
    assert (html.values[f"{pair}.pairs"], html.values[f"{pair}.a_only"], html.values[f"{pair}.b_only"]) == (4, 4, 0)


def test_html_has_every_figure_inline_and_nothing_external(page: tuple[str, ReportPage]) -> None:
    text, html = page
    assert set(html.charts) == CHARTS
    for name, tags in html.charts.items():
        assert tags.get("svg") == 1, name
        assert tags.get("path", 0) + tags.get("rect", 0) + tags.get("use", 0) > 3, (name, tags)
        assert tags.get("text", 0) > 3, (name, tags)  # labels are text (they take the page's colour)
    assert [r for r in html.references if not r.startswith("#")] == []
    assert not re.search(r"url\((?!#)|@import|<link|<img|<iframe", text)
    assert "currentColor" in text and "prefers-color-scheme: dark" in text
    # No address outside the file, namespace names aside.
    assert set(re.findall(r"https?://[^\s\"'<>)]+", text)) <= {"http://www.w3.org/2000/svg"}


def test_markdown_tables_show_the_same_numbers(two_runs: tuple[Path, Path]) -> None:
    tables = markdown_tables(_report(*map(str, two_runs), "--format", "md"))
    board = {row["run"]: row for row in tables["Comparison/Leaderboard"]}
    for run in two_runs:
        summary = _summary(run)
        row = board[run.name]
        assert row["end to end"].startswith(f"{100 * summary['overall']['end_to_end']:.1f} %")
        assert row["diagnosis"].startswith(f"{100 * summary['overall']['diagnosis']:.1f} %")
        assert row["mean steps"] == f"{summary['mean_steps']:,.1f}"
        overall = {r["metric"]: r for r in tables[f"{run.name}/Summary"]}
        valid = summary["overall"]["attempts"] - summary["overall"]["environment_failures"]
        assert overall["end to end"]["passes / n"] == f"{round(summary['overall']['end_to_end'] * valid)} / {valid}"
        matrix = {r["problem"]: r for r in tables[f"{run.name}/Per problem"]}
        for prow in summary["per_problem"]:
            marks = {"pass": "✓", "fail": "✗", "environment_failure": "E"}
            assert [matrix[prow["problem_id"]][f"seed {s}"] for s in prow["verdicts"]] == \
                [marks[v] for v in prow["verdicts"].values()]
    (paired,) = tables["Comparison/Paired comparison"]
    assert (paired["pairs"], paired["A only"], paired["B only"]) == ("4", "4", "0")


def test_plots_dir_gets_valid_pngs(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    from PIL import Image

    _report(*map(str, two_runs), "--format", "json", "--plots", str(tmp_path / "figs"))
    files = sorted((tmp_path / "figs").iterdir())
    assert {p.stem for p in files} == CHARTS and all(p.suffix == ".png" for p in files)
    for path in files:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            assert image.width > 600 and image.height > 300
            darkest, lightest = image.convert("L").getextrema()
            assert darkest < 100 and lightest > 200  # ink on white: something is drawn


def test_same_runs_same_report(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    first, second = tmp_path / "1.html", tmp_path / "2.html"
    _report(*map(str, two_runs), "--out", str(first))
    _report(*map(str, two_runs), "--out", str(second))
    assert first.read_bytes() == second.read_bytes()


def test_bad_paths_get_one_clear_line(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["report", str(tmp_path / "nope"), "--format", "json"])
    assert result.exit_code == 2 and "does not exist" in result.output
    assert len(result.output.strip().splitlines()) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["report", str(empty), "--format", "json"])
    assert result.exit_code == 2 and "neither a run directory" in result.output
    result = runner.invoke(app, ["report", str(two_runs[0]), "--format", "pdf"])
    assert result.exit_code == 2 and "--format" in result.output
    unscored = tmp_path / "snapshot-run"
    unscored.mkdir()
    (unscored / "run.json").write_text(json.dumps({"format": "sregym-snapshot-run/1", "agent": "noop"}))
    result = runner.invoke(app, ["report", str(unscored), "--format", "json"])
    assert result.exit_code == 2 and "sregym snapshot score" in result.output


def test_without_matplotlib_html_names_the_extra_and_markdown_still_works(two_runs: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    hide = ("import sys; sys.modules['matplotlib'] = None; from sregym.cli.main import main; "
            "sys.argv = ['sregym', 'report', *sys.argv[1:]]; main()")
    html = subprocess.run([sys.executable, "-c", hide, str(two_runs[0]), "--out", str(tmp_path / "r.html")],
                          capture_output=True, text=True, timeout=300)
    assert html.returncode == 3, html.stderr
    assert html.stderr.strip() == ("sregym: sregym report's figures (HTML and --plots) needs the 'matplotlib' "
                                   "package, which is not installed: pip install 'sregym[report]'")
    md = subprocess.run([sys.executable, "-c", hide, str(two_runs[0]), "--format", "md"], capture_output=True,
                        text=True, timeout=300)
    assert md.returncode == 0, md.stderr
    assert "### Summary" in md.stdout


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_chromium_renders_the_figures_and_tables(page: tuple[str, ReportPage], tmp_path: Path) -> None:
    text, _ = page
    path = tmp_path / "report.html"
    path.write_text(text)
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", path.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    rendered = ReportPage(dom)
    assert set(rendered.charts) == CHARTS and all(t.get("svg") == 1 for t in rendered.charts.values())
    assert rendered.values == ReportPage(text).values
