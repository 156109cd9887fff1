"""Open searches refresh as the index grows and once more when it completes (issue 22).

A query typed during a cold index shows hits from what has landed so far; once the
index completes, the list is the complete answer (the right session first) without
typing again, and a refresh whose top hits did not change keeps the selection.
"""

from __future__ import annotations

import threading

import core.archive.indexer as indexer_module
from core.archive.indexer import Indexer
from core.fixtures.demo import DEFAULT_NOW
from tests.conftest import open_archive
from tui.app import make_app
from tui.testing import settle, wait_for
from tui.widgets.hit_list import HitList

SIZE = (120, 35)
QUERY = "test"  # the newest session matches it weakly; an older one (billing-api) best


async def test_a_query_typed_during_the_cold_index_shows_the_right_first_hit_once_it_completes(demo_home, monkeypatch):
    home, corpus = demo_home
    with open_archive(home) as archive:  # the complete answer, from a fully built index
        expected = archive.search(QUERY, limit=5, group="session", typing=True)[0].ref
    import shutil

    shutil.rmtree(home / ".cache", ignore_errors=True)
    gate = threading.Event()
    commits: list[int] = []
    commit = Indexer._commit

    def held(self, chunk, known, result):
        if commits:
            gate.wait(30)  # every chunk after the first waits for the test
        commits.append(len(chunk.outputs))
        commit(self, chunk, known, result)

    monkeypatch.setattr(Indexer, "_commit", held)
    monkeypatch.setattr(indexer_module, "FIRST_CHUNK_BYTES", 1)
    app = make_app(home, now=DEFAULT_NOW)
    try:
        async with app.run_test(size=SIZE) as pilot:
            search = app.main.search_pane
            await wait_for(pilot, lambda: app.syncing and app.main.sessions_pane.sessions, what="results so far")
            await pilot.press(*QUERY)
            await wait_for(pilot, lambda: search.shown_query == QUERY and search.hits, what="partial hits")
            assert app.sync_result is None
            assert search.hits[0].ref != expected  # only the newest session has landed
            gate.set()
            await wait_for(pilot, lambda: app.sync_result is not None, timeout=30, what="the index to complete")
            await settle(pilot)
            assert search.hits[0].ref == expected
            hit_list = app.main.query_one(HitList)
            assert hit_list.highlighted == 0 and hit_list.scroll_y == 0  # the new first hit is on screen, selected
            assert search.shown_query == QUERY  # nobody typed again
    finally:
        gate.set()
