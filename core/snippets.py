"""Snippets: a window of a turn's text around the first words that matched."""

from __future__ import annotations

from .tokenize import TOKEN_RE, default_tokenizer

SNIPPET_CHARS = 300


def snippet(text: str, query_terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """At most ``width`` characters, centred on the first token whose terms match."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    wanted = set(query_terms)
    expand = default_tokenizer().terms
    start = 0
    for match in TOKEN_RE.finditer(flat):
        if wanted.intersection(expand(match.group())):
            start = max(0, match.start() - width // 3)
            break
    window = flat[start : start + width]
    if start > 0:
        window = "…" + window[1:]
    if start + width < len(flat):
        window = window[:-1] + "…"
    return window


def matched_spans(text: str, query_terms: list[str]) -> list[tuple[int, int]]:
    """Character spans of the tokens in ``text`` that match the query (highlighting)."""
    wanted = set(query_terms)
    expand = default_tokenizer().terms
    return [(m.start(), m.end()) for m in TOKEN_RE.finditer(text) if wanted.intersection(expand(m.group()))]
