"""Problems are validated when they register: fault and check names and parameters, the mechanism
against the problem set's vocabulary; a problem set may add mechanisms for its own problems only;
`check` scores the gold diagnosis."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.oracles.diagnosis import score_diagnosis
from sregym.oracles.mechanisms import BUILTIN
from sregym.problems import (
    PROBLEMS,
    ProblemValidationError,
    get_problem,
    load_problems_dir,
    problem,
    vocabulary_of,
)
from sregym.problems.gold_diagnosis import gold_diagnosis_args, score_gold_diagnosis, submission_from_args
from sregym.registry import PluginLoadError

BASE = "demo-shop/bad-image-tag-v1"

BROKEN = '''
from sregym.problems import get_problem, problem

base = get_problem("demo-shop/bad-image-tag-v1")
fault, fix = base.faults[0], base.mitigation.must_fix[0]


@problem
def broken():
    """Four mistakes in one problem."""
    return base.model_copy(update={
        "id": "demo-shop/broken-v1",
        "faults": (fault.model_copy(update={"fault": "set_imagee"}),
                   fault.model_copy(update={"params": {"namespace": "demo-shop", "name": "catalog", "imgae": "x:1"}})),
        "mitigation": base.mitigation.model_copy(update={"must_fix": (fix.model_copy(update={"check": "no_such_check"}),)}),
        "ground_truth": base.ground_truth.model_copy(update={"mechanism": "bad_imag"}),
    })
'''

WITH_MECHANISM = '''
from sregym.problems import get_problem, mechanisms, problem

mechanisms({"cert_expiry": ("certificate", "x509", "expired")}, related={"cert_expiry": ("dns",)})
base = get_problem("demo-shop/service-selector-mismatch-v1")


@problem
def cert():
    """A problem whose fault is not in the built-in vocabulary."""
    truth = base.ground_truth.model_copy(update={"mechanism": "cert_expiry"})
    return base.model_copy(update={"id": "demo-shop/ID-v1", "card": "", "ground_truth": truth})
'''


@pytest.fixture
def forget() -> Iterator[list[str]]:
    """Ids the test registers, removed afterwards so other tests see the catalogue only."""
    ids: list[str] = []
    yield ids
    for pid in ids:
        PROBLEMS._entries.pop(pid, None)


def _plugin(tmp_path: Path, name: str, text: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "problems.py").write_text(text)
    return directory


def test_a_broken_problem_fails_at_load_with_four_clear_errors(tmp_path: Path) -> None:
    directory = _plugin(tmp_path, "validation_broken", BROKEN)
    with pytest.raises(PluginLoadError) as caught:
        load_problems_dir(directory)
    error = caught.value.error
    assert isinstance(error, ProblemValidationError) and error.problem_id == "demo-shop/broken-v1"
    assert error.path == str(directory / "problems.py") and error.line == 8  # the builder's `@problem`
    issues = {i.field: (i.message, i.fix) for i in error.issues}
    assert list(issues) == ["faults[0].fault", "faults[1].params.imgae", "mitigation.must_fix[0].check",
                            "ground_truth.mechanism"]
    assert issues["faults[0].fault"] == ("unknown fault 'set_imagee'", "did you mean 'set_image'?")
    assert issues["faults[1].params.imgae"] == ("fault set_image takes no parameter 'imgae'", "did you mean 'image'?")
    message, fix = issues["mitigation.must_fix[0].check"]
    assert message == "unknown check 'no_such_check'" and fix.startswith("known checks: ") and "workload_ready" in fix
    message, fix = issues["ground_truth.mechanism"]
    assert message == "unknown mechanism 'bad_imag'"
    assert fix.startswith("did you mean 'bad_image'? known mechanisms: ") and "service_selector" in fix
    # One line naming the file, and nothing registered.
    text = str(caught.value)
    assert "\n" not in text and str(directory / "problems.py") in text and "did you mean 'set_image'?" in text
    assert "demo-shop/broken-v1" not in PROBLEMS


def test_a_check_parameter_of_the_wrong_type_or_missing_is_named() -> None:
    base = get_problem(BASE)
    fix = base.mitigation.must_fix[0]
    bad = base.model_copy(update={"id": "demo-shop/bad-param-v1", "mitigation": base.mitigation.model_copy(
        update={"must_fix": (fix.model_copy(update={"params": {"name": 3}}), fix.model_copy(update={"params": {}}))})})
    with pytest.raises(ProblemValidationError) as caught:
        problem(lambda: bad)
    assert caught.value.path == __file__
    issues = {i.field: (i.message, i.fix) for i in caught.value.issues}
    assert issues["mitigation.must_fix[0].params.name"][1] == "give a value of type str"
    assert "valid string" in issues["mitigation.must_fix[0].params.name"][0]
    assert issues["mitigation.must_fix[1].params.name"] == ("check workload_ready needs parameter 'name'",
                                                            "add name=...")


def test_cli_prints_an_invalid_problem_as_one_line(tmp_path: Path) -> None:
    directory = _plugin(tmp_path, "validation_cli", BROKEN)
    result = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["list", "problems", "--problems-dir", str(directory)])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(directory / "problems.py") in lines[0] and "unknown check" in lines[0]


def test_a_problem_set_adds_mechanisms_for_its_own_problems_only(tmp_path: Path, forget: list[str]) -> None:
    with_x = _plugin(tmp_path, "vocab_with_x", WITH_MECHANISM.replace("ID", "cert-expiry"))
    without = _plugin(tmp_path, "vocab_without_x", WITH_MECHANISM.replace("ID", "cert-other").replace(
        'mechanisms({"cert_expiry": ("certificate", "x509", "expired")}, related={"cert_expiry": ("dns",)})', ""))
    forget.append("demo-shop/cert-expiry-v1")
    assert load_problems_dir(with_x) == ["demo-shop/cert-expiry-v1"]
    # The other set, and a built-in problem, still reject the mechanism.
    with pytest.raises(PluginLoadError, match="unknown mechanism 'cert_expiry'"):
        load_problems_dir(without)
    base = get_problem(BASE)
    builtin = base.model_copy(update={"id": "demo-shop/cert-builtin-v1", "ground_truth": base.ground_truth.model_copy(
        update={"mechanism": "cert_expiry"})})
    with pytest.raises(ProblemValidationError, match="unknown mechanism 'cert_expiry'"):
        problem(lambda: builtin)
    assert "cert_expiry" not in BUILTIN and BUILTIN.classify("the x509 certificate expired") == set()
    assert vocabulary_of(BASE) is BUILTIN
    # The plug-in problem is judged with its vocabulary: the mechanism question is passable, and
    # naming the related mechanism alongside is not a wrong fault type.
    added = get_problem("demo-shop/cert-expiry-v1")
    vocabulary = vocabulary_of(added.id)
    sub = submission_from_args(gold_diagnosis_args(added.ground_truth, vocabulary))
    sub = sub.model_copy(update={"mechanism": "the x509 certificate expired; dns lookups fail"})
    answers = {a.id: a.answer for a in score_diagnosis(added.ground_truth, sub, vocabulary=vocabulary).checklist}
    assert answers["C1"] and answers["C3"]
    builtin_answers = {a.id: a.answer for a in score_diagnosis(added.ground_truth, sub).checklist}
    assert not builtin_answers["C1"]
    assert score_gold_diagnosis(added)[0]


def test_two_problem_directories_of_the_same_name_load_apart(tmp_path: Path, forget: list[str]) -> None:
    """Module names and mechanism scopes are keyed by the directory's path, not its name: a second
    `problems/` directory with a `problems.py` of its own is loaded, with its own vocabulary."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _plugin(tmp_path / "a", "problems", WITH_MECHANISM.replace("ID", "cert-first"))
    second = _plugin(tmp_path / "b", "problems", WITH_MECHANISM.replace("ID", "cert-second").replace(
        "cert_expiry", "cert_revoked"))
    forget.extend(["demo-shop/cert-first-v1", "demo-shop/cert-second-v1"])
    assert load_problems_dir(first) == ["demo-shop/cert-first-v1"]
    assert load_problems_dir(second) == ["demo-shop/cert-second-v1"]
    assert "cert_revoked" in vocabulary_of("demo-shop/cert-second-v1")
    assert "cert_revoked" not in vocabulary_of("demo-shop/cert-first-v1")
    assert "cert_expiry" in vocabulary_of("demo-shop/cert-first-v1")


def test_gold_diagnosis_step_catches_a_wrong_ground_truth() -> None:
    good = get_problem(BASE)
    assert score_gold_diagnosis(good)[:2] == (True, "")
    truth = good.ground_truth
    # Detail keywords the detail never mentions; an impact nobody could describe. Each alone still
    # passes the checklist (8/9), so the step asks for every answer, not the pass mark.
    wrong = good.model_copy(update={"ground_truth": truth.model_copy(update={"detail_keywords": ("nginx:9.9",)})})
    passed, detail, score = score_gold_diagnosis(wrong)
    assert score.passed and not passed and "C2 no" in detail
    mute = truth.model_copy(update={"impact_keywords": ()})
    passed, detail, _ = score_gold_diagnosis(good.model_copy(update={"ground_truth": mute}))
    assert not passed and "S3 no" in detail


def test_check_reports_the_gold_diagnosis_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """The protocol's new step is there, and a wrong ground truth fails the report."""
    from sregym.problems import check

    good = get_problem(BASE)
    outcome = ("fp", "{}", True, "")
    monkeypatch.setattr(check, "_noop_and_recover", lambda run, probe=None, window_probe=None: ([], None, None))
    monkeypatch.setattr(check, "_gold_run", lambda problem, seed, make: outcome)
    monkeypatch.setattr(check, "prepare", lambda *a, **k: None)
    report = check.check_problem(good, 0, factory=lambda seed: None, fork=False)  # type: ignore[arg-type,return-value]
    assert [s.name for s in report.steps][-1] == "gold diagnosis passes the diagnosis oracle" and report.passed
    wrong = good.model_copy(update={"ground_truth": good.ground_truth.model_copy(update={"detail_keywords": ("zz",)})})
    report = check.check_problem(wrong, 0, factory=lambda seed: None, fork=False)  # type: ignore[arg-type,return-value]
    assert not report.passed and not report.steps[-1].passed
