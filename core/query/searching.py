"""From ranked passages to search hits: one hit per turn, with its turn number and snippet.

:mod:`core.query.execute` ranks an index snapshot's passages; this module turns them
into the :class:`~core.model.SearchHit` rows every front end shows: each passage's
session and turn (a subagent's passage belongs to the main turn it ran in), one hit
per turn (its best passage), the page, a snippet from the turn's rarest match, and
per-session grouping with its "+N more" count.

Where the passages' rows come from is a small strategy (:class:`Passages`): the
embedded cache's catalog (:class:`~core.query.passages.CatalogPassages`, what
:meth:`Archive.search <core.api.Archive.search>` uses) or the team store's
(``core.team.search.Docs``), so both stores build hits with this one code.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from msgspec.structs import replace

from core.archive.catalog import Catalog
from core.archive.library import FileEntry, Library
from core.archive.scope import Scope
from core.index.bm25 import Hit, Snapshot
from core.model import SearchHit, SessionInfo
from core.refs import format_reference
from core.views import Resolved

from . import execute as query_exec
from . import hybrid, landing
from . import syntax as query_syntax
from .meaning import meant_text, semantic_query
from .passages import CatalogPassages, Passages, remembered_headers
from .ranking import in_total_order
from .syntax import Query

if TYPE_CHECKING:
    from core.archive.semantic_job import SemanticJob
    from core.semantic.vectors import Vectors


def _meant_sequence(by_meaning: Mapping[int, int | None] | None, doc_id: int, first_seq: int) -> int:
    """A passage found by meaning alone points at its closest slot's message (issue 34); others at their start."""
    seq = by_meaning.get(doc_id) if by_meaning else None
    return first_seq if seq is None else seq


Messages = Callable[[FileEntry, int, int], Sequence[Any] | None]
"""(the passage's file, first, last sequence) → that passage's messages read back, or None (not read)."""


class SearchedArchive(Protocol):
    """What :func:`archive_search` needs of an archive (:class:`core.api.Archive` is one).

    A protocol, not an import: the query layer sits below the query API and must
    not import it.
    """

    scope: Scope
    catalog: Catalog
    _snapshot: Snapshot | None
    semantic: SemanticJob
    reader: Any  # core.query.reading.MessageReader

    @property
    def library(self) -> Library: ...

    def resolve(self, ref: str) -> Resolved: ...

    def _filter_sessions(self, lib: Library, **filters: str | list[str] | None) -> list[SessionInfo]: ...


def archive_search(
    archive: SearchedArchive,
    query: str,
    *,
    typing: bool,
    project: str | None,
    slug: str | None,
    session_id: str | None,
    agent: str | None,
    user: str | None,
    tags: list[str] | None,
    limit: int,
    offset: int,
    sort: str,
    group: str | None,
    ts_from: float | None,
    ts_to: float | None,
    snippets: bool,
    mode: str = "auto",
) -> list[SearchHit]:
    """``Archive.search`` once its arguments are checked: the files its filters allow, then :func:`search`.

    Separate from :class:`core.api.Archive` so that it delegates rather than grows.
    """
    archive.semantic.searched()  # (a background embedding waits: a search comes first)
    lib = archive.library
    snapshot = archive._snapshot
    parsed = query_syntax.parse(query or "", typing=typing)
    if not parsed or snapshot is None:
        return []
    allowed = None
    if project or slug or session_id or agent or user or tags:
        sessions = archive._filter_sessions(lib, project=project, slug=slug, agent=agent, user=user, tags=tags)
        if session_id:
            wanted = {s.session_id for s in archive.resolve(session_id).sessions}
            sessions = [s for s in sessions if s.session_id in wanted]
        allowed = lib.file_ids_for(s.session_id for s in sessions)
    elif not archive.scope.everything:
        allowed = lib.in_scope_file_ids()
    if allowed is not None and not allowed:
        return []
    meaning = None
    meant = meant_text(query, typing)
    if hybrid.uses_meaning(query, mode, sort) and meant and hybrid.uses_meaning(meant, mode, sort):
        meaning = semantic_query(archive, meant)
    # a hit points at its snippet's message (core/query/landing.py): the passage's messages are
    # read back from the transcripts, not per keystroke (the app's reader finds the snippet itself)
    messages = None if typing or not snippets else passage_messages(archive, lib)
    return search(
        snapshot, lib, CatalogPassages(archive.catalog), parsed, allowed,
        limit=limit, offset=offset, sort=sort, group=group, ts_from=ts_from, ts_to=ts_to, snippets=snippets, meaning=meaning,
        messages=messages,
    )  # fmt: skip


LANDING_BYTES = 64 << 20  # transcript bytes one search reads back to find its hits' messages (~2 s)


def passage_messages(archive: SearchedArchive, lib: Library) -> Messages:
    """:data:`Messages` through the archive's message reader: the passage's own file, read up to its
    last message (not the whole session: that cost a one-shot search the parse of every hit's session,
    subagents and all); at most :data:`LANDING_BYTES` of transcripts per search, beyond which hits keep
    their passage's first message."""
    budget = [LANDING_BYTES]

    def read(entry: FileEntry, first: int, last: int) -> Sequence[Any] | None:
        size = _size(entry.path)
        if size > budget[0]:
            return None
        budget[0] -= size
        found = []
        for m in archive.reader.iter_file(entry):
            if m.sequence > last:
                break
            if m.sequence >= first:
                found.append(m)
        return found

    return read


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def search(
    snapshot: Snapshot,
    lib: Library,
    passages: CatalogPassages,
    parsed: Query,
    allowed: list[int] | None,
    *,
    limit: int,
    offset: int,
    sort: str,
    group: str | None,
    ts_from: float | None,
    ts_to: float | None,
    snippets: bool = True,
    meaning: tuple[Vectors, np.ndarray] | None = None,
    messages: Messages | None = None,
) -> list[SearchHit]:
    """The page of hits for a parsed query over ``allowed`` files (None: every file);
    ``snippets=False`` leaves each hit's snippet empty (half the time of 500 hits);
    ``meaning``: (vectors, query vector) to fuse with BM25 (:mod:`core.query.hybrid`);
    ``messages``: reads a passage's messages, so each hit points at its snippet's message."""
    allowed_files = None if allowed is None else np.array(allowed, dtype=np.int32)
    fetch = query_exec.GROUP_WINDOW if group else (offset + limit) * 3 + 10
    window = fetch
    if parsed.phrases:  # the passages showing a phrase may rank below the page's window: a wider one is checked
        window = max(window, query_exec.PHRASE_WINDOW)
    if meaning is not None:  # fusion looks at each list's top FUSE_DEPTH
        window = max(window, hybrid.FUSE_DEPTH)
    raw, terms, rarity = query_exec.ranked(
        snapshot, parsed, window, sort=sort, allowed_files=allowed_files, ts_from=ts_from, ts_to=ts_to
    )
    only_meaning: dict[int, int | None] = {}
    if meaning is not None:
        sims = hybrid.cosines(snapshot, meaning[0], meaning[1], allowed_files=allowed_files, ts_from=ts_from, ts_to=ts_to)
        raw, only_meaning = hybrid.fuse(raw, sims, window)
    raw = query_exec.phrase_matches(raw, parsed, passages.docs)[0][:fetch]
    if group == "session":
        return grouped(
            lib, passages, raw, terms, limit, offset, rarity, sort, snippets=snippets, by_meaning=only_meaning,
            messages=messages,
        )  # fmt: skip
    return hits(
        lib, passages, raw, terms, limit, skip=offset, rarity=rarity, sort=sort, snippets=snippets, by_meaning=only_meaning,
        messages=messages,
    )  # fmt: skip


def grouped(
    lib: Library, passages: CatalogPassages, raw: list[Hit], terms: list[str], limit: int, offset: int, rarity: dict[str, float], sort: str,
    *, snippets: bool = True, by_meaning: Mapping[int, int | None] | None = None, messages: Messages | None = None,
) -> list[SearchHit]:
    """One hit per session (its best turn), with ``more_in_session``: its other matching turns."""
    docs = remembered_headers(lib, passages, [h.doc_id for h in raw])  # the window's hundreds of texts are not needed: the page's are read below
    lib.prefetch_files(h.file_id for h in raw)

    def session_of(file_id: int) -> str | None:
        entry = lib.file(file_id)
        return entry.session_id if entry is not None else None

    firsts, more = query_exec.group_by_session(
        raw, session_of, lambda h: (h.file_id, (docs.get(h.doc_id) or {}).get("turn", h.doc_id))
    )
    page = firsts[offset : offset + limit]
    counts: dict[str, int] = {}
    for h in page:
        sid = session_of(h.file_id)
        if sid is not None:
            counts[sid] = more[h.doc_id]
    # A subagent's passage belongs to the main turn it ran in (as a hit's turn_number
    # and the reader's n/N have it): recount the page's sessions that have one, so
    # "+N more" is the number of other turns, not of files × turns.
    sided = {s for s in (session_of(h.file_id) for h in raw if _is_side(lib, h, docs)) if s is not None} & set(counts)
    if sided:
        # one read per session, not per passage, kept while the library (the index state) lasts:
        # the next keystroke usually hits the same sessions
        cached = lib.memo.setdefault("parent_turns", {})
        parents = {sid: cached.get(sid) or cached.setdefault(sid, passages.parent_turns(lib, sid)) for sid in sided}
        turns: dict[str, set[int | None]] = {}
        for h in raw:
            sid = session_of(h.file_id)
            doc = docs.get(h.doc_id)
            entry = lib.file(h.file_id)
            if sid is not None and sid in sided and doc is not None and entry is not None:
                turn = own_turn(entry, doc)
                turns.setdefault(sid, set()).add(parents[sid](doc["ts"]) if turn is None else turn)
        counts.update({sid: len(t) - 1 for sid, t in turns.items()})
    page_hits = hits(
        lib, passages, page, terms, limit, rarity=rarity, sort=sort, snippets=snippets, by_meaning=by_meaning,
        messages=messages,
    )  # fmt: skip
    return query_exec.with_more(page_hits, counts)


def hits(
    lib: Library,
    passages: Passages,
    raw: Sequence[Hit],
    terms: list[str],
    limit: int,
    *,
    skip: int = 0,
    rarity: dict[str, float] | None = None,
    sort: str = "relevance",
    snippets: bool = True,
    by_meaning: Mapping[int, int | None] | None = None,
    messages: Messages | None = None,
) -> list[SearchHit]:
    """The ranked passages as hits: one per turn (its best passage), ``skip`` turns skipped, at most ``limit``
    (with their snippets unless ``snippets=False``); a turn none of whose passages matched by words, only
    passages in ``by_meaning`` (doc id → the message of its closest answer slot, or None), is labelled
    ``by_meaning``. With ``messages``, each hit's ``sequence`` is the message its snippet came from
    (:mod:`core.query.landing`); without, the passage's first message (a by-meaning one: its slot's)."""
    docs = passages.docs([h.doc_id for h in raw])
    lib.prefetch_files(h.file_id for h in raw)
    lib.load_sessions(entry.session_id for h in raw if (entry := lib.file(h.file_id)) is not None)  # (in one batch)
    found: list[tuple[SearchHit, Hit, dict]] = []  # (hit, its raw index hit, its doc), in ranked order
    for h in raw:
        doc = docs.get(h.doc_id)
        entry = lib.file(h.file_id)
        if doc is None or entry is None:
            continue
        info = lib.session(entry.session_id)
        if info is None:
            continue
        turn = own_turn(entry, doc)
        if turn is None:
            turn = passages.parent_turn(lib, entry.session_id, doc["ts"])
        found.append(
            (
                SearchHit(
                    session_id=info.session_id,
                    slug=info.slug,
                    session_number=info.session_number,
                    project=info.project,
                    agent=info.agent,
                    turn_number=turn,
                    sequence=entry.seq_base + _meant_sequence(by_meaning, h.doc_id, doc["first_seq"]),
                    score=h.score,
                    snippet="",  # made below for the hits kept only
                    timestamp=doc["ts"],
                    ref=format_reference(slug=info.chain_name, session_id=info.session_id, numbers=[info.session_number or 1], turn=turn),
                    user=info.user,
                    is_sidechain=not entry.primary or (bool(doc["side"]) and entry.kind == "main"),
                    match_terms=tuple(terms),
                    exact_phrase=h.phrase_shown,
                    by_meaning=by_meaning is not None and h.doc_id in by_meaning,
                ),
                h,
                doc,
            )
        )
    if by_meaning:  # a turn that also matched by words is not "by meaning alone"
        worded = {(hit.session_id, hit.turn_number) for hit, _, _ in found if not hit.by_meaning}
        found = [
            (replace(hit, by_meaning=False) if hit.by_meaning and (hit.session_id, hit.turn_number) in worded else hit, h, doc)
            for hit, h, doc in found
        ]
    # The ranked order, with ties made total by a stable id (core/query/ranking.py), then
    # one hit per turn (its best passage), then the page.
    kept: list[tuple[SearchHit, Hit, dict]] = []
    seen: set[tuple[str, int | None]] = set()
    for hit, h, doc in in_total_order(found, recent=sort == "recent"):
        key = (hit.session_id, hit.turn_number)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > skip:
            kept.append((hit, h, doc))
        if len(kept) == limit:
            break
    if not snippets:
        return [hit for hit, _, _ in kept]
    out = [replace(hit, snippet=passages.snippet(h.file_id, doc, terms, rarity)) for hit, h, doc in kept]
    if messages is None:
        return out
    return [_landed(hit, doc, messages, terms, rarity, (by_meaning or {}).get(h.doc_id) if hit.by_meaning else None, lib.file(h.file_id))
            for hit, (_, h, doc) in zip(out, kept, strict=True)]


def _landed(
    hit: SearchHit, doc: dict, messages: Messages, terms: list[str], rarity: dict[str, float] | None, meaning: int | None,
    entry: FileEntry | None,
) -> SearchHit:
    """``hit`` pointing at its snippet's message (and its snippet remade from it when the stored text showed no word)."""
    if entry is None:
        return hit
    base = entry.seq_base
    stored = landing.land_in_body(doc["body"] or "", doc["marks"], doc["first_seq"], hit.snippet, terms, rarity, meaning_sequence=meaning)
    if stored is not None:  # the stored passage showed where (no transcript read)
        return replace(hit, sequence=base + stored[0], snippet=stored[1])
    read = messages(entry, base + doc["first_seq"], base + doc["last_seq"])
    if not read:
        return hit
    sequence, snippet = landing.land(read, hit.snippet, terms, rarity, meaning_sequence=None if meaning is None else base + meaning)
    return replace(hit, sequence=hit.sequence if sequence is None else sequence, snippet=snippet)


def own_turn(entry: FileEntry, doc: dict) -> int | None:
    """The session turn an indexed passage belongs to, or None for a subagent's passage,
    which belongs to the main turn running when it was written (:meth:`Passages.parent_turn`)."""
    if entry.primary and (not doc["side"] or entry.kind != "main"):
        return entry.turn_base + doc["turn"]
    return None


def _is_side(lib: Library, h: Hit, docs: dict[int, dict]) -> bool:
    entry = lib.file(h.file_id)
    doc = docs.get(h.doc_id)
    return entry is not None and doc is not None and own_turn(entry, doc) is None
