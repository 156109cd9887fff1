"""Live, incremental updates: appends, rewrites, deletions, new projects, bad caches."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from core.api import Archive

from .support import config_for, open_archive, project_dir, transcript

SID = "44444444-4444-4444-8444-444444444444"


def _session(home: Path, sid: str = SID, cwd: str = "/home/t/work/proj", text: str = "configure the gizmo parser"):
    t = transcript(sid, cwd=cwd)
    t.user(text)
    t.assistant(f"Done: {text}.")
    return t, t.write(project_dir(home, cwd))


def _line(sid: str, text: str, uuid: str, role: str = "user") -> bytes:
    record = {
        "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/t/work/proj",
        "sessionId": sid, "version": "2.1.39", "gitBranch": "main", "type": role,
        "message": {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]},
        "uuid": uuid, "timestamp": "2026-11-01T10:00:00.000Z",
    }
    return (json.dumps(record) + "\n").encode()


def test_append_is_read_from_the_last_offset(tmp_path):
    _, path = _session(tmp_path)
    with open_archive(tmp_path) as archive:
        before = archive.catalog.files(("offset",))[0]["offset"]
        assert before == path.stat().st_size
        with open(path, "ab") as handle:
            handle.write(_line(SID, "now add the frobnicator cache", "aaaaaaaa-0000-4000-8000-000000000001"))
        result = archive.sync([path])
        assert result.bytes_read == path.stat().st_size - before  # only the new bytes
        hits = archive.search("frobnicator")
        assert [h.turn_number for h in hits] == [1]
        assert archive.list_sessions()[0].turn_count == 2


def test_appended_answer_updates_the_open_turn(tmp_path):
    _, path = _session(tmp_path)
    with open_archive(tmp_path) as archive:
        with open(path, "ab") as handle:
            handle.write(_line(SID, "the quuxification finished", "aaaaaaaa-0000-4000-8000-000000000002", role="assistant"))
        archive.sync([path])
        hits = archive.search("quuxification")
        assert [h.turn_number for h in hits] == [0]
        assert archive.search("gizmo")[0].turn_number == 0  # the earlier text of that turn is still there
        assert archive.stats().documents == 1  # the old document of the turn was replaced, not duplicated


def test_partial_last_line_is_picked_up_once_complete(tmp_path):
    _, path = _session(tmp_path)
    line = _line(SID, "half written zebra stripes", "aaaaaaaa-0000-4000-8000-000000000003")
    with open_archive(tmp_path) as archive:
        with open(path, "ab") as handle:
            handle.write(line[:40])
        archive.sync([path])
        assert archive.search("zebra") == []
        assert archive.stats().skipped_lines == 0  # not counted as malformed: it is unfinished
        with open(path, "ab") as handle:
            handle.write(line[40:])
        archive.sync([path])
        assert [h.turn_number for h in archive.search("zebra")] == [1]


def test_truncated_or_rewritten_file_is_read_again(tmp_path):
    t, path = _session(tmp_path)
    with open_archive(tmp_path) as archive:
        assert archive.search("gizmo")
        # rewritten shorter, in place (same inode): size below the offset
        path.write_bytes(_line(SID, "only walrus now", "aaaaaaaa-0000-4000-8000-000000000004"))
        archive.sync([path])
        assert archive.search("gizmo") == []
        assert archive.search("walrus")
        # replaced by a new file (new inode) of larger size
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(b"".join(_line(SID, f"pelican number {i}", f"aaaaaaaa-0000-4000-8000-0000000001{i:02d}") for i in range(5)))
        os.replace(tmp, path)
        archive.sync([path])
        assert archive.search("walrus") == []
        assert len(archive.search("pelican", limit=10)) == 5


def test_deleted_file_and_dir_leave_the_index(tmp_path):
    _, path = _session(tmp_path)
    _, other = _session(tmp_path, "55555555-5555-4555-8555-555555555555", cwd="/home/t/work/other", text="tune the wombat scheduler")
    with open_archive(tmp_path) as archive:
        assert len(archive.list_sessions()) == 2
        path.unlink()
        archive.sync([path])
        assert archive.search("gizmo") == []
        assert [s.session_id for s in archive.list_sessions()] == ["55555555-5555-4555-8555-555555555555"]
        import shutil

        shutil.rmtree(other.parent)
        archive.sync([other.parent])
        assert archive.list_sessions() == []
        assert archive.search("wombat") == []


def test_new_project_dir_is_picked_up_by_the_watcher(tmp_path):
    _session(tmp_path)
    with open_archive(tmp_path) as archive:
        changed = threading.Event()
        archive.start_watching(lambda result: changed.set())
        try:
            _session(tmp_path, "66666666-6666-4666-8666-666666666666", cwd="/home/t/work/fresh", text="calibrate the narwhal")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not archive.search("narwhal"):
                time.sleep(0.05)
            assert archive.search("narwhal"), "a new project dir was not picked up without a restart"
            assert changed.wait(5)  # listeners hear of it once the sync returns, just after the publish
        finally:
            archive.stop_watching()


def test_watcher_makes_an_append_searchable_quickly(tmp_path):
    _, path = _session(tmp_path)
    with open_archive(tmp_path) as archive:
        archive.start_watching()  # returns once the roots are watched (Watcher.start): no grace sleep
        try:
            with open(path, "ab") as handle:
                handle.write(_line(SID, "ostrich telemetry", "aaaaaaaa-0000-4000-8000-000000000005"))
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not archive.search("ostrich"):
                time.sleep(0.02)
            assert archive.search("ostrich")
        finally:
            archive.stop_watching()


def test_corrupt_cache_is_rebuilt_with_one_line(tmp_path):
    _session(tmp_path)
    with open_archive(tmp_path):
        pass
    catalog = config_for(tmp_path).cache_path / "catalog.sqlite"
    catalog.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(catalog) + suffix).unlink(missing_ok=True)
    with open_archive(tmp_path) as archive:
        assert archive.rebuilt and "rebuilding" in archive.rebuilt and "\n" not in archive.rebuilt
        assert archive.search("gizmo")


def test_cache_of_another_version_is_rebuilt(tmp_path):
    _session(tmp_path)
    with open_archive(tmp_path):
        pass
    catalog = config_for(tmp_path).cache_path / "catalog.sqlite"
    with sqlite3.connect(catalog) as db:
        db.execute("UPDATE meta SET value='0' WHERE key='schema'")
    with open_archive(tmp_path) as archive:
        assert "another version" in (archive.rebuilt or "")
        assert archive.search("gizmo")


def test_missing_segment_is_rebuilt(tmp_path):
    _session(tmp_path)
    with open_archive(tmp_path):
        pass
    segments = config_for(tmp_path).cache_path / "segments"
    for seg in segments.iterdir():
        for f in seg.iterdir():
            f.write_bytes(b"garbage")
    with open_archive(tmp_path) as archive:
        assert archive.rebuilt
        assert archive.search("gizmo")


def test_second_process_reads_while_the_first_writes(tmp_path):
    _session(tmp_path)
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("XDG_CACHE_HOME", None)
    with open_archive(tmp_path) as archive:
        assert archive.writer
        out = subprocess.run(
            [sys.executable, "-m", "core", "search", "gizmo", "--json"], env=env, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["results"][0]["session_id"] == SID
        # the writer keeps writing; the reader's next query sees it
        reader = Archive.open(config_for(tmp_path), read_only=True)
        try:
            path = next((tmp_path / ".claude" / "projects").rglob("*.jsonl"))
            with open(path, "ab") as handle:
                handle.write(_line(SID, "lemur accounting", "aaaaaaaa-0000-4000-8000-000000000006"))
            archive.sync([path])
            assert reader.search("lemur")
        finally:
            reader.close()


def test_nothing_is_written_into_transcript_dirs(tmp_path):
    _session(tmp_path)
    projects = tmp_path / ".claude"
    before = sorted(str(p) for p in projects.rglob("*"))
    with open_archive(tmp_path) as archive:
        archive.search("gizmo")
        archive.set_tags(SID, ["keep"])
        archive.get_conversation(SID)
    assert sorted(str(p) for p in projects.rglob("*")) == before


def test_a_watching_process_merges_small_segments_in_the_background(tmp_path):
    _, path = _session(tmp_path)
    with open_archive(tmp_path) as archive:
        archive.start_watching()
        try:
            for i in range(14):
                with open(path, "ab") as handle:
                    handle.write(_line(SID, f"heron number{i}", f"aaaaaaaa-0000-4000-8000-0000000002{i:02d}"))
                archive.sync([path])
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and len(archive.catalog.segment_names()) > 9:
                time.sleep(0.05)
            assert len(archive.catalog.segment_names()) <= 9
            assert len(archive.search("heron", limit=50)) == 15 - 1  # turns 1..14 (turn 0 is the gizmo prompt)
        finally:
            archive.stop_watching()


def test_closing_during_a_background_merge_waits_for_it(tmp_path):
    _, path = _session(tmp_path)
    with open_archive(tmp_path) as archive:
        for i in range(12):
            with open(path, "ab") as handle:
                handle.write(_line(SID, f"osprey number{i}", f"aaaaaaaa-0000-4000-8000-0000000003{i:02d}"))
            archive.sync([path])
        archive.indexer.merge_in_background()
        merger = archive.indexer._merger
    # closed by the with-block while the merge may still run: it finished first
    assert merger is not None and not merger.is_alive()
    with open_archive(tmp_path) as archive:
        assert archive.rebuilt is None
        assert len(archive.search("osprey", limit=50)) == 12
