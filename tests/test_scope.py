"""Scope is a property of the process, not of the cache (issue 12, points 1–3).

Several processes share one cache (``~/.cache/relay-search``): the app, an unscoped
``serve``, a per-project ``mcp --pattern``, CLI calls. The cache holds every project;
each process filters by its own ``--pattern`` at query time, for every agent (a
pattern matches the session's project path in Claude's dir-name form). These tests
run real processes of different scopes side by side on one cache.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from mcp import Client

from core.api import Archive
from core.archive.scope import Scope, project_dir_name, scope_key
from core.config import Config
from core.errors import NotFound
from core.fixtures.ash import AshSession
from core.fixtures.codex import CodexRollout
from core.fixtures.gemini import GeminiChat

from .support import transcript
from .test_mcp import relay_search_mcp

SCRIPT = Path(sys.executable).with_name("relay-search")
BILLING = "/home/me/work/billing"
WEB = "/home/me/work/web"
BILLING_DIR = "-home-me-work-billing"  # the pattern a Claude Code user writes for it
WORD = "zeppelin"
T0 = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)


def write_corpus(home: Path) -> dict[str, set[str]]:
    """One session per agent in each of two projects (and an Ash session with no cwd).

    Returns the session ids per project: ``billing``, ``web``, ``none``.
    """
    ids: dict[str, set[str]] = {"billing": set(), "web": set(), "none": set()}
    config = Config.from_env({"HOME": str(home)})
    for n, (name, cwd) in enumerate((("billing", BILLING), ("web", WEB))):
        start = T0 + timedelta(hours=n)
        claude = transcript(f"{n + 1:08d}-0000-4000-8000-00000000000{n}", cwd=cwd, start=start)
        claude.user(f"Find the {WORD} in {name}")
        claude.assistant(f"Found the {WORD} in {name}.")
        claude.write_under(config.claude_projects)
        ids[name].add(claude.session_id)
        codex = CodexRollout(config.codex_home, cwd=cwd, start=start + timedelta(minutes=1))
        codex.user(f"codex {WORD} {name}").assistant(f"codex answer {WORD}")
        ids[name].add(codex.session_id)
        gemini = GeminiChat(config.gemini_home, project=name, session_id=f"5e551011-0000-4000-8000-00000000000{n}",
                            start=start + timedelta(minutes=2), project_root=cwd)  # fmt: skip
        gemini.user(f"gemini {WORD} {name}")
        gemini.gemini(f"gemini answer {WORD}")
        ids[name].add(gemini.session_id)
        ash = AshSession(config.ash_home, f"telegram_{n}_1", start=start + timedelta(minutes=3), cwd=cwd)
        # Unique record ids: sessions sharing ids and text would be linked as continuations.
        ash.user(f"ash {WORD} {name}", message_id=f"{name}-u1")
        ash.assistant(f"ash answer {WORD}", message_id=f"{name}-a1")
        ids[name].add(ash.key)
    loose = AshSession(config.ash_home, "telegram_9_9", start=T0 + timedelta(hours=3))
    loose.user(f"ash {WORD} nowhere", message_id="none-u1")
    loose.assistant(f"ash answer {WORD}", message_id="none-a1")
    ids["none"].add(loose.key)
    return ids


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, dict[str, set[str]]]:
    return tmp_path, write_corpus(tmp_path)


def everything(ids: dict[str, set[str]]) -> set[str]:
    return ids["billing"] | ids["web"] | ids["none"]


# --- what a pattern matches, per agent ------------------------------------------------------


def test_scope_key_is_the_project_path_in_claude_dir_form() -> None:
    assert project_dir_name(BILLING) == BILLING_DIR
    assert scope_key("claude", BILLING_DIR, BILLING) == BILLING_DIR
    assert scope_key("claude", "some-dir-name", None) == "some-dir-name"  # Claude: its project dir
    for agent in ("codex", "gemini", "ash"):
        assert scope_key(agent, "anything", BILLING) == BILLING_DIR
        assert scope_key(agent, "anything", None) == ""
    assert Scope(f"{BILLING_DIR}*").matches("codex", "x", BILLING + "/sub")
    # a trailing / is the same directory (and the root stays the root)
    assert scope_key("codex", "x", BILLING + "/") == scope_key("gemini", "x", BILLING + "//") == BILLING_DIR
    assert scope_key("ash", "x", "/home/me/TAX/") == "-home-me-TAX"
    assert scope_key("codex", "x", "/") == scope_key("codex", "x", "//") == "-"
    assert not Scope("*billing*").matches("ash", "telegram", None)
    assert Scope("*").matches("ash", "telegram", None)


@pytest.mark.parametrize("pattern", [BILLING_DIR, "*billing*", "-home-me-work-b*"])
def test_pattern_limits_every_agent(corpus, pattern: str) -> None:
    home, ids = corpus
    with Archive.open(Config.from_env({"HOME": str(home)}, pattern=pattern)) as archive:
        sessions = archive.list_sessions(limit=500)
        assert {s.session_id for s in sessions} == ids["billing"]
        assert sorted(s.agent for s in sessions) == ["ash", "claude", "codex", "gemini"]
        hits = archive.search(WORD, limit=50)
        assert hits and {h.session_id for h in hits} == ids["billing"]
        assert archive.search(WORD, limit=50, agent="codex")[0].session_id in ids["billing"]
        assert archive.list_projects() == ["billing"]
        for sid in ids["web"] | ids["none"]:
            with pytest.raises(NotFound):
                archive.resolve(sid)
            with pytest.raises(NotFound):
                archive.session_statistics(sid)
        stats = archive.stats()
        assert stats.sessions == 4 and stats.agents == {"ash": 1, "claude": 1, "codex": 1, "gemini": 1}
    with Archive.open(Config.from_env({"HOME": str(home)})) as archive:  # same cache, no pattern
        assert {s.session_id for s in archive.list_sessions(limit=500)} == everything(ids)
        assert {h.session_id for h in archive.search(WORD, limit=50)} == everything(ids)
        assert archive.stats().sessions == 9


def test_a_trailing_slash_in_a_sessions_directory_keeps_it_in_scope(tmp_path: Path) -> None:
    """Codex, Gemini and Ash record the cwd as the shell had it: ``/home/me/work/billing/``
    is the billing project (not ``-home-me-work-billing-``), through the CLI as a user runs it."""
    config = Config.from_env({"HOME": str(tmp_path)})
    codex = CodexRollout(config.codex_home, cwd=BILLING + "/", start=T0)
    codex.user(f"codex {WORD} slash").assistant(f"codex answer {WORD}")
    gemini = GeminiChat(config.gemini_home, project="billing", session_id="5e551011-0000-4000-8000-000000000009",
                        start=T0 + timedelta(minutes=1), project_root=BILLING + "/")  # fmt: skip
    gemini.user(f"gemini {WORD} slash")
    gemini.gemini(f"gemini answer {WORD}")
    ash = AshSession(config.ash_home, "telegram_7_1", start=T0 + timedelta(minutes=2), cwd=BILLING + "//")
    ash.user(f"ash {WORD} slash", message_id="slash-u1")
    ash.assistant(f"ash answer {WORD}", message_id="slash-a1")
    wanted = {codex.session_id, gemini.session_id, ash.key}
    assert listed(tmp_path, "list", "--pattern", BILLING_DIR, "--json") == wanted
    assert listed(tmp_path, "list", "--pattern", "-home-me-work-web", "--json") == set()
    proc = run_cli(tmp_path, "search", WORD, "--pattern", BILLING_DIR, "--json")
    assert {hit["session_id"] for hit in json.loads(proc.stdout)["results"]} == wanted


# --- the CLI: patterns that start with "-", in every form ------------------------------------


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if "PYTHONPATH" in os.environ:  # a checkout run in place (a worktree) tests its own code
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    proc = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def listed(home: Path, *args: str) -> set[str]:
    proc = run_cli(home, *args)
    assert proc.returncode == 0, proc.stderr
    return {s["session_id"] for s in json.loads(proc.stdout)["sessions"]}


def test_cli_accepts_a_pattern_starting_with_dash_in_every_form(corpus) -> None:
    home, ids = corpus
    forms = [
        ("--pattern", BILLING_DIR, "list", "--json"),
        (f"--pattern={BILLING_DIR}", "list", "--json"),
        ("list", "--pattern", "-home-me-work-bil*", "--json"),
        ("list", "--json", "--pattern=-home-me-work-bil*"),
    ]
    for args in forms:
        assert listed(home, *args) == ids["billing"], args
    proc = run_cli(home, "search", WORD, "--pattern", BILLING_DIR, "--json", "--limit", "50")
    assert proc.returncode == 0, proc.stderr
    assert {h["session_id"] for h in json.loads(proc.stdout)["results"]} == ids["billing"]
    # A scoped run wrote the cache first; a fresh unscoped process sees everything.
    assert listed(home, "list", "--json", "--limit", "500") == everything(ids)
    assert listed(home, "list", "--json", "--pattern", "-home-me-work-web") == ids["web"]


def test_the_app_module_accepts_a_pattern_starting_with_dash() -> None:
    """``python -m tui`` (the app's own entry, for working on it) parses patterns alike."""
    from tui.__main__ import parse_args

    assert parse_args(["--pattern", BILLING_DIR]).pattern == BILLING_DIR
    assert parse_args([f"--pattern={BILLING_DIR}", "--demo"]).pattern == BILLING_DIR


# --- live processes of different scopes on one cache -----------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """``relay-search serve`` as a subprocess on a free loopback port."""

    def __init__(self, home: Path, *args: str) -> None:
        self.port = free_port()
        env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        if "PYTHONPATH" in os.environ:  # the same code as the CLI calls beside it (a worktree's own)
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        self.proc = subprocess.Popen([str(SCRIPT), "serve", "--port", str(self.port), *args], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
        self.url = f"http://127.0.0.1:{self.port}"

    def sessions(self) -> set[str]:
        reply = httpx.get(f"{self.url}/sessions", params={"limit": 500}, timeout=10)
        assert reply.status_code == 200, reply.text
        return {s["session_id"] for s in reply.json()["sessions"]}

    def __enter__(self) -> Serve:
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, self.proc.stderr.read() if self.proc.stderr else ""
            try:
                httpx.get(f"{self.url}/sessions", timeout=2)
                return self
            except httpx.TransportError:
                assert time.monotonic() < deadline, "serve did not start"
                time.sleep(0.1)

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        err = self.proc.stderr.read() if self.proc.stderr else ""
        assert "Traceback" not in err, err


def eventually(check, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


def test_unscoped_server_and_scoped_cli_side_by_side(corpus) -> None:
    home, ids = corpus
    with Serve(home) as server:  # the writer: it indexes everything
        assert eventually(lambda: server.sessions() == everything(ids))
        assert listed(home, "--pattern", "*work-billing", "list", "--json") == ids["billing"]
        assert listed(home, "list", "--json", "--limit", "500") == everything(ids)
        assert server.sessions() == everything(ids)  # a scoped reader changed nothing for it


def test_scoped_server_and_unscoped_cli_side_by_side(corpus) -> None:
    home, ids = corpus
    with Serve(home, "--pattern", "*work-billing") as server:  # the writer is scoped this time
        assert eventually(lambda: server.sessions() == ids["billing"])
        # Its first answer is already exactly its scope, and stays so.
        assert listed(home, "list", "--json", "--limit", "500") == everything(ids)
        assert server.sessions() == ids["billing"]
        # A new session in another project, seen live by the scoped writer's watcher:
        # the unscoped CLI sees it, the scoped server does not.
        extra = transcript("77777777-0000-4000-8000-000000000007", cwd=WEB, start=T0 + timedelta(days=1))
        extra.user(f"one more {WORD}")
        extra.assistant("done")
        extra.write_under(Config.from_env({"HOME": str(home)}).claude_projects)
        assert eventually(lambda: extra.session_id in listed(home, "list", "--json", "--limit", "500"))
        assert server.sessions() == ids["billing"]


async def test_fresh_unscoped_mcp_after_a_scoped_run_sees_everything(corpus) -> None:
    home, ids = corpus
    assert listed(home, "--pattern", "*work-billing", "list", "--json") == ids["billing"]  # wrote the cache
    async with Client(relay_search_mcp(home), raise_exceptions=True, read_timeout_seconds=30) as client:
        first = await client.call_tool("list_sessions", {"limit": 500})
        assert {s["session_id"] for s in first.structured_content["sessions"]} == everything(ids)


async def test_mcp_takes_the_pattern_as_its_positional_argument(corpus) -> None:
    home, ids = corpus
    for args in (["mcp", "-home-me-work-bil*"], ["mcp", "--pattern", BILLING_DIR], ["mcp", f"--pattern={BILLING_DIR}"]):
        server = relay_search_mcp(home)
        server = server.model_copy(update={"args": [*server.args[:-1], *args]})
        async with Client(server, raise_exceptions=True, read_timeout_seconds=30) as client:
            sessions = await client.call_tool("list_sessions", {"limit": 500})
            assert {s["session_id"] for s in sessions.structured_content["sessions"]} == ids["billing"], args
            hits = await client.call_tool("search_history", {"query": WORD, "limit": 50})
            assert {h["session_id"] for h in hits.structured_content["results"]} == ids["billing"], args


def test_a_root_gets_a_cache_of_its_own(corpus) -> None:
    """``--root`` selects other transcripts, so it gets its own cache: running with it
    changes nothing the default processes see (their cache is not re-synced to it)."""
    home, ids = corpus
    assert listed(home, "list", "--json", "--limit", "500") == everything(ids)  # the default cache
    other = home / "elsewhere"
    extra = transcript("88888888-0000-4000-8000-000000000008", cwd="/srv/other", start=T0)
    extra.user(f"elsewhere {WORD}")
    extra.assistant("ok")
    extra.write_under(other)
    claude = {s for s in everything(ids) if s[0] == "0" and s.startswith("0000")}
    assert claude and listed(home, "--root", str(other), "list", "--json", "--limit", "500") == (everything(ids) - claude) | {extra.session_id}
    with Archive.open(Config.from_env({"HOME": str(home)}), sync=False) as archive:  # no catch-up: the cache as left
        assert {s.session_id for s in archive.list_sessions(limit=500)} == everything(ids)
    assert len(list((home / ".cache" / "relay-search" / "roots").iterdir())) == 1


def _js_string_hash_base36(text: str) -> str:
    """Claude Code's suffix, written from its definition (JS: h = (h << 5) - h + charCode,
    kept to int32, then Math.abs(h).toString(36)) rather than from core's code."""
    h = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = ((h << 5) - h + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    if h >= 1 << 31:
        h -= 1 << 32
    h = abs(h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        h, r = divmod(h, 36)
        out = digits[r] + out
        if not h:
            return out


def test_project_dir_names_keep_case_and_cut_long_paths_with_a_hash() -> None:
    assert project_dir_name("/Users/Me/Work/API_v2.x") == "-Users-Me-Work-API-v2-x"  # case kept, _ and . replaced
    exact = "/" + "a" * 199  # 200 characters: kept whole
    assert project_dir_name(exact) == "-" + "a" * 199
    # (int32 hashes of both signs: "/" + "b" * 200 is negative, "/" + "e" * 200 positive)
    for long in ("/" + "b" * 200, "/" + "e" * 200, "/home/dev/" + "Projekt-é-" * 30):
        name = "".join(c if c.isascii() and c.isalnum() else "-" for c in long)
        assert project_dir_name(long) == f"{name[:200]}-{_js_string_hash_base36(long)}"
