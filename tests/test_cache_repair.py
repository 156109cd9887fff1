"""Throwing a cache away, in-process (the CLI cases are in test_faults.py; a mutation
tool sees only these).

- ``wipe_cache`` removes the catalog with its WAL files, the segments and the
  vectors, whatever each has become (a file, a directory), and nothing else.
- ``discard_damaged_cache`` wipes a damaged cache when no other process writes it,
  and otherwise leaves it and says who holds it and how to repair it.
- A full disk is never taken for damage: the cache is kept.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

from core.archive import store
from core.archive.store import CATALOG_FILE, SEGMENTS_DIR, WriterLock, discard_damaged_cache, open_catalog, wipe_cache
from core.semantic.vectors import VECTORS_DIR

from .test_faults import _fill

KEPT = ["readers.lock", "writer.lock"]  # the locks outlive a wipe (another process may hold them)


def _cache(root: Path, *, as_dirs: bool = False) -> Path:
    """A cache dir holding every kind of thing a wipe removes, and the locks it keeps."""
    cache = root / "cache"
    cache.mkdir()
    for name in (CATALOG_FILE, CATALOG_FILE + "-wal", CATALOG_FILE + "-shm"):
        if as_dirs:
            (cache / name).mkdir()
            (cache / name / "inside").write_bytes(b"x")
        else:
            (cache / name).write_bytes(b"old " + name.encode())
    for name in (SEGMENTS_DIR, VECTORS_DIR):
        (cache / name / "seg-0000000001").mkdir(parents=True)
        (cache / name / "seg-0000000001" / "data").write_bytes(b"old")
    for name in KEPT:
        (cache / name).write_bytes(b"")
    return cache


@pytest.mark.parametrize("as_dirs", [False, True])
def test_a_wipe_removes_the_catalog_its_wal_files_the_segments_and_the_vectors(tmp_path, as_dirs):
    cache = _cache(tmp_path, as_dirs=as_dirs)
    wipe_cache(cache)
    assert sorted(os.listdir(cache)) == KEPT
    wipe_cache(cache)  # nothing left to remove: no error
    assert sorted(os.listdir(cache)) == KEPT


def test_a_damaged_cache_no_one_else_writes_is_wiped(tmp_path):
    cache = _cache(tmp_path)
    line = discard_damaged_cache(cache, sqlite3.DatabaseError("database disk image is malformed"))
    assert line == "relay-search: rebuilding the cache (it is damaged: database disk image is malformed)"
    assert sorted(os.listdir(cache)) == KEPT
    after = WriterLock(cache)
    assert after.acquire()  # the lock taken for the wipe was given back
    after.release()


def test_a_damaged_cache_another_process_writes_is_left_with_how_to_repair_it(tmp_path, monkeypatch):
    from .test_cache_locks import _Clock

    cache = _cache(tmp_path)
    before = sorted(os.listdir(cache))
    monkeypatch.setattr(store.sys, "argv", ["relay-search", "serve"])
    clock = _Clock()
    monkeypatch.setattr(store, "time", clock)
    holder = WriterLock(cache)
    assert holder.acquire()
    try:
        line = discard_damaged_cache(cache, sqlite3.DatabaseError("database disk image is malformed"))
    finally:
        holder.release()
    assert line == (
        "relay-search: the cache is damaged (database disk image is malformed); "
        f"pid {os.getpid()}: relay-search serve is using it: stop it and run `relay-search index --rebuild`"
    )
    assert sorted(os.listdir(cache)) == before and (cache / CATALOG_FILE).read_bytes() == b"old catalog.sqlite"
    assert clock.now - 1000.0 == pytest.approx(5.0, abs=0.1)  # it waited five seconds for the lock first




def test_a_full_disk_is_not_taken_for_damage(tiny_disk):
    cache = tiny_disk / "cache"
    catalog, reason = open_catalog(cache, writer=True)
    assert reason is None
    catalog.close()
    (cache / SEGMENTS_DIR / "seg-0000000001").mkdir(parents=True)
    (cache / SEGMENTS_DIR / "seg-0000000001" / "data").write_bytes(b"kept")
    # room for the WAL index (32 KB) and no page more: an open that writes nothing opens
    filler = _fill(tiny_disk, 36 * 1024)
    catalog, reason = open_catalog(cache, writer=True)
    assert reason is None and catalog.get_meta("index_format") == store.INDEX_FORMAT
    catalog.close()
    filler.unlink()
    _fill(tiny_disk, 0)  # no room even for the WAL index: the open fails, the cache stays
    with pytest.raises(sqlite3.OperationalError) as raised:
        open_catalog(cache, writer=True)
    assert raised.value.sqlite_errorcode == 4874  # SQLITE_IOERR_SHMSIZE
    assert (cache / CATALOG_FILE).stat().st_size > 0
    assert (cache / SEGMENTS_DIR / "seg-0000000001" / "data").read_bytes() == b"kept"


def test_garbage_mid_catalog_is_found_only_when_asked_to_verify(tmp_path):
    """An ordinary open reads the pages it needs (the header, the schema, the meta
    table); ``verify`` (what ``relay-search index`` asks) reads every page."""
    cache = tmp_path / "xdg" / "relay-search"  # (the cache home need not exist yet)
    catalog, reason = open_catalog(cache, writer=True)
    assert reason is None
    with catalog.write() as db:  # pages past the ones an open reads
        db.executemany("INSERT INTO retired(name) VALUES(?)", [(f"seg-{i:010d}-{'r' * 100}",) for i in range(2000)])
    catalog.close()
    path = cache / CATALOG_FILE
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.seek(size // 2)
        handle.write(b"\xa5" * (size - size // 2))
    catalog, reason = open_catalog(cache, writer=True)
    catalog.close()
    assert reason is None
    catalog, reason = open_catalog(cache, writer=True, verify=True)
    try:
        assert reason is not None
        assert reason.startswith("relay-search: rebuilding the cache (the catalog is corrupt: *** in database main *** Page ")
        assert catalog.retired_names() == []  # a new, empty catalog
    finally:
        catalog.close()


def test_a_wipe_goes_on_past_what_it_cannot_remove():
    """A catalog that became a directory its owner cannot empty (mode 0555) stays; the
    segments and the vectors still go, and the wipe does not raise."""
    from .test_cache_locks import _not_root

    root = Path(tempfile.mkdtemp(prefix="relay-wipe-"))  # (not under tmp_path: nobody could not reach it)
    root.chmod(0o755)
    cache = _cache(root, as_dirs=True)
    try:
        if os.geteuid() == 0:  # (root may remove anything: as root, the wipe runs as nobody)
            for path in (cache, *cache.rglob("*")):
                os.chown(path, 65534, 65534)
        (cache / CATALOG_FILE).chmod(0o555)
        with _not_root():
            wipe_cache(cache)
        assert sorted(os.listdir(cache)) == sorted([CATALOG_FILE, *KEPT])
        assert os.listdir(cache / CATALOG_FILE) == ["inside"]
    finally:
        (cache / CATALOG_FILE).chmod(0o755)
        shutil.rmtree(root)
