"""The HTTP API and MCP over streamable HTTP, on a real uvicorn server on loopback.

Two servers share one archive: an open one and one guarded by a bearer token. The
corpus is the MCP tests' corpus plus one long session, so streaming has something
to stream.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette

from core.api import Archive
from core.config import Config
from core.errors import BadInput
from core.fixtures.claude import ClaudeTranscript, stable_uuid
from core.front.http_api import BATCH, _stream, build_http_app, check_bind, is_loopback, serve

from .test_mcp import S1, S2, S3, SLUG, SOLO, T0, WEB, write_corpus

TOKEN = "s3cret-token"
LONG = stable_uuid("test-http", "long")
LONG_TURNS = 400


class Served:
    """A uvicorn server on a free loopback port, run in a daemon thread."""

    def __init__(self, app: Starlette) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Archive]:
    home = tmp_path_factory.mktemp("home")
    write_corpus(home)
    long = ClaudeTranscript(LONG, cwd=WEB, slug="long-winding-road", start=T0 + timedelta(days=5),
                            step=timedelta(seconds=1))  # fmt: skip
    for n in range(LONG_TURNS):
        long.user(f"Question number {n} about the long road")
        long.assistant(f"Answer number {n}: keep walking.")
    long.write_under(home / ".claude" / "projects")
    with Archive.open(Config.from_env({"HOME": str(home)})) as arch:
        yield arch


@pytest.fixture(scope="module")
def server(archive: Archive) -> Iterator[Served]:
    with Served(build_http_app(archive)) as served:
        yield served


@pytest.fixture(scope="module")
def guarded(archive: Archive) -> Iterator[Served]:
    with Served(build_http_app(archive, token=TOKEN)) as served:
        yield served


def get(served: Served, path: str, status: int = 200, **params: Any) -> Any:
    response = httpx.get(served.url + path, params=params, timeout=10)
    assert response.status_code == status, response.text
    body = response.json()
    if status != 200:
        assert body["error"], body
    return body


# --- /sessions ------------------------------------------------------------------------


def test_sessions(server: Served) -> None:
    ids = [s["session_id"] for s in get(server, "/sessions")["sessions"]]
    assert ids == [LONG, SOLO, S3, S2, S1]
    chain = get(server, "/sessions", slug=SLUG, project="api-server")["sessions"]
    assert [(s["session_id"], s["session_number"]) for s in chain] == [(S1, 1), (S2, 2), (S3, 3)]
    assert [s["session_id"] for s in get(server, "/sessions", project="api-server")["sessions"]] == [SOLO]
    assert get(server, "/sessions", agent="codex")["sessions"] == []
    assert len(get(server, "/sessions", user=get(server, "/sessions")["sessions"][0]["user"])["sessions"]) == 5
    page = get(server, "/sessions", limit=2, offset=1)["sessions"]
    assert [s["session_id"] for s in page] == [SOLO, S3]
    dated = get(server, "/sessions", date_from="2025-06-02", date_to="2025-06-03T23:59:59Z")["sessions"]
    assert [s["session_id"] for s in dated] == [S3, S2]
    assert get(server, "/sessions", tags="no-such-tag")["sessions"] == []
    for bad in ({"limit": "0"}, {"limit": "501"}, {"limit": "ten"}, {"offset": "-1"}):
        get(server, "/sessions", 400, **bad)
    get(server, "/sessions", 400, date_from="not a date")


def test_sessions_tags(archive: Archive, server: Served) -> None:
    archive.set_tags(S1, ["alpha", "beta"])
    try:
        for params in ({"tags": "alpha"}, {"tags": "alpha,beta"}, {"tags": ["alpha", "beta"]}):
            assert [s["session_id"] for s in get(server, "/sessions", **params)["sessions"]] == [S1]
    finally:
        archive.set_tags(S1, [])


# --- /search ----------------------------------------------------------------------------


def test_search(server: Served) -> None:
    hit = get(server, "/search", q="quokka")["results"][0]
    assert (hit["session_id"], hit["session_number"], hit["ref"]) == (S2, 2, f"{SLUG}#2:0")

    def ids(**params: Any) -> set[str]:
        return {h["session_id"] for h in get(server, "/search", **params)["results"]}

    assert ids(q="zeppelin") == {SOLO}
    assert ids(q="zeppelin", project="diff-website") == set()
    assert ids(q="marmalade", slug=SLUG) == {S3}
    assert ids(q="quokka", session_id=f"{SLUG}#2") == {S2}
    assert ids(q="quokka", agent="gemini") == set()
    assert ids(q="quokka", date_from="2025-06-03") == set()
    assert ids(q="quokka", date_to="2025-06-02T23:59:59Z") == {S2}
    assert len(get(server, "/search", q="number", limit=3)["results"]) == 3
    assert len(get(server, "/search", q="number")["results"]) == 10
    get(server, "/search", 400)
    get(server, "/search", 400, q="  ")
    get(server, "/search", 400, q="x", limit="501")


# --- /sessions/{id}/messages --------------------------------------------------------------


def test_messages(server: Served) -> None:
    body = get(server, f"/sessions/{S2}/messages")
    assert (body["session_id"], body["agent"]) == (S2, "claude")
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
    assert all({"role", "type", "text", "timestamp", "entry_index", "file_index"} <= set(m) for m in msgs)
    with_tools = get(server, f"/sessions/{S2}/messages", include_tools="true")["messages"]
    assert {"tool_use", "tool_result"} <= {m["type"] for m in with_tools}
    assert get(server, f"/sessions/{S2}/messages", include_tools="0")["messages"] == msgs
    assert "thinking" not in {m["type"] for m in get(server, f"/sessions/{SOLO}/messages")["messages"]}
    thinking = get(server, f"/sessions/{SOLO}/messages", include_thinking="1")["messages"]
    assert "thinking" in {m["type"] for m in thinking}
    later = get(server, f"/sessions/{S2}/messages", since=msgs[1]["timestamp"])["messages"]
    assert [m["text"] for m in later] == [m["text"] for m in msgs[2:]]
    assert get(server, f"/sessions/{S2}/messages", since="2030-01-01T00:00:00Z")["messages"] == []
    s3 = get(server, f"/sessions/{SLUG}%233/messages")["messages"]  # a reference: slug#3
    assert [m["type"] for m in s3].count("compaction") == 1
    assert next(m for m in s3 if m["type"] == "compaction")["role"] == "system"
    assert get(server, f"/sessions/{S3[:8]}/messages")["session_id"] == S3  # unique prefix
    get(server, f"/sessions/{S2}/messages", 400, since="last tuesday")
    get(server, f"/sessions/{S2}/messages", 400, include_tools="maybe")
    missing = get(server, "/sessions/nope-nope-nope/messages", 404)
    assert missing["error"] == "Unknown session_id: nope-nope-nope"


def test_messages_stream_long_session(server: Served) -> None:
    with httpx.stream("GET", f"{server.url}/sessions/{LONG}/messages", timeout=10) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert "content-length" not in response.headers
        assert response.headers["transfer-encoding"] == "chunked"
        raw = b"".join(response.iter_raw())
    body = json.loads(raw)
    assert len(body["messages"]) == 2 * LONG_TURNS
    assert body["messages"][-1]["text"] == f"Answer number {LONG_TURNS - 1}: keep walking."


async def test_stream_pulls_messages_lazily(archive: Archive) -> None:
    """The first body chunk goes out before the iterator has been drained."""
    pulled = 0

    def counting() -> Iterator[Any]:
        nonlocal pulled
        for message in archive.iter_session_messages(LONG):
            pulled += 1
            yield message

    messages = counting()
    first = [next(messages) for _ in range(BATCH)]
    chunks = _stream(b'{"messages":[', messages, first)
    assert await chunks.__anext__() == b'{"messages":['
    await chunks.__anext__()
    assert pulled == BATCH < 2 * LONG_TURNS
    rest = [chunk async for chunk in chunks]
    assert rest[-1] == b"]}" and pulled == 2 * LONG_TURNS


# --- guard --------------------------------------------------------------------------------


def test_token_guard(guarded: Served) -> None:
    for path in ("/sessions", "/search?q=quokka", f"/sessions/{S2}/messages", "/mcp"):
        bare = httpx.get(guarded.url + path, timeout=10)
        assert bare.status_code == 401 and bare.headers["www-authenticate"] == "Bearer", path
        wrong = httpx.get(guarded.url + path, headers={"Authorization": "Bearer nope"}, timeout=10)
        assert wrong.status_code == 401, path
        basic = httpx.get(guarded.url + path, headers={"Authorization": TOKEN}, timeout=10)
        assert basic.status_code == 401, path
    for path in ("/sessions", "/search?q=quokka", f"/sessions/{S2}/messages"):
        good = httpx.get(guarded.url + path, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        assert good.status_code == 200, path
    lost = httpx.get(guarded.url + "/sessions/nope-nope-nope/messages",
                     headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)  # fmt: skip
    assert lost.status_code == 404


def test_loopback_rejects_foreign_host_header(server: Served) -> None:
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 gets nothing."""
    response = httpx.get(server.url + "/sessions", headers={"Host": "evil.example"}, timeout=10)
    assert response.status_code == 421
    assert httpx.get(server.url + "/sessions", headers={"Host": "localhost"}, timeout=10).status_code == 200


def test_bind_policy(archive: Archive) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert is_loopback("127.0.0.2") and not is_loopback("0.0.0.0") and not is_loopback("example.com")
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", TOKEN)
    with pytest.raises(BadInput, match="--token"):
        check_bind("0.0.0.0", None)
    with pytest.raises(BadInput, match="--token"):
        serve(archive, host="192.168.1.20", port=1, token=None)  # refused before binding


# --- MCP at /mcp -----------------------------------------------------------------------------


async def test_mcp_over_http(server: Served) -> None:
    async with Client(f"{server.url}/mcp", raise_exceptions=True) as c:
        tools = {t.name for t in (await c.list_tools()).tools}
        assert {"search_history", "get_session_messages", "read_turn"} <= tools
        result = await c.call_tool("search_history", {"query": "quokka"})
        assert result.structured_content and result.structured_content["results"][0]["session_id"] == S2
        error = await c.call_tool("read_turn", {"session_id": "nope-nope-nope", "turn_number": 0})
        assert error.is_error and "Unknown session_id: nope-nope-nope" in error.content[0].text  # type: ignore[union-attr]


async def test_mcp_over_http_with_token(guarded: Served) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx2.AsyncClient(headers=headers, timeout=10) as http:
        async with Client(streamable_http_client(f"{guarded.url}/mcp", http_client=http)) as c:
            result = await c.call_tool("list_sessions", {"slug": SLUG})
    assert result.structured_content
    assert [s["session_id"] for s in result.structured_content["sessions"]] == [S1, S2, S3]


def test_routes_exist() -> None:
    """The app factory needs nothing but an archive-like object to build its routes."""
    app = build_http_app(object())  # type: ignore[arg-type]
    paths = {getattr(route, "path", None) for route in app.routes}
    assert {"/sessions", "/sessions/{session_id:path}/messages", "/search", "/mcp"} <= paths
