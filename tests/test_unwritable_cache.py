"""A cache that cannot be written — a full disk, a read-only directory — still answers
(issue 24, items 4 and 5): every reading command answers from what is indexed and
says once that the cache could not be updated; ``index`` exits 1; never a traceback.

Faults are real where this machine allows: a 2 MB tmpfs filled to the last byte and a
read-only bind mount need root, so without it the full disk is injected at SQLite's
write layer in the subprocess (``PRAGMA max_page_count``: SQLite's own "database or
disk is full"). The read-only directory is made both ways where it can be: a bind
mount (EROFS) and ``chmod`` (EACCES; as root, the CLI runs without CAP_DAC_OVERRIDE).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import hostile_support
from .hostile_support import run_cli
from .test_faults import _fill

NOTE = "could not be updated"


def _home(tmp_path: Path) -> Path:
    from core.fixtures.demo import write_demo_corpus

    home = tmp_path / "home"
    write_demo_corpus(home)
    return home


def _append(home: Path) -> None:
    """A change the cache would have to take in (and cannot)."""
    path = sorted((home / ".claude" / "projects").rglob("*.jsonl"))[0]
    last = json.loads(path.read_text().splitlines()[-1])
    last["uuid"] = "ffffffff-0000-4000-8000-000000000001"
    with open(path, "a") as handle:
        handle.write(json.dumps(last) + "\n")


def _answers_from_the_cache(home: Path, env: dict[str, str], sessions: int) -> None:
    for command in (["search", "watchdog", "--json"], ["list", "--json"], ["index", "--stats", "--json"]):
        proc = run_cli(home, *command, env=env)
        assert proc.returncode == 0, (command, proc.stderr)
        lines = proc.stderr.decode().splitlines()
        assert len(lines) == 1 and NOTE in lines[0], (command, lines)  # said once
        body = json.loads(proc.stdout)
        if command[0] == "search":
            assert body["results"], "the indexed word is found"
        elif command[0] == "list":
            assert len(body["sessions"]) == sessions
        else:
            assert body["sessions"] == sessions
    show = run_cli(home, "show", "velvet-puzzling-eclipse#3", env=env)
    assert show.returncode == 0 and b"watchdog" in show.stdout
    indexed = run_cli(home, "index", env=env)
    assert indexed.returncode == 1 and NOTE in indexed.stderr.decode()


def _indexed(home: Path, env: dict[str, str]) -> int:
    proc = run_cli(home, "index", "--stats", "--json", env=env)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return json.loads(proc.stdout)["sessions"]


# --- a full disk -------------------------------------------------------------------------------




def test_a_disk_full_to_the_last_byte_answers_from_the_cache(tmp_path, tiny_disk):
    home = _home(tmp_path)
    env = {"XDG_CACHE_HOME": str(tiny_disk)}
    sessions = _indexed(home, env)
    filler = _fill(tiny_disk, 0)
    _append(home)
    _answers_from_the_cache(home, env, sessions)
    filler.unlink()  # space again: the next call catches up, and says nothing
    assert _indexed(home, env) == sessions


def test_a_full_disk_injected_at_sqlite_answers_from_the_cache(tmp_path):
    home = _home(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    sessions = _indexed(home, env)
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(
        "import sqlite3\n"
        "_connect = sqlite3.connect\n"
        "def connect(*args, **kw):\n"
        "    conn = _connect(*args, **kw)\n"
        "    pages = conn.execute('PRAGMA page_count').fetchone()[0]\n"
        "    conn.execute(f'PRAGMA max_page_count = {max(pages, 1)}')  # no page more: SQLITE_FULL\n"
        "    return conn\n"
        "sqlite3.connect = connect\n"
    )
    full = {**env, "PYTHONPATH": os.pathsep.join([str(inject), *filter(None, [os.environ.get("PYTHONPATH")])])}
    _append(home)
    for command in (["search", "watchdog", "--json"], ["list", "--json"], ["index", "--stats", "--json"]):
        proc = run_cli(home, *command, env=full)
        assert proc.returncode == 0, (command, proc.stderr)
        lines = proc.stderr.decode().splitlines()
        assert len(lines) == 1 and "disk is full" in lines[0], (command, lines)
        body = json.loads(proc.stdout)
        assert body.get("results") or body.get("sessions"), command
    assert run_cli(home, "index", env=full).returncode == 1
    assert _indexed(home, env) == sessions


# --- a read-only cache directory ----------------------------------------------------------------


DROP_OVERRIDE = "-dac_override,-dac_read_search"  # what lets root write where chmod forbids


@pytest.fixture(params=["mount", "chmod"])
def read_only(request, tmp_path: Path, monkeypatch) -> Iterator[tuple[Path, Path]]:
    """(home, cache home): a built cache, then made read-only — by a read-only bind mount
    (root only), or by ``chmod`` (for root, the CLI then runs without the capability
    that lets root write anything chmod forbids)."""
    home = _home(tmp_path)
    source = tmp_path / "cache"
    sessions = _indexed(home, {"XDG_CACHE_HOME": str(source)})
    assert sessions
    if request.param == "mount":
        if os.geteuid() != 0:
            pytest.skip("a bind mount needs root")
        target = tmp_path / "ro-cache"
        target.mkdir()
        bound = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True, text=True)
        if bound.returncode != 0:
            pytest.skip(f"cannot bind-mount here: {bound.stderr.strip()}")
        try:
            made = subprocess.run(["mount", "-o", "remount,ro,bind", str(target)], capture_output=True, text=True)
            if made.returncode != 0:
                pytest.skip(f"cannot remount read-only here: {made.stderr.strip()}")
            yield home, target
        finally:
            subprocess.run(["umount", "-l", str(target)], check=False)
        return
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root, and no setpriv to drop CAP_DAC_OVERRIDE with")
        wrapper = tmp_path / "relay-search-as-owner"
        wrapper.write_text(f'#!/bin/sh\nexec {setpriv} --bounding-set {DROP_OVERRIDE} --inh-caps {DROP_OVERRIDE} '
                           f'{hostile_support.SCRIPT} "$@"\n')  # fmt: skip
        wrapper.chmod(0o755)
        monkeypatch.setattr(hostile_support, "SCRIPT", wrapper)
    paths = [source, *source.rglob("*")]
    for path in paths:
        path.chmod(stat.S_IMODE(path.stat().st_mode) & ~0o222)
    try:
        if os.geteuid() == 0:  # the wrapper really cannot write there (else this tests nothing)
            probe = subprocess.run([setpriv, "--bounding-set", DROP_OVERRIDE, "--inh-caps", DROP_OVERRIDE,
                                    "touch", str(source / "relay-search" / "probe")], capture_output=True)  # fmt: skip
            assert probe.returncode != 0
        yield home, source
    finally:
        for path in paths:
            path.chmod(stat.S_IMODE(path.stat().st_mode) | 0o200)


def test_a_read_only_cache_answers_with_one_line(read_only):
    home, cache = read_only
    env = {"XDG_CACHE_HOME": str(cache)}
    _append(home)
    sessions = len(json.loads(run_cli(home, "list", "--json", "--limit", "500", env=env).stdout)["sessions"])
    assert sessions
    _answers_from_the_cache(home, env, sessions)


def test_serve_on_a_read_only_cache_answers_http(read_only):
    import httpx

    home, cache = read_only
    env = {"XDG_CACHE_HOME": str(cache)}
    from .hostile_support import SCRIPT, cli_env

    proc = subprocess.Popen([str(SCRIPT), "serve", "--port", "0"], env=cli_env(home, **env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        url = None
        seen = []
        for raw in proc.stderr:  # (readiness: uvicorn's own line names the port)
            line = raw.decode()
            seen.append(line)
            if "Uvicorn running on" in line:
                url = line.split("running on ", 1)[1].split()[0]
                break
        assert url, "".join(seen)
        assert sum(NOTE in line for line in seen) == 1, seen
        assert "Traceback" not in "".join(seen)
        hits = httpx.get(f"{url}/search", params={"q": "watchdog"}, timeout=30).json()["results"]
        assert hits
    finally:
        proc.terminate()
        proc.wait(30)
