"""A cold start is usable while indexing (issue 15): the newest sessions land first,
the panes show them at once ("indexing 3/12 files — results so far"), and a search
typed meanwhile fills in as the rest lands, without typing again.

The indexer is held after its first chunk (a slow disk, simulated by waiting, not by
faking anything): what the app shows at that moment is what a person sees during
the first seconds of a big cold index.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

import core.archive.indexer as indexer_module
import core.archive.planning as planning
from core.api import Archive
from core.archive.indexer import Indexer
from core.config import Config
from core.errors import SyncStopped
from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.testing import wait_for

SIZE = (120, 40)


async def test_results_so_far_while_a_cold_index_lands_newest_first(demo_home, monkeypatch):
    home, corpus = demo_home
    gate = threading.Event()
    commits: list[int] = []
    commit = Indexer._commit

    def held(self, chunk, known, result):
        if commits:
            gate.wait(30)  # every chunk after the first waits for the test
        commits.append(len(chunk.outputs))
        commit(self, chunk, known, result)

    monkeypatch.setattr(Indexer, "_commit", held)
    monkeypatch.setattr(indexer_module, "FIRST_CHUNK_BYTES", 1)  # the newest session alone, then growing chunks
    app = make_app(home, now=DEFAULT_NOW)
    try:
        async with app.run_test(size=SIZE) as pilot:
            status = app.main.query_one("#status")
            pane = app.main.sessions_pane
            await wait_for(
                pilot,
                lambda: app.syncing and pane.sessions and "results so far" in str(status.render()),
                what="results so far",
            )
            assert app.sync_result is None  # still indexing
            shown = {s.session_id for s in pane.sessions}
            assert corpus.chain_session_ids[-1] in shown  # the newest (live) session landed first
            assert len(shown) < len(corpus.session_ids)
            assert "Indexing 1/" in str(status.render())

            await pilot.press(*"watermark skew")  # in an older session, not indexed yet
            search = app.main.search_pane
            await wait_for(pilot, lambda: search.shown_query == "watermark skew", what="the first answer")
            assert search.hits == []
            assert "still indexing" in str(app.main.query_one("#search-status").render())

            gate.set()
            await wait_for(pilot, lambda: app.sync_result is not None and search.hits, timeout=30, what="the rest to land")
            assert any(h.project == "ingest-pipeline" for h in search.hits)
            assert search.shown_query == "watermark skew"  # nobody typed again
            assert len(pane.sessions) == len(corpus.session_ids)
    finally:
        gate.set()


def test_a_cold_index_reads_the_newest_sessions_first(tmp_path):
    from core.archive.ingest import Job
    from core.sources.base import SourceFile

    def job(name: str, mtime: int, size: int = 10, session: str | None = None, parent: str | None = None) -> Job:
        return Job(SourceFile(tmp_path / name, "claude", session_id=session, parent_session_id=parent), 1, size=size, mtime_ns=mtime)

    jobs = [
        job("a/old.jsonl", 1, session="old"),
        job("a/new.jsonl", 3, session="new"),
        job("a/new/subagents/agent-1.jsonl", 2, parent="new"),
        job("b/mid.jsonl", 2, session="mid"),
    ]
    chunks = planning.plan_chunks(jobs, chunk_bytes=1000, first_bytes=15)
    order = [j.file.path.name for chunk in chunks for j in chunk]
    assert order == ["new.jsonl", "agent-1.jsonl", "mid.jsonl", "old.jsonl"]
    assert [len(c) for c in chunks] == [2, 2]  # the first chunk is small; a session stays in one chunk


@pytest.mark.parametrize("pooled", [False, True], ids=["inline", "worker pool"])
async def test_quitting_mid_index_stops_the_index_and_the_next_run_reads_the_rest(demo_home, monkeypatch, pooled):
    """ctrl+q during a cold index used to wait for the whole archive to be read (4.3 s
    on the 1.8 GB bench at 39%, the terminal without a prompt meanwhile). Now the index
    stops at the next chunk, or while it waits on a worker; what it committed is kept."""
    home, corpus = demo_home
    entered, gate = threading.Event(), threading.Event()
    commit, sync = Indexer._commit, Indexer.sync
    ended: list[BaseException | None] = []

    def held(self, chunk, known, result):
        if not entered.is_set():
            entered.set()
            gate.wait(30)  # the first chunk's commit waits for the test
        commit(self, chunk, known, result)

    def watched(self, *args, **kwargs):
        try:
            result = sync(self, *args, **kwargs)
        except BaseException as error:
            ended.append(error)
            raise
        ended.append(None)
        return result

    monkeypatch.setattr(Indexer, "_commit", held)
    monkeypatch.setattr(Indexer, "sync", watched)
    monkeypatch.setattr(indexer_module, "FIRST_CHUNK_BYTES", 1)
    if pooled:
        monkeypatch.setattr(indexer_module, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(indexer_module, "CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(indexer_module, "INLINE_CHUNK_BYTES", 64 << 10)
    app = make_app(home, now=DEFAULT_NOW)
    try:
        async with app.run_test(size=SIZE) as pilot:
            while not entered.is_set():  # (not wait_for: it waits for workers, and this one is held)
                await pilot.pause(0.01)
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert not app.is_running
    finally:
        gate.set()
    while not ended:  # (the sync's thread goes on after the app: wait for its end)
        await asyncio.sleep(0.01)
    assert isinstance(ended[0], SyncStopped), ended
    app.archive.close()  # (what the app's process ending does: the writer lock is let go)
    with Archive.open(Config.from_env({"HOME": str(home)}), sync=False) as archive:
        kept = {s.session_id for s in archive.list_sessions(limit=100)}
    assert kept and len(kept) < len(corpus.session_ids)  # the first chunk's, not the rest
    with Archive.open(Config.from_env({"HOME": str(home)})) as archive:  # the next run
        assert {s.session_id for s in archive.list_sessions(limit=100)} == set(corpus.session_ids)
