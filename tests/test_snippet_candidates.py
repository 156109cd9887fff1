"""The snippets' candidate search, the fast way and the exact way (core/query/snippets.py).

A snippet's window starts from candidates: places where a query term starts a token or a
part of one. They were found by a case-insensitive pattern with the start rule in a
look-behind; they are now found by literals over the lowercased text, the start rule
checked at each candidate, except where lowercasing and case-insensitive matching
disagree. These properties hold the fast finder to the pattern: the same span for every
starting position, in any text (camelCase, digits, the characters that case apart), and
the same matches, snippets and highlights as the pattern alone gives.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.query import snippets
from core.query.snippets import CASE_APART, _candidate_re, _finder, best_snippet, matched_spans

ALPHABET = "abcdefgiklsyzABCGKLSY_./-: 0123456789" + "ſıİΣσςéÉ→—"
texts = st.text(alphabet=ALPHABET, max_size=80)
terms = st.lists(st.text(alphabet="abcgilsyz0123", min_size=1, max_size=5), min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(texts, terms)
@example("getCachedProject Cached", ["cach", "get"])
@example("ſtring ıtem", ["s", "i"])
@example("ΟΔΟΣ σ", ["σ"])
@example("flaky Flakiness", ["flaki"])
@example("visibility VISIBLE", ["visibl"])
def test_the_fast_finder_gives_the_patterns_span_from_every_position(text: str, words: list[str]) -> None:
    key = tuple(words)
    pattern = _candidate_re(key)
    assert pattern is not None
    find = _finder(text, key)
    for pos in range(len(text) + 1):
        exact = pattern.search(text, pos)
        assert find(pos) == (None if exact is None else exact.span()), (text, words, pos)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["getCachedProject", "get_cached_pr", "cache", "Project", "line", "lines", "en", "often", "ſ", "İx", "ΣΑΣ", "x.y/z", "42"]), max_size=30), terms)
def test_matches_snippets_and_highlights_are_the_patterns(words: list[str], query: list[str]) -> None:
    text = " ".join(words)
    fast = (list(snippets._matches(text, query)), best_snippet([text], query, 40), matched_spans(text, query, prefixes=(query[-1],)))
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(snippets, "_lowered_re", lambda _terms: None)  # the pattern alone
        exact = (list(snippets._matches(text, query)), best_snippet([text], query, 40), matched_spans(text, query, prefixes=(query[-1],)))
    assert fast == exact


def test_every_character_re_pairs_apart_from_lowercase_is_searched_exactly() -> None:
    casefix = pytest.importorskip("re._casefix")
    paired = {chr(c) for k, v in casefix._EXTRA_CASES.items() for c in (k, *v)}
    missing = sorted(ch for ch in paired if not ch.isascii() and not CASE_APART.search(ch))
    assert missing == []
    assert CASE_APART.search("Σ") and CASE_APART.search("İ")


def test_a_text_with_such_a_character_takes_the_pattern() -> None:
    pattern = _candidate_re(("s",))
    assert pattern is not None
    text = "ſtring"  # case-insensitively "s" starts it; lowercased it is still "ſ"
    assert _finder(text, ("s",))(0) == (0, 1) == pattern.search(text).span()
    assert re.search("s", text.lower()) is None
