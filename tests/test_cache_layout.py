"""A damaged cache layout (issue 37, item 4) and the waiting writer's name (item 12).

A file where the cache dir (or a dir above it) belongs was "unexpected error:
FileExistsError" for every command, ``index --rebuild`` included; ``segments/`` a
file was ``NotADirectoryError``. What is inside the cache dir is ours and is
rebuilt; a file in the cache dir's own place may be someone's: every command names
it in one line and exits 1, and ``index --rebuild`` moves it aside (kept).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from .bad_input_corpus import build_corpus
from .hostile_support import cli_json, run_cli

COMMANDS = (("list",), ("search", "eland"), ("show", "telegram_9_9"), ("tag", "telegram_9_9", "x"), ("index",), ("index", "--stats"))


def _cache(home: Path) -> Path:
    return home / ".cache" / "relay-search"


def _found(home: Path, word: str) -> set[str]:
    return {h["session_id"] for h in cli_json(home, "search", word)["results"]}


@pytest.mark.parametrize("name", ["segments", "vectors"])
def test_a_file_where_a_dir_of_the_cache_belongs_is_rebuilt(tmp_path, name):
    corpus = build_corpus(tmp_path)
    assert corpus.sessions["codex"] in _found(tmp_path, "eland")
    target = _cache(tmp_path) / name
    if target.is_dir():
        import shutil

        shutil.rmtree(target)
    target.write_text("not a directory")
    for args in (("list",), ("search", "eland"), ("index",), ("index", "--rebuild")):
        proc = run_cli(tmp_path, *args)  # (no "unexpected error", no traceback)
        assert proc.returncode == 0, (args, proc.stderr)
    assert (_cache(tmp_path) / name).is_dir() or not (_cache(tmp_path) / name).exists()
    assert corpus.sessions["codex"] in _found(tmp_path, "eland")


def test_a_dir_where_the_writer_lock_belongs_is_mended(tmp_path):
    corpus = build_corpus(tmp_path)
    lock = _cache(tmp_path) / "writer.lock"
    assert corpus.sessions["gemini"] in _found(tmp_path, "hoopoe")
    lock.unlink()
    (lock / "inside").mkdir(parents=True)
    assert run_cli(tmp_path, "index").returncode == 0
    assert lock.is_file()
    assert corpus.sessions["gemini"] in _found(tmp_path, "hoopoe")


def test_a_file_where_the_cache_dir_belongs_is_one_line_and_rebuild_moves_it_aside(tmp_path):
    corpus = build_corpus(tmp_path)
    cache = _cache(tmp_path)
    cache.parent.mkdir(parents=True)
    cache.write_text("someone's notes\n")
    for args in COMMANDS:
        proc = run_cli(tmp_path, *args)
        err = proc.stderr.decode()
        assert proc.returncode == 1, (args, err)
        assert err.count("\n") == 1 and str(cache) in err and "index --rebuild" in err, (args, err)
    assert cache.read_text() == "someone's notes\n"  # nothing of it was touched
    rebuilt = run_cli(tmp_path, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    aside = cache.with_name("relay-search.moved-aside")
    assert f"moved it to {aside}" in rebuilt.stderr.decode()
    assert aside.read_text() == "someone's notes\n" and cache.is_dir()
    assert corpus.sessions["ash"] in _found(tmp_path, "jacana")


def test_a_file_above_the_cache_dir_is_one_line_for_every_command(tmp_path):
    build_corpus(tmp_path)
    (tmp_path / ".cache").write_text("x")
    for args in (*COMMANDS, ("index", "--rebuild")):
        proc = run_cli(tmp_path, *args)
        err = proc.stderr.decode()
        assert proc.returncode == 1, (args, err)
        assert err == f"relay-search: cannot make the cache directory {_cache(tmp_path)}: {tmp_path / '.cache'} is a file, not a directory; move it away or remove it\n"
    assert (tmp_path / ".cache").read_text() == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes whatever the permissions say")
def test_an_unreadable_part_of_the_cache_is_one_line(tmp_path):
    build_corpus(tmp_path)
    assert run_cli(tmp_path, "index").returncode == 0
    segments = _cache(tmp_path) / "segments"
    segments.chmod(0)
    try:
        proc = run_cli(tmp_path, "search", "eland")
    finally:
        segments.chmod(0o755)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1 and str(segments) in err and "access" in err, err


# --- item 12: who the waiting writer waits for ---------------------------------------------


@pytest.mark.parametrize("content", [b"", b"\xff\xfe not a pid\n"])
def test_a_writer_lock_that_does_not_say_who_holds_it_is_named_plainly(tmp_path, content):
    build_corpus(tmp_path)
    assert run_cli(tmp_path, "index").returncode == 0
    lock = _cache(tmp_path) / "writer.lock"
    with open(lock, "r+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        handle.truncate(0)
        handle.write(content)
        handle.flush()
        proc = run_cli(tmp_path, "index", "--wait", "0")
    err = proc.stderr.decode()
    assert proc.returncode == 75, err
    assert "relay-search: another relay-search process holds the writer lock and is updating the cache" in err, err
    assert "(another process)" not in err and "process (" not in err, err
