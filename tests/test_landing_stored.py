"""A hit lands on its snippet's message from the stored passage, reading no transcript (issue #35.3).

The catalog keeps where each message of a passage starts in its stored body (``places``, in
the ``marks`` column after a bar). A one-shot search lands a hit whose snippet the body shows
from that alone; only a hit whose words were in a tool's input or output (or a cache written
before places were kept) reads its transcript back (core/query/landing.py).

- through the CLI: after indexing, the transcript is overwritten with same-sized junk and its
  times put back (the cache still believes it), and every hit on a prompt, an answer or a
  closing summary still points at the message holding its word; a tool output's hit, which
  needs the transcript, falls back to the passage's first message instead of failing;
- the same landing as reading the transcript on the demo corpus: every hit of its words has the
  same ``sequence`` and snippet with places as with the places stripped from the catalog (the
  old path); over the dev queries on the real transcripts, at least as good a landing.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.api import Archive
from core.config import Config
from core.fixtures.demo import write_demo_corpus
from core.index.document import decode_marks, decode_places, encode_marks
from tests.hostile_support import cli_json
from tests.support import SHARED
from tests.test_hit_sequence import SID, WORDS, holds, shown_text, write_corpus


def test_places_ride_in_the_marks_column_without_changing_the_answer_marks() -> None:
    stored = encode_marks((5, 20, 9, 60), 100, (3, 0, 5, 20, 9, 60, 12, 99, 14, 140))
    assert decode_marks(stored) == [(5, 20), (9, 60)]  # what the embedding slots read is unchanged
    assert decode_places(stored) == [(3, 0), (5, 20), (9, 60), (12, 99)]  # past the stored body: dropped
    assert decode_places(encode_marks((5, 20), 100)) is None  # a cache written before places
    assert decode_places("1 2|x y") is None and decode_marks("1 2|x y") == [(1, 2)]  # damaged: no places


def _as_dict(message) -> dict:
    return message if isinstance(message, dict) else message.to_dict()


def _scramble_keeping_times(path: Path) -> None:
    """Same size, same times, nothing a parser can read: the cache does not notice (it compares
    sizes and times), so a search that read this file back could not land anything."""
    st = path.stat()
    path.write_bytes(b"#" * st.st_size)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_hits_land_from_the_stored_passage_when_the_transcript_cannot_be_read(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    cli_json(tmp_path, "index")
    with Archive.open(Config.from_env({"HOME": str(tmp_path)})) as arch:
        messages = {m["sequence"]: m for m in map(_as_dict, arch.iter_session_messages(SID, include_tools=True))}
    transcript = next((tmp_path / ".claude" / "projects").rglob(f"{SID}.jsonl"))
    _scramble_keeping_times(transcript)
    for word, kind in WORDS.items():
        hit = cli_json(tmp_path, "search", word)["results"][0]
        assert hit["session_id"] == SID, (word, hit)
        if kind in ("tool input", "tool output"):
            continue  # its words are not in the stored passage: only the transcript can tell
        holds(messages[hit["sequence"]], word, hit["snippet"])


def _strip_places(cache_root: Path) -> None:
    for catalog in cache_root.rglob("catalog.sqlite"):
        with sqlite3.connect(catalog) as db:
            db.execute("UPDATE docs SET marks = substr(marks, 1, instr(marks, '|') - 1) WHERE instr(marks, '|') > 0")


def _landed(home: Path, cache: Path, queries: list[str], limit: int = 20) -> list[tuple]:
    with Archive.open(Config.from_env({"HOME": str(home), "XDG_CACHE_HOME": str(cache)})) as arch:
        return [(q, h.session_id, h.turn_number, h.sequence, h.snippet) for q in queries for h in arch.search(q, limit=limit)]


def _same_landing(home: Path, cache: Path, queries: list[str]) -> None:
    with_places = _landed(home, cache, queries)
    _strip_places(cache)
    read_back = _landed(home, cache, queries)
    assert len(with_places) == len(read_back) > 0
    differ = [(a, b) for a, b in zip(with_places, read_back, strict=True) if a != b]
    assert not differ, differ[:5]


def test_stored_landing_matches_reading_the_demo_transcripts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_demo_corpus(home)
    cache = tmp_path / "cache"
    with Archive.open(Config.from_env({"HOME": str(home), "XDG_CACHE_HOME": str(cache)})) as arch:
        bodies = [r[0] for r in arch.catalog.db.execute("SELECT body FROM docs WHERE body IS NOT NULL LIMIT 60")]
    words = sorted({w.strip(".,:;()`'\"").lower() for body in bodies for w in body.split() if len(w) > 7})
    _same_landing(home, cache, [w for w in words if w.isalpha()][:80])


def _grade(home: Path, cache: Path, hits: list[tuple]) -> tuple[int, int]:
    """(hits whose message holds the snippet whole, hits whose message shares no three words with it),
    the message read as an agent does (get_message_context)."""
    whole = unrelated = 0
    with Archive.open(Config.from_env({"HOME": str(home), "XDG_CACHE_HOME": str(cache)})) as arch:
        for _, session_id, _, sequence, snippet in hits:
            current = arch.get_message_context(session_id, sequence, before=0, after=0).to_dict()["current"]
            text = " ".join(shown_text(current).split()).lower()
            probe = " ".join(snippet.strip("…").split()).lower()
            words = probe.split()
            whole += probe in text
            unrelated += probe not in text and not any(" ".join(words[i : i + 3]) in text for i in range(len(words) - 2))
    return whole, unrelated


@pytest.mark.skipif(not (SHARED / "eval" / "dev-queries.json").exists(), reason="needs ../shared (the real transcripts)")
def test_stored_landing_is_at_least_as_good_as_reading_the_real_transcripts(tmp_path: Path) -> None:
    """Over the dev queries' hits on the real transcripts, landing from the stored passage holds
    the snippet whole at least as often as reading the transcript back, and leaves no more hits
    on a message sharing nothing with it. (Not the same landing: read back, a later part of a
    long turn does not hold its prompt, and a thinking block sharing two query words could win.)"""
    from bench.eval.make_home import build_home

    home, cache = build_home(tmp_path / "home"), tmp_path / "cache"
    queries = [q["q"] for q in json.loads((SHARED / "eval" / "dev-queries.json").read_text())["queries"]][::2]
    stored = _landed(home, cache, queries, limit=10)
    stored_grade = _grade(home, cache, stored)
    _strip_places(cache)
    read_back = _landed(home, cache, queries, limit=10)
    read_grade = _grade(home, cache, read_back)
    assert len(stored) == len(read_back) > 500
    assert [h[:3] for h in stored] == [h[:3] for h in read_back]  # the same hits, in the same order
    assert stored_grade[0] >= read_grade[0] and stored_grade[1] <= read_grade[1], (stored_grade, read_grade)
    assert sum(a != b for a, b in zip(stored, read_back, strict=True)) < len(stored) // 10


@given(
    st.lists(st.tuples(st.text(alphabet="ab é\u00a0", min_size=1, max_size=6), st.sampled_from([" ", "\n", "  ", "\t\n "])), min_size=1, max_size=12),
    st.data(),
)
def test_a_snippets_words_map_back_to_where_the_body_holds_them(pieces, data) -> None:
    from core.query.landing import _body_span

    body = "".join(word + gap for word, gap in pieces)
    flat = " ".join(body.split())
    if not flat:
        return
    start = data.draw(st.integers(0, len(flat) - 1))
    end = data.draw(st.integers(start + 1, len(flat)))
    probe = flat[start:end].strip()
    if not probe:
        return
    a, b = _body_span(body, probe)
    assert " ".join(body[a:b].split()) == probe


def test_each_place_starts_its_messages_text_in_the_body() -> None:
    """Places point at the first character of each message's text in the stored body: the
    prompt, the answers between tool calls and a note, and the copied prompt of a turn's later
    part (a long answer fills a part)."""
    from core.archive.turns import PART_ANSWER_CHARS, DocBuilder
    from core.model import Entry

    texts = {
        0: "  Find why the importer drops rows",  # leading spaces: the body is stripped
        1: "Looking at the importer first.",
        3: "The CSV reader skips quoted newlines.",
        4: "Hook output: lint passed",
        5: "x" * PART_ANSWER_CHARS,  # fills the part
        6: "The fix is in: quoted newlines are kept.",
    }
    entries = [
        Entry(role="user", type="text", text=texts[0], starts_turn=True),
        Entry(role="assistant", type="text", text=texts[1]),
        Entry(role="assistant", type="tool_use", text="", tool_name="Read", tool_input={"file_path": "a.py"}),
        Entry(role="assistant", type="text", text=texts[3]),
        Entry(role="system", type="text", text=texts[4], notice=True),
        Entry(role="assistant", type="text", text=texts[5]),
        Entry(role="assistant", type="text", text=texts[6]),
    ]
    docs = DocBuilder(main_file=True).feed(entries)
    assert len(docs) == 2  # the long answer closed the first part
    for doc in docs:
        places = list(zip(doc.places[0::2], doc.places[1::2]))
        assert places and places[0] == (0, 0)  # the prompt, in the later part too
        for seq, start in places:
            assert doc.body[start:].startswith(texts[seq].strip()[:40]), (seq, start, doc.body[start : start + 40])
    assert [seq for seq, _ in zip(docs[0].places[0::2], docs[0].places[1::2])] == [0, 1, 3, 5, 4]  # body order: prompt, answers, notes


def test_places_when_a_turn_has_no_prompt_or_no_answer() -> None:
    """An empty prompt or answer still leaves its newline in the body: the places after it count it."""
    from core.archive.turns import DocBuilder
    from core.model import Entry

    no_prompt = [Entry(role="assistant", type="text", text="Resumed: the cache was rebuilt."),
                 Entry(role="system", type="text", text="Hook output: ok", notice=True)]
    no_answer = [Entry(role="user", type="text", text="Run the linter", starts_turn=True),
                 Entry(role="assistant", type="tool_use", text="", tool_name="Bash", tool_input={"command": "ruff"}),
                 Entry(role="system", type="text", text="Hook output: lint passed", notice=True)]
    for entries in (no_prompt, no_answer):
        (doc,) = DocBuilder(main_file=True).feed(entries)
        for seq, start in zip(doc.places[0::2], doc.places[1::2]):
            assert doc.body[start:].startswith(entries[seq].text), (seq, start, doc.body)
