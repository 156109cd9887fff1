"""Files as they are now, and a cache that meets real faults: rewrites, damage, a full disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .support import project_dir, transcript

SID = "77777777-7777-4777-8777-777777777777"


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("XDG_CACHE_HOME", None)
    return env


def _cli(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    exe = str(Path(sys.executable).with_name("relay-search"))
    return subprocess.run([exe, *args], env=_env(home), capture_output=True, text=True, timeout=timeout)


def _search(home: Path, query: str) -> list[dict]:
    out = _cli(home, "search", query, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["results"]


def _session(home: Path, words: str) -> Path:
    t = transcript(SID)
    t.user(f"plan the {words} rollout")
    t.assistant(f"The {words} rollout is planned.")
    return t.write(project_dir(home))


def _rewrite_in_place(path: Path, data: bytes) -> None:
    """Same inode: truncate-and-write through the open file, as `cp new old` does."""
    inode = path.stat().st_ino
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.truncate()
    assert path.stat().st_ino == inode


def test_a_file_rewritten_in_place_at_the_same_size_is_read_again(tmp_path):
    path = _session(tmp_path, "pelican")
    assert _search(tmp_path, "pelican")
    old = path.read_bytes()
    new = old.replace(b"pelican", b"narwhal")  # same length: same size, same inode
    assert len(new) == len(old) and new != old
    _rewrite_in_place(path, new)
    assert _search(tmp_path, "narwhal"), "the rewritten text is not found"
    assert _search(tmp_path, "pelican") == [], "the old text is still found"
    shown = _cli(tmp_path, "show", SID)
    assert "narwhal" in shown.stdout and "pelican" not in shown.stdout


def test_a_file_rewritten_in_place_larger_is_read_again_not_appended(tmp_path):
    path = _session(tmp_path, "pelican")
    assert _search(tmp_path, "pelican")
    old = path.read_bytes()
    t = transcript(SID)
    t.user("plan the walrusse rollout")  # one letter longer than pelican, twice: larger
    t.assistant("The walrusse rollout is planned.")
    t.user("and then the second walrusse step")
    other = t.write(tmp_path / "elsewhere")
    new = other.read_bytes()
    assert len(new) > len(old)
    _rewrite_in_place(path, new)
    hits = _search(tmp_path, "walrusse")
    assert hits and _search(tmp_path, "pelican") == []
    shown = _cli(tmp_path, "show", SID, "--json")
    assert shown.returncode == 0
    assert "walrusse" in shown.stdout and "pelican" not in shown.stdout


def _write_session(home: Path, sid: str, cwd: str, prompt: str, answer: str) -> None:
    """A one-turn Claude session written into ``cwd``'s project dir under ``home``."""
    t = transcript(sid, cwd=cwd)
    t.user(prompt)
    t.assistant(answer)
    t.write(project_dir(home, cwd))


def _wait(predicate, seconds: float = 20.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_a_watch_root_moved_away_and_recreated_is_watched_again(tmp_path):
    import shutil

    from .support import open_archive

    _session(tmp_path, "pelican")
    claude = tmp_path / ".claude"
    with open_archive(tmp_path) as archive:
        assert archive.search("pelican")
        archive.start_watching()
        try:
            # moved away: its sessions leave the index
            shutil.move(str(claude), str(tmp_path / "claude-backup"))
            assert _wait(lambda: archive.search("pelican") == []), "a moved-away root's sessions stayed"
            # recreated: new sessions are seen again, without a restart
            _write_session(tmp_path, "88888888-8888-4888-8888-888888888888", "/home/t/work/other", "calibrate the narwhal", "Calibrated.")
            assert _wait(lambda: bool(archive.search("narwhal"))), "a recreated root is not watched"
            # and once more, deleted outright and recreated
            shutil.rmtree(claude)
            assert _wait(lambda: archive.search("narwhal") == [])
            _write_session(tmp_path, "99999999-9999-4999-8999-999999999999", "/home/t/work/third", "feed the ocelot", "Fed.")
            assert _wait(lambda: bool(archive.search("ocelot"))), "a root recreated twice is not watched"
        finally:
            archive.stop_watching()


def test_a_root_deleted_and_recreated_with_its_old_inode_is_watched_again(tmp_path, monkeypatch):
    """A new directory may get the deleted one's inode back (ext4 reuses them at once), so
    the root poll cannot tell it from the old: the deleted event of the root itself says
    so. Injected: every directory has one identity, as if each reused the last inode."""
    import shutil

    from core.archive import watch

    from .support import open_archive

    monkeypatch.setattr(watch, "_identity", lambda path: (1, 1) if path.is_dir() else None)
    _session(tmp_path, "pelican")
    projects = tmp_path / ".claude" / "projects"
    with open_archive(tmp_path) as archive:
        archive.start_watching()
        try:
            shutil.rmtree(projects)
            assert _wait(lambda: archive.search("pelican") == []), "a deleted root's sessions stayed"
            _write_session(tmp_path, "77777777-7777-4777-8777-777777777777", "/home/t/work/other", "calibrate the narwhal", "Calibrated.")
            assert _wait(lambda: bool(archive.search("narwhal"))), "a root recreated on its old inode is not watched"
        finally:
            archive.stop_watching()


def _damage(cache: Path, case: str) -> None:
    segments = sorted((cache / "segments").iterdir())
    if case == "garbage mid-catalog":
        path = cache / "catalog.sqlite"
        size = path.stat().st_size
        with open(path, "r+b") as handle:  # header intact: it opens, then a page fails
            # (every page past the schema's: a search reads a few tables only, and which
            # pages those are depends on the catalog's layout)
            handle.seek(size // 8)
            handle.write(b"\xa5" * (size - size // 8))
    elif case == "0-byte segment file":
        (segments[0] / "tfs.npy").write_bytes(b"")
    elif case == "garbage inside a segment array":
        path = segments[0] / "postings.npy"
        size = path.stat().st_size
        with open(path, "r+b") as handle:  # same size, header intact: only a checksum sees it
            handle.seek(size - 64)
            handle.write(b"\x7f" * 60)
    elif case == "catalog replaced by a directory":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{cache / 'catalog.sqlite'}{suffix}").unlink(missing_ok=True)
        (cache / "catalog.sqlite").mkdir()
        (cache / "catalog.sqlite" / "x").write_text("x")


DAMAGE = ["garbage mid-catalog", "0-byte segment file", "garbage inside a segment array", "catalog replaced by a directory"]


@pytest.mark.parametrize("case", DAMAGE)
@pytest.mark.parametrize("command", [["search", "watchdog", "--json"], ["index", "--rebuild"], ["index"]])
def test_a_damaged_cache_is_rebuilt_with_one_line(tmp_path, case, command):
    from core.fixtures.demo import write_demo_corpus

    write_demo_corpus(tmp_path)
    expected = _search(tmp_path, "watchdog")  # builds the cache
    assert expected
    cache = tmp_path / ".cache" / "relay-search"
    _damage(cache, case)
    out = _cli(tmp_path, *command)
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and "rebuilding the cache" in lines[0], out.stderr
    if command[0] == "search":
        assert json.loads(out.stdout)["results"] == expected
    # and the cache is whole again: no second rebuild, same answers
    again = _cli(tmp_path, "search", "watchdog", "--json")
    assert again.returncode == 0 and again.stderr == ""
    assert json.loads(again.stdout)["results"] == expected




def test_a_full_disk_keeps_the_last_good_cache_and_retries(tmp_path, tiny_disk):
    path = _session(tmp_path, "pelican")
    env = {**_env(tmp_path), "XDG_CACHE_HOME": str(tiny_disk)}
    exe = str(Path(sys.executable).with_name("relay-search"))

    def cli(*args):
        return subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=120)

    first = cli("search", "pelican", "--json")
    assert first.returncode == 0 and json.loads(first.stdout)["results"], first.stderr
    catalog = tiny_disk / "relay-search" / "catalog.sqlite"
    segments = sorted(p.name for p in (tiny_disk / "relay-search" / "segments").iterdir())
    # fill the disk to the last byte
    filler = tiny_disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    for block in (65536, 512, 1):
        try:
            while True:
                os.write(fd, b"\0" * block)
        except OSError:
            pass
    os.ftruncate(fd, os.fstat(fd).st_size - 96 * 1024)  # enough left to open the cache, not to update it
    os.close(fd)
    t = transcript(SID)
    t.user("plan the pelican rollout")
    t.assistant("The pelican rollout is planned.")
    for i in range(1000):  # a big append: the update needs more space than is left
        t.user(f"now the ocelot phase {i} with its own long explanation " * 5)
    t.write(path.parent)
    full = cli("search", "pelican", "--json")
    assert full.returncode == 0, full.stderr
    assert "disk is full" in full.stderr and "rebuilding" not in full.stderr
    assert len(full.stderr.splitlines()) == 1
    assert json.loads(full.stdout)["results"], "the last good cache answers"
    assert catalog.exists() and sorted(p.name for p in (tiny_disk / "relay-search" / "segments").iterdir()) == segments
    indexed = cli("index")
    assert indexed.returncode == 1 and "disk is full" in indexed.stderr and "rebuilding" not in indexed.stderr
    filler.unlink()  # space again: the next call catches up
    later = cli("search", "ocelot", "--json")
    assert later.returncode == 0 and later.stderr == "", later.stderr
    assert json.loads(later.stdout)["results"]


def _fill(disk: Path, leave: int) -> Path:
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    for block in (65536, 512, 1):
        try:
            while True:
                os.write(fd, b"\0" * block)
        except OSError:
            pass
    os.ftruncate(fd, max(0, os.fstat(fd).st_size - leave))
    os.close(fd)
    return filler


def test_a_watcher_retries_what_a_full_disk_kept_out(tmp_path, tiny_disk, caplog):
    import logging

    from core.api import Archive
    from core.config import Config

    path = _session(tmp_path, "pelican")
    other = transcript("12121212-1212-4121-8121-121212121212")
    other.user("an unrelated heron")
    other.assistant("Noted.")
    other.write(project_dir(tmp_path))
    config = Config.from_env({"HOME": str(tmp_path), "USER": "tester", "XDG_CACHE_HOME": str(tiny_disk)})
    caplog.set_level(logging.WARNING, logger="core.archive.watch")
    with Archive.open(config) as archive:
        archive.start_watching()
        try:
            assert archive.search("pelican")
            filler = _fill(tiny_disk, 96 * 1024)
            with open(path, "a") as handle:
                for i in range(1000):
                    handle.write(json.dumps({
                        "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/t/work/proj",
                        "sessionId": SID, "version": "2.1.39", "type": "user", "uuid": f"cccccccc-0000-4000-8000-{i:012d}",
                        "message": {"role": "user", "content": f"the ocelot phase {i} with its own long explanation " * 5},
                        "timestamp": "2026-11-01T10:00:00.000Z",
                    }) + "\n")
            # the watcher tried (and said the disk is full), and the append stayed out
            assert _wait(lambda: any("disk is full" in r.getMessage() for r in caplog.records)), "the watcher never tried"
            assert archive.search("ocelot") == []
            assert archive.search("pelican")  # the last good cache answers
            filler.unlink()
            other.user("and then a lynx")
            other.write(project_dir(tmp_path))  # the next change: another file only
            assert _wait(lambda: bool(archive.search("lynx")))
            assert _wait(lambda: bool(archive.search("ocelot"))), "the failed paths were not retried"
        finally:
            archive.stop_watching()
