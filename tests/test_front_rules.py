"""Rules every front end applies alike (issue 24, items 7 and 8), through the real ones:
the CLI as a subprocess, the MCP SDK client, HTTP via the ASGI app.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
