"""File and project dir names that are not UTF-8 (issue 11 point 4).

Linux names are bytes: a project dir ``-home-me-caf\\xe9`` (Latin-1) or a file name
with a stray byte is a transcript like any other. It is indexed, read back and
shown with the odd bytes escaped (``\\xe9``) — in the CLI, its JSON, MCP and HTTP —
and never breaks a command.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
from mcp import Client

from core.front.http_api import build_http_app
from core.front.mcp import build_server

from .hostile_support import cli_json, exchange, record, run_cli
from .support import open_archive

ODD = "55555555-5555-4555-8555-555555555555"
PLAIN = "66666666-6666-4666-8666-666666666666"
TS = "2026-01-03T10:00:00Z"


def _write(path: bytes, records: list[dict], mode: str = "wb") -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as handle:
        handle.write(b"".join(json.dumps(r).encode() + b"\n" for r in records))


def _corpus(home: Path) -> tuple[bytes, str]:
    projects = os.fsencode(home / ".claude" / "projects")
    odd_dir = projects + b"/-home-me-caf\xe9"
    _write(odd_dir + b"/" + ODD.encode() + b".jsonl", exchange(ODD, "pull a ristretto shot", "grind finer", TS))
    _write(odd_dir + b"/notes-\xff\xfe.jsonl", exchange("77777777-7777-4777-8777-777777777777", "descale the grouphead", "citric", TS, ids=("u7", "a7")))
    _write(projects + b"/-home-me-plain/" + PLAIN.encode() + b".jsonl", exchange(PLAIN, "steam the oat milk", "cooler", TS, ids=("u2", "a2")))
    return odd_dir, "-home-me-caf\\xe9"


def test_cli_indexes_and_shows_odd_names(tmp_path):
    odd_dir, shown_dir = _corpus(tmp_path)
    stats = run_cli(tmp_path, "index", "--stats")
    assert stats.returncode == 0 and b"3 sessions" in stats.stdout
    sessions = {s["session_id"]: s for s in cli_json(tmp_path, "list")["sessions"]}
    assert set(sessions) == {ODD, PLAIN, "77777777-7777-4777-8777-777777777777"}
    assert sessions[ODD]["files"] == [f"{tmp_path}/.claude/projects/{shown_dir}/{ODD}.jsonl"]
    assert sessions["77777777-7777-4777-8777-777777777777"]["files"][0].endswith(f"{shown_dir}/notes-\\xff\\xfe.jsonl")
    hits = cli_json(tmp_path, "search", "ristretto")["results"]
    assert [h["session_id"] for h in hits] == [ODD]
    shown = run_cli(tmp_path, "show", ODD)
    assert shown.returncode == 0 and b"grind finer" in shown.stdout
    text = run_cli(tmp_path, "list").stdout
    text.decode("utf-8")  # the terminal gets valid UTF-8
    # an appended line is read incrementally from the exact path the catalog kept
    _write(odd_dir + b"/" + ODD.encode() + b".jsonl", [record("user", "u9", "a1", ODD, "and a lungo", TS)], mode="ab")
    assert {h["session_id"] for h in cli_json(tmp_path, "search", "lungo")["results"]} == {ODD}
    assert run_cli(tmp_path, "index", "--json").returncode == 0


async def test_mcp_and_http_answer_with_escaped_names(tmp_path):
    _, shown_dir = _corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        async with Client(build_server(archive), raise_exceptions=True) as c:
            result = await c.call_tool("list_sessions", {})
            assert not result.is_error, result.content
            files = [f for s in result.structured_content["sessions"] for f in s["files"]]
            assert any(f.endswith(f"{shown_dir}/{ODD}.jsonl") for f in files)
            found = await c.call_tool("search_history", {"query": "ristretto"})
            assert [h["session_id"] for h in found.structured_content["results"]] == [ODD]
            convo = await c.call_tool("get_conversation", {"session_id_or_slug": ODD})
            assert not convo.is_error and "grind finer" in json.dumps(convo.structured_content)
        transport = httpx.ASGITransport(app=build_http_app(archive))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            response = await http.get("/sessions")
            assert response.status_code == 200
            body = response.json()
            files = [f for s in body["sessions"] for f in s["files"]]
            assert any(f.endswith(f"{shown_dir}/{ODD}.jsonl") for f in files)


def test_team_sync_pushes_odd_names_escaped(tmp_path):
    """``relay-search sync``: the store's text columns get the escaped name."""
    from .test_team_support import new_database, open_local, open_team, push

    _, shown_dir = _corpus(tmp_path)
    untimed = "88888888-8888-4888-8888-888888888888"  # and an unknown time (NaN in the store)
    _write(os.fsencode(tmp_path / ".claude" / "projects") + b"/-home-me-plain/" + untimed.encode() + b".jsonl",
           exchange(untimed, "pull a ristretto shot", "grind finer", "zzz-garbage", ids=("u8", "a8")))  # fmt: skip
    url = new_database()
    with open_local(tmp_path, "alice") as local:
        first = push(local, url, "alice")
        assert not first.failed and first.sessions == 4
        _write(os.fsencode(tmp_path / ".claude" / "projects") + b"/-home-me-caf\xe9/" + ODD.encode() + b".jsonl",
               [record("user", "u9", "a1", ODD, "and a lungo", TS)], mode="ab")  # fmt: skip
        local.sync()
        again = push(local, url, "alice")
        assert not again.failed and again.messages == 1
    with open_team(url) as team:
        hits = team.search("lungo")
        assert [h.session_id for h in hits] == [ODD]
        assert [h.session_id for h in team.search("ristretto")] == [ODD, untimed]  # a tie: unknown time last
        assert [h.session_id for h in team.search("ristretto", date_to="2100-01-01")] == [ODD]
        [info] = [s for s in team.list_sessions() if s.session_id == ODD]
        assert info.files[0].endswith(f"{shown_dir}/{ODD}.jsonl")
