"""What an attempt cost, when its tokens and its model's price are known.

Leaderboards put cost beside success: an agent that solves one more problem for ten times the
tokens is not simply better. A result line records `tokens_in`/`tokens_out` when the agent reports
them; this module turns them into US dollars with a price per million input and output tokens:
the `--price-in/--price-out` of `sregym run` (or `SREGYM_PRICE_IN`/`SREGYM_PRICE_OUT`) when given,
else the small table below, matched on the model's name. An unknown price or unknown tokens give
no cost (None, shown blank), never 0.

The table holds providers' published list prices per million tokens (standard tier, no caching
or batch discounts) as of 2025; prices change, so a paper should state the prices it used (the
run records them in `run.json`) or pass its own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ENV_IN, ENV_OUT = "SREGYM_PRICE_IN", "SREGYM_PRICE_OUT"

# model-name prefix -> (USD per 1M input tokens, USD per 1M output tokens); the longest
# matching prefix wins, so "gpt-4o-mini-2024-07-18" is gpt-4o-mini, not gpt-4o.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-opus-4-5": (5.00, 25.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.5-flash": (0.30, 2.50),
}


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens, and where the figures came from."""

    usd_per_m_in: float
    usd_per_m_out: float
    source: str  # "option", "environment" or "table:<prefix>"

    def cost(self, tokens_in: Any, tokens_out: Any) -> float | None:
        """The attempt's cost in USD; None unless both token counts are known numbers."""
        if not all(isinstance(t, int | float) and not isinstance(t, bool) for t in (tokens_in, tokens_out)):
            return None
        return round((tokens_in * self.usd_per_m_in + tokens_out * self.usd_per_m_out) / 1e6, 6)

    def to_json(self) -> dict[str, Any]:
        return {"usd_per_m_in": self.usd_per_m_in, "usd_per_m_out": self.usd_per_m_out, "source": self.source}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Price | None:
        if not isinstance(data, Mapping):
            return None
        return cls(float(data["usd_per_m_in"]), float(data["usd_per_m_out"]), str(data.get("source") or "option"))


def table_price(model: str | None) -> Price | None:
    """The table's price for `model` (a provider prefix such as `openai/` is ignored), or None."""
    if not model:
        return None
    name = str(model).lower().rsplit("/", 1)[-1]
    matches = [prefix for prefix in PRICES if name == prefix or name.startswith(prefix + "-")]
    if not matches:
        return None
    prefix = max(matches, key=len)
    return Price(*PRICES[prefix], source=f"table:{prefix}")


def override_price(price_in: float | None, price_out: float | None,
                   environ: Mapping[str, str] | None = None) -> Price | None:
    """The price given on the command line, else in the environment; None when neither is set.
    Both halves are needed (a missing one is an error: a silent 0 would understate the cost)."""
    source = "option"
    if price_in is None and price_out is None:
        env = os.environ if environ is None else environ
        raw_in, raw_out = env.get(ENV_IN), env.get(ENV_OUT)
        if raw_in is None and raw_out is None:
            return None
        try:
            price_in = float(raw_in) if raw_in is not None else None
            price_out = float(raw_out) if raw_out is not None else None
        except ValueError:
            raise ValueError(f"{ENV_IN} and {ENV_OUT} must be numbers (USD per million tokens)") from None
        source = "environment"
    if price_in is None or price_out is None:
        raise ValueError("give both --price-in and --price-out (or both environment variables), "
                         "in USD per million tokens")
    if price_in < 0 or price_out < 0:
        raise ValueError("prices must not be negative")
    return Price(float(price_in), float(price_out), source)


def attempt_cost(line: Mapping[str, Any], override: Price | None) -> tuple[float | None, Price | None]:
    """(cost in USD, the price used) of one result line: the override, else the table price of
    the line's model; (None, None) when no price is known."""
    price = override or table_price(line.get("model"))
    if price is None:
        return None, None
    return price.cost(line.get("tokens_in"), line.get("tokens_out")), price


__all__ = ["ENV_IN", "ENV_OUT", "PRICES", "Price", "attempt_cost", "override_price", "table_price"]
