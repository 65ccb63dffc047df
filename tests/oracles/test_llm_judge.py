"""The LLM judge against a small OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sregym.oracles.checklist import QUESTIONS
from sregym.oracles.diagnosis import score_diagnosis
from sregym.oracles.llm_judge import LLMJudge
from sregym.problems import get_problem
from sregym.types import DiagnosisSubmission, EntityRef
from support.scripted_openai import Reply, ScriptedModel, text

TRUTH = get_problem("demo-shop/service-selector-mismatch-v1").ground_truth
SUB = DiagnosisSubmission(root_causes=(EntityRef.parse("demo-shop/Service/catalog"),),
                          mechanism="selector matches no pods", explanation="version=v2 selector")


class FakeLLM:
    """Replies from a queue of texts; records the requests it got."""

    def __init__(self, model: ScriptedModel) -> None:
        self.replies: list[str] = []
        self.model = model

    def next_reply(self) -> Reply:
        return text(self.replies.pop(0) if self.replies else "no idea")

    @property
    def requests(self) -> list[dict]:
        return self.model.received()


def _good(answer: bool = True) -> str:
    return "```json\n" + json.dumps({"answers": [
        {"id": q.id, "answer": answer, "evidence": f"evidence {q.id}", "confidence": 0.8} for q in QUESTIONS]}) + "\n```"


@pytest.fixture
def llm() -> Iterator[tuple[FakeLLM, str]]:
    fake: FakeLLM | None = None
    with ScriptedModel([], default=lambda: fake.next_reply()) as model:  # type: ignore[union-attr]
        fake = FakeLLM(model)
        yield fake, model.base_url


def test_judge_answers_with_evidence_and_confidence(llm: tuple[FakeLLM, str]) -> None:
    fake, url = llm
    fake.replies = [_good(True)]
    judge = LLMJudge("judge-model", base_url=url, api_key="k-test")
    score = score_diagnosis(TRUTH, SUB, judge=judge, judge_name="llm", judge_model="judge-model")
    assert score.checklist_score == pytest.approx(1.0) and score.judge == "llm"
    assert score.checklist[0].evidence == "evidence L1" and score.checklist[0].confidence == 0.8
    request = fake.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer k-test"
    assert "version=v2" in request["body"]["messages"][1]["content"]


def test_parse_failure_retries_once_then_succeeds(llm: tuple[FakeLLM, str]) -> None:
    fake, url = llm
    fake.replies = ["I think it is fine.", _good(False)]
    judge = LLMJudge("m", base_url=url, api_key="k")
    answers = judge(TRUTH, SUB)
    assert len(fake.requests) == 2 and all(not a.answer for a in answers)
    assert answers[0].evidence == "evidence L1"


def test_two_parse_failures_count_as_all_no(llm: tuple[FakeLLM, str]) -> None:
    fake, url = llm
    fake.replies = ['{"answers": [{"id": "L1", "answer": "yes"}]}', "still not json"]
    judge = LLMJudge("m", base_url=url, api_key="k")
    score = score_diagnosis(TRUTH, SUB, judge=judge, judge_name="llm")
    assert len(fake.requests) == 2
    assert score.checklist_score == 0.0 and not score.passed
    assert "unusable" in score.checklist[0].evidence and len(judge.attempts) == 2
