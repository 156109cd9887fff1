"""The lazy library answers single lookups exactly as the full build does (issue 12 #11).

A warm search reads only the sessions it hits; listing and resolving build every
session. Both must agree on every field: chain numbers, references, project
names, file offsets — on the demo corpus (chains, a slug-less continuation,
subagents, several projects) and within a scope.
"""

from __future__ import annotations

import pytest

from core.library import Library
from core.scope import Scope

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
        assert hits
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
