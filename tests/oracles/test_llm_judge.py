"""The LLM judge against a small OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sregym.oracles.checklist import QUESTIONS
from sregym.oracles.diagnosis import score_diagnosis
from sregym.oracles.llm_judge import LLMJudge
from sregym.problems import get_problem
from sregym.types import DiagnosisSubmission, EntityRef

TRUTH = get_problem("demo-shop/service-selector-mismatch-v1").ground_truth
SUB = DiagnosisSubmission(root_causes=(EntityRef.parse("demo-shop/Service/catalog"),),
                          mechanism="selector matches no pods", explanation="version=v2 selector")


class FakeLLM:
    """Replies from a queue of texts; records the requests it got."""

    def __init__(self) -> None:
        self.replies: list[str] = []
        self.requests: list[dict] = []


def _good(answer: bool = True) -> str:
    return "```json\n" + json.dumps({"answers": [
        {"id": q.id, "answer": answer, "evidence": f"evidence {q.id}", "confidence": 0.8} for q in QUESTIONS]}) + "\n```"


@pytest.fixture
def llm() -> Iterator[tuple[FakeLLM, str]]:
    fake = FakeLLM()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
            text = fake.replies.pop(0) if fake.replies else "no idea"
            payload = json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": text}}],
                                  "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


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
