"""Answers that never silently lie (issue 13), through the real front ends.

The MCP server in memory (the SDK's Client), HTTP through the ASGI app (httpx), and
the CLI as a subprocess; one test drives a stdio subprocess. The corpus is the MCP
tests' (a three-session slug chain, a session with a subagent) plus a slug-less
continuation chain in a third project and a session with a few enormous turns.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from core.api import Archive
from core.budget import DEFAULT_TURNS, RESULT_BUDGET
from core.config import Config
from core.fixtures.claude import ClaudeTranscript, stable_uuid
from core.front.http_api import build_http_app
from core.front.mcp import build_server

from .test_mcp import S1, S2, S3, SLUG, SOLO, T0, relay_search_mcp, write_corpus

LEGACY = "/home/gbr/work/legacy-Billing"
FIRST, LATER = "1a1a1a1a-0000-4000-8000-000000000001", "0b0b0b0b-0000-4000-8000-000000000002"
HUGE = stable_uuid("test-answers", "huge")
HUGE_TURNS = 14
BIG_TEXT = 30_000  # characters per answer of the huge session: ~3 turns fill a result


def write_more(home: Path) -> None:
    root = home / ".claude" / "projects"
    first = ClaudeTranscript(FIRST, cwd=LEGACY, version="1.0.51", git_branch=None, start=T0 + timedelta(days=4))
    first.user("add the heron exporter")
    leaf = first.assistant("Heron exporter added.")
    later = ClaudeTranscript(LATER, cwd=LEGACY, version="1.0.51", git_branch=None, start=T0 + timedelta(days=5))
    later.summary("Heron exporter", leaf)
    later.user("now test the heron exporter")
    later.assistant("Tested the heron exporter.")
    huge = ClaudeTranscript(HUGE, cwd=LEGACY, slug="vast-echo-canyon", start=T0 + timedelta(days=6))
    for n in range(HUGE_TURNS):
        huge.user(f"Write report {n}")
        huge.assistant(f"Report {n}: " + "lorem ipsum dolor sit amet " * (BIG_TEXT // 27))
    huge.user("Paste the whole log")
    huge.assistant("LOG " + "x" * 200_000)  # one turn larger than a whole result
    for t in (first, later, huge):
        t.write_under(root)


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    write_corpus(tmp_path)
    write_more(tmp_path)
    with Archive.open(Config.from_env({"HOME": str(tmp_path)})) as arch:
        yield arch


async def call(c: Client, tool: str, **args: Any) -> tuple[dict[str, Any], int]:
    """(structured content, characters sent: text plus structured JSON)."""
    result = await c.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    text = result.content[0].text  # type: ignore[union-attr]
    sent = len(text) + len(json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")))
    return result.structured_content, sent


async def ok(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    return (await call(c, tool, **args))[0]


async def fails(c: Client, tool: str, **args: Any) -> str:
    result = await c.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return result.content[0].text  # type: ignore[union-attr]


def http(archive: Archive, **kw: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=build_http_app(archive, **kw))
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765")


# --- 1. one chronological stream ---------------------------------------------------------


def _in_time_order(messages: list[dict[str, Any]]) -> bool:
    stamps = [m["timestamp"] for m in messages]
    return stamps == sorted(stamps)


async def test_session_messages_interleave_subagent_work_in_time_order(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        msgs = (await ok(c, "get_session_messages", session_id=SOLO, include_tools=True))["messages"]
    async with http(archive) as h:
        over_http = (await h.get(f"/sessions/{SOLO}/messages", params={"include_tools": "true"})).json()["messages"]
    for stream in (msgs, over_http):
        assert _in_time_order(stream)
        task = next(i for i, m in enumerate(stream) if m["type"] == "tool_use" and m.get("tool_name") == "Task")
        side = [i for i, m in enumerate(stream) if m["is_sidechain"]]
        result = next(i for i, m in enumerate(stream) if i > task and m["type"] == "tool_result")
        assert side and task < min(side) and max(side) < result  # where it happened, marked
        assert stream[-1]["text"] == "The zeppelin endpoint is designed."
        assert {m["role"] for m in stream} <= {"user", "assistant", "system"}
    assert over_http == msgs


async def test_following_a_growing_session_by_since_returns_each_message_once(tmp_path: Path) -> None:
    root = tmp_path / ".claude" / "projects"
    start = datetime.now(timezone.utc) - timedelta(hours=1)
    live = ClaudeTranscript(stable_uuid("test-answers", "live"), cwd=LEGACY, slug="busy-live-wren", start=start)
    live.user("Start")
    live.assistant("Started.")
    live.write_under(root)
    seen: list[dict[str, Any]] = []
    with Archive.open(Config.from_env({"HOME": str(tmp_path)})) as archive:
        async with Client(build_server(archive), raise_exceptions=True) as c:
            for round_ in range(4):
                since = seen[-1]["timestamp"] if seen else None
                page = await ok(c, "get_session_messages", session_id=live.session_id, since=since)
                assert page["next_offset"] is None
                seen.extend(page["messages"])
                live.user(f"Step {round_}: survey the callers")
                child = live.subagent(f"abc{round_:013d}", f"Survey round {round_}")
                child.assistant(f"Surveyed round {round_}.")
                live.assistant(f"Step {round_} done.")
                live.write_under(root)
                archive.sync()
            seen.extend((await ok(c, "get_session_messages", session_id=live.session_id, since=seen[-1]["timestamp"]))["messages"])
            whole = (await ok(c, "get_session_messages", session_id=live.session_id))["messages"]
    # every appended message exactly once, in the stream's order (a subagent message's
    # `sequence` follows the main file's length, so it is left out of the comparison)
    def same(m: dict[str, Any]) -> tuple:
        return (m["timestamp"], m["type"], m["text"], m["is_sidechain"])

    assert [same(m) for m in seen] == [same(m) for m in whole]
    assert len(whole) == 2 + 4 * 4 and _in_time_order(whole)
    texts = [m["text"] for m in whole]
    assert texts.index("Survey round 2") < texts.index("Surveyed round 2.") < texts.index("Step 2 done.")
    assert [m["is_sidechain"] for m in whole].count(True) == 8


async def test_a_record_written_after_a_later_one_is_streamed_in_time_order(tmp_path: Path) -> None:
    """Claude Code writes a compaction's summary before the ``/compact`` command that
    caused it: the stream is still in time order, so a client paging by ``since`` with
    the last time it saw cannot skip the earlier record (issue 24)."""
    root = tmp_path / ".claude" / "projects"
    start = datetime.now(timezone.utc) - timedelta(hours=1)
    t = ClaudeTranscript(stable_uuid("test-answers", "late-record"), cwd=LEGACY, slug="late-quiet-heron", start=start)
    t.user("Plan the heron migration")
    t.assistant("Planned.")
    t.user("Compact the heron notes")
    t.assistant("Heron summary written.")
    path = t.write_under(root)
    lines = path.read_text().splitlines()
    lines[-2], lines[-1] = lines[-1], lines[-2]  # the later answer written before its prompt
    path.write_text("\n".join(lines) + "\n")
    with Archive.open(Config.from_env({"HOME": str(tmp_path)})) as archive:
        async with Client(build_server(archive), raise_exceptions=True) as c:
            whole = (await ok(c, "get_session_messages", session_id=t.session_id))["messages"]
            first_two = whole[:2]
            rest = (await ok(c, "get_session_messages", session_id=t.session_id, since=first_two[-1]["timestamp"]))
    assert [m["text"] for m in whole] == ["Plan the heron migration", "Planned.", "Compact the heron notes", "Heron summary written."]
    assert _in_time_order(whole)
    assert [m["text"] for m in rest["messages"]] == ["Compact the heron notes", "Heron summary written."]


async def test_an_ash_branch_streams_as_one_block_after_the_default_view(tmp_path: Path) -> None:
    """Ash: the default view, then each other branch together, each in time order (the
    branch's note first) — never the two lines interleaved."""
    from core.fixtures.ash import AshSession

    config = Config.from_env({"HOME": str(tmp_path)})
    s = AshSession(config.ash_home)
    s.user("plan a trip")
    where = s.assistant("Where to?")
    s.user("Paris")
    s.assistant("Paris it is.")
    s.fork(where, "b-rome")
    s.user("Rome instead")
    s.assistant("Rome it is.")
    s.switch("main")
    s.user("Book the Paris hotel")
    s.assistant("Booked.")
    with Archive.open(config) as archive:
        [info] = archive.list_sessions()
        async with Client(build_server(archive), raise_exceptions=True) as c:
            stream = (await ok(c, "get_session_messages", session_id=info.session_id))["messages"]
    texts = [m["text"] for m in stream]
    assert texts == [
        "plan a trip", "Where to?", "Paris", "Paris it is.", "Book the Paris hotel", "Booked.",
        f"Branch b-rome forks from message {where}", "Rome instead", "Rome it is.",
    ]  # fmt: skip
    assert _in_time_order(stream[:6]) and _in_time_order(stream[6:])


# --- 2. ranges are served or refused ------------------------------------------------------


async def test_chain_and_range_stream_session_after_session(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        whole = await ok(c, "get_session_messages", session_id=SLUG)
        span = await ok(c, "get_session_messages", session_id=f"{SLUG}#2-3")
    async with http(archive) as h:
        over_http = (await h.get(f"/sessions/{SLUG}%232-3/messages")).json()
    assert whole["ref"] == SLUG and whole["session_ids"] == [S1, S2, S3]
    assert [m["session_id"] for m in whole["messages"] if m["type"] == "session_boundary"] == [S1, S2, S3]
    assert span["ref"] == f"{SLUG}#2-3" and span["session_ids"] == [S2, S3]
    markers = [i for i, m in enumerate(span["messages"]) if m["type"] == "session_boundary"]
    assert markers[0] == 0 and span["messages"][0]["role"] == "system"
    texts = [m["text"] for m in span["messages"]]
    assert texts[1] == "Fix the failing test in test_viewer" and texts[-1] == "Only the marmalade docs remain."
    assert texts.index("Committed.") < markers[1] < texts.index("Continue with the marmalade refactor")
    assert over_http["ref"] == span["ref"] and over_http["messages"] == span["messages"]


async def test_statistics_cover_what_the_reference_names(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        one = await ok(c, "get_session_statistics", session_id=f"{SLUG}#2")
        two = await ok(c, "get_session_statistics", session_id=f"{SLUG}#3")
        span = await ok(c, "get_session_statistics", session_id=f"{SLUG}#2-3")
        tools = (await c.list_tools()).tools
    assert span["ref"] == f"{SLUG}#2-3" and span["session_ids"] == [S2, S3]
    assert span["turns"] == one["turns"] + two["turns"] and span["messages"] == one["messages"] + two["messages"]
    assert span["first_activity"] == one["first_activity"] and span["last_activity"] == two["last_activity"]
    schema = next(t for t in tools if t.name == "get_session_statistics").output_schema
    assert schema and {"ref", "turns", "messages", "tool_calls", "tool_calls_by_name"} <= set(schema["properties"])


async def test_one_session_calls_refuse_ranges_and_conflicts(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        for ref in (SLUG, f"{SLUG}#2-3", f"{SLUG}#1,3"):
            text = await fails(c, "read_turn", session_id=ref, turn_number=0)
            assert text.startswith("read_turn reads one session") and "\n" not in text and f"{SLUG}#" in text
            text = await fails(c, "get_message_context", session_id=ref, sequence=0)
            assert text.startswith("get_message_context reads one session"), text
        assert (await fails(c, "read_turn", session_id=f"{SLUG}#2:1", turn_number=0)).startswith("Conflicting turns")
        assert (await ok(c, "read_turn", session_id=f"{SLUG}#2:1", turn_number=1))["ref"] == f"{SLUG}#2:1"
        clash = await fails(c, "get_conversation", session_id_or_slug=f"{SLUG}#3", session="2")
        assert clash.startswith("Conflicting sessions") and "\n" not in clash
        same = await ok(c, "get_conversation", session_id_or_slug=f"{SLUG}#2", session="2")
        assert same["ref"] == f"{SLUG}#2"
        assert (await ok(c, "get_conversation", session_id_or_slug=SLUG, session="2-3"))["ref"] == f"{SLUG}#2-3"
        assert (await ok(c, "read_turn", session_id=S2, turn_number=1))["ref"] == f"{S2}:1"
        ctx = await ok(c, "get_message_context", session_id=f"{SLUG}#2", sequence=0)
        assert ctx["ref"] == f"{SLUG}#2"
    async with http(archive) as h:
        turn = await h.get(f"/sessions/{SLUG}%232:1/messages")
        assert turn.status_code == 400 and "names a turn" in turn.json()["error"]


# --- 3. pages within a budget ---------------------------------------------------------------


async def test_get_conversation_pages_within_the_budget(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        first, sent = await call(c, "get_conversation", session_id_or_slug=HUGE)
        assert sent <= RESULT_BUDGET
        assert first["total_turns"] == HUGE_TURNS + 1 and first["offset"] == 0 and first["limit"] == DEFAULT_TURNS
        assert 0 < len(first["turns"]) < DEFAULT_TURNS and first["next_offset"] == len(first["turns"])
        assert "result budget" in first["cut"] and f"offset={first['next_offset']}" in first["cut"]
        numbers = [t["turn_number"] for t in first["turns"]]
        offset = first["next_offset"]
        while offset is not None:
            page, sent = await call(c, "get_conversation", session_id_or_slug=HUGE, offset=offset)
            assert sent <= RESULT_BUDGET and page["offset"] == offset
            numbers += [t["turn_number"] for t in page["turns"]]
            offset = page["next_offset"]
        assert numbers == list(range(HUGE_TURNS + 1))  # every turn exactly once
        last = page["turns"][-1]
        assert last["assistant_text"].startswith("LOG xxx") and "characters cut" in last["assistant_text"]
        assert "cut" in page["cut"]
        turn, sent = await call(c, "read_turn", session_id=f"{HUGE}:{HUGE_TURNS}")
        assert sent <= RESULT_BUDGET and "characters cut" in turn["assistant_text"]
        small = await ok(c, "get_conversation", session_id_or_slug=SLUG)
        assert small["next_offset"] is None and small["cut"] is None and small["total_turns"] == 6
        limited = await ok(c, "get_conversation", session_id_or_slug=SLUG, limit=4)
        assert (len(limited["turns"]), limited["next_offset"], limited["limit"]) == (4, 4, 4)


async def test_no_default_answer_on_the_demo_corpus_exceeds_the_budget(demo) -> None:
    archive, corpus = demo
    async with Client(build_server(archive), raise_exceptions=True) as c:
        sizes: dict[str, int] = {}

        async def measure(tool: str, **args: Any) -> dict[str, Any]:
            result, sent = await call(c, tool, **args)
            sizes[f"{tool}{args}"] = sent
            return result

        await measure("list_sessions")
        await measure("list_projects")
        await measure("list_users")
        for query, _ in corpus.queries:
            await measure("search_history", query=query)
        for sid in corpus.session_ids:
            conv = await measure("get_conversation", session_id_or_slug=sid)
            await measure("get_session_messages", session_id=sid)
            await measure("get_session_statistics", session_id=sid)
            for turn in conv["turns"][:3]:
                await measure("read_turn", session_id=sid, turn_number=turn["turn_number"])
            await measure("get_message_context", session_id=sid, sequence=0)
        await measure("get_conversation", session_id_or_slug=corpus.chain_slug)
        await measure("get_session_messages", session_id=corpus.chain_slug)
    worst = max(sizes, key=sizes.__getitem__)
    assert sizes[worst] <= RESULT_BUDGET, (worst, sizes[worst])


# --- 4. project filters ---------------------------------------------------------------------


async def test_project_matches_a_case_insensitive_substring_of_name_or_dir(archive: Archive, tmp_path: Path) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        async def listed(**args: Any) -> set[str]:
            return {s["session_id"] for s in (await ok(c, "list_sessions", **args))["sessions"]}

        assert await listed(project="DIFF") == {S1, S2, S3}
        assert await listed(project="api") == {SOLO}
        assert await listed(project="-home-gbr-work-001-sites-api") == {SOLO}  # the Claude dir name
        assert await listed(project="billing") == {FIRST, LATER, HUGE}
        hits = (await ok(c, "search_history", query="quokka", project="Website"))["results"]
        assert {h["session_id"] for h in hits} == {S2}
        assert (await ok(c, "list_users", project="sites"))["users"]
        projects = next(t for t in (await c.list_tools()).tools if t.name == "list_projects")
        assert "dir name" in (projects.description or "")
    async with http(archive) as h:
        body = (await h.get("/sessions", params={"project": "DIFF-web"})).json()
        assert {s["session_id"] for s in body["sessions"]} == {S1, S2, S3}
    cli = Path(sys.executable).with_name("relay-search")
    proc = subprocess.run([str(cli), "list", "--json", "--project", "LEGACY"], capture_output=True, text=True,
                          env={"HOME": str(tmp_path), "PATH": ""}, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert {s["session_id"] for s in json.loads(proc.stdout)["sessions"]} == {FIRST, LATER, HUGE}


# --- 5. slug-less chains have a name ------------------------------------------------------


async def test_a_slugless_chain_is_addressable_by_its_name(archive: Archive) -> None:
    name = FIRST[:8]
    async with Client(build_server(archive), raise_exceptions=True) as c:
        chain = (await ok(c, "list_sessions", slug=name))["sessions"]
        assert [(s["session_id"], s["session_number"], s["ref"]) for s in chain] == [
            (FIRST, 1, f"{name}#1"), (LATER, 2, f"{name}#2")]  # fmt: skip
        assert {s["chain_name"] for s in chain} == {name}
        conv = await ok(c, "get_conversation", session_id_or_slug=f"{name}#1-2")
        assert [s["session_id"] for s in conv["sessions"]] == [FIRST, LATER] and conv["ref"] == f"{name}#1-2"
        assert conv["chain_name"] == name and conv["slug"] is None
        msgs = await ok(c, "get_session_messages", session_id=f"{name}#1-2")
        assert msgs["session_ids"] == [FIRST, LATER] and msgs["ref"] == f"{name}#1-2"
        hit = (await ok(c, "search_history", query="tested heron"))["results"][0]
        assert hit["ref"] == f"{name}#2:0"
        assert (await ok(c, "read_turn", session_id=hit["ref"]))["user_text"] == "now test the heron exporter"
        alone = await ok(c, "get_conversation", session_id_or_slug=name)  # a bare id prefix: one session
        assert [s["session_id"] for s in alone["sessions"]] == [FIRST]


# --- 6. argument errors are one line, the same everywhere ---------------------------------


async def test_argument_errors_are_the_one_line_http_gives(archive: Archive, tmp_path: Path) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        mcp = {
            "limit0": await fails(c, "list_sessions", limit=0),
            "offset": await fails(c, "list_sessions", offset=-1),
            "type": await fails(c, "list_sessions", limit="many"),
        }
        roles = await fails(c, "get_conversation", session_id_or_slug=S2, roles=["bogus"])
        wrong = await fails(c, "get_message_context", session_id=S2, sequence="x")
        missing = await fails(c, "read_turn")
    async with http(archive) as h:
        over_http = {
            "limit0": (await h.get("/sessions", params={"limit": "0"})).json()["error"],
            "offset": (await h.get("/sessions", params={"offset": "-1"})).json()["error"],
            "type": (await h.get("/sessions", params={"limit": "many"})).json()["error"],
        }
    assert mcp == over_http == {
        "limit0": "limit must be 1-500, not 0",
        "offset": "offset must be >= 0, not -1",
        "type": "limit must be an integer, not 'many'",
    }
    assert roles.startswith("roles must be") and "bogus" in roles
    assert wrong == "sequence must be an integer, not 'x'" and missing == "Missing argument: session_id"
    for text in (*mcp.values(), roles, wrong, missing):
        assert "\n" not in text and "pydantic" not in text and "http" not in text
    with pytest.raises(Exception, match="roles must be among"):
        archive.get_conversation(S2, roles=["bogus"])
    cli = Path(sys.executable).with_name("relay-search")
    proc = subprocess.run([str(cli), "list", "--limit", "0"], capture_output=True, text=True,
                          env={"HOME": str(tmp_path), "PATH": ""}, timeout=60)  # fmt: skip
    assert proc.returncode != 0 and "limit must be 1-500, not 0" in proc.stderr


# --- 7. fields, descriptions, roles, auth -----------------------------------------------


async def test_message_context_fields_descriptions_and_roles(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        ctx = await ok(c, "get_message_context", session_id=S2, sequence=2, before=2, after=2)
        project = archive.resolve(S2).sessions[0].project
        assert (ctx["session_id"], ctx["project"], ctx["target_sequence"]) == (S2, project, 2)
        assert ctx["total_messages"] == len(ctx["previous"]) + 1 + len(ctx["following"])  # (seed 003)
        everything = await ok(c, "get_message_context", session_id=S2, sequence=0, after=50)
        tools = {t.name: t for t in (await c.list_tools()).tools}
        msgs = (await ok(c, "get_session_messages", session_id=S2, include_tools=True))["messages"]
    shown = [everything["current"], *everything["following"]]
    assert {m["role"] for m in shown + msgs} <= {"user", "assistant", "system"}
    results = [m for m in shown + msgs if m["type"] == "tool_result"]
    assert results and all(m["role"] == "user" for m in results)
    assert all(m["role"] == "assistant" for m in shown + msgs if m["type"] == "tool_use")
    for tool, param in [("get_message_context", "include_tool_outputs"), ("get_session_messages", "include_tools"),
                        ("get_session_messages", "include_thinking")]:  # fmt: skip
        assert tools[tool].input_schema["properties"][param].get("description"), (tool, param)
    props = tools["get_message_context"].output_schema["properties"]
    assert {"session_id", "project", "target_sequence", "total_messages"} <= set(props)


async def test_bearer_scheme_is_case_insensitive(archive: Archive) -> None:
    async with http(archive, token="s3cret") as h:
        for header in ("Bearer s3cret", "bearer s3cret", "BEARER s3cret"):
            assert (await h.get("/sessions", headers={"Authorization": header})).status_code == 200, header
        for header in ("Bearer wrong", "Basic s3cret", "s3cret", ""):
            assert (await h.get("/sessions", headers={"Authorization": header})).status_code == 401, header


# --- 8. session_number only in a chain's listing --------------------------------------------


async def test_session_number_only_when_listing_a_chain(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        listed = (await ok(c, "list_sessions"))["sessions"]
        chain = (await ok(c, "list_sessions", slug=SLUG))["sessions"]
    async with http(archive) as h:
        over_http = (await h.get("/sessions")).json()["sessions"]
    assert not any("session_number" in s for s in listed + over_http)
    assert [s["session_number"] for s in chain] == [1, 2, 3]
    assert {s["ref"] for s in listed} >= {f"{SLUG}#1", f"{SLUG}#2", f"{SLUG}#3"}  # the ref still places it


# --- over stdio: a real subprocess ------------------------------------------------------------


async def test_over_stdio(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    write_more(tmp_path)
    async with Client(relay_search_mcp(tmp_path), raise_exceptions=True, read_timeout_seconds=60) as c:
        solo = (await ok(c, "get_session_messages", session_id=SOLO))["messages"]
        assert _in_time_order(solo) and any(m["is_sidechain"] for m in solo)
        span = await ok(c, "get_session_messages", session_id=f"{SLUG}#2-3")
        assert span["ref"] == f"{SLUG}#2-3" and span["session_ids"] == [S2, S3]
        assert (await fails(c, "read_turn", session_id=SLUG, turn_number=0)).startswith("read_turn reads one session")
        page, sent = await call(c, "get_conversation", session_id_or_slug=HUGE)
        assert sent <= RESULT_BUDGET and page["next_offset"] and page["cut"]
        assert {s["session_id"] for s in (await ok(c, "list_sessions", project="billing"))["sessions"]} == {FIRST, LATER, HUGE}
        assert (await ok(c, "list_sessions", slug=FIRST[:8]))["sessions"][1]["ref"] == f"{FIRST[:8]}#2"
        assert await fails(c, "list_sessions", limit=0) == "limit must be 1-500, not 0"
        ctx = await ok(c, "get_message_context", session_id=S2, sequence=0)
        assert ctx["target_sequence"] == 0 and ctx["total_messages"] > 0
        assert "session_number" not in (await ok(c, "list_sessions"))["sessions"][0]


def test_cli_shows_a_whole_conversation_and_addresses_slugless_chains(archive: Archive, tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("relay-search")

    def run(*args: str) -> dict[str, Any]:
        proc = subprocess.run([str(cli), *args, "--json"], capture_output=True, text=True,
                              env={"HOME": str(tmp_path), "PATH": ""}, timeout=60)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    whole = run("show", HUGE)  # a terminal gets it all: no default page, no budget
    assert len(whole["turns"]) == HUGE_TURNS + 1 and whole["next_offset"] is None and whole["cut"] is None
    paged = run("show", HUGE, "--limit", "2")
    assert len(paged["turns"]) == 2 and paged["next_offset"] == 2
    chain = run("list", "--slug", FIRST[:8])["sessions"]
    assert [(s["session_id"], s["session_number"]) for s in chain] == [(FIRST, 1), (LATER, 2)]


def test_handoff_names_a_slugless_chain(archive: Archive) -> None:
    name = FIRST[:8]
    block = archive.reference_block(f"{name}#1-2")
    assert block.splitlines()[0] == f"relay-search reference: {name}#1-2"
    assert "sessions 1-2 of 2" in block and f'get_conversation(session_id_or_slug="{name}#1-2")' in block
    assert archive.reference_block(f"{name}#2").splitlines()[0] == f"relay-search reference: {name}#2"


async def test_list_sessions_pages_within_the_budget(tmp_path: Path) -> None:
    root = tmp_path / ".claude" / "projects"
    wanted = set()
    for n in range(60):
        t = ClaudeTranscript(stable_uuid("test-answers", f"many-{n}"), cwd=f"/home/gbr/work/many-{n}",
                             start=T0 + timedelta(hours=n))  # fmt: skip
        t.user(f"Prompt {n}: " + "describe the whole architecture in detail " * 30)
        t.assistant("Done.")
        t.write_under(root)
        wanted.add(t.session_id)
    with Archive.open(Config.from_env({"HOME": str(tmp_path)})) as archive:
        async with Client(build_server(archive), raise_exceptions=True) as c:
            first, sent = await call(c, "list_sessions")
            assert sent <= RESULT_BUDGET and first["cut"] and first["next_offset"] == len(first["sessions"]) < 50
            seen = [s["session_id"] for s in first["sessions"]]
            offset = first["next_offset"]
            while offset is not None and offset < 60:
                page, sent = await call(c, "list_sessions", offset=offset)
                assert sent <= RESULT_BUDGET
                seen += [s["session_id"] for s in page["sessions"]]
                offset = page.get("next_offset") or (offset + len(page["sessions"]) if page["sessions"] else None)
    assert sorted(seen) == sorted(wanted) and len(seen) == 60
