"""Every bad argument of every command: exit code 2, one line on stderr naming the argument, no
traceback, nothing started (issue #26 item 6).

The table is the specification: each row is an invocation a user could type, the argument the
error line must name, and the exit code. Most rows go through `CliRunner` over the real app; a few
run the installed `sregym` console script, so the entry point itself is covered too.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app

P = "demo-shop/bad-image-tag-v1"
runner = CliRunner(env={"COLUMNS": "80"})


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("bad-args")
    a_file = root / "a-file"
    a_file.write_text("not a directory\n")
    a_dir = root / "a-dir"
    a_dir.mkdir()
    return {"FILE": str(a_file), "UNDER_FILE": str(a_file / "sub"), "DIR": str(a_dir),
            "NEW": str(root / "new-dir"), "NOWHERE": str(root / "nowhere")}


# (argv, argument the line must name, exit code). FILE, UNDER_FILE, DIR, NEW and NOWHERE are paths.
CASES: list[tuple[list[str], str, int]] = [
    # run
    (["run", "--suite", "lite", "-j", "0"], "--jobs", 2),
    (["run", "--suite", "lite", "-j", "-2"], "--jobs", 2),
    (["run", "--suite", "lite", "-j", "abc"], "--jobs", 2),
    (["run", "--suite", "lite", "--seeds", "0"], "--seeds", 2),
    (["run", "--suite", "lite", "--max-steps", "-1"], "--max-steps", 2),
    (["run", "--suite", "lite", "--seconds-per-call", "-5"], "--seconds-per-call", 2),
    (["run", "--suite", "lite", "--noise", "loud"], "--noise", 2),
    (["run", "--suite", "lite", "--phases", "diagnosis,cleanup"], "--phases", 2),
    (["run", "--suite", "lite", "--agent", "noop", "-o", "bogus=1"], "bogus", 2),
    (["run", "--suite", "lite", "--agent", "react", "--model", "m", "-o", "bogus=1"], "bogus", 2),
    (["run", "--suite", "lite", "--agent", "command", "-o", "command=true", "-o", "bogus=1"], "bogus", 2),
    (["run", "--suite", "lite", "--agent", "gold", "--model", "gpt"], "--model", 2),
    (["run", "--suite", "lite", "-o", "novalue"], "--option", 2),
    (["run", "--suite", "lite", "--out", "FILE"], "--out", 2),
    (["run", "--suite", "lite", "--out", "UNDER_FILE"], "--out", 2),
    (["run", "--suite", "nope"], "--suite", 2),
    (["run", "--tag", "nope"], "--tag", 2),
    (["run", "--problem", "x/nope-v1"], "--problem", 2),
    (["run", "--suite", "lite", "--agent", "nope"], "--agent", 2),
    (["run", "--resume", "FILE"], "--resume", 2),
    (["run", "--bogus-flag"], "--bogus-flag", 2),
    # check, list, show
    (["check", P, "--seed", "-1"], "--seed", 2),
    (["check", "--all", "-j", "0"], "--jobs", 2),
    (["check", "--all", "-j", "-2"], "--jobs", 2),
    (["check", "x/nope-v1"], "x/nope-v1", 2),
    (["check"], "--all", 2),
    (["list", "problems", "--suite", "nope"], "--suite", 2),
    (["list", "problems", "--tag", "nope"], "--tag", 2),
    (["list", "nothing"], "nothing", 2),
    (["show", "x/nope-v1"], "x/nope-v1", 2),
    # twin
    (["twin", "up", "--port", "99999"], "--port", 2),
    (["twin", "up", "--prometheus-port", "70000"], "--prometheus-port", 2),
    (["twin", "up", "--loki-port", "9090"], "--loki-port", 2),
    (["twin", "up", "--speed", "-1"], "--speed", 2),
    (["twin", "up", "--seed", "-1"], "--seed", 2),
    (["twin", "up", "--kubeconfig", "UNDER_FILE"], "--kubeconfig", 2),
    (["twin", "up", "--kubeconfig", "DIR"], "--kubeconfig", 2),
    (["twin", "up", "--app", "nope"], "--app", 2),
    (["twin", "demo", "--seconds", "-1"], "--seconds", 2),
    (["twin", "demo", "--seed", "-3"], "--seed", 2),
    # mcp
    (["mcp", "-p", P, "--transport", "http", "--port", "70000"], "--port", 2),
    (["mcp", "-p", P, "--port", "-1"], "--port", 2),
    (["mcp", "-p", P, "--transport", "sse"], "--transport", 2),
    (["mcp", "-p", P, "--noise", "x"], "--noise", 2),
    (["mcp", "-p", P, "--clock", "fast"], "--clock", 2),
    (["mcp", "-p", P, "--seconds-per-call", "-5"], "--seconds-per-call", 2),
    (["mcp", "-p", P, "--max-steps", "0"], "--max-steps", 2),
    (["mcp", "-p", P, "--phases", "fix"], "--phases", 2),
    (["mcp", "-p", P, "--seed", "-1"], "--seed", 2),
    (["mcp", "-p", P, "--result", "DIR"], "--result", 2),
    (["mcp", "-p", "x/nope-v1"], "--problem", 2),
    (["mcp"], "--problem", 2),
    # snapshot export / dataset / run / score
    (["snapshot", "export", P, "--out", "FILE"], "--out", 2),
    (["snapshot", "export", P, "--out", "UNDER_FILE"], "--out", 2),
    (["snapshot", "export", P, "--out", "NEW", "--seed", "-1"], "--seed", 2),
    (["snapshot", "export", P, "--out", "NEW", "--noise", "x"], "--noise", 2),
    (["snapshot", "export", P, "--out", "NEW", "--window", "0"], "--window", 2),
    (["snapshot", "dataset", P, "--out", "NEW", "--seeds", "0"], "--seeds", 2),
    (["snapshot", "dataset", P, "--out", "NEW", "-j", "0"], "--jobs", 2),
    (["snapshot", "dataset", "--suite", "nope", "--out", "NEW"], "--suite", 2),
    (["snapshot", "dataset", "--tag", "nope", "--out", "NEW"], "--tag", 2),
    (["snapshot", "dataset", P, "--out", "UNDER_FILE"], "--out", 2),
    (["snapshot", "run", "--dataset", "NOWHERE", "--agent", "noop", "--out", "NEW", "--repeats", "0"], "--repeats", 2),
    (["snapshot", "run", "--dataset", "NOWHERE", "--agent", "noop", "--out", "NEW", "-j", "0"], "--jobs", 2),
    (["snapshot", "run", "--dataset", "NOWHERE", "--agent", "noop", "--out", "NEW", "--time-limit", "-1"],
     "--time-limit", 2),
    (["snapshot", "run", "--dataset", "NOWHERE", "--agent", "noop", "--out", "NEW", "-o", "bogus=1"], "bogus", 2),
    (["snapshot", "run", "--dataset", "NOWHERE", "--agent", "noop", "--out", "FILE"], "--out", 2),
    (["snapshot", "run", "--agent", "noop", "--out", "NEW"], "--dataset", 2),
    (["snapshot", "run", "--resume", "NOWHERE"], "--resume", 2),
    (["snapshot", "run", "--resume", "FILE"], "--resume", 2),
    (["snapshot", "score", "--dataset", "NOWHERE", "--outputs", "NEW", "--json", "UNDER_FILE"], "--json", 2),
]


def _argv(argv: list[str], paths: dict[str, str]) -> list[str]:
    return [paths.get(a, a) for a in argv]


def assert_one_line_error(stdout: str, stderr: str, argument: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert argument in lines[0], lines[0]
    assert lines[0].startswith("sregym"), lines[0]
    assert "Traceback" not in stdout + stderr


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 40
    assert {argv[0] for argv, _, _ in CASES} >= {"run", "check", "list", "show", "twin", "mcp", "snapshot"}


@pytest.mark.parametrize(("argv", "argument", "code"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_argument(argv: list[str], argument: str, code: int, paths: dict[str, str]) -> None:
    result = runner.invoke(app, _argv(argv, paths))
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert_one_line_error(result.stdout, result.stderr, argument)
    assert not Path(paths["NEW"]).exists()  # nothing was started


def _console_script() -> str:
    found = Path(sys.executable).parent / "sregym"
    script = str(found) if found.exists() else shutil.which("sregym")
    if script is None:
        pytest.skip("the sregym console script is not installed")
    return script


@pytest.mark.parametrize(("argv", "argument"), [
    (["run", "--suite", "lite", "-j", "0"], "--jobs"),
    (["twin", "up", "--port", "99999"], "--port"),
    (["mcp", "-p", P, "--transport", "http", "--port", "70000"], "--port"),
    (["list", "problems", "--suite", "nope"], "--suite"),
    (["snapshot", "run", "--resume", "NOWHERE"], "--resume"),
])
def test_bad_argument_through_the_console_script(argv: list[str], argument: str, paths: dict[str, str]) -> None:
    proc = subprocess.run([_console_script(), *_argv(argv, paths)], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "80", "HOME": paths["DIR"]})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert_one_line_error(proc.stdout, proc.stderr, argument)


def test_a_missing_extra_is_one_line_and_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    """`MissingExtra` names the install command; the command exits with ENVIRONMENT (3)."""
    import sregym.extras
    from sregym.extras import MissingExtra

    def missing(module: str, feature: str) -> None:
        raise MissingExtra(module, "mcp", feature)

    monkeypatch.setattr(sregym.extras, "require", missing)
    result = runner.invoke(app, ["mcp", "-p", P])
    assert result.exit_code == 3
    assert_one_line_error(result.stdout, result.stderr, "pip install 'sregym[mcp]'")


def test_a_missing_extra_anywhere_is_caught_by_the_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that does not catch `MissingExtra` itself still ends in one line and exit 3."""
    import sregym.cli.problems
    from sregym.extras import MissingExtra

    def missing(*_args: object) -> None:
        raise MissingExtra("openai", "llm", "the react agent")

    monkeypatch.setattr(sregym.cli.problems, "print_rows", missing)
    result = runner.invoke(app, ["list", "agents"])
    assert result.exit_code == 3
    assert_one_line_error(result.stdout, result.stderr, "pip install 'sregym[llm]'")
