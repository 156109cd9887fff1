"""Running a parsed query against an index snapshot: clauses, prefixes, phrases, pages, groups.

:mod:`core.query.syntax` says what a query means; this module turns that into the
ranked documents of a :class:`~core.index.bm25.Snapshot` and cuts the hit list into
pages or per-session groups. ``Archive.search`` (and the team store) delegate here,
so every front end pages, groups and sorts the same way; the bounds of a page
(:func:`check_paging`, :func:`check_limit`) hold for the listing calls too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from core.arguments import out_of_bounds
from core.errors import BadInput
from core.index.bm25 import Hit, Snapshot
from core.index.tokenize import default_tokenizer, term_id
from core.index.vocab import prefix_words
from core.model import SearchHit

from .syntax import Query, phrase_pattern

SORTS = ("relevance", "recent")
GROUPS = (None, "session")
MAX_OFFSET = 10_000
MAX_LIMIT = 500
PREFIX_WORDS = 8  # words a prefix expands to, shortest first (the likeliest completions)
GROUP_WINDOW = 400  # ranked documents looked at to group a page by session


def check_paging(offset: int, sort: str, group: str | None) -> None:
    if not isinstance(offset, int) or offset < 0 or offset > MAX_OFFSET:
        raise BadInput(f"offset must be between 0 and {MAX_OFFSET}")
    if sort not in SORTS:
        raise BadInput(f"sort must be one of {', '.join(SORTS)}")
    if group not in GROUPS:
        raise BadInput("group must be 'session' or empty")


def check_limit(limit: int) -> int:
    if not isinstance(limit, int) or limit < 1 or limit > MAX_LIMIT:
        raise BadInput(out_of_bounds("limit", limit, 1, MAX_LIMIT))
    return limit


def clause_ids(snapshot: Snapshot, query: Query) -> tuple[list[tuple[int, ...]], list[bool], list[str]]:
    """Per clause, the term ids that satisfy it (a prefix adds the words it completes);
    which clauses are required; and every term that can match (for snippets)."""
    tok = default_tokenizer()
    clauses: list[tuple[int, ...]] = []
    required: list[bool] = []
    terms: list[str] = []  # what was typed first, then the words prefixes completed
    completions: list[str] = []
    for clause in query.clauses:
        own = [clause.term]
        if clause.prefix:
            for word in prefix_words(snapshot.segments, clause.prefix, PREFIX_WORDS):
                own.extend(tok.terms(word)[:1])  # the word's own term, not its parts
        own = list(dict.fromkeys(own))
        terms.append(own[0])
        completions.extend(own[1:])
        clauses.append(tuple(term_id(t) for t in own))
        required.append(clause.required)
    return clauses, required, list(dict.fromkeys(terms + completions))


def ranked(
    snapshot: Snapshot,
    query: Query,
    fetch: int,
    *,
    sort: str = "relevance",
    allowed_files: np.ndarray | None = None,
    ts_from: float | None = None,
    ts_to: float | None = None,
) -> tuple[list[Hit], list[str], dict[str, float]]:
    """Ranked documents for ``query``, the terms they may match by, and each term's
    document frequency (so a snippet can show the rarest match)."""
    clauses, required, terms = clause_ids(snapshot, query)
    dfs: dict[int, int] = {}
    hits = snapshot.search(
        limit=fetch,
        clauses=clauses,
        required=required,
        excluded=[term_id(t) for t in query.excluded],
        allowed_files=allowed_files,
        ts_from=ts_from,
        ts_to=ts_to,
        recency_intent=query.recency,
        sort=sort,
        dfs=dfs,
    )
    # rarity of the typed terms only: a snippet shows what was asked for, and a rare
    # completion of a prefix ("re*" → "reentrant") must not steer it
    typed = {c.term for c in query.clauses}
    return hits, terms, {t: float(dfs.get(term_id(t), 0)) for t in terms if t in typed}


def phrases_first(raw: list[Hit], query: Query, bodies: Callable[[list[int]], dict[int, dict[str, Any]]]) -> list[Hit]:
    """Turns whose conversation text shows every quoted phrase, ahead of the rest (order kept)."""
    patterns = [p for p in (phrase_pattern(ph) for ph in query.phrases) if p is not None]
    if not patterns or not raw:
        return raw
    docs = bodies([h.doc_id for h in raw])
    shown: list[Hit] = []
    rest: list[Hit] = []
    for h in raw:
        body = (docs.get(h.doc_id) or {}).get("body") or ""
        (shown if all(p.search(body) for p in patterns) else rest).append(h)
    return shown + rest


def group_by_session(
    raw: list[Hit], session_of: Callable[[int], str | None], turn_of: Callable[[Hit], object]
) -> tuple[list[Hit], dict[int, int]]:
    """The best document per session in rank order, and how many more turns each session matched."""
    best: dict[str, Hit] = {}
    turns: dict[str, set[object]] = {}
    for h in raw:
        sid = session_of(h.file_id)
        if sid is None:
            continue
        turns.setdefault(sid, set()).add(turn_of(h))
        best.setdefault(sid, h)
    firsts = list(best.values())
    more = {h.doc_id: len(turns[sid]) - 1 for sid, h in best.items()}
    return firsts, more


def with_more(hits: Sequence[SearchHit], more: dict[str, int]) -> list[SearchHit]:
    return [replace(h, more_in_session=more.get(h.session_id, 0)) for h in hits]


def group_hits(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """One hit per session (its first, i.e. best) with how many more of its turns matched."""
    firsts: dict[str, SearchHit] = {}
    turns: dict[str, set[object]] = {}
    for h in hits:
        turns.setdefault(h.session_id, set()).add(h.turn_number)
        firsts.setdefault(h.session_id, h)
    return [replace(h, more_in_session=len(turns[sid]) - 1) for sid, h in firsts.items()]
