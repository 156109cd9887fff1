"""Query syntax that survives pasting, phrases, and the ranking rules behind them (issues 21 and 26).

Each rule on a small corpus, through the CLI (a subprocess) where a user sees it, and
the phrase note through MCP and HTTP too:

* a pasted command line (``--long-flag``, ``-x``) finds the turn that ran it; ``-word``
  among plain words still excludes (and no identifier query of the dev set excludes);
* a quoted phrase lists only the turns where its words stand together, in order,
  digits included; when none does, a note says so above the all-words matches;
* the snippet shows the window with the most (rarest) query words;
* the all-words tier, not BM25, puts the full match first; equal scores break by time;
* a long description prefers the turn holding its rarer words over one holding more common ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from core.query.syntax import parse
from tests.support import open_archive, project_dir, transcript

DEV_SET = Path(__file__).resolve().parents[1] / ".." / "shared" / "eval" / "dev-queries.json"
PROSE = " ".join(f"paragraph {i} of the design notes talks about layout and colour choices." for i in range(120))
COMMON = "project update change work"


def _corpus(home: Path) -> dict[str, str]:
    root = project_dir(home)
    ids: dict[str, str] = {}

    def new(key: str, n: int, when: datetime | None = None) -> object:
        sid = f"00000000-0000-4000-8000-{n:012d}"
        ids[key] = sid
        return transcript(sid, start=when or datetime(2026, 10, n, 9, 0, tzinfo=timezone.utc))

    t = new("command", 1)
    t.user("run the workflow locally before I push")
    t.tool("Bash", {"command": "act --container-architecture linux/amd64 -j test"}, "[CI/test] Job succeeded")
    t.assistant("The test job passed locally.")
    t.write(root)
    t = new("unit", 2)
    t.user("write a unit test for the parser container")
    t.assistant("Added a test.")
    t.write(root)
    t = new("together", 3)
    t.user("send the reply second, after the summary")
    t.assistant("Will do.")
    t.write(root)
    t = new("apart", 4)
    t.user("the second draft of the reply was shorter")
    t.assistant("Noted.")
    t.write(root)
    for n in range(1, 7):  # a chain of six sessions, each naming its number
        t = new(f"harbor{n}", 10 + n)
        t.user(f"notes for harbor session {n}: the {COMMON} on the dock schedule")
        t.assistant(f"Saved the notes of session {n}.")
        t.write(root)
    # A phrase in prose, the same phrase only in a tool output, and its words apart in prose.
    t = new("prose_phrase", 22)
    t.user("it said kestrel uplink refused again")
    t.write(root)
    t = new("tool_phrase", 23)
    t.user("check the log")
    t.tool("Bash", {"command": "tail log"}, "ERROR kestrel uplink refused")
    t.write(root)
    t = new("words_apart", 24)
    t.user("the uplink for kestrel was refused")
    t.write(root)
    # The rarest word alone early, all three words together later.
    t = new("snippet", 5)
    t.user("the migration questions")
    end = " In the end the sqlite migration failed on a nullability change."
    t.assistant("Nullability was mentioned once. " + PROSE[:3000] + end)
    t.write(root)
    t = new("migration", 6)
    t.user("another sqlite migration ran fine")
    t.write(root)
    # The tier: the full match is long, the partial one short and dense with the rare word.
    t = new("full", 7)
    t.user("quetzal and zebu. " + PROSE)
    t.write(root)
    t = new("partial", 8)
    t.user("quetzal quetzal quetzal quetzal")
    t.write(root)
    for n in (9, 10):
        t = new(f"zebu{n}", n)
        t.user("a zebu in the field")
        t.write(root)
    # A real tie: the same turn years before the rest, one day apart (the recency prior
    # is nil there). The newer one has the larger id, so only time puts it first.
    for key, n, day in (("tie_old", 30, 1), ("tie_new", 31, 2)):
        t = new(key, n, datetime(2019, 1, day, 9, 0, tzinfo=timezone.utc))
        t.user("ocelot ledger reconciliation")
        t.write(root)
    # A long description: one turn holds its four common words, one its two rare ones.
    t = new("common", 20)
    t.user(f"{COMMON} for the gateway")
    t.write(root)
    t = new("rare", 21)
    t.user("websocket handshake again")
    t.write(root)
    return ids


class Home:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.ids = _corpus(path)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Home:
    home = Home(tmp_path_factory.mktemp("syntax-home"))
    archive = open_archive(home.path)
    archive.sync()
    archive.close()
    return home


@pytest.fixture(scope="module")
def archive(home):
    archive = open_archive(home.path)
    yield archive
    archive.close()


def _run(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home.path), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": os.getcwd()}
    proc = subprocess.run([sys.executable, "-m", "core", "search", *args], env=env, capture_output=True, text=True)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc


def _json(home: Home, *args: str) -> dict:
    return json.loads(_run(home, *args, "--json").stdout)


def _sessions(rows: list[dict]) -> list[str]:
    return [r["session_id"] for r in rows]


# --- flags and exclusions -------------------------------------------------------------------


def test_a_pasted_command_line_finds_the_turn_that_ran_it(home):
    got = _json(home, "act --container-architecture linux/amd64 -j test")
    assert _sessions(got["results"])[0] == home.ids["command"]
    assert "note" not in got


def test_flags_are_never_exclusions_but_a_plain_dash_word_is():
    assert parse("act --container-architecture linux/amd64 -j test").excluded == ()
    assert parse("rm -rf build -verbose").excluded == ()  # a flag marks a command line: -verbose is searched
    assert parse("claude -p web search").excluded == ()
    assert parse("flaky test -staging").excluded == ("stage",)
    assert parse("deploy -foo_bar").excluded == ("foo_bar",)
    assert parse("retry -v2 now").excluded == ()  # digits: not a plain word
    assert parse("-staging").excluded == ()  # alone it is what is searched for
    assert parse('deploy -"old stuff"').excluded == ("old", "stuff")  # a quoted exclusion always excludes


def test_a_dash_word_among_words_excludes_through_the_cli(home):
    assert home.ids["unit"] in _sessions(_json(home, "test")["results"])
    got = _sessions(_json(home, "test -parser")["results"])
    assert home.ids["unit"] not in got and home.ids["command"] in got


@pytest.mark.skipif(not DEV_SET.exists(), reason="needs ../shared/eval/dev-queries.json")
def test_no_identifier_or_tool_output_query_of_the_dev_set_excludes_anything():
    queries = json.loads(DEV_SET.read_text())["queries"]
    pasted = [q["q"] for q in queries if q.get("kind") in ("identifier", "tool-output")]
    assert len(pasted) > 30
    assert [q for q in pasted if parse(q).excluded] == []


# --- phrases ------------------------------------------------------------------------------------


def test_a_phrase_lists_only_the_turns_where_its_words_stand_together(home):
    got = _json(home, '"reply second"')
    assert _sessions(got["results"]) == [home.ids["together"]]
    assert got["results"][0]["exact_phrase"] is True and "note" not in got


def test_a_digit_inside_a_phrase_counts(home):
    got = _json(home, '"harbor session 4"')
    assert _sessions(got["results"]) == [home.ids["harbor4"]]


def test_no_turn_with_the_phrase_says_so_and_lists_the_all_words_matches(home):
    got = _json(home, '"second reply"')
    assert set(_sessions(got["results"])) == {home.ids["together"], home.ids["apart"]}
    assert got["note"].startswith('No turn holds the exact phrase "second reply"')
    assert all(r["exact_phrase"] is False for r in got["results"])
    text = _run(home, '"second reply"').stdout
    assert text.splitlines()[0] == got["note"]


def test_a_phrase_seen_only_in_tool_output_is_listed_after_the_prose_matches(home):
    # tool output is indexed by words: its adjacency cannot be checked, so it is not dropped
    got = _json(home, '"kestrel uplink refused"')["results"]
    assert [(r["session_id"], r["exact_phrase"]) for r in got] == [
        (home.ids["prose_phrase"], True), (home.ids["tool_phrase"], False)
    ]


def test_the_phrase_note_reaches_mcp_and_http(archive, home):
    import anyio
    import httpx
    from mcp import Client

    from core.front.http_api import build_http_app
    from core.front.mcp import build_server

    async def go():
        async with Client(build_server(archive)) as client:
            got = await client.call_tool("search_history", {"query": '"second reply"'})
            assert got.structured_content["note"].startswith("No turn holds the exact phrase")
            got = await client.call_tool("search_history", {"query": '"reply second"'})
            assert got.structured_content.get("note") is None
        transport = httpx.ASGITransport(app=build_http_app(archive))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
            r = await client.get("/search", params={"q": '"second reply"'})
            assert r.status_code == 200 and r.json()["note"].startswith("No turn holds the exact phrase")
            r = await client.get("/search", params={"q": '"reply second"'})
            assert "note" not in r.json()

    anyio.run(go)


# --- snippets and ranking -------------------------------------------------------------------


def test_the_snippet_shows_the_window_with_the_most_query_words(home):
    got = _json(home, "sqlite migration nullability")["results"]
    assert got[0]["session_id"] == home.ids["snippet"]
    snippet = got[0]["snippet"].lower()
    assert "sqlite" in snippet and "migration" in snippet and "nullability" in snippet


def test_only_the_all_words_tier_puts_the_full_match_first(archive, home):
    hits = archive.search("zebu quetzal", limit=5)
    assert [h.session_id for h in hits[:2]] == [home.ids["full"], home.ids["partial"]]
    assert hits[0].score < hits[1].score  # BM25 alone would list the partial match first


def test_equal_scores_break_ties_by_time_newest_first(archive, home):
    hits = archive.search("ocelot ledger reconciliation", limit=5)
    assert [h.session_id for h in hits] == [home.ids["tie_new"], home.ids["tie_old"]]
    assert round(hits[0].score, 5) == round(hits[1].score, 5)  # a real tie


def test_a_long_description_prefers_rarer_words_over_more_common_ones(home):
    got = _json(home, f"{COMMON} websocket handshake")["results"]
    order = _sessions(got)
    assert order.index(home.ids["rare"]) < order.index(home.ids["common"])


async def test_the_app_says_when_no_turn_holds_the_phrase(home):
    from core.fixtures.demo import DEFAULT_NOW
    from tui.app import make_app
    from tui.testing import settle, wait_for

    app = make_app(home.path, now=DEFAULT_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, timeout=60)
        pane = app.main.search_pane

        async def search(text: str) -> str:
            await pilot.press("slash")
            app.main.query_one("#query").value = text  # as pasted
            await wait_for(pilot, lambda: pane.shown_query == text, what=f"hits for {text!r}")
            return str(app.main.query_one("#search-status").render())

        status = await search('"second reply"')
        assert status.startswith('no exact "second reply": all-words matches · 2 sessions'), status
        status = await search('"reply second"')
        assert "no exact" not in status and status.startswith("1 session"), status
