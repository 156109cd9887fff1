"""Ranking v2 (issue 14): each rule pinned on a small corpus, through the core and the front ends.

Opening turns, tool output deep inside a long result, all-terms over some-terms,
phrases / exclusions / prefixes, recency, snippets that show the identifier, and
grouping and paging, through ``Archive.search`` and then the CLI (a subprocess),
the MCP client and HTTP (ASGI) with their ``sort``/``offset``/``group`` params.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.support import open_archive, project_dir, transcript

SCRIPT = Path(sys.executable).with_name("relay-search")
FILLER = "\n".join(f"collected item {i:05d} passed in 0.01s ok" for i in range(700))  # ~24 KB of noise


def _corpus(home: Path) -> dict[str, str]:
    root = project_dir(home)
    ids: dict[str, str] = {}

    def new(key: str, day: int) -> object:
        sid = f"00000000-0000-4000-8000-{day:012d}"
        ids[key] = sid
        return transcript(sid, start=datetime(2026, 10, day, 9, 0, tzinfo=timezone.utc))

    # A session opened by a slash command with arguments, and one whose first words
    # are the answer to a bare command.
    t = new("command", 1)
    t.command("init", args="focus on the pangolin importer")
    t.assistant("I looked at the pangolin importer and wrote CLAUDE.md.")
    t.user("thanks, now the narwhal exporter")
    t.assistant("Done with the narwhal exporter.")
    t.write(root)
    t = new("bare", 2)
    t.command("init")
    t.assistant("Analysed the okapi codebase and created the guide.")
    t.user("now rename the okapi module")
    t.assistant("Renamed.")
    t.write(root)
    # An error line in the middle of a 24 KB test run.
    t = new("tool", 3)
    t.user("run the whole suite please")
    middle = len(FILLER) // 2
    log = FILLER[:middle] + "\nQuokkaOverflowError: marsupial buffer exhausted\n" + FILLER[middle:]
    t.tool("Bash", {"command": "pytest -q"}, log)
    t.assistant("The suite ran; one failure.")
    t.write(root)
    # All terms vs some terms: "flaky" many times in one turn, all three words once in another.
    t = new("some", 4)
    t.user("the flaky one again, flaky flaky flaky")
    t.assistant("Flaky indeed: it is flaky on every run, flaky at night, flaky by day.")
    t.write(root)
    t = new("all", 5)
    t.user("the invoice rollover test is flaky")
    t.assistant("I made the invoice test deterministic.")
    t.write(root)
    t = new("words", 6)
    t.user("a rollover of the test invoice, flaky or not")  # all words, not as the phrase
    t.assistant("Looked at it.")
    t.write(root)
    # An identifier the snippet must show, far from the first loose match.
    t = new("mocking", 15)
    t.user("mocking the clock in tests: is mocking fine here?")
    t.assistant("Mocking is fine.")
    t.write(root)
    t = new("ident", 7)
    t.user("fix the styles")
    t.assistant("Mocking first. " + "Some unrelated explanation of the renderer. " * 20
                + "Then I replaced MockStyles with a spec'd RenderStyles mock.")
    t.write(root)
    # One long session that matches in many turns, and two others.
    t = new("long", 8)
    for i in range(12):
        t.user(f"step {i}: the wombat queue retries")
        t.assistant(f"wombat queue step {i} done")
    t.write(root)
    for key, day in (("other1", 9), ("other2", 10)):
        t = new(key, day)
        t.user("a quick question about the wombat queue")
        t.assistant("Answered.")
        t.write(root)
    # Recency words: the older session matches better, the newer one was asked for.
    t = new("older", 11)
    t.user("the capybara deploy script failed; capybara deploy again")
    t.assistant("Fixed the capybara deploy.")
    t.write(root)
    t = new("newer", 12)
    t.user("the capybara deploy script failed")
    t.assistant("Fixed it.")
    t.write(root)
    t = new("compound", 13)
    t.user("rename hyrax_cache to hyrax_store and keep the hyrax docs")
    t.write(root)
    t = new("plain", 14)
    t.user("the hyrax docs mention a cache")
    t.write(root)
    return ids


class Home:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.ids = _corpus(path)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Home:
    return Home(tmp_path_factory.mktemp("ranking-home"))


@pytest.fixture(scope="module")
def archive(home):
    archive = open_archive(home.path)
    archive.sync()
    yield archive
    archive.close()


def _sessions(hits) -> list[str]:
    return [h.session_id for h in hits]


def test_a_slash_command_with_arguments_is_a_searchable_prompt(archive, home):
    sid = home.ids["command"]
    hits = archive.search("pangolin importer")
    assert hits and hits[0].session_id == sid and hits[0].turn_number == 0
    assert archive.read_turn(sid, 0).user_text == "/init focus on the pangolin importer"
    assert archive.read_turn(sid, 1).user_text == "thanks, now the narwhal exporter"


def test_what_comes_before_the_first_prompt_is_turn_zero(archive, home):
    sid = home.ids["bare"]
    hits = archive.search("okapi codebase guide")
    assert hits and (hits[0].session_id, hits[0].turn_number) == (sid, 0)
    opening = archive.read_turn(sid, 0)
    assert opening.user_text == "" and "okapi codebase" in opening.assistant_text
    assert archive.read_turn(sid, 1).user_text == "now rename the okapi module"
    assert archive.resolve(sid).sessions[0].turn_count == 2
    assert all("<command-name>" not in m.text for m in archive.session_messages(sid))  # bare machinery stays out


def test_an_error_line_in_the_middle_of_a_long_output_is_found(archive, home):
    hits = archive.search("QuokkaOverflowError marsupial")
    assert hits and hits[0].session_id == home.ids["tool"]


def test_turns_with_all_terms_outrank_turns_with_some(archive, home):
    hits = archive.search("flaky invoice test", limit=10)
    sessions = _sessions(hits)
    assert set(sessions[:2]) == {home.ids["all"], home.ids["words"]}
    assert home.ids["some"] in sessions  # partial matches stay, below


def test_a_quoted_phrase_lists_only_the_turns_where_its_words_stand_together(archive, home):
    hits = archive.search('"invoice rollover"')
    assert _sessions(hits) == [home.ids["all"]]  # "words" holds both, apart; "some" neither
    assert hits[0].exact_phrase is True


def test_an_excluded_word_removes_its_turns(archive, home):
    assert home.ids["all"] in _sessions(archive.search("flaky"))
    hits = archive.search("flaky -invoice")
    assert hits and home.ids["all"] not in _sessions(hits) and home.ids["words"] not in _sessions(hits)
    assert home.ids["some"] in _sessions(hits)


def test_a_prefix_matches_the_words_it_starts(archive, home):
    assert archive.search("flak") == []
    assert home.ids["some"] in _sessions(archive.search("flak*"))
    assert home.ids["some"] in _sessions(archive.search("flak", typing=True))  # the word being typed
    assert archive.search("flak ", typing=True) == []  # a finished word is a word
    assert _sessions(archive.search("narwh*")) == [home.ids["command"]]
    assert archive.search("narwhal exp*")[0].turn_number == 1


def test_sort_recent_lists_newest_first(archive, home):
    hits = archive.search("wombat queue", sort="recent", limit=3)
    assert _sessions(hits)[:2] == [home.ids["other2"], home.ids["other1"]]
    stamps = [h.timestamp for h in archive.search("wombat queue", sort="recent", limit=20)]
    assert stamps == sorted(stamps, reverse=True)
    # every word first (newest first), then some words (newest first), whatever the query's length
    got = archive.search("step wombat queue retries done", sort="recent", limit=20)
    assert _sessions(got)[:12] == [home.ids["long"]] * 12 and _sessions(got)[12:14] == [home.ids["other2"], home.ids["other1"]]
    assert [h.turn_number for h in got[:12]] == list(range(11, -1, -1))


def test_recency_words_lift_the_newer_match(archive, home):
    assert _sessions(archive.search("capybara deploy"))[:2] == [home.ids["older"], home.ids["newer"]]
    assert _sessions(archive.search("most recent capybara deploy"))[:2] == [home.ids["newer"], home.ids["older"]]
    assert _sessions(archive.search("the last time I fixed the capybara deploy"))[0] == home.ids["newer"]
    assert _sessions(archive.search("latest capybara deploy"))[0] == home.ids["newer"]


def test_excluding_a_compound_excludes_the_identifier_not_its_parts(archive, home):
    got = _sessions(archive.search("hyrax docs -hyrax_cache"))
    assert home.ids["compound"] not in got and home.ids["plain"] in got


def test_equal_scores_break_ties_by_time(archive, home):
    hits = [h for h in archive.search("quick question wombat", limit=5) if h.session_id in (home.ids["other1"], home.ids["other2"])]
    assert _sessions(hits) == [home.ids["other2"], home.ids["other1"]]


def test_the_snippet_shows_the_rarest_exact_match(archive, home):
    hits = archive.search("MockStyles RenderStyles")
    assert hits[0].session_id == home.ids["ident"]
    assert "MockStyles" in hits[0].snippet


def test_group_by_session_and_offset_paging(archive, home):
    flat = archive.search("wombat queue", limit=20)
    assert sum(1 for h in flat if h.session_id == home.ids["long"]) == 12
    grouped = archive.search("wombat queue", group="session", limit=10)
    assert len({h.session_id for h in grouped}) == len(grouped) == 3
    long = next(h for h in grouped if h.session_id == home.ids["long"])
    assert long.more_in_session == 11 and long.to_dict()["more_in_session"] == 11
    first, second = archive.search("wombat queue", limit=5), archive.search("wombat queue", limit=5, offset=5)
    assert [h.ref for h in first + second] == [h.ref for h in flat[:10]]
    assert archive.search("wombat queue", group="session", limit=1, offset=1)[0].ref == grouped[1].ref


def test_bad_paging_arguments_are_errors(archive):
    from core.errors import BadInput

    for kw in ({"offset": -1}, {"sort": "oldest"}, {"group": "project"}):
        with pytest.raises(BadInput):
            archive.search("wombat", **kw)


def test_hostile_queries_never_fail(archive):
    pasted = " ".join(f"word{i} -not{i} pre{i}*" for i in range(3000))  # a pasted log
    for q in ('"', '-', '*', '"unclosed phrase', '--', '-"x y"', 'a* b* c*', '"" -"" **', "-wombat", pasted):
        archive.search(q)
        archive.search(q, typing=True)


# --- front ends ------------------------------------------------------------------------


def _cli(home: Home, *args: str) -> dict:
    env = {"HOME": str(home.path), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.run([str(SCRIPT), "search", *args, "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_cli_operators_sort_group_and_offset(home):
    ids = home.ids
    got = _cli(home, "flaky -invoice")["results"]
    assert ids["all"] not in [r["session_id"] for r in got]
    got = _cli(home, "wombat queue", "--sort", "recent", "--limit", "1")["results"]
    assert got[0]["session_id"] == ids["other2"]
    got = _cli(home, "wombat queue", "--group", "session")["results"]
    assert {r["session_id"]: r["more_in_session"] for r in got}[ids["long"]] == 11
    page1 = _cli(home, "wombat queue", "--limit", "3")["results"]
    page2 = _cli(home, "wombat queue", "--limit", "3", "--offset", "3")["results"]
    assert not {r["ref"] for r in page1} & {r["ref"] for r in page2}
    assert _cli(home, '"invoice rollover"')["results"][0]["session_id"] == ids["all"]
    env = {"HOME": str(home.path), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    text = subprocess.run([str(SCRIPT), "search", "wombat queue", "--group", "session"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert text.returncode == 0 and "(+11 more in this session)" in text.stdout, text.stderr


def test_mcp_search_params(archive, home):
    import anyio
    from mcp import Client

    from core.front.mcp import build_server

    async def go():
        async with Client(build_server(archive)) as client:
            got = await client.call_tool("search_history", {"query": "wombat queue", "group": "session"})
            rows = got.structured_content["results"]
            assert {r["session_id"]: r.get("more_in_session") for r in rows}[home.ids["long"]] == 11
            got = await client.call_tool("search_history", {"query": "wombat queue", "sort": "recent", "limit": 1})
            assert got.structured_content["results"][0]["session_id"] == home.ids["other2"]
            got = await client.call_tool("search_history", {"query": "wombat queue", "limit": 2, "offset": 2})
            flat = archive.search("wombat queue", limit=4)
            assert [r["ref"] for r in got.structured_content["results"]] == [h.ref for h in flat[2:4]]
            got = await client.call_tool("search_history", {"query": "wombat", "sort": "oldest"})
            assert got.is_error

    anyio.run(go)


def test_http_search_params(archive, home):
    import anyio
    import httpx

    from core.front.http_api import build_http_app

    async def go():
        transport = httpx.ASGITransport(app=build_http_app(archive))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
            r = await client.get("/search", params={"q": "wombat queue", "group": "session"})
            assert r.status_code == 200, r.text
            rows = r.json()["results"]
            assert {x["session_id"]: x["more_in_session"] for x in rows}[home.ids["long"]] == 11
            r = await client.get("/search", params={"q": "wombat queue", "sort": "recent", "limit": 1})
            assert r.json()["results"][0]["session_id"] == home.ids["other2"]
            r = await client.get("/search", params={"q": "wombat queue", "limit": 2, "offset": 2})
            assert [x["ref"] for x in r.json()["results"]] == [h.ref for h in archive.search("wombat queue", limit=4)[2:4]]
            r = await client.get("/search", params={"q": "wombat", "sort": "oldest"})
            assert r.status_code == 400

    anyio.run(go)
