"""Each agent's own token-usage fields, turned into :class:`~core.model.Usage`.

Kept apart from the adapters so each adapter only adds a line where it meets a
usage record. Every reader is lenient: a missing or non-numeric field counts 0,
a usage object that is not an object is no usage at all.

Conventions (so totals compare across agents): ``input_tokens`` is input that was
neither written to nor read from a cache; cache reads and writes are their own
fields; ``output_tokens`` includes reasoning/thinking tokens (billed as output).
"""

from __future__ import annotations

from typing import Any

from core.model import Usage

from .fields import count, label

_n = count  # every count an agent wrote: an int from 0 to fields.MAX_COUNT, else 0


def claude_usage(
    usage: Any, *, message_id: Any, request_id: Any, model: Any, timestamp: str | None, uuid: str | None
) -> Usage | None:
    """Claude Code's ``message.usage`` (the Anthropic API's usage object).

    Claude Code writes one record per content block of a response, each with the
    same ``message.id`` and ``requestId`` and the usage as streamed so far; the
    key is that pair (the record uuid when both are missing).
    """
    if not isinstance(usage, dict):
        return None
    mid = label(message_id) or ""
    rid = label(request_id) or ""
    key = f"claude:{mid}:{rid}" if (mid or rid) else f"claude-record:{uuid}"
    return Usage(
        key=key,
        model=label(model),
        timestamp=timestamp,
        uuid=uuid,
        input_tokens=_n(usage.get("input_tokens")),
        output_tokens=_n(usage.get("output_tokens")),
        cache_creation_tokens=_n(usage.get("cache_creation_input_tokens")),
        cache_read_tokens=_n(usage.get("cache_read_input_tokens")),
    )


def codex_usage(info: Any, *, model: Any, timestamp: str | None, previous: Any = None) -> Usage | None:
    """A Codex ``event_msg``/``token_count`` event's ``info``.

    ``last_token_usage`` is the response's own usage; ``input_tokens`` includes
    ``cached_input_tokens`` and ``output_tokens`` includes reasoning. Codex
    repeats a token_count event with unchanged totals, and a fork copies its
    parent's events: the running ``total_token_usage`` identifies the response.
    Events with only the running total (older rollouts) count the growth since
    ``previous`` (the running total of the file's event before).
    """
    if not isinstance(info, dict):
        return None
    last, total = info.get("last_token_usage"), info.get("total_token_usage")
    if not isinstance(last, dict) and isinstance(total, dict):
        before = previous if isinstance(previous, dict) else {}
        last = {k: max(0, _n(total.get(k)) - _n(before.get(k))) for k in total}
        if not any(last.values()):
            return None  # the same total again: nothing new was spent
    if not isinstance(last, dict):
        return None
    cached = _n(last.get("cached_input_tokens"))
    running = total if isinstance(total, dict) else {}
    key = "codex:" + ":".join(str(_n(running.get(f))) for f in CODEX_FIELDS)
    return Usage(
        key=key,
        model=label(model),
        timestamp=timestamp,
        input_tokens=max(0, _n(last.get("input_tokens")) - cached),
        output_tokens=_n(last.get("output_tokens")),
        cache_read_tokens=cached,
    )


CODEX_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")


def codex_running_total(info: Any) -> dict[str, int] | None:
    """A token_count event's running ``total_token_usage``, as counts (what the next
    event's growth is measured from)."""
    total = info.get("total_token_usage") if isinstance(info, dict) else None
    if not isinstance(total, dict):
        return None
    return {name: _n(total.get(name)) for name in CODEX_FIELDS if name in total}


def gemini_usage(tokens: Any, *, message_id: str | None, model: Any, timestamp: str | None) -> Usage | None:
    """A Gemini CLI message's ``tokens`` (input includes ``cached``; ``thoughts``
    are billed as output; ``tool`` is tool-use prompt input)."""
    if not isinstance(tokens, dict):
        return None
    cached = _n(tokens.get("cached"))
    return Usage(
        key=f"gemini:{message_id}" if label(message_id) else f"gemini-ts:{timestamp}",
        model=label(model),
        timestamp=timestamp,
        uuid=message_id,
        input_tokens=max(0, _n(tokens.get("input")) - cached) + _n(tokens.get("tool")),
        output_tokens=_n(tokens.get("output")) + _n(tokens.get("thoughts")),
        cache_read_tokens=cached,
    )
