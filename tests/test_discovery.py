"""A warm one-shot CLI call trusts directory mtimes (issue 12 #11, core/sources/discovery.py).

It lists only directories whose mtime moved and stats only files in them and files
written in the last day; the README states what that means for appends. Every
check runs the real ``relay-search`` CLI as a subprocess on a temp HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from core.api import Archive
from core.config import Config
from core.fixtures.claude import ClaudeTranscript
from core.sources import discovery

from .support import transcript

SCRIPT = Path(sys.executable).with_name("relay-search")
DAY = 86400
OLD = time.time() - 30 * DAY


def run(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def found(home: Path, word: str) -> set[str]:
    proc = run(home, "search", word, "--json", "--limit", "50")
    assert proc.returncode == 0, proc.stderr
    return {h["session_id"] for h in json.loads(proc.stdout)["results"]}


def session(n: int, cwd: str, word: str) -> ClaudeTranscript:
    t = transcript(f"{n:08d}-0000-4000-8000-000000000000", cwd=cwd, start=datetime(2026, 9, 1, tzinfo=timezone.utc) + timedelta(hours=n))
    t.user(f"Look at the {word} module")
    t.assistant(f"The {word} module is fine.")
    return t


def age(*paths: Path, when: float = OLD) -> None:
    for p in paths:
        os.utime(p, (when, when))


def projects(home: Path) -> Path:
    return Config.from_env({"HOME": str(home)}).claude_projects


def test_warm_cli_sees_added_removed_and_recent_files(tmp_path: Path) -> None:
    home = tmp_path
    root = projects(home)
    old = session(1, "/home/me/a", "walrus").write_under(root)
    other = session(2, "/home/me/b", "walrus").write_under(root)
    age(old, other, old.parent, other.parent, root)
    assert run(home, "index").returncode == 0
    assert found(home, "walrus") == {session(1, "", "").session_id, session(2, "", "").session_id}

    # A new session in an existing project dir, and a new project dir.
    added = session(3, "/home/me/a", "narwhal").write_under(root)
    fresh_project = session(4, "/home/me/c", "narwhal").write_under(root)
    assert found(home, "narwhal") == {session(3, "", "").session_id, session(4, "", "").session_id}

    # A file removed, and a whole project dir removed.
    added.unlink()
    shutil.rmtree(fresh_project.parent)
    assert found(home, "narwhal") == set()

    # An append to a session written in the last day: seen (recent files are stat-ed).
    live = session(5, "/home/me/a", "otter")
    path = live.write_under(root)
    age(path.parent)  # the dir settles: only the file's own recent mtime can point at it
    assert found(home, "otter") == {live.session_id}
    written = len(live.lines())
    live.user("Now the pelican module")
    live.assistant("Done.")
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n".join(live.lines()[written:]) + "\n")
    assert found(home, "pelican") == {live.session_id}


def test_append_to_a_long_quiet_file_waits_for_a_full_sync(tmp_path: Path) -> None:
    """The documented limit: a month-old file appended in place, its dir unchanged."""
    home = tmp_path
    root = projects(home)
    quiet = session(1, "/home/me/a", "walrus")
    path = quiet.write_under(root)
    age(path, path.parent, root)
    assert run(home, "index").returncode == 0
    written = len(quiet.lines())
    quiet.user("Resume: the heron module")
    quiet.assistant("Done.")
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n".join(quiet.lines()[written:]) + "\n")
    age(path)  # as if the append kept the old mtime window: neither the dir nor "recent" says so
    assert found(home, "heron") == set()
    assert run(home, "index").returncode == 0  # a full sync stats every file
    assert found(home, "heron") == {quiet.session_id}


def test_quick_sync_with_nothing_changed_looks_at_no_file(tmp_path: Path) -> None:
    root = projects(tmp_path)
    paths = [session(n, f"/home/me/p{n % 3}", "walrus").write_under(root) for n in range(1, 10)]
    age(*paths, *{p.parent for p in paths}, root)
    config = Config.from_env({"HOME": str(tmp_path)})
    with Archive.open(config) as archive:
        indexer = archive.indexer
        before = discovery.recorded_dirs(archive.catalog.db)
        assert str(root) in before and all(str(p.parent) in before for p in paths)
        scan = discovery.scan(indexer.planner.roots(), before)
        assert not scan.changed
        known, candidates = indexer.planner.quick_candidates(scan)
        assert known == {} and candidates == []
        assert archive.sync(quick=True).files_read == 0


def test_a_dir_changed_within_its_mtime_tick_is_listed_again(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    mtime = d.stat().st_mtime_ns
    first = discovery.scan([d], {}, now_ns=mtime + 1_000_000)  # listed right after it changed
    assert first.dirs[str(d)] == discovery.UNTRUSTED
    assert str(d) in discovery.scan([d], first.dirs, now_ns=mtime + 10**10).listed
    settled = discovery.scan([d], {}, now_ns=mtime + 10**10)
    assert settled.dirs[str(d)] == mtime and not discovery.scan([d], settled.dirs, now_ns=mtime + 10**10).changed


def test_paths_naming_one_ash_session_read_it_once(tmp_path: Path) -> None:
    """state.json, history.jsonl and context.jsonl all name one session file (a quick
    sync lists them together, a watcher reports them together): one read, no
    duplicate documents."""
    from core.fixtures.ash import AshSession

    config = Config.from_env({"HOME": str(tmp_path)})
    ash = AshSession(config.ash_home, "telegram_1_2")
    ash.user("the albatross module", message_id="u1")
    ash.assistant("fine", message_id="a1")
    with Archive.open(config) as archive:
        docs = archive.catalog.db.execute("SELECT count(*) FROM docs").fetchone()[0]
        later = time.time() + 5
        for p in (ash.context, ash.history, ash.state_path):
            os.utime(p, (later, later))
        archive.sync(paths=[ash.state_path, ash.history, ash.context])
        assert archive.catalog.db.execute("SELECT count(*) FROM docs").fetchone()[0] == docs
        assert archive.catalog.db.execute("SELECT count(*) FROM files").fetchone()[0] == 1
        assert [h.session_id for h in archive.search("albatross")] == ["telegram_1_2"]
