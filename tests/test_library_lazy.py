"""The lazy library answers single lookups exactly as the full build does (issue 12 #11).

A warm search reads only the sessions it hits, and a listing page only its own;
listing by project or slug builds every session. Both must agree on every field:
chain numbers, references, project names, file offsets — on the demo corpus
(chains, a slug-less continuation, subagents, several projects) and within a scope.
"""

from __future__ import annotations

import pytest

from core.archive.library import Library
from core.archive.scope import Scope

from .support import open_archive


@pytest.mark.parametrize("pattern", ["*", "*billing*", "*nothing-matches*"])
def test_lazy_lookups_equal_the_full_build(demo_home, pattern: str) -> None:
    home, _ = demo_home
    archive = open_archive(home)
    try:
        catalog, tags, now = archive.catalog, archive.tags.all(), 1.8e9
        full = Library(catalog, tags, now=now, scope=Scope(pattern))
        assert pattern != "*billing*" or 0 < len(full.sessions) < len(Library(catalog, tags, now=now).sessions)
        every = [r["session_id"] for r in catalog.sessions()]
        for sid in every:
            lazy = Library(catalog, tags, now=now, scope=Scope(pattern), lazy=True)  # one cold lookup each
            assert lazy.session(sid) == full.sessions.get(sid), sid
            assert lazy.files_of(sid) == full.session_files.get(sid, []), sid
        lazy = Library(catalog, tags, now=now, scope=Scope(pattern), lazy=True)
        for fid in (r["file_id"] for r in catalog.files(("file_id",))):
            assert lazy.file(fid) == full.files.get(fid), fid
        assert sorted(lazy.in_scope_file_ids()) == sorted(full.files)
        assert lazy.session("no-such-session") is None and lazy.file(10**9) is None
        for sid in every:  # references: ids, prefixes, aliases, chains, slugs
            for name in {sid, sid[:8], sid[:12], sid[:5]}:
                assert Library(catalog, tags, now=now, scope=Scope(pattern), lazy=True).find_ids(name) == full.find_ids(name), name
            if sid in full.sessions:
                assert lazy.chain(sid) == full.chain(sid)
        for alias in full.aliases:
            assert Library(catalog, tags, now=now, scope=Scope(pattern), lazy=True).find_ids(alias) == full.find_ids(alias)
        slugs = {r["slug"] for r in catalog.sessions() if r["slug"]} | {"no-such-slug"}
        assert pattern != "*" or len(slugs) > 2
        for slug in slugs:
            expected = full.chains[full.slugs[slug]] if slug in full.slugs else None
            assert Library(catalog, tags, now=now, scope=Scope(pattern), lazy=True).slug_chain(slug) == expected, slug
        assert lazy.sessions == full.sessions  # and the full maps, built on demand, are the same
    finally:
        archive.close()


def test_a_warm_search_builds_no_session_it_does_not_hit(demo_home) -> None:
    home, _ = demo_home
    archive = open_archive(home)
    try:
        hits = archive.search("test", limit=3)
        assert len(hits) == 3  # the demo has dozens of turns saying "test"
        lib = archive.library
        assert not lib._built  # the search read a few rows, not every session
        assert all(lib.session(h.session_id).ref.split("#")[0] in h.ref for h in hits)
        # Reading what a hit names (a reference, its turn, the conversation) builds none either.
        turn = archive.read_turn(hits[0].ref)
        assert turn.number == hits[0].turn_number
        assert archive.get_conversation(hits[0].ref.split(":")[0]).turns
        assert archive.resolve(hits[0].session_id[:8]).sessions[0].session_id == hits[0].session_id
        assert not archive.library._built
    finally:
        archive.close()


LISTINGS = [
    {},
    {"limit": 2},
    {"limit": 3, "offset": 2},
    {"agent": "claude"},
    {"agent": "codex", "limit": 1},
    {"date_from": "2026-01-01"},
    {"date_to": "2026-03-01", "date_from": "2025-01-01"},
    {"tags": ["important"]},
    {"user": "nobody"},
    {"offset": 500},
]


@pytest.mark.parametrize("pattern", ["*", "*billing*"])
def test_a_listing_page_builds_only_its_sessions_and_equals_the_full_listing(demo_home, pattern: str) -> None:
    """``list`` (no project or slug filter) reads the catalog's rows, builds one page."""
    from core.api import Archive
    from core.config import Config
    from core.query import filters as session_filters

    home, _ = demo_home
    config = Config.from_env({"HOME": str(home)}, pattern=pattern)
    with Archive.open(config) as archive:
        some = archive.list_sessions(limit=50)
        assert some
        archive.set_tags(some[-1].session_id, ["important"])  # a tag filter with something to find
        for filters in LISTINGS:
            archive._library = None  # a fresh lazy library, as the next process has
            lazy_page = archive.list_sessions(**filters)
            assert not archive.library._built, filters  # one page built, not every session
            full = Library(archive.catalog, archive.tags.all(), now=archive.library._now, scope=archive.scope)
            picked = {k: v for k, v in filters.items() if k not in ("limit", "offset")}
            offset, limit = filters.get("offset", 0), filters.get("limit", 50)
            expected = session_filters.listed(session_filters.matching(full, now=archive._now, **picked), slug=None)
            assert lazy_page == expected[offset : offset + limit], filters
        assert [s.session_id for s in archive.list_sessions(tags=["important"])] == [some[-1].session_id]


def test_a_grouped_search_builds_only_its_page_s_sessions_and_answers_as_the_full_build(demo_home) -> None:
    """Grouping reads the window's files for hundreds of sessions on a real archive; only the page's
    sessions are built (their chains numbered, projects named), and the hits are the full build's."""
    home, _ = demo_home
    archive = open_archive(home)
    try:
        queries = [("te", True), ("test", True), ("the", False), ("billing", True)]
        lazy_hits = [archive.search(q, group="session", limit=2, typing=typing) for q, typing in queries]
        lib = archive.library
        built = {sid for sid, info in lib._one.items() if info is not None}
        page = {h.session_id for hits in lazy_hits for h in hits}
        assert page and page <= built
        assert built <= {s.session_id for sid in page for s in lib.chain(sid)}  # the page's chains, no more
        read = set(lib._one_files)
        assert len(read - built) > 0  # the window's other sessions: their files only
        full = Library(archive.catalog, archive.tags.all(), now=lib._now, scope=archive.scope)
        for sid in read:
            assert lib.files_of(sid) == full.session_files.get(sid, []), sid
        lib._build()  # the same searches over the full build
        assert [archive.search(q, group="session", limit=2, typing=typing) for q, typing in queries] == lazy_hits
    finally:
        archive.close()
