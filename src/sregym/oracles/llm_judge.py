"""An optional LLM judge for the diagnosis checklist, over any OpenAI-compatible endpoint.

The deterministic judge reads only the structured fields; an LLM judge can also weigh the free-text
explanation. It is given the ground truth, the submission and the nine questions, and must answer
with JSON (`{"answers": [{"id", "answer", "evidence", "confidence"}]}`). Output that cannot be
parsed is retried once; if the second answer is unusable too, every question counts as "no" (a
judge failure must never hand out points). Evidence and confidence are kept in the score.

The `openai` SDK is imported lazily; the key comes from an environment variable, never a flag.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from sregym.oracles.checklist import QUESTIONS
from sregym.types import ChecklistAnswer, DiagnosisSubmission, GroundTruth

SYSTEM_PROMPT = (
    "You grade an SRE's incident diagnosis against the known ground truth. Answer each question "
    "strictly yes or no from what the diagnosis says (not what it could have meant). Reply with one "
    'JSON object only: {"answers": [{"id": "L1", "answer": true, "evidence": "<short quote or '
    'reason>", "confidence": 0.0-1.0}, ...]} covering every question id.'
)


class JudgeParseError(ValueError):
    """The judge's reply was not the JSON answer set asked for."""


def build_messages(truth: GroundTruth, submission: DiagnosisSubmission) -> list[dict[str, str]]:
    questions = "\n".join(f"{q.id} ({q.dimension}): {q.text}" for q in QUESTIONS)
    user = (
        "GROUND TRUTH\n" + truth.model_dump_json(indent=1) +
        "\n\nDIAGNOSIS SUBMITTED\n" + submission.model_dump_json(indent=1) +
        "\n\nQUESTIONS\n" + questions
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_answers(text: str) -> list[ChecklistAnswer]:
    """Read the judge's JSON (a fenced block or bare object); every question must be answered."""
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if match is None:
        raise JudgeParseError("no JSON object in the judge's reply")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise JudgeParseError(f"invalid JSON from the judge: {exc}") from None
    items = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise JudgeParseError('the judge\'s JSON has no "answers" list')
    by_id: dict[str, dict[str, Any]] = {str(i.get("id")): i for i in items if isinstance(i, dict)}
    out = []
    for q in QUESTIONS:
        item = by_id.get(q.id)
        if item is None or not isinstance(item.get("answer"), bool):
            raise JudgeParseError(f"the judge did not answer {q.id} with true/false")
        confidence = item.get("confidence")
        conf = float(confidence) if isinstance(confidence, int | float) and 0 <= confidence <= 1 else None
        out.append(ChecklistAnswer(id=q.id, dimension=q.dimension, question=q.text, answer=item["answer"],
                                   evidence=str(item.get("evidence") or "")[:1000], confidence=conf))
    return out


def all_no(reason: str) -> list[ChecklistAnswer]:
    return [ChecklistAnswer(id=q.id, dimension=q.dimension, question=q.text, answer=False,
                            evidence=reason, confidence=0.0) for q in QUESTIONS]


class LLMJudge:
    """Calls `model` at `base_url` (OpenAI-compatible chat completions)."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 api_key_env: str = "SREGYM_JUDGE_API_KEY", timeout: float = 60.0,
                 temperature: float = 0.0) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key = api_key or os.environ.get(api_key_env) or os.environ.get("OPENAI_API_KEY") or "unused"
        self.timeout = timeout
        self.temperature = temperature
        self.attempts: list[str] = []  # raw replies, for the results store

    def _client(self) -> Any:
        from sregym.extras import require

        openai = require("openai", "the LLM judge")
        return openai.OpenAI(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout, max_retries=1)

    def _ask(self, messages: list[dict[str, str]]) -> str:
        response = self._client().chat.completions.create(model=self.model, messages=messages,
                                                          temperature=self.temperature)
        return response.choices[0].message.content or ""

    def __call__(self, truth: GroundTruth, submission: DiagnosisSubmission) -> list[ChecklistAnswer]:
        messages = build_messages(truth, submission)
        last_error = ""
        for _attempt in range(2):  # one retry on unusable output
            reply = self._ask(messages)
            self.attempts.append(reply)
            try:
                return parse_answers(reply)
            except JudgeParseError as err:
                last_error = str(err)
        return all_no(f"judge output unusable twice: {last_error}")
