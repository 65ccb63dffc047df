"""Variants on the command line: `sregym list problems --expand` lists each family's variants
under it and the footer counts scenarios and ids apart; `sregym run --variants N` runs the seeded
draw, records it in `run.json` and every result line, and `--resume` finishes exactly those."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.problems import select
from sregym.problems.family import expand_with_variants, family_of

runner = CliRunner(env={"COLUMNS": "200"})
FAMILY = "demo-shop/service-selector-mismatch-v1"


def test_list_expand_shows_variants_under_their_family_and_counts_both() -> None:
    plain = runner.invoke(app, ["list", "problems", "--suite", "demo"])
    expanded = runner.invoke(app, ["list", "problems", "--suite", "demo", "--expand"])
    assert plain.exit_code == expanded.exit_code == 0
    scenarios = [p.id for p in select(suite="demo")]
    variants = family_of(FAMILY).variant_ids()
    assert [line.split()[0] for line in plain.stdout.splitlines()[1:]] == scenarios
    ids = [line.split()[0] for line in expanded.stdout.splitlines()[1:]]
    at = ids.index(FAMILY)
    assert ids[at + 1:at + 1 + len(variants)] == variants  # right under the default
    assert len(ids) == len(scenarios) + len(variants)
    assert plain.stderr.strip() == (f"{len(scenarios)} scenarios (1 of them families with variants), "
                                    f"{len(scenarios) + len(variants)} problem ids; --expand lists the variants")


def test_show_takes_a_variant_id_and_says_what_is_wrong_with_a_bad_one() -> None:
    shown = runner.invoke(app, ["show", f"{FAMILY}@value=canary", "--reveal"])
    assert shown.exit_code == 0 and f"Variant of {FAMILY} with value=canary" in shown.stdout
    assert '"version": "canary"' in shown.stdout
    bad = runner.invoke(app, ["show", f"{FAMILY}@value=v9"])
    assert bad.exit_code == 2 and "parameter value='v9' is not in its space (v2, v3, canary)" in bad.stderr


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sregym.cli.main", "run", *argv], capture_output=True, text=True,
                          timeout=600)


def test_run_variants_records_the_draw_and_resume_finishes_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _run("--agent", "gold", "--problem", FAMILY, "--variants", "2", "--seeds", "1", "--out", str(out),
                "--no-progress")
    assert proc.returncode == 0, proc.stderr
    expected = expand_with_variants([FAMILY], 2, seed=0)
    assert len(expected) == 3 and all(i.startswith(FAMILY + "@") for i in expected[1:])
    config = json.loads((out / "run.json").read_text())
    assert config["problem_ids"] == expected
    assert config["selection"]["variants"] == 2 and config["selection"]["variant_seed"] == 0
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [ln["problem_id"] for ln in lines] == expected
    assert all(ln["passed"] and ln["problem_version"] == 1 for ln in lines)
    for pid in expected:
        assert (out / "trajectories" / f"{pid}__0.jsonl").is_file()

    # Lose the last attempt (as if killed before it was written): resume runs that one only.
    (out / "results.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in lines[:2]))
    (out / "trajectories" / f"{expected[2]}__0.jsonl").unlink()
    resumed = _run("--resume", str(out), "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    again = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [ln["problem_id"] for ln in again] == expected and all(ln["passed"] for ln in again)
    config = json.loads((out / "run.json").read_text())
    assert config["resumes"][-1]["ran"] == 1
