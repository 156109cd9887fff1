"""Grouping a typed search by session reads the window's passage rows once while the index
state lasts (:func:`core.query.passages.remembered_headers`): the next keystroke's window is
mostly the same passages. What is remembered never changes an answer: the same hits and
"+N more" counts as rows read afresh, and a new turn (a new index state) is counted at once."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

import core.query.passages as passages_module
from core.archive.catalog import DOC_HEADER_COLUMNS, Catalog
from tests.support import open_archive, project_dir, transcript

LONG = "00000000-0000-4000-8000-0000000000aa"
SHORT = ["00000000-0000-4000-8000-000000000009", "00000000-0000-4000-8000-000000000010"]
TYPED = ["w", "wo", "wom", "womb", "wombat", "wombat q", "wombat qu", "wombat queue", "wombat queue r"]


def _write(home: Path, turns: int = 12) -> None:
    root = project_dir(home)
    t = transcript(LONG, start=datetime(2026, 10, 8, 9, 0, tzinfo=timezone.utc))
    for i in range(turns):
        t.user(f"step {i}: the wombat queue retries")
        t.assistant(f"wombat queue step {i} done")
    t.write(root)
    for day, sid in zip((9, 10), SHORT, strict=True):
        t = transcript(sid, start=datetime(2026, 10, day, 9, 0, tzinfo=timezone.utc))
        t.user("a quick question about the wombat queue")
        t.assistant("Answered.")
        t.write(root)


def _typed(archive) -> list[list[tuple[str, str, int | None]]]:
    """Each typed prefix's grouped hits: (session, reference, "+N more")."""
    return [[(h.session_id, h.ref, h.more_in_session) for h in archive.search(q, group="session", typing=True)] for q in TYPED]


@pytest.fixture
def header_reads(monkeypatch) -> list[int]:
    """How many passage rows each header read asked the catalog for."""
    reads: list[int] = []
    real = Catalog.docs

    def counted(self, doc_ids, *columns):
        if columns == (DOC_HEADER_COLUMNS,):
            reads.append(len(doc_ids))
        return real(self, doc_ids, *columns)

    monkeypatch.setattr(Catalog, "docs", counted)
    return reads


def test_typing_reads_a_passage_s_row_once_and_answers_as_rows_read_afresh(tmp_path: Path, header_reads, monkeypatch) -> None:
    _write(tmp_path)
    archive = open_archive(tmp_path)
    try:
        archive.sync()
        first = _typed(archive)
        read_once = sum(header_reads)
        assert read_once > 0
        header_reads.clear()
        assert _typed(archive) == first  # typed again: every row remembered
        assert header_reads == []
        assert {(sid, more) for sid, _, more in first[-2]} == {(LONG, 11), (SHORT[0], 0), (SHORT[1], 0)}

        monkeypatch.setattr(passages_module, "HEADERS_KEPT", 3)  # remembering almost nothing: the same answers
        archive.library.memo.clear()
        assert _typed(archive) == first
        monkeypatch.setattr("core.query.searching.remembered_headers", lambda lib, passages, ids: passages.headers(ids))
        assert _typed(archive) == first  # (rows read afresh at every keystroke)
    finally:
        archive.close()


def test_a_new_turn_is_counted_at_the_next_keystroke(tmp_path: Path) -> None:
    _write(tmp_path)
    archive = open_archive(tmp_path)
    try:
        archive.sync()
        counts = {h.session_id: h.more_in_session for h in archive.search("wombat qu", group="session", typing=True)}
        assert counts[LONG] == 11
        _write(tmp_path, turns=14)  # the long session grew by two turns
        archive.sync()
        counts = {h.session_id: h.more_in_session for h in archive.search("wombat qu", group="session", typing=True)}
        assert counts[LONG] == 13
    finally:
        archive.close()
