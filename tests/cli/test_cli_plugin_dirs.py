"""`--problems-dir` / `--agents-dir` that point nowhere, at a file, or at a module that does not
import: one line naming the file, the line and the exception, exit 2, in every command that takes
them — and never a traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.registry import PluginLoadError, load_plugin_dir

P = "demo-shop/bad-image-tag-v1"
runner = CliRunner(env={"COLUMNS": "80"})

# Every command taking --problems-dir, with the rest of a valid invocation (OUT: a fresh path).
PROBLEM_COMMANDS: dict[str, list[str]] = {
    "run": ["run", "-p", P, "--out", "OUT"],
    "check": ["check", P],
    "list problems": ["list", "problems"],
    "list suites": ["list", "suites"],
    "show": ["show", P],
    "mcp": ["mcp", "-p", P],
    "snapshot export": ["snapshot", "export", P, "--out", "OUT"],
    "snapshot dataset": ["snapshot", "dataset", P, "--out", "OUT"],
}
AGENT_COMMANDS: dict[str, list[str]] = {
    "run": ["run", "-p", P, "--out", "OUT"],
    "list agents": ["list", "agents"],
}


def _nowhere(tmp: Path) -> tuple[Path, list[str]]:
    return tmp / "missing", ["does not exist"]


def _a_file(tmp: Path) -> tuple[Path, list[str]]:
    path = tmp / "problems.py"
    path.write_text("x = 1\n")
    return path, ["is a file, not a directory"]


def _syntax_error(tmp: Path) -> tuple[Path, list[str]]:
    d = tmp / "plugins_syntax"
    d.mkdir()
    (d / "broken.py").write_text("x = 1\n\ndef broken(:\n    pass\n")
    return d, [str(d / "broken.py"), "line 3", "SyntaxError"]


def _raises(tmp: Path) -> tuple[Path, list[str]]:
    d = tmp / "plugins_raise"
    d.mkdir()
    (d / "boom.py").write_text("import os\n\nraise RuntimeError('boom from the plugin')\n")
    return d, [str(d / "boom.py"), "line 3", "RuntimeError: boom from the plugin"]


CASES: dict[str, Callable[[Path], tuple[Path, list[str]]]] = {
    "nowhere": _nowhere, "a file": _a_file, "syntax error": _syntax_error, "raises at import": _raises}


def _check(argv: list[str], flag: str, case: str, tmp: Path) -> None:
    directory, expected = CASES[case](tmp)
    full = [tmp.joinpath("out").as_posix() if a == "OUT" else a for a in argv] + [flag, str(directory)]
    result = runner.invoke(app, full)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert flag in lines[0]
    for part in expected:
        assert part in lines[0], lines[0]
    assert "Traceback" not in result.stdout + result.stderr
    assert not (tmp / "out").exists()


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("command", list(PROBLEM_COMMANDS))
def test_problems_dir_errors(command: str, case: str, tmp_path: Path) -> None:
    _check(PROBLEM_COMMANDS[command], "--problems-dir", case, tmp_path)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("command", list(AGENT_COMMANDS))
def test_agents_dir_errors(command: str, case: str, tmp_path: Path) -> None:
    _check(AGENT_COMMANDS[command], "--agents-dir", case, tmp_path)


def test_a_fixed_file_loads_on_the_next_try(tmp_path: Path) -> None:
    """A file that failed to import is forgotten, so fixing it is enough (no stale half-module)."""
    d = tmp_path / "plugins_fixed"
    d.mkdir()
    (d / "late.py").write_text("raise ValueError('not yet')\n")
    with pytest.raises(PluginLoadError, match=r"late.py, line 1: ValueError: not yet"):
        load_plugin_dir(d, "sregym_test_plugins", "plugins directory")
    (d / "late.py").write_text("LOADED = True\n")
    load_plugin_dir(d, "sregym_test_plugins", "plugins directory")


def test_the_error_points_at_the_zz_helperule_that_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plug-in importing a broken helper of its own: the line is the helper's, not the loader's."""
    d = tmp_path / "plugins_helper"
    d.mkdir()
    (d / "zz_helper.py").write_text("\n\nVALUE = 1 / 0\n")
    (d / "main.py").write_text("import zz_helper\n")
    monkeypatch.syspath_prepend(str(d))
    with pytest.raises(PluginLoadError) as caught:
        load_plugin_dir(d, "sregym_test_helper", "plugins directory")
    message = str(caught.value)
    assert "zz_helper.py, line 3: ZeroDivisionError: division by zero" in message


def test_list_agents_shows_an_agents_dir_agent(tmp_path: Path) -> None:
    d = tmp_path / "agents_ok"
    d.mkdir()
    (d / "mine.py").write_text(
        "from sregym.agents import Agent, agent\n\n\n@agent\nclass Mine(Agent):\n"
        "    '''Blames DNS, always. A second sentence.'''\n\n    name = 'mine-dns'\n")
    result = runner.invoke(app, ["list", "agents", "--agents-dir", str(d)])
    assert result.exit_code == 0, result.stderr
    assert any(line.split()[:3] == ["mine-dns", "-", "Blames"] and line.endswith("always.")
               for line in result.stdout.splitlines())


def test_agent_options_are_checked_by_the_agent_or_refused(tmp_path: Path) -> None:
    """A plug-in agent that declares no options takes none; one that checks its own in `__init__`
    gets them (and its own refusal is one line too)."""
    d = tmp_path / "agents_opts"
    d.mkdir()
    (d / "opts.py").write_text(
        "from sregym.agents import Agent, agent\n\n\n@agent\nclass Plain(Agent):\n    name = 'plain-opts'\n\n\n"
        "@agent\nclass Picky(Agent):\n    name = 'picky-opts'\n\n"
        "    def __init__(self, **options):\n"
        "        if set(options) - {'threshold'}:\n"
        "            raise ValueError(f'picky takes only threshold, not {sorted(options)}')\n"
        "        super().__init__(**options)\n")
    base = ["run", "-p", P, "--agents-dir", str(d), "--out", str(tmp_path / "out")]
    plain = runner.invoke(app, [*base, "--agent", "plain-opts", "-o", "threshold=0.5"])
    assert plain.exit_code == 2 and plain.stderr.strip() == "sregym run: -o threshold: the plain-opts agent takes no options"
    picky = runner.invoke(app, [*base, "--agent", "picky-opts", "-o", "bogus=1"])
    assert picky.exit_code == 2 and "picky takes only threshold" in picky.stderr
    assert len(picky.stderr.strip().splitlines()) == 1 and "Traceback" not in picky.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").glob("results.jsonl"))
