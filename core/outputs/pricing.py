"""Estimated prices per model, in one dated table.

An **estimate**: list prices in US dollars per million tokens, as the vendors
published them on ``PRICES_AS_OF``, standard tier, no batch or volume discounts,
no long-context surcharges, cache writes at the 5-minute rate. Subscriptions
(Claude Max, ChatGPT plans) are not billed per token at all; the figure says
what the same traffic would cost on the API. A model not in the table has no
cost (its tokens are still counted and shown).

Sources: Anthropic's pricing page (docs.anthropic.com/en/docs/about-claude/pricing),
OpenAI's API pricing page (openai.com/api/pricing), Google's Gemini API pricing
page (ai.google.dev/gemini-api/docs/pricing).
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

PRICES_AS_OF = "2026-03-21"


class Price(msgspec.Struct, frozen=True):
    """US dollars per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


def _anthropic(input_: float, output: float) -> Price:
    # cache writes (5 min) cost 1.25× input, cache reads 0.1× input
    return Price(input_, output, input_ * 1.25, input_ * 0.1)


# The longest row that matches wins. A row matches the same id, or an id that
# continues it after a "-" (dated ids such as "claude-sonnet-4-5-20250929"), or
# any continuation when the row itself ends in "-". "gpt-5" does not match
# "gpt-5.5": a newer version is unknown until the table lists it.
PRICES: dict[str, Price] = {
    "claude-opus-4-20250514": _anthropic(15.0, 75.0),  # Opus 4
    "claude-opus-4-1": _anthropic(15.0, 75.0),
    "claude-opus-4-": _anthropic(5.0, 25.0),  # Opus 4.5 and later 4.x
    "claude-opus-4": _anthropic(15.0, 75.0),
    "claude-sonnet-4": _anthropic(3.0, 15.0),
    "claude-3-7-sonnet": _anthropic(3.0, 15.0),
    "claude-3-5-sonnet": _anthropic(3.0, 15.0),
    "claude-haiku-4": _anthropic(1.0, 5.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    "claude-3-opus": _anthropic(15.0, 75.0),
    "claude-3-haiku": Price(0.25, 1.25, 0.30, 0.03),
    "gpt-5-mini": Price(0.25, 2.0, 0.0, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.0, 0.005),
    "gpt-5": Price(1.25, 10.0, 0.0, 0.125),  # gpt-5, gpt-5-codex
    "gpt-5.1": Price(1.25, 10.0, 0.0, 0.125),
    "gpt-4.1": Price(2.0, 8.0, 0.0, 0.50),
    "o3": Price(2.0, 8.0, 0.0, 0.50),
    "gemini-2.5-pro": Price(1.25, 10.0, 0.0, 0.125),
    "gemini-2.5-flash": Price(0.30, 2.50, 0.0, 0.03),
    "gemini-3-pro": Price(2.0, 12.0, 0.0, 0.20),
    "gemini-3.1-pro": Price(2.0, 12.0, 0.0, 0.20),
    "gemini-3-flash": Price(0.50, 3.0, 0.0, 0.05),
}
_BY_LENGTH = sorted(PRICES, key=len, reverse=True)


@lru_cache(maxsize=256)  # (a session's header prices each of its thousands of responses)
def price_for(model: str | None) -> Price | None:
    """The table's row for a model id, or None (unknown: no cost shown)."""
    if not model:
        return None
    for prefix in _BY_LENGTH:
        if model == prefix or (model.startswith(prefix) and (prefix.endswith("-") or model[len(prefix)] == "-")):
            return PRICES[prefix]
    return None


def cost(model: str | None, input_tokens: int, output_tokens: int, cache_creation: int, cache_read: int) -> float | None:
    """Estimated US dollars for these tokens, or None for a model not in the table."""
    price = price_for(model)
    if price is None:
        return None
    return (
        input_tokens * price.input
        + output_tokens * price.output
        + cache_creation * price.cache_write
        + cache_read * price.cache_read
    ) / 1_000_000
