"""Snippets: a window of a turn's text around the first words that matched.

Finding what matched must agree with the index (stems, identifier parts), but
tokenizing a whole 8,000-character turn per hit is too slow for search-as-you-type.
So a regex of the query terms finds *candidate* positions at C speed (an indexed
term is a prefix of, or inside, the token it came from: ``compact`` in
``compaction``, ``cach`` in ``_is_cache_version``), and only the token around a
candidate is run through the tokenizer to confirm it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from .tokenize import TOKEN_RE, default_tokenizer

SNIPPET_CHARS = 300
_JOINERS = "_./-:@#"


@lru_cache(maxsize=256)
def _candidate_re(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    words = sorted({t for t in terms if t}, key=len, reverse=True)
    if not words:
        return None
    return re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)


def _matches(text: str, query_terms: list[str]) -> Iterator[tuple[int, int]]:
    """Spans of the tokens of ``text`` whose index terms meet the query's."""
    pattern = _candidate_re(tuple(query_terms))
    if pattern is None:
        return
    wanted = set(query_terms)
    expand = default_tokenizer().terms
    pos = 0
    while True:
        candidate = pattern.search(text, pos)
        if candidate is None:
            return
        left = candidate.start()
        while left > 0 and (text[left - 1].isalnum() or text[left - 1] in _JOINERS):
            left -= 1
        token = TOKEN_RE.search(text, left)
        if token is None:
            return
        if token.start() <= candidate.start() < token.end() and wanted.intersection(expand(token.group())):
            yield token.start(), token.end()
        pos = max(token.end(), candidate.end()) if token.start() <= candidate.start() else candidate.end()


def snippet(text: str, query_terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """At most ``width`` characters, centred on the first token whose terms match."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    first = next(_matches(flat, query_terms), None)
    start = max(0, first[0] - width // 3) if first else 0
    window = flat[start : start + width]
    if start > 0:
        window = "…" + window[1:]
    if start + width < len(flat):
        window = window[:-1] + "…"
    return window


def matched_spans(text: str, query_terms: list[str]) -> list[tuple[int, int]]:
    """Character spans of the tokens in ``text`` that match the query (highlighting)."""
    return list(_matches(text, query_terms))
