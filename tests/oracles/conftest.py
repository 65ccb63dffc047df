"""Fixtures shared by the oracle tests."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sregym.oracles.checklist import QUESTIONS
from support.scripted_openai import ScriptedModel, text


class Seen(list):
    """The requests of a `ScriptedModel`, read when indexed (the model keeps appending)."""

    def __init__(self, model: ScriptedModel) -> None:
        super().__init__()
        self.model = model

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return self.model.received()[index]

    def __len__(self) -> int:
        return len(self.model.requests)

    def __bool__(self) -> bool:
        return bool(self.model.requests)


@pytest.fixture
def llm_server() -> Iterator[tuple[Seen, str]]:
    """An OpenAI-compatible endpoint that answers every question "yes"."""
    reply = json.dumps({"answers": [{"id": q.id, "answer": True, "evidence": "ok", "confidence": 1.0}
                                    for q in QUESTIONS]})
    with ScriptedModel([], default=lambda: text(reply)) as model:
        yield Seen(model), model.base_url
