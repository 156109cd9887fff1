"""Rules every front end applies alike (issue 24, items 7 and 8), through the real ones:
the CLI as a subprocess, the MCP SDK client, HTTP via the ASGI app.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from mcp import Client
from starlette.testclient import TestClient

from core.api import Archive
from core.arguments import EMPTY_QUERY
from core.front.http_api import build_http_app
from core.front.mcp import build_server

from .bad_input_corpus import build_corpus
from .hostile_support import run_cli
from .support import open_archive

BLANK = ["", " ", "   \t  "]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("rules")
    build_corpus(home)
    return home


@pytest.fixture(scope="module")
def archive(home: Path) -> Iterator[Archive]:
    with open_archive(home) as archive:
        yield archive


@pytest.fixture(scope="module")
def http(archive: Archive) -> TestClient:
    return TestClient(build_http_app(archive), base_url="http://127.0.0.1")


# --- item 7: the empty query ------------------------------------------------------------------


@pytest.mark.parametrize("query", BLANK)
def test_cli_refuses_an_empty_query(home: Path, query: str) -> None:
    for extra in ([], ["--json"]):
        proc = run_cli(home, "search", query, *extra)
        assert proc.returncode == 1 and proc.stdout == b""
        assert proc.stderr.decode() == f"relay-search: {EMPTY_QUERY}\n"


@pytest.mark.parametrize("query", BLANK)
async def test_mcp_refuses_an_empty_query(archive: Archive, query: str) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as client:
        result = await client.call_tool("search_history", {"query": query})
    assert result.is_error and result.content[0].text == EMPTY_QUERY  # type: ignore[union-attr]


@pytest.mark.parametrize("params", [{"q": q} for q in BLANK] + [{"query": " "}, {}])
def test_http_refuses_an_empty_query(http: TestClient, params: dict[str, str]) -> None:
    response = http.get("/search", params=params)
    assert response.status_code == 400 and response.json() == {"error": EMPTY_QUERY}


def test_a_query_of_words_still_answers_everywhere(home: Path, http: TestClient) -> None:
    assert run_cli(home, "search", " aardvark ").returncode == 0
    assert http.get("/search", params={"q": " aardvark "}).json()["results"]


# --- item 8: HTTP hardening ---------------------------------------------------------------------


def test_a_blank_token_is_refused_on_every_bind(home: Path) -> None:
    for host in ("0.0.0.0", "127.0.0.1"):
        for token in (" ", "", "\t"):
            proc = run_cli(home, "serve", "--host", host, "--token", token, "--port", "0")
            assert proc.returncode == 1 and b"--token must not be blank" in proc.stderr, proc.stderr


@pytest.mark.parametrize("host", ["[::1].evil.example", "[::1]x", "[::1]:80.evil", "localhost.evil.example",
                                  "127.0.0.1:80:81", "localhost:8o", "[::1"])  # fmt: skip
def test_a_host_that_only_starts_like_loopback_is_refused(http: TestClient, host: str) -> None:
    response = http.get("/sessions", headers={"Host": host})
    assert response.status_code == 421 and response.json() == {"error": "Invalid Host header"}


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost:8765", "[::1]", "[::1]:8765"])
def test_loopback_hosts_still_pass(http: TestClient, host: str) -> None:
    assert http.get("/sessions", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("ref", ["dana/poison-claude-main", "a/b/c", "%2F"])
def test_a_reference_with_a_slash_gets_the_json_error_body(http: TestClient, ref: str) -> None:
    response = http.get(f"/sessions/{ref}/messages")
    assert response.status_code in (400, 404) and response.headers["content-type"] == "application/json"
    assert response.json()["error"]


def test_an_unknown_path_gets_the_json_error_body(http: TestClient) -> None:
    response = http.get("/no/such/route")
    assert response.status_code == 404 and response.json() == {"error": "Not Found"}


def test_a_slow_header_connection_is_closed(archive: Archive) -> None:
    import socket
    import threading

    import uvicorn

    from core.front.http_conn import header_deadline_protocol

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(build_http_app(archive), log_level="warning", http=header_deadline_protocol(0.3))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        ready = threading.Event()
        while not server.started:  # (readiness, not a fixed sleep)
            ready.wait(0.01)
        port = sock.getsockname()[1]
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"GET /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        slow.settimeout(30)
        assert slow.recv(1024) == b"", "the server kept a connection that never finished its headers"
        idle = socket.create_connection(("127.0.0.1", port))  # connects and sends nothing
        idle.settimeout(30)
        assert idle.recv(1024) == b""
        fast = socket.create_connection(("127.0.0.1", port))  # a whole request is still answered
        fast.sendall(b"GET /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        fast.settimeout(30)
        assert fast.recv(1024).startswith(b"HTTP/1.1 200")
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


# --- item 9: answers that say exactly what they did ---------------------------------------------


def test_an_unknown_agent_is_a_bad_argument_naming_the_agents(home: Path, http: TestClient) -> None:
    line = "agent must be one of claude, codex, gemini, ash, not 'cursor'"
    for command in (["search", "aardvark"], ["list"]):
        proc = run_cli(home, *command, "--agent", "cursor")
        assert proc.returncode == 1 and proc.stderr.decode() == f"relay-search: {line}\n"
    for path, params in (("/search", {"q": "aardvark", "agent": "cursor"}), ("/sessions", {"agent": "cursor"})):
        response = http.get(path, params=params)
        assert response.status_code == 400 and response.json() == {"error": line}
    assert run_cli(home, "list", "--agent", "Codex").returncode == 0  # (any case)


async def test_mcp_unknown_agent_and_message_context_total(archive: Archive, home: Path) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as client:
        for tool, args in (("search_history", {"query": "aardvark"}), ("list_sessions", {})):
            result = await client.call_tool(tool, {**args, "agent": "cursor"})
            assert result.is_error and "claude, codex, gemini, ash" in result.content[0].text  # type: ignore[union-attr]
        hit = (await client.call_tool("search_history", {"query": "caracal"})).structured_content["results"][0]
        where = {"session_id": hit["session_id"], "sequence": hit["sequence"]}
        context = await client.call_tool("get_message_context", {**where, "before": 1, "after": 1})
        ctx = context.structured_content
        returned = len(ctx["previous"]) + 1 + len(ctx["following"])
        assert returned == 3 and ctx["total_messages"] == returned  # (SPEC seed 003: the messages returned)


def test_message_times_come_back_in_utc(tmp_path: Path) -> None:
    from .hostile_support import exchange, write_jsonl

    sid = "44444444-4444-4444-8444-444444444444"
    records = exchange(sid, "a prompt about the offset okapi", "The okapi answer.", "2026-11-01T12:20:00.000+02:00")
    records[1]["timestamp"] = "2026-11-01T12:21:30.5+02:00"
    write_jsonl(tmp_path / ".claude" / "projects" / "-home-t-proj" / f"{sid}.jsonl", records)
    with open_archive(tmp_path) as archive:
        http = TestClient(build_http_app(archive), base_url="http://127.0.0.1")
        messages = http.get(f"/sessions/{sid}/messages").json()["messages"]
        assert [m["timestamp"] for m in messages] == ["2026-11-01T10:20:00.000Z", "2026-11-01T10:21:30.500Z"]
        later = http.get(f"/sessions/{sid}/messages", params={"since": "2026-11-01T10:20:30Z"}).json()["messages"]
        assert [m["text"] for m in later] == ["The okapi answer."]
    shown = run_cli(tmp_path, "show", sid, "--json")
    assert b"+02:00" not in shown.stdout and b"2026-11-01T10:20:00.000Z" in shown.stdout


OTHER_DIGITS = [
    "poison-claude-main#\uff11", "poison-claude-main#1:\uff10", "poison-claude-main#\u0661", "11111111:\u0660"
]


@pytest.mark.parametrize("ref", OTHER_DIGITS)
async def test_references_with_other_digits_are_refused_everywhere(home: Path, archive: Archive, http: TestClient,
                                                                   ref: str) -> None:  # fmt: skip
    line = f"Bad reference {ref!r}: session and turn numbers are written with the digits 0-9"
    proc = run_cli(home, "show", ref)
    assert proc.returncode == 1 and proc.stderr.decode() == f"relay-search: {line}\n"
    response = http.get(f"/sessions/{quote(ref, safe='')}/messages")  # ('#' starts a URL's fragment)
    assert response.status_code == 400 and response.json() == {"error": line}
    async with Client(build_server(archive), raise_exceptions=True) as client:
        result = await client.call_tool("get_conversation", {"session_id_or_slug": ref})
    assert result.is_error and result.content[0].text == line  # type: ignore[union-attr]
    assert run_cli(home, "show", "poison-claude-main#1").returncode == 0  # (ASCII digits: as ever)


async def test_a_session_filter_then_a_time_in_another_session_gives_its_nearest_turns(tmp_path: Path) -> None:
    from datetime import timedelta

    from .test_mcp import SLUG, T0, write_corpus

    write_corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        async with Client(build_server(archive), raise_exceptions=True) as client:
            elsewhere = (T0 + timedelta(minutes=1)).isoformat()  # (a time in session 1)
            result = await client.call_tool(
                "get_conversation", {"session_id_or_slug": SLUG, "session": "2", "around_timestamp": elsewhere}
            )
            page = result.structured_content
            assert not result.is_error and page["turns"] and page["total_turns"] == len(page["turns"]) > 0
            assert page["ref"] == f"{SLUG}#2" and {t["timestamp"][:10] for t in page["turns"]} == {"2025-06-02"}
            whole = {"session_id_or_slug": SLUG, "around_timestamp": elsewhere}  # (no session: the time decides)
            inside = (await client.call_tool("get_conversation", whole)).structured_content
            assert {t["timestamp"][:10] for t in inside["turns"]} == {"2025-06-01"}
