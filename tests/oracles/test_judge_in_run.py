"""`sregym run --judge llm`: the LLM judge scores the run's diagnoses, and the choice is recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from support.scripted_openai import ScriptedModel

PROBLEM = "demo-shop/bad-image-tag-v1"


def _run(*extra: str, env: dict[str, str] | None = None, out: Path | None = None):
    args = ["run", "-p", PROBLEM, "--agent", "gold", "--phases", "diagnosis", "--no-progress", *extra]
    if out is not None:
        args += ["--out", str(out)]
    return CliRunner(env={"COLUMNS": "200", **(env or {})}).invoke(app, args)


@pytest.mark.parametrize(("flags", "message"), [
    (["--judge", "llm"], "--judge llm needs --judge-model and --judge-base-url"),
    (["--judge", "llm", "--judge-model", "m"], "--judge llm needs --judge-base-url"),
    (["--judge", "oracle"], "--judge must be one of deterministic, llm"),
    (["--judge-model", "m"], "--judge-model only apply with --judge llm"),
])
def test_bad_judge_flags_are_one_line_and_exit_2(flags: list[str], message: str, tmp_path: Path) -> None:
    result = _run(*flags, out=tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_llm_judge_without_the_extra_is_one_line_and_exit_3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sregym.extras

    real = sregym.extras.importlib.import_module

    def no_openai(name: str, *args: object) -> object:
        if name.split(".")[0] == "openai":
            raise ModuleNotFoundError("No module named 'openai'", name="openai")
        return real(name, *args)

    monkeypatch.setattr(sregym.extras.importlib, "import_module", no_openai)
    result = _run("--judge", "llm", "--judge-model", "m", "--judge-base-url", "http://127.0.0.1:9/v1",
                  out=tmp_path / "out")
    assert result.exit_code == 3, result.output
    assert "pip install 'sregym[llm]'" in result.output and len(result.output.strip().splitlines()) == 1


def test_run_scores_the_diagnosis_with_the_llm_judge(llm_server: ScriptedModel, tmp_path: Path) -> None:
    url = llm_server.base_url
    out = tmp_path / "run"
    result = _run("--judge", "llm", "--judge-model", "judge-m", "--judge-base-url", url,
                  "--judge-api-key-env", "MY_JUDGE_KEY", env={"MY_JUDGE_KEY": "k-run-secret"}, out=out)
    assert result.exit_code == 0, result.output
    (line,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    diagnosis = line["diagnosis"]
    assert diagnosis["judge"] == "llm" and diagnosis["judge_model"] == "judge-m"
    assert [a["evidence"] for a in diagnosis["checklist"]] == ["ok"] * 9
    seen = llm_server.received()
    assert seen and seen[0]["auth"] == "Bearer k-run-secret" and seen[0]["body"]["model"] == "judge-m"
    assert "DIAGNOSIS SUBMITTED" in seen[0]["body"]["messages"][1]["content"]
    stored = (out / "run.json").read_text()
    assert json.loads(stored)["worker"]["judge"] == {"kind": "llm", "model": "judge-m", "base_url": url,
                                                     "api_key_env": "MY_JUDGE_KEY"}
    assert "k-run-secret" not in stored


def test_the_default_run_keeps_the_deterministic_judge(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = _run(out=out)
    assert result.exit_code == 0, result.output
    (line,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert line["diagnosis"]["judge"] == "deterministic" and line["diagnosis"]["passed"]
    assert "judge" not in json.loads((out / "run.json").read_text())["worker"]
