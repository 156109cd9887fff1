"""``core.archive.upkeep`` in-process: a reader's sync, the first index, the paths a full
disk kept out, background syncs that fail, listeners and the watchers that call them.

tests/test_live.py, tests/test_faults.py and tests/test_index_upkeep.py check the same
around it (some through the CLI); these run in the test process on real files, so a
mutation tool sees them (bench/MUTATION.md).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pytest

from core.api import Archive
from core.config import Config
from core.errors import OutOfSpace
from core.fixtures.demo import DEFAULT_NOW
from core.views import UpdateResult

from .support import config_for, open_archive, project_dir, transcript
from .test_faults import _fill

SID = "55555555-5555-4555-8555-555555555555"
SID2 = "66666666-6666-4666-8666-666666666666"
SID3 = "77777777-7777-4777-8777-777777777777"


def session(home: Path, sid: str = SID, text: str = "configure the gizmo parser") -> Path:
    t = transcript(sid)
    t.user(text)
    t.assistant(f"Done: {text}.")
    return t.write(project_dir(home))


def grow(path: Path, sid: str, words: str, n: int = 1) -> None:
    t = transcript(sid)
    t.user("configure the gizmo parser")
    t.assistant("Done: configure the gizmo parser.")
    for i in range(n):
        t.user(f"{words} {i}")
    t.write(path.parent)


class Heard:
    """A listener that records what it hears, and can wait for it."""

    def __init__(self) -> None:
        self.results: list[UpdateResult] = []
        self.event = threading.Event()

    def __call__(self, result: UpdateResult) -> None:
        self.results.append(result)
        self.event.set()

    def wait(self, timeout: float = 10.0) -> bool:
        return self.event.wait(timeout)


def test_a_reader_sync_changes_nothing_and_follows_the_writer(tmp_path: Path):
    session(tmp_path)
    with open_archive(tmp_path) as writer, open_archive(tmp_path, read_only=True) as reader:
        assert (writer.writer, reader.writer) == (True, False)
        assert [s.session_id for s in reader.list_sessions()] == [SID]
        session(tmp_path, SID2, "tune the walrus")
        assert reader.sync() == UpdateResult()
        assert [s.session_id for s in reader.list_sessions()] == [SID]  # the writer has not committed
        assert writer.sync().new_sessions == (SID2,)
        assert reader.sync() == UpdateResult()
        assert sorted(s.session_id for s in reader.list_sessions()) == [SID, SID2]


def test_the_first_index_is_a_full_sync(tmp_path: Path):
    path = session(tmp_path)
    archive = Archive.open(config_for(tmp_path), sync=False, now=lambda: DEFAULT_NOW.timestamp())
    try:
        assert archive.wait_for_first_index(0) is False  # a never-indexed cache
        assert archive.sync([path]).new_sessions == (SID,)
        assert archive.wait_for_first_index(0) is False  # some paths are not an index
        archive.sync()
        assert archive.wait_for_first_index(0) is True
    finally:
        archive.close()


def test_listeners_hear_what_changed_once_and_can_be_removed(tmp_path: Path):
    path = session(tmp_path)
    heard, other = Heard(), Heard()
    with open_archive(tmp_path) as archive:
        archive.start_watching(heard, embed=False)
        watcher = archive._upkeep._watcher
        archive.start_watching(other, embed=False)  # a second listener, the same watcher
        assert archive._upkeep._watcher is watcher
        watched = threading.Event()  # set once the watcher's own sync of the change has run
        on_paths = watcher.on_paths

        def seen(paths: set[Path]) -> object:
            try:
                return on_paths(paths)
            finally:
                if any(p.name == path.name for p in paths):
                    watched.set()

        watcher.on_paths = seen
        grow(path, SID, "now the ocelot phase")
        archive.sync([path])
        assert heard.wait() and other.wait()
        assert watched.wait(15)  # the watcher saw the change too: its sync found nothing new
        assert [r.changed_sessions for r in heard.results] == [(SID,)] == [r.changed_sessions for r in other.results]
        assert archive.sync([path]).changed is False and len(heard.results) == 1
        archive.remove_listener(heard)
        archive.remove_listener(heard)  # (not there: nothing happens)
        grow(path, SID, "then the lynx phase")
        archive.sync([path])
        assert other.wait() and len(other.results) >= 2 and len(heard.results) == 1
        archive.stop_watching()
        assert archive._upkeep._watcher is None
        archive.stop_watching()


def test_a_reader_tells_its_listeners_when_the_writer_commits(tmp_path: Path):
    session(tmp_path)
    heard = Heard()
    with open_archive(tmp_path) as writer, open_archive(tmp_path, read_only=True) as reader:
        reader.start_watching(heard, embed=False)
        reader._upkeep._follow_writer()  # nothing committed: nothing told
        assert heard.results == []
        session(tmp_path, SID2, "tune the walrus")
        writer.sync()
        assert heard.wait()
        assert heard.results[0].changed_sessions == tuple(reader.library.sessions)
        assert set(heard.results[0].changed_sessions) == {SID, SID2}


def test_a_background_sync_that_fails_says_so_once_and_still_ends_the_wait(tmp_path: Path, caplog):
    session(tmp_path)
    archive = Archive.open(config_for(tmp_path), sync=False, now=lambda: DEFAULT_NOW.timestamp())
    try:
        def fail(_progress) -> None:
            raise RuntimeError("the progress bar broke")

        with caplog.at_level(logging.WARNING, logger="core.archive.upkeep"):
            archive.sync_in_background(fail).join(30)
        assert archive.wait_for_first_index(0) is True  # waiting servers answer from what there is
        assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
            ("core.archive.upkeep", logging.WARNING, "relay-search: background sync failed: the progress bar broke")]
        caplog.clear()
        archive._upkeep.closed = True  # closed under it: nothing to report
        archive.sync_in_background(fail).join(30)
        assert caplog.records == []
    finally:
        archive.close()


def test_a_background_sync_that_works_is_quiet(tmp_path: Path, caplog):
    session(tmp_path)
    archive = Archive.open(config_for(tmp_path), sync=False, now=lambda: DEFAULT_NOW.timestamp())
    try:
        with caplog.at_level(logging.WARNING):
            thread = archive.sync_in_background(None)
            assert (thread.name, thread.daemon) == ("relay-search-sync", True)
            thread.join(30)
        assert caplog.records == [] and [s.session_id for s in archive.list_sessions()] == [SID]
        assert archive.wait_for_first_index(0) is True
    finally:
        archive.close()



def test_the_writers_watcher_syncs_the_changed_paths_by_itself(tmp_path: Path):
    path = session(tmp_path)
    heard = Heard()
    archive = Archive.open(config_for(tmp_path), sync=False, now=lambda: DEFAULT_NOW.timestamp())
    try:
        archive.start_watching(heard, embed=False)
        grow(path, SID, "now the ocelot phase")
        assert heard.wait(), "the watcher never synced"
        assert heard.results[0].changed_sessions == (SID,)
        assert archive.search("ocelot")
        assert archive.wait_for_first_index(0) is False  # it synced those paths, not everything
    finally:
        archive.close()


def test_a_sync_of_some_paths_reads_only_those(tmp_path: Path):
    path, other = session(tmp_path), session(tmp_path, SID2, "tune the walrus")
    with open_archive(tmp_path) as archive:
        grow(path, SID, "now the ocelot phase")
        grow(other, SID2, "now the lynx phase")
        assert archive.sync([path]).changed_sessions == (SID,)
        assert archive.search("lynx") == []
        assert archive.sync().changed_sessions == (SID2,)


def test_a_quick_sync_trusts_directory_times(tmp_path: Path):
    """An append in place, to a file quiet for long, in a directory that did not change:
    a quick sync (a one-shot CLI call) does not see it; a full one does."""
    path = session(tmp_path)
    os.utime(path, (1_600_000_000, 1_600_000_000))
    for folder in (path.parent, path.parent.parent, path.parent.parent.parent):
        os.utime(folder, (1_600_000_000, 1_600_000_000))
    with open_archive(tmp_path) as archive:
        archive.sync()
        mtime = path.parent.stat().st_mtime_ns
        with open(path, "a") as handle:
            handle.write(path.read_text().splitlines()[0].replace("configure the gizmo parser", "the ocelot") + "\n")
        os.utime(path, (1_600_000_100, 1_600_000_100))
        assert path.parent.stat().st_mtime_ns == mtime
        assert archive.sync(quick=True).changed is False
        assert archive.sync().changed_sessions == (SID,)




def test_paths_a_full_disk_kept_out_come_along_with_the_next_change(tmp_path: Path, tiny_disk: Path):
    path, other = session(tmp_path), session(tmp_path, SID2, "tune the walrus")
    third = session(tmp_path, SID3, "feed the heron")
    config = Config.from_env({"HOME": str(tmp_path), "USER": "tester", "XDG_CACHE_HOME": str(tiny_disk)})
    with Archive.open(config, now=lambda: DEFAULT_NOW.timestamp()) as archive:
        filler = _fill(tiny_disk, 96 * 1024)
        grow(path, SID, "now the ocelot phase with its own long explanation " * 5, n=1000)
        with pytest.raises(OutOfSpace):
            archive.sync([path])
        assert archive.search("ocelot") == []
        filler.unlink()
        grow(other, SID2, "now the lynx phase")
        grow(third, SID3, "now the egret phase")  # changed, not named: left for later
        assert sorted(archive.sync([other]).changed_sessions) == [SID, SID2]
        assert archive.search("ocelot") and archive.search("egret") == []
        assert archive.sync([other]).changed is False  # tried once: not again
        filler = _fill(tiny_disk, 96 * 1024)
        grow(path, SID, "then the marten phase with its own long explanation " * 5, n=1000)
        with pytest.raises(OutOfSpace):
            archive.sync([path])
        filler.unlink()
        assert sorted(archive.sync().changed_sessions) == [SID, SID3]  # a full sync after it
        assert archive.search("marten") and archive.search("egret")


def test_a_one_shot_archive_starts_no_background_merge(tmp_path: Path):
    """Merging small segments on a thread is for long-lived processes (they watch); a
    one-shot CLI call would exit under it."""
    path = session(tmp_path)
    with open_archive(tmp_path) as archive:
        grow(path, SID, "now the ocelot phase")
        assert archive.sync().changed
        assert archive.indexer._merger is None
        archive.start_watching(embed=False)
        assert archive.indexer._merger is not None


def test_a_reader_that_watches_leaves_merging_to_the_writer(tmp_path: Path, monkeypatch):
    """A reader (the app or ``mcp`` while another process writes) cannot write the catalog:
    its merge thread died with "attempt to write a readonly database" and a traceback."""
    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    session(tmp_path)
    with open_archive(tmp_path) as writer:
        for n in range(10):  # ten small segments: more than the merge policy lets stand
            session(tmp_path, f"88888888-8888-4888-8888-{n:012d}", f"configure the heron part {n}")
            assert writer.sync().changed
        segments = [s.name for s in writer.indexer.load_snapshot().segments]
        assert len(segments) > 8
        with open_archive(tmp_path, read_only=True) as reader:
            reader.start_watching(embed=False)
            assert reader.indexer._merger is None
            reader.stop_watching()
        assert [s.name for s in writer.indexer.load_snapshot().segments] == segments
    assert failures == []
