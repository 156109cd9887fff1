"""A reference of any length is one clear line from every front end (issue 37 item 5).

A 60,000-character reference made SQLite refuse the id-prefix lookup ("LIKE or GLOB
pattern too complex"): an unexpected error in ``show``, ``export``, ``resume`` and
``tag``, a logged traceback over MCP, HTTP 500. References are bounded where they are
read (:data:`core.refs.MAX_REFERENCE`), so the CLI exits 1 with one line, MCP answers
a tool error and HTTP a 400 — through the real front ends: the CLI as a subprocess,
the MCP SDK client, HTTP via the ASGI app.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from starlette.testclient import TestClient

from core.api import Archive
from core.front.http_api import build_http_app
from core.front.mcp import build_server
from core.refs import MAX_REFERENCE

from .bad_input_corpus import build_corpus
from .hostile_support import run_cli
from .support import open_archive

LONG = "a" * 60_000
TOO_LONG = f"Bad reference: 60,000 characters is too long; a reference is at most {MAX_REFERENCE:,}"
SLUG = "poison-claude-main"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("long-refs")
    build_corpus(home)
    return home


@pytest.fixture(scope="module")
def archive(home: Path) -> Iterator[Archive]:
    with open_archive(home) as archive:
        yield archive


@pytest.fixture(scope="module")
def http(archive: Archive) -> TestClient:
    return TestClient(build_http_app(archive), base_url="http://127.0.0.1")


@pytest.mark.parametrize("command", [["show", LONG], ["export", LONG], ["resume", LONG], ["tag", LONG, "x"],
                                     ["search", "aardvark", "--session", LONG], ["show", f"{SLUG}#{'1,' * 30_000}1"]])
def test_the_cli_refuses_a_long_reference_in_one_line(home: Path, tmp_path: Path, command: list[str]) -> None:
    proc = run_cli(home, *command, cwd=tmp_path)  # (run_cli: no traceback, no "unexpected error")
    stderr = proc.stderr.decode()
    assert proc.returncode == 1 and proc.stdout == b"", stderr
    assert stderr.count("\n") == 1 and "is too long; a reference is at most 1,000" in stderr, stderr
    assert list(tmp_path.iterdir()) == []  # (export wrote nothing)


def test_the_longest_reference_allowed_is_looked_up(home: Path) -> None:
    proc = run_cli(home, "show", "a" * MAX_REFERENCE)
    assert proc.returncode == 1 and b"Unknown session_id" in proc.stderr, proc.stderr


async def test_mcp_answers_a_long_reference_with_one_line(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as client:
        calls = [("get_conversation", {"session_id_or_slug": LONG}), ("read_turn", {"session_id": LONG, "turn_number": 1}),
                 ("get_session_messages", {"session_id": LONG}), ("search_history", {"query": "aardvark", "session_id": LONG})]
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            text = result.content[0].text  # type: ignore[union-attr]
            assert result.is_error and text.startswith("Bad reference: 60,") and "\n" not in text, (name, text[:300])


@pytest.mark.parametrize("length", [MAX_REFERENCE + 1, 60_000])  # (httpx refuses URLs past 65,536)
def test_http_answers_a_long_reference_with_400(http: TestClient, length: int) -> None:
    for response in (http.get(f"/sessions/{'a' * length}/messages"),
                     http.get("/search", params={"q": "aardvark", "session_id": "a" * length})):
        assert response.status_code == 400, response.text[:300]
        assert response.json() == {"error": TOO_LONG.replace("60,000", f"{length:,}") + " (a slug, slug#4-5, "
                                   "slug#4:12, a session id or id:12)"}


# Property (round 3's kind, for references): any text as a reference, of any length,
# is an answer or one short line — never a crash, a 500, a tool error with a traceback,
# or an error line that echoes 60,000 characters back.
REFERENCES = st.one_of(
    st.text(max_size=50), st.text(alphabet="a#:-,0123456789%_*[]\\", max_size=3000),
    st.integers(0, 1_100).map(lambda n: "a" * n), st.integers(50_000, 60_000).map(lambda n: "a" * n), st.just(SLUG + "#" + "1-" * 25_000),  # (httpx: URLs < 65,536)
)


@settings(max_examples=25, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large])
@given(ref=REFERENCES)
def test_any_reference_is_an_answer_or_one_line(archive: Archive, http: TestClient, ref: str) -> None:
    response = http.get("/search", params={"q": "aardvark", "session_id": ref})
    assert response.status_code in (200, 400, 404), response.text[:300]
    if response.status_code != 200:
        assert len(response.json()["error"]) < 2 * MAX_REFERENCE, response.text[:300]

    async def mcp() -> None:
        async with Client(build_server(archive), raise_exceptions=True) as client:
            result = await client.call_tool("get_conversation", {"session_id_or_slug": ref or " "})
            if result.is_error:
                text = result.content[0].text  # type: ignore[union-attr]
                assert "\n" not in text and "Error executing tool" not in text, text[:300]
                assert len(text) < 2 * MAX_REFERENCE, text[:300]

    anyio.run(mcp)
