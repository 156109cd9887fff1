"""Where Enter on a hit opens the reader, and what it highlights (issue #36, "Landing and highlighting").

- An identifier lands on itself: ``guard_fail`` opens at a ``guard_fail``, and a lone
  ``guard`` (a part of it) is neither highlighted nor counted.
- A prose query lands on the passage its snippet came from, and highlights its weighty
  words only (not "show", "up", "calls").
- The current match is painted apart from the other highlighted ones.

On main the snippet of each hit below straddles two messages, so the reader could not find
it and opened at the turn's first match: a lone ``guard`` in a tool output, or an early
"show"; every part-word and common word counted.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.fixtures.claude import ClaudeTranscript, stable_uuid
from tui.app import make_app
from tui.marks import PROMPT
from tui.testing import settle, wait_for

from .test_tui_reader import flat_visible, reader_lines, search_and_open, status

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
START = datetime(2026, 11, 19, 9, 0, tzinfo=UTC)
PROSE = "distributed tracing so hook calls show up as spans"
PASSAGE = "Tracer.current_span_ctx now carries the distributed tracing context"


def write_home(home: Path) -> None:
    root = home / ".claude" / "projects"
    t = ClaudeTranscript(stable_uuid("landing", "guard"), cwd="/home/me/work/harbor", slug="quiet-guard-harbor", start=START)
    t.user("why does the supervisor crash?")
    t.assistant("Looking.")
    t.tool("Bash", {"command": "grep -n guard lib/*.ex"}, "\n".join(f"lib/s{i}.ex:{i}: the guard clause holds" for i in range(12)))
    t.assistant("Checked.")
    t.assistant("The guard_fail comes from the restart loop; a guard_fail again further down.")
    t.write_under(root)

    p = ClaudeTranscript(stable_uuid("landing", "prose"), cwd="/home/me/work/relay", slug="amber-tracing-turn",
                         start=START + timedelta(hours=1))  # fmt: skip
    p.user("instrument the worker pipeline")
    for i in range(8):
        p.assistant(f"Step {i}: I will show the calls up front and look up what calls show up in step {i}.")
        p.tool("Read", {"file_path": f"/home/me/work/relay/lib/w{i}.py"}, f"def worker_{i}():\n    return {i}\n")
    p.assistant("Ok.")
    p.assistant(f"{PASSAGE}, so each hook run becomes a span of its own with its parent.")
    p.write_under(root)

    for n in range(6):  # other sessions, so the query's rare words are rare in the archive
        o = ClaudeTranscript(stable_uuid("landing", f"other{n}"), cwd="/home/me/work/misc", slug=f"other-misc-{n}",
                             start=START - timedelta(days=n + 1))  # fmt: skip
        o.user(f"rename the config loader {n}")
        o.assistant(f"Renamed loader {n}; the tests pass.")
        o.write_under(root)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    write_home(tmp_path)
    return tmp_path


def current_segments(app) -> list[str]:
    """The texts painted in the current match's style (reversed and underlined) on screen."""
    return [s.text for _, strip in reader_lines(app) for s in strip if s.style and s.style.underline and s.style.reverse]


def highlighted(app) -> list[str]:
    bg = app.main.reader.highlight.bgcolor
    return [s.text for _, strip in reader_lines(app) for s in strip if s.style and s.style.bgcolor == bg and s.text.strip()]


async def test_an_identifier_lands_on_itself_and_its_parts_are_no_matches(home):
    app = make_app(home, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        reader = await search_and_open(pilot, "guard_fail")
        await wait_for(pilot, lambda: reader.matches_complete, what="the count")
        match = reader.matches[reader.match_index]
        block = reader.blocks[match.block]
        assert match.item != PROMPT and "guard_fail comes" in (block.items[match.item].text or "")
        assert len(reader.matches) == 2 and "1/2" in status(app)  # the twelve lone "guard"s are not matches
        assert reader.marks.spans("the guard clause holds") == []
        assert "guard_fail comes from the restart loop" in flat_visible(app)
        assert current_segments(app) == ["guard_fail"]


async def test_the_current_match_stands_out_from_the_other_highlighted_ones(home):
    app = make_app(home, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        reader = await search_and_open(pilot, "guard_fail")
        await wait_for(pilot, lambda: reader.matches_complete, what="the count")
        row = next(strip for _, strip in reader_lines(app) if "guard_fail again" in strip.text)
        marked = [s for s in row if s.text == "guard_fail"]
        assert len(marked) == 2 and marked[0].style != marked[1].style  # one current, one not
        assert highlighted(app).count("guard_fail") == 2
        first = [bool(s.style.underline) for s in marked]
        await pilot.press("n")
        await wait_for(pilot, lambda: reader.match_index == 1, what="the next match")
        await settle(pilot)
        row = next(strip for _, strip in reader_lines(app) if "guard_fail again" in strip.text)
        after = [bool(s.style.underline) for s in row if s.text == "guard_fail"]
        assert first == [True, False] and after == [False, True] and len(current_segments(app)) == 1


async def test_a_prose_query_lands_on_its_passage_and_marks_its_weighty_words(home):
    app = make_app(home, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        reader = await search_and_open(pilot, PROSE)
        await wait_for(pilot, lambda: reader.matches_complete, what="the count")
        match = reader.matches[reader.match_index]
        assert PASSAGE in (reader.blocks[match.block].items[match.item].text or "")
        assert PASSAGE in flat_visible(app)
        # the common words are plain and uncounted; the passage's rare ones are the matches
        assert reader.marks.spans("I will show the calls up front") == []
        assert reader.marks.spans("distributed tracing") and reader.marks.spans("each hook run")
        assert len(reader.matches) <= 6, len(reader.matches)
        assert not {"show", "calls", "up"} & {t.strip().lower() for t in highlighted(app)}


async def test_a_turn_holding_only_the_parts_highlights_them(tmp_path: Path):
    t = ClaudeTranscript(stable_uuid("landing", "parts"), cwd="/home/me/work/harbor", slug="parts-only-harbor", start=START)
    t.user("the guard clause keeps failing")
    t.assistant("The guard is fine; the fail comes from the retry.")
    t.write_under(tmp_path / ".claude" / "projects")
    app = make_app(tmp_path, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        reader = await search_and_open(pilot, "guard_fail")
        assert reader.marks.spans("the guard is fine") == [(4, 9)]
        assert "guard" in highlighted(app)


def test_a_typed_path_matches_whole() -> None:
    from tui.marks import query_marks

    marks = query_marks("core/index/bm25.py")
    text = "see core/index/bm25.py, then the index and bm25"
    assert [text[a:b] for a, b in marks.spans(text)] == ["core/index/bm25.py"]
