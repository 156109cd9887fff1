"""MCP and HTTP at the wire (issue 37 items 10 and 11): a client that goes away, a body
that trickles in, and a request whose ``params`` is not an object.

Through the real front ends: ``relay-search serve`` as a subprocess on a free loopback
port with raw sockets, ``relay-search mcp`` as a subprocess speaking JSON lines, and
the ASGI app on a real uvicorn (for a short body deadline) or Starlette's TestClient.
"""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from starlette.testclient import TestClient

from core.api import Archive
from core.front.http_api import build_http_app
from core.front.http_conn import header_deadline_protocol

from .bad_input_corpus import build_corpus
from .hostile_support import SCRIPT, cli_env
from .support import open_archive

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
BAD_PARAMS = [("x", "a string"), (5, "a number"), ([1], "an array"), (True, "true or false")]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("wire")
    build_corpus(home)
    return home


@pytest.fixture(scope="module")
def archive(home: Path) -> Iterator[Archive]:
    with open_archive(home) as archive:
        yield archive


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def request(port: int, head: str, body: bytes = b"", *, timeout: float = 30) -> bytes:
    """One request on its own connection; the whole answer (the server closes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(head.encode() + b"\r\n" + body)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
        return answer


def post_head(port: int, **headers: str) -> str:
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", *(f"{k.replace('_', '-')}: {v}" for k, v in headers.items())]
    return "\r\n".join(lines) + "\r\n"


# --- item 10: a client going away is not an error ---------------------------------------------


def test_serve_says_nothing_when_mcp_clients_go_away(home: Path, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.err"
    with open(log, "wb") as err:
        server = subprocess.Popen([str(SCRIPT), "serve", "--port", str(port)], env=cli_env(home),
                                  stdout=subprocess.DEVNULL, stderr=err)
    try:
        stats = f"GET /stats HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
        ready = threading.Event()
        for _ in range(600):  # (readiness: the server answers; bounded)
            try:
                if request(port, stats).startswith(b"HTTP/1.1 200"):
                    break
            except OSError:
                ready.wait(0.1)
        body = json.dumps(INIT).encode()
        for _ in range(25):  # headers and part of the body, then gone: as Content-Length and as chunks
            for head, part in ((post_head(port, Content_Length="1000"), body[:20]),
                               (post_head(port, Transfer_Encoding="chunked"), b"14\r\n" + body[:20] + b"\r\n"),
                               (post_head(port, Content_Length=str(len(body))), body)):  # (all of it, gone before the answer)
                with socket.create_connection(("127.0.0.1", port)) as conn:
                    conn.sendall(head.encode() + b"\r\n" + part)
        assert request(port, stats).startswith(b"HTTP/1.1 200")  # still answering
        answer = request(port, post_head(port, Content_Length=str(len(body)), Connection="close"), body)
        assert answer.startswith(b"HTTP/1.1 200") and b'"id":1,"result"' in answer
        long = request(port, f"GET /sessions/{'a' * 60_000}/messages HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                       "Connection: close\r\n")  # (item 5: a 400, and SIGTERM is still heard below)
        assert long.startswith(b"HTTP/1.1 400") and b"60,000 characters is too long" in long, long[-300:]
    finally:
        server.send_signal(signal.SIGTERM)
        rc = server.wait(timeout=30)  # (SIGTERM is heard: serve once ignored it for 15 s after a long reference)
    stderr = log.read_text()
    assert "Traceback" not in stderr and "ClientDisconnect" not in stderr and "ERROR" not in stderr, stderr[-3000:]
    assert rc in (0, -signal.SIGTERM), stderr[-3000:]  # (uvicorn shuts down, then re-raises the signal)


# --- item 11: a body that trickles in is timed out --------------------------------------------


def test_an_mcp_body_that_trickles_in_is_answered_408_and_closed(archive: Archive) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(build_http_app(archive, body_timeout=0.5), log_level="warning", http=header_deadline_protocol())
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        ready = threading.Event()
        while not server.started:  # (readiness, not a fixed sleep)
            ready.wait(0.01)
        port = sock.getsockname()[1]
        slow = socket.create_connection(("127.0.0.1", port), timeout=30)
        slow.sendall((post_head(port, Content_Length="1000") + "\r\n").encode() + b'{"jsonrpc": "2.0", ')  # and no more
        answer = b""
        while chunk := slow.recv(65536):  # (the server answers, then closes: recv ends)
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 0.5 seconds" in answer, answer
        body = json.dumps(INIT).encode()  # a whole request is still answered
        answer = request(port, post_head(port, Content_Length=str(len(body)), Connection="close"), body)
        assert answer.startswith(b"HTTP/1.1 200") and b'"id":1,"result"' in answer
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_an_mcp_body_over_the_sdks_limit_is_still_413(archive: Archive) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with TestClient(build_http_app(archive), base_url="http://127.0.0.1:8765") as http:
        chunks = iter([b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "', b"y" * (4 * 1024 * 1024), b'"}}'])
        response = http.post("/mcp", headers=headers, content=chunks)  # (chunked: no Content-Length to refuse early)
        assert response.status_code == 413 and response.text == "Request body too large"
        big = b"y" * (4 * 1024 * 1024 + 1)
        assert http.post("/mcp", headers=headers, content=big).status_code == 413


# --- item 11: params that are not an object get the JSON-RPC error owed -------------------------


@pytest.mark.parametrize(("params", "kind"), BAD_PARAMS)
def test_http_answers_params_that_are_not_an_object_with_the_requests_id(archive: Archive, params, kind: str) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with TestClient(build_http_app(archive), base_url="http://127.0.0.1:8765") as http:
        start = http.post("/mcp", headers=headers, json=INIT)
        assert start.status_code == 200
        headers.update({"mcp-session-id": start.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"})
        for method in ("tools/call", "tools/list", "ping"):
            response = http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
            assert response.status_code == 400 and response.json() == {"jsonrpc": "2.0", "id": 7, "error": {
                "code": -32602, "message": f"Invalid params: params must be an object, not {kind}"}}
        listed = http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {}})
        assert listed.status_code == 200 and "search_history" in listed.text


def test_stdio_answers_params_that_are_not_an_object_with_the_requests_id(home: Path) -> None:
    server = subprocess.Popen([str(SCRIPT), "mcp"], env=cli_env(home), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None

    def call(message: dict) -> dict:
        server.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]
        readable, _, _ = select.select([server.stdout], [], [], 60)
        assert readable, f"no answer to {message}"
        return json.loads(server.stdout.readline())  # type: ignore[union-attr]

    try:
        assert call(INIT)["id"] == 1
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        server.stdin.flush()
        for n, (params, kind) in enumerate(BAD_PARAMS, start=10):
            answer = call({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
            assert answer == {"jsonrpc": "2.0", "id": n, "error": {
                "code": -32602, "message": f"Invalid params: params must be an object, not {kind}"}}
        assert call({"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {"name": 5}})["error"]["code"] == -32602
        assert call({"jsonrpc": "2.0", "id": 99, "method": 5})["error"] == {"code": -32600, "message": "Invalid request"}
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}\n')  # (no id: no answer)
        assert call({"jsonrpc": "2.0", "id": 100, "method": "tools/list"})["id"] == 100  # (the next answer is this one)
    finally:
        stderr = server.communicate(timeout=30)[1].decode()  # (closes stdin: the server ends)
    assert "Traceback" not in stderr, stderr[-3000:]
