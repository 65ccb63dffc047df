"""The detection phase: the neutral page, `submit_detection`, the detection oracle, the result
block and the summary's rates, with real agents on a small mix of incidents and controls.

The end-to-end run uses the runner on two Hotel Reservation incidents and two Hotel Reservation
controls (one app, so attempts share the warm prefix): noop never raises (false positives 0,
recall 0), gold is always right, and the baseline's answers on these four are checked one by one.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from sregym.env.conductor import Conductor
from sregym.env.config import AttemptConfig
from sregym.oracles.detection import ONSET_TOLERANCE_S, DetectionAnswer, score_detection
from sregym.runner.summary import detection_rates

FAULTS = ("hotel-reservation/scaled-to-zero-v1", "hotel-reservation/mongodb-role-revoked-geo-v1")
CONTROLS = ("hotel-reservation/no-incident-rollout-v1", "hotel-reservation/no-incident-scale-up-v1")
DETECT = AttemptConfig(phases=("detection",), noise="low")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from sregym.runner.run import run

    out = {}
    for agent in ("noop", "gold", "baseline"):
        directory = tmp_path_factory.mktemp(agent)
        run([*FAULTS, *CONTROLS], agent=agent, seeds=[0], out_dir=directory, attempt=DETECT, progress=False)
        out[agent] = directory
    return out


def _lines(directory: Path) -> dict[str, dict]:
    lines = [json.loads(x) for x in (directory / "results.jsonl").read_text().splitlines()]
    return {ln["problem_id"]: ln for ln in lines}


def test_noop_never_raises_so_no_false_positive_and_no_recall(runs: dict[str, Path]) -> None:
    lines = _lines(runs["noop"])
    assert {pid: ln["detection"]["incident"] for pid, ln in lines.items()} == dict.fromkeys([*FAULTS, *CONTROLS], False)
    summary = json.loads((runs["noop"] / "summary.json").read_text())
    det = summary["detection"]
    assert (det["incidents"], det["controls"], det["unanswered"]) == (2, 2, 0)
    assert det["false_positive_rate"] == 0.0 and det["false_negative_rate"] == 1.0 and det["accuracy"] == 0.5
    assert summary["detection_by_app"]["hotel-reservation"] == det
    assert summary["overall"]["detection"] == 0.5
    # A control answered "no incident" with the detection phase alone passes end to end.
    assert all(lines[pid]["passed"] for pid in CONTROLS) and not any(lines[pid]["passed"] for pid in FAULTS)


def test_gold_is_always_right_and_names_the_onset(runs: dict[str, Path]) -> None:
    lines = _lines(runs["gold"])
    det = json.loads((runs["gold"] / "summary.json").read_text())["detection"]
    assert det["accuracy"] == 1.0 and det["false_positive_rate"] == 0.0 and det["false_negative_rate"] == 0.0
    for pid in FAULTS:
        block = lines[pid]["detection"]
        assert block["incident"] is True and block["onset_error_s"] == 0.0 and block["onset_within_tolerance"]
        assert lines[pid]["sim_seconds_to_detection"] is not None
    for pid in CONTROLS:
        assert lines[pid]["detection"]["incident"] is False and lines[pid]["detection"]["onset_error_s"] is None


def test_baseline_answers_from_the_signals(runs: dict[str, Path]) -> None:
    lines = _lines(runs["baseline"])
    answers = {pid: ln["detection"]["incident"] for pid, ln in lines.items()}
    # Both incidents break the entry point (the frontend's callers fail); the controls' rollout and
    # scale-up complete before the agent looks, and low noise leaves nothing lasting.
    assert answers == {**dict.fromkeys(FAULTS, True), **dict.fromkeys(CONTROLS, False)}
    assert all("entry point" in lines[pid]["detection"]["evidence"] for pid in FAULTS)
    summary = json.loads((runs["baseline"] / "summary.json").read_text())
    assert summary["detection"] == detection_rates(list(lines.values())).model_dump()


def _brief_and_tools(problem_id: str) -> tuple[str, list[str], str]:
    with Conductor(problem_id, AttemptConfig(phases=("detection", "diagnosis", "mitigation"), noise="low")) as c:
        brief = c.start()
        tools = c.session.tool_names()
        early = c.session.call("submit_diagnosis", {"root_cause_entities": [], "mechanism": "x"})
        bad = c.session.call("submit_detection", {"incident": True, "started_at": "yesterday-ish"})
        assert c.phase == "detection"
        reply = c.session.call("submit_detection", {"incident": True, "started_at": "now-5m", "evidence": "x"})
        assert early.is_error and "not available" in early.text
        assert bad.is_error and "started_at" in bad.text
        assert not reply.is_error and c.phase == "diagnosis"
        result = c.result()
    assert result.detection is not None and result.detection.submitted
    return re.sub(r"\(\d{4}-\d\d-\d\dT[^)]*\)", "(T)", brief.text), tools, reply.text


def test_the_page_and_the_replies_do_not_tell_a_control_from_an_incident() -> None:
    fault = _brief_and_tools(FAULTS[0])
    control = _brief_and_tools(CONTROLS[0])
    assert fault == control
    page, tools, _ = fault
    assert tools[-3:] == ["submit_detection", "submit_diagnosis", "submit_mitigation_done"]
    assert "ON-CALL CHECK" in page and "alert" not in page.lower() and "incident page" not in page.lower()


def test_score_detection_reports_onset_without_grading_it() -> None:
    late = DetectionAnswer(incident=True, started_at=1000.0 + ONSET_TOLERANCE_S + 1, started_at_text="t",
                           evidence="")
    scored = score_detection(late, expected_incident=True, onset=1000.0)
    assert scored.passed and scored.correct and scored.onset_within_tolerance is False
    assert scored.onset_error_s == ONSET_TOLERANCE_S + 1
    false_alarm = score_detection(DetectionAnswer(True, None, None, ""), expected_incident=False, onset=None)
    assert not false_alarm.passed and false_alarm.onset_error_s is None
    missing = score_detection(None, expected_incident=False, onset=None)
    assert not missing.submitted and not missing.passed


def test_detection_rates_count_a_missing_answer_as_a_miss_not_a_false_alarm() -> None:
    def line(pid: str, expected: bool, incident: bool | None) -> dict:
        return {"problem_id": pid, "seed": 0, "passed": False,
                "detection": {"submitted": incident is not None, "incident": incident, "expected_incident": expected,
                              "correct": incident == expected}}

    rates = detection_rates([line("a/x-v1", True, None), line("a/y-v1", True, True), line("a/c-v1", False, None),
                             line("b/c-v1", False, True)])
    assert rates is not None
    assert (rates.incidents, rates.controls, rates.unanswered) == (2, 2, 2)
    assert rates.false_negative_rate == 0.5 and rates.false_positive_rate == 0.5 and rates.accuracy == 0.25
    assert detection_rates([{"problem_id": "a/x-v1", "seed": 0, "passed": True}]) is None


def test_a_command_agent_answers_detection_with_sregym_submit(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from sregym.agents.command import SubmitServer
    from sregym.cli import submit

    with Conductor(CONTROLS[0], AttemptConfig(phases=("detection", "diagnosis"), noise="none")) as c:
        c.start()
        server = SubmitServer(c.session)
        server.start()
        try:
            monkeypatch.setenv("SREGYM_SUBMIT_URL", server.url)
            monkeypatch.setenv("SREGYM_SUBMIT_TOKEN", server.token)
            assert submit.main(["detection", "--incident", "no", "--evidence", "all healthy"]) == 0
            assert "Answer recorded" in capsys.readouterr().out
            assert submit.main(["detection", "--incident", "yes"]) == 1  # the phase is over
            monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"root_cause_entities": [], "mechanism": "none"})))
            assert submit.main(["diagnosis", "--json", "-"]) == 0
        finally:
            server.stop()
        result = c.result()
    assert result.detection is not None and result.detection.incident is False and result.detection.passed
    assert result.diagnosis is not None and result.diagnosis.passed and result.passed
