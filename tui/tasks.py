"""Blocking calls into the archive, each returning the message that reports it.

These run in thread workers (:meth:`tui.app.RelayApp.submit`). They take the
archive and plain values and return a message; they never touch a widget.
"""

from __future__ import annotations

import re
import time
from typing import Any

import msgspec.structs

from core.words import visible

from .blocks import build_blocks, find_turn, hit_blocks
from .clipboard import copy_text, save_copy
from .filters import Filters
from .marks import PROMPT, block_matches, find_matches, first_match_at, item_at, query_marks, snippet_match
from .messages import (
    ChoicesLoaded,
    ConversationLoaded,
    Copied,
    ExportDone,
    MatchesCounted,
    ResumeReady,
    SearchFinished,
    SessionCount,
    SessionsLoaded,
    StatsUpdated,
    TagsLoaded,
    TagsSaved,
    UsageLoaded,
)

# What a typed or pasted reference looks like: a slug with at least one hyphen
# (``velvet-puzzling-eclipse``, ``…#4-5``, ``…#4:12``) or a hex id prefix of 8+.
REFERENCE = re.compile(r"^(?:[a-z0-9]+(?:-[a-z0-9]+)+(?:#[\d,\-]+(?::\d+)?)?|[0-9a-f]{8}[0-9a-f-]*(?::\d+)?)$")
SEARCH_LIMIT = 25  # hits per page of the live list: a few screens; each one rendered costs keystroke latency
MAX_PAGE = 500  # the core's largest limit: what a live refresh re-fetches at most
READER_HIT_LIMIT = 500


def search(
    archive: Any,
    query: str,
    filters: Filters,
    refresh: bool = False,
    *,
    offset: int = 0,
    limit: int = SEARCH_LIMIT,
    grouped: bool = True,
) -> SearchFinished:
    """One page of hits for ``query``: ``grouped`` gives one row per session (its best
    hit, with ``more_in_session``); ``offset`` pages on (the hit list loads the next
    page when the highlight or the scroll reaches its end)."""
    started = time.perf_counter()
    hits = archive.search(
        query,
        limit=limit,
        offset=offset,
        group="session" if grouped else None,
        project=filters.project,
        agent=filters.agent,
        date_from=filters.date_from,
        typing=True,  # the last word may be half typed: it matches as a prefix ("flak" → flaky)
        date_to=filters.date_to,
        tags=[filters.tag] if filters.tag else None,  # in the core, so a page stays a whole page
    )
    elapsed = (time.perf_counter() - started) * 1000
    return SearchFinished(
        query=query,
        hits=list(hits),
        elapsed_ms=elapsed,
        refresh=refresh,
        opens=typed_reference(archive, query) if offset == 0 else None,
        offset=offset,
        grouped=grouped,
        complete=len(hits) < limit,
    )


def typed_reference(archive: Any, query: str) -> str | None:
    """``query`` itself when it names a conversation (``slug``, ``slug#4-5``, ``slug#4:12``,
    an id prefix), so the hit list can offer to open it; else None."""
    text = query.strip()
    if not REFERENCE.match(text):
        return None
    from core.errors import RelayError

    try:
        archive.resolve(text)
    except RelayError:
        return None
    return text


def list_sessions(archive: Any, filters: Filters, limit: int, refresh: bool = False) -> SessionsLoaded:
    sessions = archive.list_sessions(
        project=filters.project,
        agent=filters.agent,
        date_from=filters.date_from,
        date_to=filters.date_to,
        tags=[filters.tag] if filters.tag else None,
        limit=limit,
    )
    chains: dict[str, list[Any]] = {}
    for session in sessions:
        slug = session.slug
        if not slug or slug in chains or (session.chain_length or 1) <= 1:
            continue
        chains[slug] = list(archive.list_sessions(slug=slug, limit=500))
    return SessionsLoaded(sessions=list(sessions), chains=chains, limit=limit, refresh=refresh)


def load_conversation(
    archive: Any,
    ref: str,
    query: str = "",
    *,
    refresh: bool = False,
    follow: bool = False,
    focus_turn: tuple[str, int] | None = None,
    unfold_subagents: bool = False,
    focus_sequence: int | None = None,
    focus_snippet: str = "",
) -> ConversationLoaded:
    """Resolve ``ref``, read its sessions' streams and build the reader blocks."""
    resolved = archive.resolve(ref)
    sessions = list(resolved.sessions)
    streams = [archive.session_messages(s.session_id) for s in sessions]
    blocks = build_blocks(sessions, streams)
    usage = archive.sessions_usage([s.session_id for s in sessions])
    for block in blocks:
        if block.kind == "session":
            block.usage = usage[block.session_id].short()
    target = None
    if focus_turn is not None:
        target = find_turn(blocks, focus_turn[0], focus_turn[1])
    elif resolved.turn is not None and sessions:
        target = find_turn(blocks, sessions[0].session_id, resolved.turn)
    hits: list[int] = []
    found: list[Any] = []
    if query.strip():
        for session in sessions:
            # typing=True as in the hit list, so n/N visits the turns the list counted;
            # the turns are all the reader needs (snippets were half of this search)
            found.extend(archive.search(query, session_id=session.session_id, limit=READER_HIT_LIMIT, typing=True, snippets=False))
        hits = hit_blocks(blocks, found)
    from core.query.weighty import archive_weighty_terms

    weighty = archive_weighty_terms(archive, query) if query.strip() else None
    marks, matches, target_match = reader_matches(blocks, query, found, target, focus_sequence, focus_snippet, weighty)
    return ConversationLoaded(
        ref=resolved.ref or ref,
        sessions=sessions,
        blocks=blocks,
        target=target,
        hit_blocks=hits,
        query=query,
        refresh=refresh,
        follow=follow,
        unfold_subagents=unfold_subagents,
        marks=marks,
        matches=matches,
        target_match=target_match,
        matches_complete=marks is None,
    )


def reader_matches(
    blocks: list[Any], query: str, found: list[Any], target: int | None, sequence: int | None, snippet: str = "",
    weighty: Any = None,
) -> tuple[Any, list[Any], int | None]:
    """The marks the reader highlights (the hits' ``match_terms``: the typed prefix
    expanded as in the hit list; an identifier whole, its parts only where the turn holds
    no whole one; a prose query's ``weighty`` terms only), their matches, and the one to
    open at: the one in the chosen hit's ``snippet`` (what the hit list showed, in the step
    it came from), else the first from its passage (``sequence``) on, else the first in its turn."""
    if not query.strip():
        return None, [], None
    marks = query_marks(query, [t for hit in found for t in hit.match_terms], weighty)
    if target is None:
        return marks, [], None
    # only the target turn's now (the whole of a 2,000-turn session takes ~200 ms): the
    # reader paints at the match, then count_matches brings the rest and the count
    matches = block_matches(target, blocks[target], marks)
    if not matches:
        target, matches = _continued_match(blocks, target, marks)
    if not matches and marks.parts:  # the turn holds the identifier's parts only: those are its matches
        marks = marks.with_parts()
        matches = block_matches(target, blocks[target], marks)
    item = item_at(blocks[target], sequence) if sequence is not None else PROMPT
    # (the blocks' text shows control characters: so does the snippet compared with it)
    chosen = snippet_match(blocks, matches, marks, target, visible(snippet)) if snippet else None
    return marks, matches, chosen if chosen is not None else first_match_at(matches, target, item)


def _continued_match(blocks: list[Any], target: int, marks: Any) -> tuple[int, list[Any]]:
    """The block of the target turn that holds a match: the turn goes on after a compaction
    (whose summary, a note of the continued block, is indexed with the turn), else the target."""
    first = blocks[target]
    for index in range(target + 1, len(blocks)):
        block = blocks[index]
        if block.kind == "compaction":
            continue
        if block.session_id != first.session_id or block.turn != first.turn:
            break
        if found := block_matches(index, block, marks):
            return index, found
    return target, []


def count_matches(archive: Any, ref: str, blocks: list[Any], marks: Any) -> MatchesCounted:
    """Every match of ``marks`` in an open conversation (after its first paint)."""
    return MatchesCounted(ref=ref, marks=marks, matches=find_matches(blocks, marks))


def choices(archive: Any, kind: str) -> ChoicesLoaded:
    """Values offered by a filter picker."""
    if kind == "project":
        values = list(archive.list_projects())
    elif kind == "agent":
        values = sorted(a for a, n in archive.stats().agents.items() if n)
    else:
        found: set[str] = set()
        for session in _all_sessions(archive):
            found.update(session.tags)
        values = sorted(found)
    return ChoicesLoaded(kind=kind, values=values)


def get_tags(archive: Any, session_id: str) -> TagsLoaded:
    return TagsLoaded(session_id=session_id, tags=list(archive.get_tags(session_id)))


def set_tags(archive: Any, session_id: str, tags: list[str]) -> TagsSaved:
    archive.set_tags(session_id, tags)
    return TagsSaved(session_id=session_id, tags=tags)


def stats(archive: Any) -> StatsUpdated:
    return StatsUpdated(stats=archive.stats())


def meaning_progress(archive: Any, stats: Any) -> StatsUpdated:
    """The status line's stats with only the embedding's count made anew (cheap, unlike a whole
    ``stats()``: it runs every few seconds while passages wait for vectors)."""
    return StatsUpdated(stats=msgspec.structs.replace(stats, semantic=archive.semantic.summary()))


def embed(archive: Any) -> None:
    """Start embedding what has no vector yet (a thread of the core's; returns at once)."""
    archive.embed_in_background()


def session_count(archive: Any) -> SessionCount:
    return SessionCount(count=len(archive.list_sessions(limit=1)))


def describe(archive: Any, ref: str) -> str:
    """``turn x#1:4`` / ``session x#2`` / ``sessions x#4-5`` / ``chain x (5 sessions)``."""
    resolved = archive.resolve(ref)
    sessions = resolved.sessions
    if resolved.turn is not None:
        return f"turn {ref}"
    if len(sessions) == 1:
        return f"session {ref}"
    if len(sessions) == len(resolved.chain):
        return f"chain {ref} ({len(sessions)} sessions)"
    return f"sessions {ref} ({len(sessions)} marked)"


def copy_reference(archive: Any, ref: str, app: Any) -> Copied:
    text = archive.reference_block(ref)
    return _copy(app, f"Reference to {describe(archive, ref)}", text)


def copy_content(archive: Any, ref: str, app: Any) -> Copied:
    text = archive.content_markdown(ref)
    return _copy(app, f"Text of {describe(archive, ref)}", text)


def _copy(app: Any, what: str, text: str) -> Copied:
    how, detail = copy_text(app, text)
    path = save_copy(app.config.data_path, text)
    return Copied(what=what, text=text, how=how, detail=detail, path=str(path) if path else "")


def resume_command(archive: Any, ref: str, app: Any) -> ResumeReady:
    """The command resuming ``ref``'s session, put on the clipboard."""
    plan = archive.resume_plan(ref)
    if plan.command is None:
        return ResumeReady(ref=ref, command=None, note=plan.reason)
    copied = _copy(app, "The command", plan.command)
    return ResumeReady(ref=ref, command=plan.command, note=plan.reason, how=copied.how, detail=copied.detail, path=copied.path)


def export(archive: Any, ref: str, fmt: str, cwd: Any, roots: list[Any], output: str | None = None,
           force: bool = False) -> ExportDone:
    """Export ``ref`` into ``output`` (a directory; default ``cwd``), never into the transcript
    folders unless named, never over a file unless ``force``."""
    from core.errors import RelayError
    from core.outputs import export as exporting

    try:
        done = exporting.export(archive, ref, fmt=fmt, output=output, cwd=cwd, transcript_roots=roots, force=force)
    except exporting.Exists as exc:
        return ExportDone(ref=ref, description="", error=str(exc), exists=str(exc.path))
    except (RelayError, OSError) as exc:
        return ExportDone(ref=ref, description="", error=str(exc))
    return ExportDone(ref=ref, description=done.describe())


def usage_report(archive: Any, by: str) -> UsageLoaded:
    return UsageLoaded(report=archive.usage_report(by=by))


def _all_sessions(archive: Any, **filters: Any) -> list[Any]:
    """Every session matching ``filters`` (the API pages at 500)."""
    found: list[Any] = []
    while True:
        page = archive.list_sessions(limit=500, offset=len(found), **filters)
        found.extend(page)
        if len(page) < 500:
            return found
