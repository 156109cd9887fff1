"""Snippets: a window of a turn's text around the rarest word that matched.

A hit for ``MockStyles RenderStyles`` must show the identifier, not the first
"mocking" in the turn: so each matching token is scored by the rarest query term
it carries (document frequency from the index; a whole identifier is far rarer
than its parts) and the window centres on the best one, the first of equals.

Finding what matched must agree with the index (stems, identifier parts), but
tokenizing a whole 8,000-character turn per hit is too slow for search-as-you-type.
So a regex of the query terms finds *candidate* positions at C speed (an indexed
term is a prefix of, or inside, the token it came from: ``compact`` in
``compaction``, ``cach`` in ``_is_cache_version``), and only the token around a
candidate is run through the tokenizer to confirm it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from core.index.tokenize import TOKEN_RE, default_tokenizer

SNIPPET_CHARS = 300
_JOINERS = "_./-:@#"


@lru_cache(maxsize=256)
def _candidate_re(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    words = sorted({t for t in terms if t}, key=len, reverse=True)
    if not words:
        return None
    # An index term starts a token or a part of one, never inside a lowercase run:
    # not after a lowercase letter unless it starts with a capital (camelCase).
    start = r"(?:(?-i:(?<![a-z]))|(?-i:(?=[A-Z])))"
    return re.compile(start + "(?:" + "|".join(re.escape(w) for w in words) + ")", re.IGNORECASE)


def _matches(text: str, query_terms: list[str]) -> Iterator[tuple[int, int, set[str]]]:
    """Spans of the tokens of ``text`` whose index terms meet the query's, with those terms."""
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
        if token.start() <= candidate.start() < token.end():
            met = wanted.intersection(expand(token.group()))
            if met:
                yield token.start(), token.end(), met
        pos = max(token.end(), candidate.end()) if token.start() <= candidate.start() else candidate.end()


MAX_SCANNED = 40  # matches looked at for the rarest one (per passage)
MAX_PASSAGES = 3  # other passages of a turn looked at


def snippet(
    text: str, query_terms: list[str], width: int = SNIPPET_CHARS, rarity: dict[str, float] | None = None
) -> str:
    """At most ``width`` characters around the token carrying the rarest query term.

    ``rarity``: term → document frequency (lower is rarer); without it, the first
    match wins.
    """
    return best_snippet([text], query_terms, width, rarity)


def best_snippet(
    texts: Iterable[str], query_terms: list[str], width: int = SNIPPET_CHARS, rarity: dict[str, float] | None = None
) -> str:
    """The snippet of whichever of ``texts`` (passages of one turn) shows the rarest match; the first on ties.

    Texts after the first are only looked at while the best match so far is not
    already the rarest term of the query, and only if they contain that term's
    letters at all (a substring test, far cheaper than matching).
    """
    # the rarest term the index holds at all (a typed stem may hold none)
    held = [t for t in query_terms if rarity and rarity.get(t)]
    rarest = min(held, key=lambda t: rarity[t]) if rarity and held else None
    floor = rarity[rarest] if rarity and rarest else 0.0
    best: tuple[float, str, tuple[int, int] | None] | None = None
    for n, text in enumerate(texts):
        if n > MAX_PASSAGES:
            break
        if n and rarest and rarest not in text.lower():
            continue
        flat = " ".join(text.split())
        found = _rarest(flat, query_terms, rarity, rarest)
        df = found[0] if found else float("inf")
        if best is None or df < best[0]:
            best = (df, flat, found[1:] if found else None)
        if rarity is None or best[0] <= floor:
            break
    if best is None:
        return ""
    _, flat, span = best
    if len(flat) <= width:
        return flat
    start = max(0, span[0] - width // 3) if span else 0
    window = flat[start : start + width]
    if start > 0:
        window = "…" + window[1:]
    if start + width < len(flat):
        window = window[:-1] + "…"
    return window


def _rarest(
    text: str, query_terms: list[str], rarity: dict[str, float] | None, stop_at: str | None = None
) -> tuple[float, int, int] | None:
    """(document frequency, start, end) of the match carrying the rarest term; the first of equals.

    Stops at the first token carrying ``stop_at`` (the query's rarest term), or
    after :data:`MAX_SCANNED` matches.
    """
    best: tuple[float, int, int] | None = None
    best_key: tuple[float, int] | None = None
    for n, (start, end, met) in enumerate(_matches(text, query_terms)):
        if rarity is None:
            return 0.0, start, end
        df = min(rarity.get(t, float("inf")) for t in met)
        key = (df, -len(met))  # equally rare: the token carrying more of the query (the identifier itself)
        if best_key is None or key < best_key:
            best, best_key = (df, start, end), key
            if stop_at in met:
                break
        if n >= MAX_SCANNED:
            break
    return best


def matched_spans(text: str, query_terms: list[str]) -> list[tuple[int, int]]:
    """Character spans of the tokens in ``text`` that match the query (highlighting)."""
    return [(start, end) for start, end, _ in _matches(text, query_terms)]
