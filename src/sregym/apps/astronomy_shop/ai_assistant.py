"""The frontend's AI assistant route: product-reviews' `AskProductAIAssistant` over the mock LLM.

Why its own module: the answer is the content chain of three services (opentelemetry-demo
2.2.0). The frontend's `/api/product-ask-ai-assistant/{productId}` posts `{question}` and answers
`res.status(200).json(response)`, the ts-proto `AskProductAIAssistantResponse` (`{"response": ...}`).
product-reviews prompts "Answer the following question about product ID:<id>: <question>" with
the `fetch_product_reviews` tool; the mock LLM (src/llm/app.py) answers two canned questions
itself, refuses any other question but the summary one ("Sorry, I'm not able to answer that
question."), and for a summary returns its pre-generated text for the product. With
`llmInaccurateResponse` on, product-reviews asks for an inaccurate answer for L9ECAV7KIM and the
mock, checking the flag itself, returns the inaccurate summary: both services must see the flag
on (each evaluates it through its own flagd connection; the code default is off).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

INACCURATE_PRODUCT = "L9ECAV7KIM"
FLAG = "llmInaccurateResponse"
CANNED = {"What age(s) is this recommended for?": "This product is recommended for ages 7 and above.",
          "Were there any negative reviews?": "No, there were no reviews less than three stars for this product."}
SUMMARY_QUESTION = "Can you summarize the product reviews?"
REFUSAL = "Sorry, I'm not able to answer that question."
RATE_LIMIT_FLAG = "llmRateLimitError"
RATE_LIMITED = "The system is unable to process your response. Please try again later."


@cache
def summaries(inaccurate: bool) -> dict[str, str]:
    """The mock's `product-review-summaries.json` (or the inaccurate one) as product id -> text."""
    name = "inaccurate-product-review-summaries.json" if inaccurate else "product-review-summaries.json"
    text = resources.files(__package__).joinpath("llm_data", name).read_text()
    rows = json.loads(text).get("product-review-summaries", [])
    return {r["product_id"]: r.get("product_review_summary") for r in rows if r.get("product_id")}


def _flag_on(twin: Any, service: str, flag: str = FLAG) -> bool:
    """What the service's SDK evaluated for `flag` this tick (any running instance)."""
    engine = twin.services.dataplane if twin is not None else None
    if engine is None:
        return False
    for key in sorted(engine.procs):
        inst = engine.procs[key].inst
        if inst.spec.service_name == service and inst.settings.get(flag) == "true":
            return True
    return False


def answer(twin: Any, product_id: str, question: str, rng: Any = None) -> str | None:
    """The assistant's answer text (None: the mock had no summary, the field stays unset). With
    `llmRateLimitError` on, product-reviews' coin (`rng`) sends half the questions to the
    rate-limited model and answers them with its apology, before any other branch."""
    if rng is not None and _flag_on(twin, "product-reviews", RATE_LIMIT_FLAG) and rng.random() < 0.5:
        return RATE_LIMITED
    prompt = f"Answer the following question about product ID:{product_id}: {question}"
    for asked, text in CANNED.items():
        if asked in prompt:
            return text
    if SUMMARY_QUESTION not in prompt:
        return REFUSAL
    inaccurate = product_id == INACCURATE_PRODUCT and _flag_on(twin, "product-reviews") and _flag_on(twin, "llm")
    if inaccurate:
        return summaries(True).get(product_id)
    return summaries(False).get(product_id)


__all__ = ["INACCURATE_PRODUCT", "RATE_LIMITED", "answer", "summaries"]
