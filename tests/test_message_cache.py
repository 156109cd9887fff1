"""The reader's message cache (core/query/reading.py) keeps one version of each session.

A session is cached by its files and their sizes, so a live session that grows is read
again. The versions it grew past used to stay cached beside it: following a 2,000-turn
session kept eight of them (~100 MB) in the app.
"""

from __future__ import annotations

from pathlib import Path

from .support import open_archive, project_dir, transcript

SID = "99999999-9999-4999-8999-999999999999"
OTHER = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"


def _write(home: Path, sid: str, turns: int) -> None:
    t = transcript(sid)
    for i in range(turns):
        t.user(f"wire the foghorn relay part {i}")
        t.assistant(f"Foghorn relay part {i} wired.")
    t.write(project_dir(home))


def test_a_growing_session_is_cached_once_at_its_newest_size(tmp_path: Path):
    _write(tmp_path, SID, 2)
    _write(tmp_path, OTHER, 1)
    with open_archive(tmp_path) as archive:
        assert len(archive.session_messages(OTHER)) == 2
        for turns in range(3, 7):
            _write(tmp_path, SID, turns)  # the live session grows
            archive.sync()
            messages = archive.session_messages(SID)
            assert messages[-1].text == f"Foghorn relay part {turns - 1} wired."
            assert archive.session_messages(SID) is messages  # (cached)
        assert len(archive.reader._cache) == 2  # this session's newest version, and the other session
        assert len(archive.session_messages(OTHER)) == 2
