"""The team store answers the Archive query API like the embedded one (real PostgreSQL).

One user's archive pushed alone must read back identically — same hits with the same
BM25 scores, same listings, conversations, messages, turns, contexts, statistics and
handoff text. With three users every team query works with and without ``user``,
results say whose they are, and a reference two users share is refused as ambiguous
with the qualified form to use.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from mcp import Client

from core.api import Archive
from core.errors import BadInput, NotFound
from core.fixtures.demo import CHAIN_SLUG, write_demo_corpus
from core.front.mcp import build_server
from core.team.store import TeamArchive

from .test_team_support import BOB_INGRESS, BOB_SLUGGED, Team, new_database, open_local, open_team, push
from .test_usage import independent_count


@pytest.fixture
def solo(tmp_path: Path):
    """alice's demo archive alone in a team store, and her embedded archive."""
    corpus = write_demo_corpus(tmp_path / "alice")
    url = new_database()
    local = open_local(tmp_path / "alice", "alice")
    push(local, url, "alice")
    team = open_team(url)
    try:
        yield local, team, corpus
    finally:
        team.close()
        local.close()


@pytest.fixture(scope="module")
def team(tmp_path_factory) -> Team:
    t = Team(tmp_path_factory.mktemp("team"), new_database())
    t.push_all()
    return t


@pytest.fixture
def store(team: Team):
    archive = open_team(team.url)
    try:
        yield archive
    finally:
        archive.close()


# --- one user: both stores answer the same -------------------------------------------------


def test_the_team_store_offers_every_archive_call_and_parameter() -> None:
    """Front ends take either store: nothing Archive offers may be missing here."""
    internal = {"library"}  # the embedded store's in-memory view of one user; no front end reads it
    for name, member in inspect.getmembers(Archive):
        if name.startswith("_") or name in internal:
            continue
        assert hasattr(TeamArchive, name), name
        if callable(member) and not isinstance(inspect.getattr_static(Archive, name), property):
            want = inspect.signature(member).parameters
            got = inspect.signature(getattr(TeamArchive, name)).parameters
            takes_any = any(p.kind is p.VAR_KEYWORD for p in got.values())
            missing = [p for p in want if p not in got and not (takes_any and want[p].kind is want[p].KEYWORD_ONLY)]
            assert not missing, (name, missing)



def test_same_queries_same_answers_on_both_stores(solo) -> None:
    local, team, corpus = solo
    for query, expected in corpus.queries:
        a, b = local.search(query, limit=10), team.search(query, limit=10)
        assert b and b[0].session_id == expected, query
        assert [h.ref for h in a] == [h.ref for h in b], query
        assert [round(h.score, 3) for h in a] == [round(h.score, 3) for h in b], query
        assert all(h.user == "alice" for h in b)
    # filters go through the same code
    for kw in ({"project": "billing-api"}, {"slug": CHAIN_SLUG}, {"session_id": f"{CHAIN_SLUG}#2"}, {"agent": "claude"},
               {"date_from": "2026-11-18"}, {"date_to": "2026-11-15"}, {"user": "alice"}, {"tags": ["keep"]}):  # fmt: skip
        assert [h.ref for h in local.search("index", limit=20, **kw)] == [h.ref for h in team.search("index", limit=20, **kw)], kw
    assert team.search("index", user="nobody") == []


def test_token_usage_is_identical_on_both_stores(solo) -> None:
    local, team, corpus = solo
    for by in ("day", "week", "model", "project", "session", "agent"):
        assert local.usage_report(by=by).to_dict() == team.usage_report(by=by).to_dict(), by
    files = [p for p in corpus.root.rglob("*.jsonl") if not p.name.startswith("agent-acompact")]
    assert local.usage_report().total.responses == independent_count(files, [], [])["claude"][4]
    assert team.usage_report(user="nobody").total.responses == 0
    ids = list(corpus.session_ids)
    assert {k: v.to_dict() for k, v in local.sessions_usage(ids).items()} == {k: v.to_dict() for k, v in team.sessions_usage(ids).items()}
    assert local.session_usage(CHAIN_SLUG).to_dict() == team.session_usage(CHAIN_SLUG).to_dict()
    assert local.resume_plan(CHAIN_SLUG) == team.resume_plan(CHAIN_SLUG)


def test_reading_is_identical_on_both_stores(solo) -> None:
    local, team, corpus = solo
    assert [s.to_dict() for s in local.list_sessions(limit=100)] == [s.to_dict() for s in team.list_sessions(limit=100)]
    assert [s.to_dict() for s in local.list_sessions(slug=CHAIN_SLUG)] == [s.to_dict() for s in team.list_sessions(slug=CHAIN_SLUG)]
    for sid in corpus.session_ids:
        assert [m.to_dict() for m in local.session_messages(sid)] == [m.to_dict() for m in team.session_messages(sid)], sid
        assert local.session_statistics(sid) == {k: v for k, v in team.session_statistics(sid).items() if k != "user"}
    for ref in (CHAIN_SLUG, f"{CHAIN_SLUG}#2-3", corpus.compacted_session_id):
        assert local.get_conversation(ref).to_dict() == team.get_conversation(ref).to_dict()
        assert local.reference_block(ref) == team.reference_block(ref)
        assert local.content_markdown(ref, 3000) == team.content_markdown(ref, 3000)
    longest = max(local.list_sessions(limit=100), key=lambda s: s.turn_count).session_id
    for ref in (f"{CHAIN_SLUG}#4:0", f"{longest}:3", f"{longest}:250"):
        assert local.read_turn(ref) == team.read_turn(ref)
    first = corpus.chain_session_ids[0]  # has a subagent: its messages belong to no turn
    null_turn = next(m for m in local.session_messages(first) if m.turn is None)
    for kw in ({}, {"before": 1, "after": 30, "include_tool_outputs": False}):
        assert local.get_message_context(first, null_turn.sequence, **kw).to_dict() == team.get_message_context(
            first, null_turn.sequence, **kw
        ).to_dict()
    assert [m.to_dict() for m in local.iter_session_messages(CHAIN_SLUG, since="2026-11-19", include_tools=True)] == [
        m.to_dict() for m in team.iter_session_messages(CHAIN_SLUG, since="2026-11-19", include_tools=True)
    ]
    assert local.list_projects() == team.list_projects()
    stats = team.stats()
    assert stats.sessions == len(corpus.session_ids) and stats.documents > 0 and stats.files >= stats.sessions


def test_error_texts_are_the_embedded_ones(solo) -> None:
    local, team, _ = solo
    for call in (
        lambda a: a.get_conversation("no-such-slug"),
        lambda a: a.get_conversation(f"{CHAIN_SLUG}#7"),
        lambda a: a.read_turn(f"{CHAIN_SLUG}#1:999"),
        lambda a: a.search("x", limit=0),
        lambda a: a.list_sessions(date_from="the day before"),
    ):
        with pytest.raises((BadInput, NotFound)) as want:
            call(local)
        with pytest.raises(type(want.value)) as got:
            call(team)
        assert str(got.value) == str(want.value)


# --- three users ------------------------------------------------------------------------------


def test_search_with_and_without_user(team: Team, store) -> None:
    everyone = store.search("staging certificates certbot", limit=10)
    assert everyone[0].user == "bob" and everyone[0].session_id == BOB_SLUGGED
    hits = store.search("watermark skew", limit=10)
    assert {h.user for h in hits} == {"alice", "carol"}  # the same session in two archives, each found
    assert [h.user for h in store.search("watermark skew", user="carol")] == ["carol"] * len(store.search("watermark skew", user="carol"))
    assert store.search("certbot", user="alice") == []
    shared = [h for h in hits if h.session_id == hits[0].session_id]
    assert {h.ref.split("/")[0] for h in shared} == {"alice", "carol"}  # ambiguous names come qualified
    assert all(h.to_dict()["user"] for h in everyone)
    assert store.search("ingress timeout", project="infra")[0].session_id == BOB_INGRESS
    assert store.search("ingress timeout", project="infra", user="alice") == []


def test_list_sessions_users_projects_with_and_without_user(team: Team, store) -> None:
    n_demo = len(team.corpus.session_ids)
    assert len(store.list_sessions(limit=500)) == 2 * n_demo + 3
    assert {s.user for s in store.list_sessions(user="bob", limit=500)} == {"bob"}
    assert len(store.list_sessions(user="bob")) == 3
    chain = store.list_sessions(slug=CHAIN_SLUG, limit=50)
    assert [(s.user, s.session_number) for s in chain if s.user == "bob"] == [("bob", 1)]
    assert [s.session_number for s in chain if s.user == "alice"] == [1, 2, 3, 4, 5]
    assert store.list_users() == ["alice", "bob", "carol"]
    assert store.list_users(project="infra") == ["bob"]
    assert store.list_users(date_from="2099-01-01") == []
    assert store.list_projects(user="bob") == ["infra", "terraform"]
    assert set(store.list_projects()) >= {"infra", "billing-api"}
    assert store.list_sessions(date_from="2026-11-11", date_to="2026-11-11", user="bob")[0].session_id == BOB_INGRESS


def test_reading_needs_the_user_only_when_ambiguous(team: Team, store) -> None:
    with pytest.raises(BadInput, match=r"Ambiguous reference 'velvet-puzzling-eclipse': users alice, bob, carol"):
        store.get_conversation(CHAIN_SLUG)
    bobs = store.get_conversation(CHAIN_SLUG, user="bob")
    assert bobs.sessions[0].session_id == BOB_SLUGGED and bobs.sessions[0].user == "bob"
    assert bobs.ref == f"bob/{CHAIN_SLUG}#1"  # a one-session chain, as the embedded store writes it
    assert store.get_conversation(f"alice/{CHAIN_SLUG}#2").sessions[0].session_number == 2
    assert store.get_conversation(BOB_INGRESS).sessions[0].user == "bob"  # unique: no user needed
    assert store.read_turn(f"{BOB_INGRESS}:1").user_text.startswith("Also add a readiness probe")
    with pytest.raises(NotFound, match="Unknown user: dave"):
        store.get_conversation(f"dave/{CHAIN_SLUG}")
    with pytest.raises(BadInput, match="names user 'bob', not 'alice'"):
        store.get_conversation(f"bob/{CHAIN_SLUG}", user="alice")
    block = store.reference_block(f"carol/{CHAIN_SLUG}#3")
    assert f"relay-search reference: carol/{CHAIN_SLUG}#3" in block and f'session_id_or_slug="carol/{CHAIN_SLUG}"' in block
    # get_message_context by sequence, also where the message's turn is null
    sid = team.corpus.chain_session_ids[0]
    null_turn = next(m for m in store.session_messages(sid, user="carol") if m.turn is None)
    ctx = store.get_message_context(sid, null_turn.sequence, user="carol", before=2, after=2)
    assert ctx.current.sequence == null_turn.sequence and ctx.current.turn is None
    with pytest.raises(BadInput, match="Ambiguous"):
        store.get_message_context(sid, null_turn.sequence)


def test_session_statistics(team: Team, store) -> None:
    stats = store.session_statistics(BOB_INGRESS)
    assert stats["user"] == "bob" and stats["turns"] == 2 and stats["tool_calls"] == 2
    assert stats["tool_calls_by_name"] == {"Read": 1, "Edit": 1}
    assert stats["first_activity"].startswith("2026-11-11") and stats["last_activity"] >= stats["first_activity"]
    with open_local(team.homes["alice"], "alice") as local:
        want = local.session_statistics(f"{CHAIN_SLUG}#4")
    # the same counts; the ref names the user (both users have this slug)
    assert {**want, "ref": f"alice/{CHAIN_SLUG}#4", "user": "alice"} == store.session_statistics(f"{CHAIN_SLUG}#4", user="alice")


async def test_mcp_tools_on_the_team_store(team: Team, store) -> None:
    async with Client(build_server(store), raise_exceptions=True) as c:
        got = (await c.call_tool("list_users", {})).structured_content
        assert got == {"users": ["alice", "bob", "carol"]}
        hits = (await c.call_tool("search_history", {"query": "kubernetes ingress 504", "user": "bob"})).structured_content
        assert hits["results"][0]["user"] == "bob" and hits["results"][0]["session_id"] == BOB_INGRESS
        conv = (await c.call_tool("get_conversation", {"session_id_or_slug": CHAIN_SLUG, "user": "alice", "session": "5"})).structured_content
        assert conv["sessions"][0]["user"] == "alice" and conv["sessions"][0]["session_number"] == 5
        err = await c.call_tool("get_conversation", {"session_id_or_slug": CHAIN_SLUG})
        assert err.is_error and "Ambiguous" in err.content[0].text
        stats = (await c.call_tool("get_session_statistics", {"session_id": BOB_INGRESS})).structured_content
        assert stats["user"] == "bob" and stats["turns"] == 2
        msgs = (await c.call_tool("get_session_messages", {"session_id": f"{CHAIN_SLUG}#1", "user": "carol"})).structured_content
        assert msgs["messages"]


def test_cli_reads_the_team_store(team: Team, capsys, monkeypatch) -> None:
    from core.front.cli import main

    monkeypatch.setenv("HOME", str(team.homes["alice"]))
    assert main(["search", "terraform destroy database", "--json", "--store", team.url]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["results"][0]["user"] == "bob"
    monkeypatch.setenv("RELAY_SEARCH_STORE", team.url)
    assert main(["list", "--user", "bob", "--json"]) == 0
    assert {s["user"] for s in json.loads(capsys.readouterr().out)["sessions"]} == {"bob"}
    assert main(["show", f"bob/{CHAIN_SLUG}", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"][0]["session_id"] == BOB_SLUGGED
    assert main(["show", CHAIN_SLUG]) == 1
    assert "Ambiguous reference" in capsys.readouterr().err


def test_team_search_keeps_the_phrase_rule(team: Team, store) -> None:
    exact = store.search('"watermark skew"', limit=10)
    assert exact and all(h.exact_phrase is True for h in exact)
    assert {h.user for h in exact} == {"alice", "carol"}
    apart = store.search('"skew watermark"', limit=10)  # both words, never in this order
    assert apart and all(h.exact_phrase is False for h in apart)


def test_a_quoted_command_is_a_phrase_on_both_stores(solo) -> None:
    """Issue 34: a phrase matches a tool call's input (the catalog's and the store's ``seen``), and
    the notes (a compaction summary, a /model answer) are searched alike."""
    local, team, _ = solo
    for query in ('"python bench/run.py --queries 5000"', '"run.py --queries"', "opus"):
        a, b = local.search(query, limit=10), team.search(query, limit=10)
        assert a and [h.ref for h in a] == [h.ref for h in b], query
        assert [h.exact_phrase for h in a] == [h.exact_phrase for h in b], query
    assert all(h.exact_phrase for h in local.search('"python bench/run.py --queries 5000"', limit=10))
