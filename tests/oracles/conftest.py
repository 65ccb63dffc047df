"""Fixtures shared by the oracle tests."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sregym.oracles.checklist import QUESTIONS
from support.scripted_openai import ScriptedModel, text


@pytest.fixture
def llm_server() -> Iterator[ScriptedModel]:
    """An OpenAI-compatible endpoint that answers every question "yes" (`.base_url`, `.received()`)."""
    reply = json.dumps({"answers": [{"id": q.id, "answer": True, "evidence": "ok", "confidence": 1.0}
                                    for q in QUESTIONS]})
    with ScriptedModel([], default=lambda: text(reply)) as model:
        yield model
