"""The cache's two locks, in-process (so a mutation tool sees them; the multi-process
cases are in test_concurrency.py).

- ``writer.lock``: one writer at a time; a second waits up to its limit, says who
  holds it, and gets it once it is released.
- ``readers.lock``: retired segments are deleted only while no reader is turning
  catalog names into mapped segments.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.archive import store
from core.archive.store import WriterLock
from core.index.retire import READERS_LOCK, ReaderPins


def test_one_writer_at_a_time_and_who_holds_it(tmp_path):
    first, second = WriterLock(tmp_path), WriterLock(tmp_path)
    assert first.acquire()
    try:
        assert not second.acquire()  # (no wait: answered at once)
        assert (second.held_by_other() or "").startswith(f"pid {os.getpid()}: ")
        assert first.held_by_other() is None  # the holder itself is not "another"
    finally:
        first.release()
    assert second.held_by_other() is None
    assert second.acquire()
    second.release()


def test_a_waiting_writer_gets_the_lock_once_it_is_released(tmp_path, monkeypatch):
    holder, waiter = WriterLock(tmp_path), WriterLock(tmp_path)
    assert holder.acquire()
    polling = threading.Event()
    real_sleep = store.time.sleep

    def sleep(seconds: float) -> None:  # the waiter found the lock taken and polls
        polling.set()
        real_sleep(seconds)

    monkeypatch.setattr(store.time, "sleep", sleep)
    got: list[bool] = []
    thread = threading.Thread(target=lambda: got.append(waiter.acquire(wait=60.0)))
    thread.start()
    assert polling.wait(60)
    holder.release()
    thread.join(60)
    assert got == [True]
    waiter.release()


def test_a_reader_opening_a_snapshot_holds_deletion_off(tmp_path):
    pins = ReaderPins(tmp_path)
    assert not (tmp_path / READERS_LOCK).exists()
    with pins.reading():
        assert (tmp_path / READERS_LOCK).is_file()
        with ReaderPins(tmp_path).deleting() as free:
            assert free is False
    with ReaderPins(tmp_path).deleting() as free:
        assert free is True


@contextmanager
def _not_root() -> Iterator[None]:
    """Root opens any file read-write whatever its mode: as root, the block runs as
    nobody (the effective uid only, given back after it); anyone else runs it as is."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


def test_a_read_only_cache_still_pins_its_readers():
    cache = Path(tempfile.mkdtemp(prefix="relay-ro-"))  # (not under tmp_path: nobody could not reach it)
    try:
        with ReaderPins(cache).reading():
            pass  # (creates the lock file)
        (cache / READERS_LOCK).chmod(0o444)
        cache.chmod(0o555)
        with _not_root():
            with pytest.raises(PermissionError):
                os.open(cache / READERS_LOCK, os.O_RDWR)  # (the case: it cannot be opened for writing)
            with ReaderPins(cache).reading():
                with ReaderPins(cache).deleting() as free:
                    assert free is False
            with ReaderPins(cache).deleting() as free:
                assert free is True
    finally:
        cache.chmod(0o755)
        shutil.rmtree(cache)


def test_the_lock_files_are_made_rw_r_r_under_the_usual_umask(tmp_path):
    umask = os.umask(0o022)
    try:
        with ReaderPins(tmp_path).reading():
            pass
        lock = WriterLock(tmp_path)
        assert lock.acquire()
        lock.release()
    finally:
        os.umask(umask)
    for name in (READERS_LOCK, "writer.lock"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name


def test_a_second_archive_on_the_cache_is_a_read_only_reader(tmp_path):
    """While one process writes the cache, another opens it read-only: it answers from
    the writer's commits and cannot write the catalog itself."""
    import sqlite3

    import pytest

    from core.fixtures.demo import write_demo_corpus

    from .support import open_archive

    write_demo_corpus(tmp_path)
    with open_archive(tmp_path) as writer:
        expected = [(h.session_id, h.turn_number) for h in writer.search("watchdog")]
        with open_archive(tmp_path) as reader:
            assert writer.writer and not reader.writer
            assert [(h.session_id, h.turn_number) for h in reader.search("watchdog")] == expected
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                reader.catalog.db.execute("INSERT INTO meta VALUES('probe', 'x')")


def test_a_lock_file_of_garbage_names_another_process(tmp_path):
    holder, other = WriterLock(tmp_path), WriterLock(tmp_path)
    assert holder.acquire()
    try:
        (tmp_path / "writer.lock").write_bytes(b"\xff\xfe not a pid\n")
        assert other.held_by_other() == "another process"
    finally:
        holder.release()


class _Clock:
    """``store.time`` for the tests that wait: each poll's sleep moves the clock on at once."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_a_writer_polls_every_tenth_of_a_second_until_its_wait_is_over(tmp_path, monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(store, "time", clock)
    holder, other = WriterLock(tmp_path), WriterLock(tmp_path)
    assert holder.acquire()
    try:
        assert not other.acquire()
        assert clock.sleeps == []  # no wait: not one poll
        assert not other.acquire(wait=0.35)
        assert clock.sleeps == [0.1] * 4
    finally:
        holder.release()


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["/usr/local/bin/relay-search", "serve", "--port", "8000"], "relay-search serve"),
        (["relay-search", "search", "watchdog"], "relay-search search"),  # the subcommand only
        (["/usr/local/bin/relay-search", "--json", "list"], "relay-search"),  # an option first: no subcommand named
        (["/usr/local/bin/relay-search"], "relay-search"),
        (["-c", "tui"], "relay-search tui"),  # python -c
        (["/site-packages/core/__main__.py", "index"], "relay-search index"),  # python -m
        (["/usr/bin/", "index"], "relay-search index"),
        (["/usr/bin/python3.11"], "python3.11"),
        ([""], "python"),
        ([], "python"),
        (["relay-search", "x" * 300], "relay-search " + "x" * 187),  # 200 characters at most
    ],
)
def test_the_lock_file_names_the_command_that_holds_it(tmp_path, monkeypatch, argv, command):
    monkeypatch.setattr(store.sys, "argv", argv)
    (tmp_path / "writer.lock").write_text(f"99999 {'y' * 400}\n")  # a longer line left by a process gone
    holder, other = WriterLock(tmp_path), WriterLock(tmp_path)
    assert holder.acquire()
    try:
        assert other.held_by_other() == f"pid {os.getpid()}: {command}"
        assert (tmp_path / "writer.lock").read_text() == f"{os.getpid()} {command}\n"
    finally:
        holder.release()


def test_a_released_lock_is_another_processs_once_taken_again(tmp_path, monkeypatch):
    monkeypatch.setattr(store.sys, "argv", ["relay-search", "serve"])
    first, second = WriterLock(tmp_path), WriterLock(tmp_path)
    assert first.acquire()
    first.release()
    assert second.acquire()
    try:
        assert first.held_by_other() == f"pid {os.getpid()}: relay-search serve"
        assert not first.acquire()
    finally:
        second.release()
    assert first.acquire()  # and it can be taken again
    first.release()
