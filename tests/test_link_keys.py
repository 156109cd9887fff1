"""The narrow ``link_keys`` table relinking reads (issue 25), and caches made before it.

Linking continued sessions read every main file's record hashes from the wide
``files`` table (its rows hold the parsers' state: ~500 MB at 100,000 files), so a
new session took seconds to become searchable. The writer now keeps a narrow copy
of what linking needs; these tests pin that copy to the files table through
appends, replays and deletions, and check that a cache of the old format is
rebuilt with the usual one-line message.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from core.archive.catalog import LINK_COLUMNS, SCHEMA_VERSION

from .support import open_archive, project_dir

OLD = "aaaaaaaa-0000-4000-8000-00000000a001"
NEW = "aaaaaaaa-0000-4000-8000-00000000a002"


def _record(sid: str, text: str, uuid: str, parent: str | None, role: str = "user") -> str:
    content = text if role == "user" else [{"type": "text", "text": text}]
    return json.dumps({
        "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/t/work/proj",
        "sessionId": sid, "version": "2.1.39", "gitBranch": "main", "type": role,
        "message": {"role": role, "content": content}, "uuid": uuid, "timestamp": "2026-11-01T10:00:00.000Z",
    }) + "\n"


def _old_session() -> list[str]:
    return [
        _record(OLD, "tune the gizmo parser", "bbbbbbbb-0000-4000-8000-000000000001", None),
        _record(OLD, "Tuned the gizmo parser.", "bbbbbbbb-0000-4000-8000-000000000002",
                "bbbbbbbb-0000-4000-8000-000000000001", "assistant"),
    ]


def _link_rows_from_files(cache: Path) -> list[tuple]:
    db = sqlite3.connect(cache / "catalog.sqlite")
    try:
        cols = ", ".join(LINK_COLUMNS)
        wide = db.execute(f"SELECT {cols} FROM files WHERE kind='main' ORDER BY file_id").fetchall()
        narrow = db.execute(f"SELECT {cols} FROM link_keys ORDER BY file_id").fetchall()
    finally:
        db.close()
    assert narrow == wide
    return narrow


def test_link_keys_follow_the_files_table_through_appends_replays_and_deletions(tmp_path: Path) -> None:
    projects = project_dir(tmp_path)
    old_path = projects / f"{OLD}.jsonl"
    old_path.write_text("".join(_old_session()))
    with open_archive(tmp_path) as archive:
        archive.sync()
        cache = archive.cache
        assert len(_link_rows_from_files(cache)) == 1
        # a continued session: starts with the old one's records (a replay), then goes on
        new_path = projects / f"{NEW}.jsonl"
        going_on = _record(NEW, "now wire the gizmo cache", "cccccccc-0000-4000-8000-000000000001",
                           "bbbbbbbb-0000-4000-8000-000000000002")
        new_path.write_text("".join([*_old_session(), going_on]))
        archive.sync()
        rows = _link_rows_from_files(cache)
        assert [r[-1] for r in rows] == [None, rows[0][0]]  # replay_of: the new file replays the old one
        continues = archive.catalog.db.execute("SELECT continues FROM sessions WHERE session_id=?", (NEW,)).fetchone()
        assert continues == (OLD,)
        with open(new_path, "a") as handle:  # an append adds its record hashes
            handle.write(_record(NEW, "and the gizmo docs", "cccccccc-0000-4000-8000-000000000002", None))
        archive.sync([new_path])
        assert len(_link_rows_from_files(cache)[1][4]) == 8 * 4
        old_path.unlink()
        archive.sync()
        assert len(_link_rows_from_files(cache)) == 1


def test_a_cache_from_before_link_keys_is_rebuilt_with_one_line(tmp_path: Path) -> None:
    (project_dir(tmp_path) / f"{OLD}.jsonl").write_text("".join(_old_session()))
    with open_archive(tmp_path) as archive:
        archive.sync()
        catalog = archive.cache / "catalog.sqlite"
    db = sqlite3.connect(catalog)  # what schema 6 looked like: no link_keys
    db.execute("DROP TABLE link_keys")
    db.execute("UPDATE meta SET value='6' WHERE key='schema'")
    db.commit()
    db.close()
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("XDG_CACHE_HOME", None)
    out = subprocess.run([sys.executable, "-m", "core", "search", "gizmo", "--json"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    why = f"the cache is from another version (schema 6, this is {SCHEMA_VERSION})"
    assert lines == [f"relay-search: rebuilding the cache ({why})"]
    assert json.loads(out.stdout)["results"][0]["session_id"] == OLD
    db = sqlite3.connect(catalog)
    try:
        assert db.execute("SELECT count(*) FROM link_keys").fetchone()[0] == 1
    finally:
        db.close()


def _links(archive) -> dict[str, tuple]:
    return {sid: (cont, summ) for sid, cont, summ in
            archive.catalog.db.execute("SELECT session_id, continues, summary FROM sessions")}


def test_new_files_one_at_a_time_link_as_a_fresh_build_does(tmp_path: Path) -> None:
    """Relinking is skipped for a new file that shares no record and no summary leaf
    with another; in every order the files arrive, the links are a fresh build's."""
    third = "aaaaaaaa-0000-4000-8000-00000000a003"
    unrelated = "aaaaaaaa-0000-4000-8000-00000000a004"
    going_on = _record(NEW, "now wire the gizmo cache", "cccccccc-0000-4000-8000-000000000001",
                       "bbbbbbbb-0000-4000-8000-000000000002")
    summary = json.dumps({"type": "summary", "summary": "Sprockets sorted",
                          "leafUuid": "dddddddd-0000-4000-8000-000000000001"}) + "\n"
    files = {  # each arrives alone: the continuation before its original, a summary before its leaf
        NEW: "".join([*_old_session(), going_on]),
        third: summary + _record(third, "what about the docs", "eeeeeeee-0000-4000-8000-000000000001", None),
        unrelated: _record(unrelated, "a question about sprockets", "dddddddd-0000-4000-8000-000000000001", None),
        OLD: "".join(_old_session()),
        **_partial_replays(),
    }
    home = tmp_path / "home"
    projects = project_dir(home)
    with open_archive(home) as archive:
        for step, (sid, text) in enumerate(files.items()):
            (projects / f"{sid}.jsonl").write_text(text)
            archive.sync()
            fresh = _fresh_links(tmp_path / f"fresh-{step}", dict(list(files.items())[: step + 1]))
            assert _links(archive) == fresh, f"after {sid} arrived"
    assert fresh[NEW][0] == OLD and fresh[unrelated][1] == "Sprockets sorted" and fresh[third][0] == unrelated


def _fresh_links(home: Path, files: dict[str, str]) -> dict[str, tuple]:
    projects = project_dir(home)
    for sid, text in files.items():
        (projects / f"{sid}.jsonl").write_text(text)
    with open_archive(home) as archive:
        archive.sync()
        return _links(archive)


def _chain(sid: str, prefix: str, n: int) -> list[str]:
    return [_record(sid, f"step {prefix}{i} of the sprocket audit", f"{prefix}-0000-4000-8000-{i:012d}",
                    f"{prefix}-0000-4000-8000-{i - 1:012d}" if i else None, "user" if i % 2 == 0 else "assistant")
            for i in range(n)]


def _partial_replays() -> dict[str, str]:
    """A file starting with the middle of another's records (it replays that one), and a
    file holding another's first records after records of its own (that one replays it)."""
    g2, g3 = _chain("s5", "f0000005", 6), _chain("s7", "f0000007", 3)
    return {
        "aaaaaaaa-0000-4000-8000-00000000a005": "".join(g2),
        "aaaaaaaa-0000-4000-8000-00000000a006": "".join([*g2[4:], *_chain("s6", "f0000006", 1)]),
        "aaaaaaaa-0000-4000-8000-00000000a007": "".join(g3),
        "aaaaaaaa-0000-4000-8000-00000000a008": "".join([*_chain("s8", "f0000008", 3), *g3[:2]]),
    }
