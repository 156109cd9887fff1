"""The closing sentences of a compaction summary are cut by string search, as the pattern says."""

from __future__ import annotations

import random
import re

from core.sources import claude_notices as notices
from core.sources.claude_notices import _OUTRO_CLOSINGS, _OUTRO_DETAILS, _without_outro

# The rule as a pattern (what the reader searched before: a match tried at every character).
_COMPACT_OUTRO = re.compile(
    r"\s*(?:If you need specific details from before compaction.*?)?"
    r"(?:Please continue the conversation from where we left (?:it )?off without asking the user any further"
    r" questions\. Continue with the last task that you were asked to work on\.)?\s*$",
    re.S,
)


def _by_pattern(text: str) -> str:
    return _COMPACT_OUTRO.sub("", text, count=1).strip()


def test_the_outro_is_cut_where_the_pattern_cuts_it() -> None:
    closing_it, closing = _OUTRO_CLOSINGS
    pieces = [_OUTRO_DETAILS, closing_it, closing, _OUTRO_DETAILS[:-1], closing_it[1:], closing[:-1],
              " ", "\n", "\t", "\u00a0", "\u2003", "\x1c", "x", "summary…", "If you need", "Please continue"]
    rnd = random.Random(35)
    for _ in range(20_000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 8)))
        assert _without_outro(text).strip() == _by_pattern(text), repr(text)


def test_a_real_shaped_summary_loses_its_closing_sentences() -> None:
    intro = "This session is being continued from a previous conversation that ran out of context. " \
            "The conversation is summarized below:\n"
    outro = f"\n{_OUTRO_DETAILS} (like the exact code), read the transcript.\n{_OUTRO_CLOSINGS[0]}\n"
    text = intro + "Analysis:\n1. the parser… → fixed\n" + outro
    assert notices.compaction_summary(text) == "Compaction summary: Analysis:\n1. the parser… → fixed"
    assert notices.compaction_summary(intro + "  \n" + _OUTRO_CLOSINGS[1]) is None
