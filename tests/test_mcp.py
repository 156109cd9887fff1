"""The MCP server, in memory with the SDK's Client and over stdio as a subprocess.

Corpus: real Claude Code JSONL under a temp HOME: a three-session slug chain, and a lone
session (thinking, Write, Grep, a subagent) in another project. Two chain sessions
share the id prefix ``abcdef12`` so an ambiguous prefix can be tested."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from core.api import Archive
from core.config import Config
from core.fixtures.claude import ClaudeTranscript, stable_uuid
from core.front.mcp import build_server

T0 = datetime(2025, 6, 1, 9, 0, tzinfo=timezone.utc)
WEB = "/home/gbr/work/001-sites/diff-website"
API = "/home/gbr/work/001-sites/api-server"
SLUG = "velvet-puzzling-eclipse"
SOLO_SLUG = "amber-lonely-otter"
S1, S2 = "abcdef12-0000-4000-8000-000000000001", "abcdef12-0000-4000-8000-000000000002"
S3, SOLO = stable_uuid("test-mcp", "s3"), stable_uuid("test-mcp", "solo")
TOOLS = {
    "search_history", "list_sessions", "get_conversation", "read_turn", "get_message_context",
    "get_session_messages", "list_projects", "list_users", "get_session_statistics",
}  # fmt: skip


def write_corpus(home: Path) -> None:
    """Four sessions, two projects; every text is unique enough to search for."""
    root = home / ".claude" / "projects"
    s1 = ClaudeTranscript(S1, cwd=WEB, slug=SLUG, start=T0)
    s1.user("Set up the diff viewer with pygments highlighting")
    s1.tool("Read", {"file_path": f"{WEB}/viewer.py"}, "import pygments\n")
    s1.assistant("The viewer now highlights with pygments.")
    s1.user("Add a flamingo colour theme")
    s1.tool("Edit", {"file_path": f"{WEB}/theme.py", "old_string": "a", "new_string": "b"})
    s1.assistant("Added the flamingo theme.")
    s1.write_under(root)

    s2 = ClaudeTranscript(S2, cwd=WEB, slug=SLUG, start=T0 + timedelta(days=1))
    s2.user("Fix the failing test in test_viewer")
    s2.tool("Bash", {"command": "pytest -q", "description": "run tests"},
            "ImportError: cannot import name 'quokka' from viewer")  # fmt: skip
    s2.assistant("The quokka import was stale; I removed it.")
    s2.user("Thanks, now commit")
    s2.tool("Bash", {"command": "git commit -am 'drop quokka'"}, "[main 1a2b3c4] drop quokka")
    s2.assistant("Committed.")
    s2.write_under(root)

    s3 = ClaudeTranscript(S3, cwd=WEB, slug=SLUG, start=T0 + timedelta(days=2))
    s3.user("Continue with the marmalade refactor")
    s3.assistant("Starting the marmalade refactor.")
    s3.compact("We refactored marmalade into three modules.")
    s3.user("What is left after the compaction?")
    s3.assistant("Only the marmalade docs remain.")
    s3.write_under(root)

    solo = ClaudeTranscript(SOLO, cwd=API, slug=SOLO_SLUG, start=T0 + timedelta(days=3))
    solo.user("Design the zeppelin endpoint")
    solo.thinking("The zeppelin schema needs a hangar field.")
    solo.tool("Write", {"file_path": f"{API}/zeppelin.py", "content": "HANGAR = 1\n"})
    solo.tool("Grep", {"pattern": "zeppelin", "path": API}, "Found 1 file\nzeppelin.py")
    child = solo.subagent("a1b2c3d4e5f6a7b8", "Survey the zeppelin callers", description="Survey callers")
    child.assistant("Found three zeppelin callers.")
    solo.assistant("The zeppelin endpoint is designed.")
    solo.write_under(root)


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    write_corpus(tmp_path)
    with Archive.open(Config.from_env({"HOME": str(tmp_path)})) as arch:
        yield arch


async def ok(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def fails(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return result.content[0].text  # type: ignore[union-attr]


async def test_list_tools_schemas_and_annotations(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and "\n    " not in tool.description
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema and tool.output_schema["type"] == "object"
        assert tool.annotations and tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is False
    limit = tools["search_history"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 500, 10)
    assert tools["list_sessions"].input_schema["properties"]["limit"]["default"] == 50
    assert tools["search_history"].input_schema["required"] == ["query"]
    assert "slug#N:T" in tools["read_turn"].input_schema["properties"]["session_id"]["description"]
    assert "results" in tools["search_history"].output_schema["properties"]


async def test_search_history_hit_shape(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        hits = (await ok(c, "search_history", query="quokka"))["results"]
        assert hits, "quokka is in session 2"
        hit = hits[0]
        assert hit["session_id"] == S2 and hit["slug"] == SLUG and hit["session_number"] == 2
        assert hit["project"] == "diff-website" and hit["agent"] == "claude"
        assert hit["turn_number"] == 0 and hit["ref"] == f"{SLUG}#2:0"
        assert 0 < len(hit["snippet"]) <= 300 and hit["score"] > 0
        assert isinstance(hit["sequence"], int) and hit["timestamp"].startswith("2025-06-02")
        turn = await ok(c, "read_turn", session_id=hit["ref"])  # a hit's ref opens its turn
        assert turn["user_text"] == "Fix the failing test in test_viewer"


async def test_search_history_filters(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        async def ids(**args: Any) -> set[str]:
            return {h["session_id"] for h in (await ok(c, "search_history", **args))["results"]}

        assert await ids(query="zeppelin") == {SOLO}
        assert await ids(query="zeppelin", project="diff-website") == set()
        assert await ids(query="marmalade", slug=SLUG) == {S3}
        assert await ids(query="marmalade", slug=SOLO_SLUG) == set()
        assert await ids(query="quokka", session_id=S2) == {S2}
        assert await ids(query="quokka", session_id=f"{SLUG}#1") == set()
        assert await ids(query="quokka", agent="codex") == set()
        assert await ids(query="quokka", agent="claude") == {S2}
        assert await ids(query="quokka", date_from="2025-06-03") == set()
        assert await ids(query="quokka", date_to="2025-06-02T23:59:59Z") == {S2}
        many = (await ok(c, "search_history", query="marmalade", limit=1))["results"]
        assert len(many) == 1
        assert await fails(c, "search_history", query="x", limit=501) == "limit must be 1-500, not 501"
        assert await fails(c, "search_history", query="x", limit=0) == "limit must be 1-500, not 0"


async def test_list_sessions_newest_first_and_chain(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        sessions = (await ok(c, "list_sessions"))["sessions"]
        assert [s["session_id"] for s in sessions] == [SOLO, S3, S2, S1]
        assert sessions[0]["project"] == "api-server" and sessions[0]["turn_count"] == 1
        chain = (await ok(c, "list_sessions", slug=SLUG))["sessions"]
        assert [(s["session_id"], s["session_number"]) for s in chain] == [(S1, 1), (S2, 2), (S3, 3)]
        beats = (await ok(c, "list_sessions", slug=SLUG, project="api-server"))["sessions"]
        assert [s["session_id"] for s in beats] == [S1, S2, S3]  # slug beats project
        dated = (await ok(c, "list_sessions", slug=SLUG, date_from="2025-06-02"))["sessions"]
        assert [s["session_id"] for s in dated] == [S2, S3]  # date filters still apply
        page = (await ok(c, "list_sessions", limit=2, offset=1))["sessions"]
        assert [s["session_id"] for s in page] == [S3, S2]
        only = (await ok(c, "list_sessions", project="api-server"))["sessions"]
        assert [s["session_id"] for s in only] == [SOLO]
        assert (await ok(c, "list_sessions", agent="gemini"))["sessions"] == []
        assert await fails(c, "list_sessions", offset=-1) == "offset must be >= 0, not -1"


async def test_list_sessions_tags(archive: Archive) -> None:
    archive.set_tags(S2, ["bugfix"])
    async with Client(build_server(archive), raise_exceptions=True) as c:
        tagged = (await ok(c, "list_sessions", tags=["bugfix"]))["sessions"]
        assert [(s["session_id"], s["tags"]) for s in tagged] == [(S2, ["bugfix"])]


async def test_list_projects_and_users(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        assert (await ok(c, "list_projects"))["projects"] == ["api-server", "diff-website"]
        assert (await ok(c, "list_projects", date_from="2025-06-04"))["projects"] == ["api-server"]
        users = (await ok(c, "list_users"))["users"]
        assert len(users) == 1 and users[0]
        assert (await ok(c, "list_users", project="nowhere"))["users"] == []
        assert (await ok(c, "list_projects", user=users[0]))["projects"] == ["api-server", "diff-website"]


async def test_get_conversation_chain_and_ranges(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        whole = await ok(c, "get_conversation", session_id_or_slug=SLUG)
        assert whole["slug"] == SLUG and whole["project"] == "diff-website"
        assert [s["session_id"] for s in whole["sessions"]] == [S1, S2, S3]
        texts = [t["user_text"] for t in whole["turns"]]
        assert texts[0] == "Set up the diff viewer with pygments highlighting"
        assert texts[-1] == "What is left after the compaction?" and len(texts) == 6
        two = await ok(c, "get_conversation", session_id_or_slug=SLUG, session="2")
        assert [s["session_id"] for s in two["sessions"]] == [S2]
        assert [t["session_id"] for t in two["turns"]] == [S2, S2]
        span = await ok(c, "get_conversation", session_id_or_slug=SLUG, session="2-3")
        assert [s["session_id"] for s in span["sessions"]] == [S2, S3]
        picked = await ok(c, "get_conversation", session_id_or_slug=SLUG, session="1,3")
        assert [s["session_id"] for s in picked["sessions"]] == [S1, S3]
        hashed = await ok(c, "get_conversation", session_id_or_slug=f"{SLUG}#2-3")
        assert [s["session_id"] for s in hashed["sessions"]] == [S2, S3]
        # one session named by id: the range does not apply
        single = await ok(c, "get_conversation", session_id_or_slug=S2, session="7")
        assert [t["user_text"] for t in single["turns"]] == ["Fix the failing test in test_viewer", "Thanks, now commit"]
        paged = await ok(c, "get_conversation", session_id_or_slug=SLUG, offset=1, limit=2)
        assert [t["user_text"] for t in paged["turns"]] == texts[1:3]
        near = await ok(c, "get_conversation", session_id_or_slug=SLUG, around_timestamp="2025-06-02T09:00:10Z")
        assert "Fix the failing test in test_viewer" in [t["user_text"] for t in near["turns"]]
        users = await ok(c, "get_conversation", session_id_or_slug=S2, roles=["user"])
        assert all(not t["assistant_text"] for t in users["turns"])
        out = await fails(c, "get_conversation", session_id_or_slug=SLUG, session="7")
        assert out.endswith("Session 7 out of range (1-3)")
        assert "Bad session range" in await fails(c, "get_conversation", session_id_or_slug=SLUG, session="2-x")


async def test_read_turn_every_reference_form(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        want = "Thanks, now commit"
        forms = [
            {"session_id": f"{SLUG}#2:1"},
            {"session_id": f"{S2}:1"},
            {"session_id": S2, "turn_number": 1},
            {"session_id": f"{SLUG}#2", "turn_number": 1},
        ]
        for args in forms:
            assert (await ok(c, "read_turn", **args))["user_text"] == want, args
        prefix = S3[:8]
        assert (await ok(c, "read_turn", session_id=prefix, turn_number=0))["user_text"].startswith("Continue")
        assert (await ok(c, "read_turn", session_id=f"{prefix}:1"))["user_text"].startswith("What is left")
        turn = await ok(c, "read_turn", session_id=S2, turn_number=0)
        assert turn["tools_used"] == [{"tool": "Bash", "command": "pytest -q"}]
        assert "quokka" in turn["assistant_text"] and turn["timestamp"].startswith("2025-06-02")
        s1 = await ok(c, "read_turn", session_id=f"{SLUG}#1:1")
        assert s1["tools_used"] == [{"tool": "Edit", "file": f"{WEB}/theme.py"}]
        solo = await ok(c, "read_turn", session_id=f"{SOLO_SLUG}#1:0")
        tools = solo["tools_used"]
        assert tools[0] == {"tool": "Write", "file": f"{API}/zeppelin.py", "chars": len("HANGAR = 1\n")}
        assert tools[1] == {"tool": "Grep", "pattern": "zeppelin"}
        assert tools[2]["tool"] == "Task" and tools[2]["description"] == "Survey callers"
        assert "hangar" not in solo["assistant_text"].lower()  # thinking is never turn text


async def test_documented_error_texts(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        for tool, args in [
            ("read_turn", {"session_id": "nope-nope-nope", "turn_number": 0}),
            ("get_conversation", {"session_id_or_slug": "nope-nope-nope"}),
            ("get_message_context", {"session_id": "nope-nope-nope", "sequence": 0}),
            ("get_session_messages", {"session_id": "nope-nope-nope"}),
            ("get_session_statistics", {"session_id": "nope-nope-nope"}),
        ]:
            assert (await fails(c, tool, **args)).endswith("Unknown session_id: nope-nope-nope"), tool
        assert (await fails(c, "read_turn", session_id=S2, turn_number=9)).endswith(
            "Turn 9 out of range (session has 2 turns)"
        )
        assert (await fails(c, "read_turn", session_id=f"{SLUG}#2:9")).endswith(
            "Turn 9 out of range (session has 2 turns)"
        )
        assert (await fails(c, "read_turn", session_id=f"{SLUG}#7:0")).endswith("Session 7 out of range (1-3)")
        assert "mbiguous" in await fails(c, "read_turn", session_id="abcdef12", turn_number=0)
        short = await fails(c, "read_turn", session_id=S2[:5], turn_number=0)
        assert f"Unknown session_id: {S2[:5]}" in short


async def test_get_message_context(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        hit = (await ok(c, "search_history", query="quokka"))["results"][0]
        ctx = await ok(c, "get_message_context", session_id=hit["session_id"], sequence=hit["sequence"])
        assert ctx["current"]["sequence"] == hit["sequence"] and ctx["current"]["session_id"] == S2
        seqs = [m["sequence"] for m in ctx["previous"]] + [hit["sequence"]] + [m["sequence"] for m in ctx["following"]]
        assert seqs == list(range(ctx["first_sequence"], ctx["last_sequence"] + 1))
        narrow = await ok(c, "get_message_context", session_id=S2, sequence=2, before=1, after=1)
        assert [m["sequence"] for m in narrow["previous"]] == [1]
        assert [m["sequence"] for m in narrow["following"]] == [3]
        assert narrow["has_more_before"] and narrow["has_more_after"]
        first = await ok(c, "get_message_context", session_id=S2, sequence=0, before=5, after=0)
        assert first["previous"] == [] and not first["has_more_before"] and first["following"] == []
        results = await ok(c, "get_message_context", session_id=S2, sequence=0, after=50)
        kinds = {m["type"] for m in results["following"]}
        assert "tool_result" in kinds and not results["has_more_after"]
        quiet = await ok(c, "get_message_context", session_id=S2, sequence=0, after=50, include_tool_outputs=False)
        assert "tool_result" not in {m["type"] for m in quiet["following"]}
        # a subagent's messages belong to no turn, and still have context
        messages = (await ok(c, "get_message_context", session_id=SOLO, sequence=0, after=100))["following"]
        side = next(m for m in messages if m["is_sidechain"])
        around = await ok(c, "get_message_context", session_id=SOLO, sequence=side["sequence"], before=1, after=1)
        assert around["current"]["turn"] is None and around["current"]["text"] == "Survey the zeppelin callers"
        assert "out of range" in await fails(c, "get_message_context", session_id=S2, sequence=999)


async def test_get_session_messages_and_statistics(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        plain = await ok(c, "get_session_messages", session_id=S2)
        assert plain["session_id"] == S2 and plain["agent"] == "claude"
        msgs = plain["messages"]
        assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
        assert all({"role", "type", "text", "timestamp", "entry_index", "file_index"} <= set(m) for m in msgs)
        assert [m["entry_index"] for m in msgs] == sorted(m["entry_index"] for m in msgs)
        tools = (await ok(c, "get_session_messages", session_id=S2, include_tools=True))["messages"]
        assert {"tool_use", "tool_result"} <= {m["type"] for m in tools}
        solo = (await ok(c, "get_session_messages", session_id=SOLO))["messages"]
        assert "thinking" not in {m["type"] for m in solo}
        thinking = (await ok(c, "get_session_messages", session_id=SOLO, include_thinking=True))["messages"]
        assert "thinking" in {m["type"] for m in thinking}
        since = (await ok(c, "get_session_messages", session_id=S2, since=msgs[1]["timestamp"]))["messages"]
        assert [m["text"] for m in since] == [m["text"] for m in msgs[2:]]
        s3 = (await ok(c, "get_session_messages", session_id=f"{SLUG}#3"))["messages"]
        assert [m["type"] for m in s3].count("compaction") == 1
        compaction = next(m for m in s3 if m["type"] == "compaction")
        assert compaction["role"] == "system" and compaction["text"] == "Context compacted"
        assert s3.index(compaction) == 2  # in place: after the first exchange
        assert "since" in await fails(c, "get_session_messages", session_id=S2, since="yesterday-ish")
        stats = await ok(c, "get_session_statistics", session_id=S2)
        assert (stats["ref"], stats["session_ids"], stats["turns"]) == (S2, [S2], 2)
        by_ref = await ok(c, "get_session_statistics", session_id=f"{SLUG}#2")
        assert by_ref["ref"] == f"{SLUG}#2" and {**by_ref, "ref": S2} == stats


# --- a real client over stdio --------------------------------------------------------------


def relay_search_mcp(home: Path) -> StdioServerParameters:
    """``relay-search mcp`` as installed (``pip install -e .``), else the same entry point."""
    script = Path(sys.executable).with_name("relay-search")
    command, args = (str(script), ["mcp"]) if script.exists() else (
        sys.executable, ["-c", "import sys; from core.front.cli import main; sys.exit(main())", "mcp"])  # fmt: skip
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(Path(__file__).parents[1])}
    return StdioServerParameters(command=command, args=args, env=env, cwd=str(home))


def test_stdio_stdout_carries_only_protocol(tmp_path: Path) -> None:
    """Raw JSON-RPC over the pipes: every stdout line is a protocol message."""
    server = relay_search_mcp(tmp_path)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    call = {"name": "read_turn", "arguments": {"session_id": "nope-nope-nope", "turn_number": 0}}
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call},
    ]
    proc = subprocess.Popen([server.command, *server.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=server.env, cwd=tmp_path, text=True)  # fmt: skip
    assert proc.stdin and proc.stdout
    try:
        proc.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        proc.stdin.flush()
        replies: dict[Any, Any] = {}
        while 3 not in replies:
            line = proc.stdout.readline()
            assert line, "server closed stdout early"
            message = json.loads(line)  # anything else on stdout would break a client
            replies[message.get("id")] = message
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    assert len(replies[2]["result"]["tools"]) == len(TOOLS)
    assert replies[3]["result"]["isError"] is True
    assert "Unknown session_id: nope-nope-nope" in replies[3]["result"]["content"][0]["text"]
    assert proc.returncode == 0


async def test_stdio_subprocess_sees_appended_turn(tmp_path: Path) -> None:
    root = tmp_path / ".claude" / "projects"
    start = datetime.now(timezone.utc) - timedelta(minutes=5)
    live = ClaudeTranscript(
        stable_uuid("test-mcp", "live"), cwd=WEB, slug="brisk-live-heron", start=start, slug_from_start=True
    )
    live.user("Start the live session")
    live.assistant("Started.")
    path = live.write_under(root)
    written = len(live.lines())
    async with Client(relay_search_mcp(tmp_path), raise_exceptions=True, read_timeout_seconds=30) as c:
        tools = (await c.list_tools()).tools
        assert {t.name for t in tools} == TOOLS
        assert all(t.annotations and t.annotations.read_only_hint for t in tools)
        first = await ok(c, "search_history", query="started")
        assert first["results"] and first["results"][0]["ref"] == "brisk-live-heron#1:0"
        assert (await ok(c, "search_history", query="xylophone"))["results"] == []
        live.user("Tune the xylophone module")
        live.assistant("Tuned.")
        with path.open("a", encoding="utf-8") as f:
            f.write("\n".join(live.lines()[written:]) + "\n")
        appended = time.monotonic()
        while True:
            hits = (await ok(c, "search_history", query="xylophone"))["results"]
            elapsed = time.monotonic() - appended
            if hits or elapsed > 15.0:
                break
            await anyio.sleep(0.02)
        # Latency targets (≤ 1 s, goal 300 ms) are measured by the benchmark, not here:
        # a loaded CI machine must not make this test flaky.
        assert hits, "appended turn never became searchable"
        assert hits[0]["ref"] == "brisk-live-heron#1:1"
