"""The salient lines of a long tool output (core/sources/tool_text.py), pinned against a plain reference.

``salient_lines`` finds the telling lines with one vectorized pass over the bytes
(a cold index scans gigabytes of tool output); the reference below reads the text
one line at a time the obvious way. They must agree on every text: what the index
keeps of a tool output may not depend on how fast it was found.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.sources.tool_text import LINE_CHARS, PER_WORD_LINES, SALIENT_WORDS, bounded, salient_lines


def reference(text: str, budget: int) -> str:
    """The rule, spelled out: a line is telling if its lowercase holds a salient word and
    it is among the first PER_WORD_LINES lines holding that word; telling lines are kept
    in order, stripped and cut, once each, until the kept text reaches the budget."""
    if budget <= 0 or not text:
        return ""
    lines = text.split("\n")
    telling: set[int] = set()
    for word in SALIENT_WORDS:
        holding = [i for i, line in enumerate(lines) if word in line.lower()]
        telling.update(holding[:PER_WORD_LINES])
    kept: list[str] = []
    used = 0
    for i in sorted(telling):
        line = lines[i].strip()[:LINE_CHARS]
        if line and line not in kept:
            kept.append(line)
            used += len(line) + 1
            if used >= budget:
                break
    return "\n".join(kept)[:budget]


_WORDS = st.sampled_from(
    [*SALIENT_WORDS, "ERROR", "Traceback", "FAILED", "TimeOut", "Not Found", "not  found", "exit  code",
     "DeprecationWarning", "assertion", "versions", "passes", "err", "ass", "exi", "t code", "panicked"]
)
_FILLER = st.sampled_from(
    ["ok", "1→", "…", "İ", "\u212a", "TRACEBAC\u212a", "İnvalid", "é", "日本語", "📋", "ς", "Σ", "\t", "  ", "\r", "·",
     "x" * 300, "e", "rr", "or", "a\u0307", "\x00"]
)
_LINE = st.lists(st.one_of(_WORDS, _FILLER, st.text(max_size=6)), max_size=6).map(" ".join)


@st.composite
def _texts(draw) -> str:
    """Logs: a few distinct lines repeated (so the per-word cap and the dedupe bite)."""
    pool = draw(st.lists(_LINE, min_size=1, max_size=8))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), max_size=90))
    return "\n".join(pool[i] for i in picks) + draw(st.sampled_from(["", "\n", " error"]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_texts(), budget=st.sampled_from([0, 1, 30, 200, 1500, 4000]))
def test_salient_lines_agree_with_the_reference(text: str, budget: int) -> None:
    assert salient_lines(text, budget) == reference(text, budget)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400), budget=st.integers(0, 500))
def test_salient_lines_agree_with_the_reference_on_any_text(text: str, budget: int) -> None:
    assert salient_lines(text, budget) == reference(text, budget)


def test_a_word_makes_at_most_its_first_lines_telling_and_a_repeated_line_counts_once() -> None:
    lines = [f"warning: slow step {i}" for i in range(40)] + ["warning: slow step 3", "Error: disk full"]
    kept = salient_lines("\n".join(lines), 10_000).split("\n")
    assert kept == [f"warning: slow step {i}" for i in range(PER_WORD_LINES)] + ["Error: disk full"]
    # a line counts once for a word however often it holds it
    twice = [f"error {i}: error" for i in range(30)]
    assert salient_lines("\n".join(twice), 10_000).split("\n") == twice[:PER_WORD_LINES]


def test_odd_text_reads_the_same_lines() -> None:
    """Texts the byte scan cannot lowercase (İ, the Kelvin sign), lone surrogates and
    lines with the word past the cut still give the rule's lines, whole."""
    assert salient_lines("İstanbul ok\nmodule İmport failed here\nnothing", 500) == "module İmport failed here"
    assert salient_lines("TRACEBAC\u212a (most recent call last)\nok", 500) == "TRACEBAC\u212a (most recent call last)"
    assert salient_lines("x \ud800 error y\nok", 500) == "x \ud800 error y"
    long = "a" * 300 + " timeout"
    assert salient_lines(f"ok\n{long}\nok", 500) == long[:LINE_CHARS]


def test_the_error_in_the_middle_of_a_long_log_is_kept() -> None:
    filler = "\n".join(f"collected item {i:05d} ok" for i in range(2000))
    log = filler + "\nQuokkaOverflowError: marsupial buffer exhausted\n" + filler
    kept = bounded(log, 800, 300, 1500)
    assert "QuokkaOverflowError: marsupial buffer exhausted" in kept
    assert kept.startswith(log[:800]) and kept.endswith(log[-300:]) and len(kept) < 3000
