"""The `sregym` command line."""

from __future__ import annotations

from typer.testing import CliRunner

from sregym import __version__
from sregym.cli.main import app

runner = CliRunner(env={"COLUMNS": "200"})


def test_help_lists_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "twin" in result.output and "version" in result.output


def test_version() -> None:
    result = runner.invoke(app, ["version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"sregym {__version__}"


def test_twin_demo_prints_pods_with_states() -> None:
    result = runner.invoke(app, ["twin", "demo", "--seconds", "60", "--seed", "3"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "web-" in out and "Running" in out
    assert "api-" in out and ("ImagePullBackOff" in out or "ErrImagePull" in out)
    assert "coredns-" in out


def test_twin_demo_is_deterministic() -> None:
    first = runner.invoke(app, ["twin", "demo", "--seed", "5"]).output
    second = runner.invoke(app, ["twin", "demo", "--seed", "5"]).output
    assert first == second


def test_twin_demo_explains_the_broken_pods() -> None:
    """The api pods fail on purpose; a note after the table says which and why."""
    out = runner.invoke(app, ["twin", "demo", "--seed", "3"]).output
    table, _, note = out.partition("note: ")
    assert "api-" in table
    note = " ".join(note.split())
    assert note.startswith("the api pods (api-") and "are broken on purpose" in note
    assert "nginx:1.27-broken" in note and "ErrImagePull" in note and "ImagePullBackOff" in note


def test_help_of_every_command_works() -> None:
    for argv in (["run"], ["check"], ["list", "agents"], ["list", "suites"], ["list", "problems"], ["show"],
                 ["mcp"], ["twin", "up"], ["twin", "demo"], ["snapshot", "export"], ["snapshot", "dataset"],
                 ["snapshot", "run"], ["snapshot", "score"]):
        result = runner.invoke(app, [*argv, "--help"])
        assert result.exit_code == 0, (argv, result.output)
        assert "Usage" in result.output


def test_check_report_lines_name_failed_steps() -> None:
    from sregym.cli.problems import report_lines
    from sregym.problems.check import CheckReport

    report = CheckReport("demo-shop/x-v1", 4, wall_s=12.34)
    report.add("gold passes every check", False, "deployment catalog\nnot ready")
    report.add("noop fails", True)
    assert report_lines(report) == ["FAIL demo-shop/x-v1  seed 4  12.3s",
                                    "    x gold passes every check: deployment catalog not ready"]
