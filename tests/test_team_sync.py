"""`relay-search sync` against a real PostgreSQL: incremental, idempotent, resumable.

Every scenario ends by comparing the store with what the local archive says and with a
clean one-shot push into another database: same sessions, same messages at the same
positions, same passages, no duplicates, running BM25 totals equal to the tables.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from core.errors import BadInput, StoreError
from core.fixtures.demo import write_demo_corpus
from core.team import sync as team_sync
from core.team.db import connect, redact
from core.team.push import Pusher
from core.team.schema import SCHEMA_VERSION, ensure_schema
from core.team.store import TeamArchive

from .test_team_support import BOB_INGRESS, NOW, cluster, new_database, open_local, open_team, push, write_bob


def snapshot(url: str) -> dict:
    """The store's content, keyed by what is stable across databases (paths, positions)."""
    with connect(url) as conn:
        messages = conn.execute(
            "SELECT u.name, f.path, m.idx, m.role, m.type, m.text, m.turn, m.side FROM messages m "
            "JOIN files f USING (file_id) JOIN users u USING (user_id) ORDER BY 1, 2, 3"
        ).fetchall()
        docs = conn.execute(
            "SELECT f.path, d.turn, d.part, d.first_seq, d.last_seq, d.len_main, d.len_tool, d.body FROM docs d "
            "JOIN files f USING (file_id) ORDER BY 1, 2, 3"
        ).fetchall()
        postings = conn.execute(
            "SELECT f.path, d.turn, d.part, p.term, p.field, p.tf, p.dl FROM postings p JOIN docs d USING (doc_id) "
            "JOIN files f USING (file_id) ORDER BY 1, 2, 3, 4, 5"
        ).fetchall()
        sessions = conn.execute(
            "SELECT u.name, s.session_id, s.turn_count, s.message_count, s.slug, s.digest, "
            "array_length(s.file_ids, 1) FROM sessions s JOIN users u USING (user_id) ORDER BY 1, 2"
        ).fetchall()
        corpus = conn.execute("SELECT n_docs, round(sum_main), round(sum_tool) FROM corpus").fetchone()
        actual = conn.execute("SELECT count(*), round(coalesce(sum(len_main), 0)), round(coalesce(sum(len_tool), 0)) FROM docs").fetchone()
        orphans = conn.execute("SELECT count(*) FROM postings WHERE doc_id NOT IN (SELECT doc_id FROM docs)").fetchone()[0]
    assert corpus == actual, "running BM25 totals drifted from the docs table"
    assert orphans == 0
    return {"messages": messages, "docs": docs, "postings": postings, "sessions": sessions}


def expected_messages(home: Path, user: str) -> int:
    with open_local(home, user) as local:
        return sum(len(local.session_messages(s.session_id)) for s in local.list_sessions(limit=500))


def clean_push(home: Path, user: str) -> dict:
    url = new_database()
    with open_local(home, user) as local:
        push(local, url, user)
    return snapshot(url)


# --- incremental and idempotent ------------------------------------------------------------


def test_first_sync_pushes_everything_and_a_rerun_nothing(tmp_path: Path) -> None:
    write_demo_corpus(tmp_path)
    url = new_database()
    with open_local(tmp_path, "alice") as local:
        first = push(local, url, "alice")
        assert first.sessions == len(local.list_sessions(limit=500)) and first.messages > 1000 and not first.failed
        before = snapshot(url)
        again = push(local, url, "alice")
    assert not again.changed and again.messages == again.docs == 0
    assert snapshot(url) == before
    assert len(before["messages"]) == expected_messages(tmp_path, "alice")
    assert len({(m[1], m[2]) for m in before["messages"]}) == len(before["messages"])  # nothing twice


def test_appended_turns_push_only_what_is_new(tmp_path: Path) -> None:
    bob = write_bob(tmp_path)
    url = new_database()
    with open_local(tmp_path, "bob") as local:
        push(local, url, "bob")
    with connect(url) as conn:
        offset_before = conn.execute("SELECT read_offset FROM files WHERE session_id=%s", (BOB_INGRESS,)).fetchone()[0]
    t = bob["ingress"]
    t.user("One more thing: the uploads service needs a PodDisruptionBudget")
    t.tool("Write", {"file_path": "/home/bob/src/infra/k8s/pdb.yaml", "content": "minAvailable: 1"})
    t.assistant("Added a PodDisruptionBudget with minAvailable 1 for uploads.")
    t.write_under(tmp_path / ".claude" / "projects")  # same file, grown: an append
    with open_local(tmp_path, "bob") as local:
        result = push(local, url, "bob")
    assert result.sessions == 1 and result.files == 1
    assert result.messages == 4  # prompt, tool call, tool result, answer — nothing already there
    assert result.docs == 1  # only the new turn's passage
    with connect(url) as conn:
        offset_after = conn.execute("SELECT read_offset FROM files WHERE session_id=%s", (BOB_INGRESS,)).fetchone()[0]
    assert offset_after > offset_before
    assert snapshot(url) == clean_push(tmp_path, "bob")
    with open_team(url) as team:
        hit = team.search("PodDisruptionBudget")[0]
        assert (hit.session_id, hit.turn_number, hit.ref) == (BOB_INGRESS, 2, "brave-quiet-heron#1:2")
        assert team.read_turn(f"{BOB_INGRESS}:2").tools_used == ({"tool": "Write", "file": "/home/bob/src/infra/k8s/pdb.yaml", "chars": 15},)


def test_a_rewritten_file_is_replaced_not_appended(tmp_path: Path) -> None:
    bob = write_bob(tmp_path)
    url = new_database()
    with open_local(tmp_path, "bob") as local:
        push(local, url, "bob")
    path = tmp_path / ".claude" / "projects"
    from core.fixtures.claude import ClaudeTranscript

    fresh = ClaudeTranscript(BOB_INGRESS, cwd="/home/bob/src/infra", slug="brave-quiet-heron", start=bob["ingress"].start)
    fresh.user("Start over: just explain what an ingress controller is")
    fresh.assistant("An ingress controller routes external HTTP traffic to services.")
    fresh.write_under(path)  # shorter than before: rewritten, read whole again
    with open_local(tmp_path, "bob") as local:
        push(local, url, "bob")
    with open_team(url) as team:
        assert team.search("readiness probe") == []
        assert team.get_conversation(BOB_INGRESS).total_turns == 1
    assert snapshot(url) == clean_push(tmp_path, "bob")


# --- interrupted ---------------------------------------------------------------------------


def _kill(conn) -> None:
    with connect(cluster().url()) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))


def test_a_connection_lost_between_batches_resumes_with_nothing_lost_or_twice(tmp_path: Path) -> None:
    write_demo_corpus(tmp_path)
    url = new_database()
    with open_local(tmp_path, "alice") as local:
        conn = connect(url)
        ensure_schema(conn)
        with pytest.raises(StoreError, match="lost the connection to the team store .*run `relay-search sync` again") as err:
            team_sync.push(local, conn, "alice", url, batch_sessions=3, after_batch=lambda n: _kill(conn) if n == 0 else None)
        assert cluster().password not in str(err.value)
        with connect(url) as check:
            assert check.execute("SELECT count(*) FROM sessions").fetchone()[0] == 3  # the first batch is kept
        rest = push(local, url, "alice")
        assert rest.sessions == len(local.list_sessions(limit=500)) - 3
    assert snapshot(url) == clean_push(tmp_path, "alice")


def test_a_failure_inside_a_batch_rolls_the_batch_back(tmp_path: Path, monkeypatch) -> None:
    write_demo_corpus(tmp_path)
    url = new_database()
    calls = {"n": 0}
    real = Pusher._upsert_session

    def dying(self, sp):
        calls["n"] += 1
        if calls["n"] == 5:  # mid-way through the second batch, rows already written
            _kill(self.conn)
        return real(self, sp)

    monkeypatch.setattr(Pusher, "_upsert_session", dying)
    with open_local(tmp_path, "alice") as local:
        conn = connect(url)
        with pytest.raises(StoreError, match="lost the connection"):
            team_sync.push(local, conn, "alice", url, batch_sessions=3)
        monkeypatch.setattr(Pusher, "_upsert_session", real)
        with connect(url) as check:
            assert check.execute("SELECT count(*) FROM sessions").fetchone()[0] == 3
            # the second batch's files were written before the cut and rolled back with it
            assert check.execute("SELECT count(DISTINCT session_id) FROM files").fetchone()[0] == 3
        push(local, url, "alice")
    assert snapshot(url) == clean_push(tmp_path, "alice")


# --- watch ---------------------------------------------------------------------------------


def test_watch_pushes_turns_as_they_are_written(tmp_path: Path) -> None:
    bob = write_bob(tmp_path)
    url = new_database()
    stop = threading.Event()
    with open_local(tmp_path, "bob") as local:
        conn = connect(url)
        ensure_schema(conn)
        team_sync.push(local, conn, "bob", url)
        ready = threading.Event()
        runner = threading.Thread(target=team_sync.watch, args=(local, conn, "bob", url), kwargs={"stop": stop, "ready": ready}, daemon=True)
        runner.start()
        try:
            assert ready.wait(30), "the team watcher never started watching"
            t = bob["terraform"]
            t.user("Now show me the lifecycle ignore_changes block for engine_version")
            t.assistant("Use lifecycle { ignore_changes = [engine_version] } on aws_db_instance.main.")
            t.write_under(tmp_path / ".claude" / "projects")
            deadline = time.monotonic() + 15
            found = []
            while time.monotonic() < deadline and not found:
                with connect(url) as check:
                    found = check.execute("SELECT idx FROM messages WHERE text LIKE '%%ignore_changes = [engine_version]%%'").fetchall()
                time.sleep(0.2)
            assert found, "the appended turn never reached the team store"
        finally:
            stop.set()
            runner.join(timeout=10)
        conn.close()
    with TeamArchive(url, now=lambda: NOW) as team:
        assert team.search("lifecycle ignore_changes")[0].user == "bob"


# --- the command: errors, secrets, schema ----------------------------------------------------


def test_sync_command(tmp_path: Path, monkeypatch, capsys) -> None:
    from core.front.cli import main

    write_bob(tmp_path)
    url = new_database()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USER", "bob")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("RELAY_SEARCH_STORE", raising=False)
    assert main(["sync", "--to", url]) == 0
    out = capsys.readouterr().out
    assert "pushed 3 sessions" in out and "as bob" in out and redact(url) in out
    assert cluster().password not in out
    assert main(["sync", "--to", url, "--user", "robert"]) == 0  # another name: another user
    assert main(["sync", "--to", url]) == 0
    assert "nothing new to push for bob" in capsys.readouterr().out
    with open_team(url) as team:
        assert team.list_users() == ["bob", "robert"]
    assert main(["sync"]) == 1
    assert "sync needs a team store" in capsys.readouterr().err
    assert main(["sync", "--to", url, "--user", "a/b"]) == 1
    assert "Bad user name" in capsys.readouterr().err


@pytest.mark.parametrize(
    "make_url, expected",
    [
        (lambda pg: pg.url("postgres", password="Wr0ng-S3cret!"), "password authentication failed"),
        (lambda pg: pg.url("no_such_db"), 'database "no_such_db" does not exist (create it once with createdb)'),
        (lambda pg: "postgresql://relay:Wr0ng-S3cret!@127.0.0.1:1/team", "Connection refused"),
        (lambda pg: "mysql://relay:Wr0ng-S3cret!@host/team", "Not a PostgreSQL store URL"),
    ],
)
def test_a_bad_url_or_password_is_one_line_without_the_secret(make_url, expected, tmp_path, monkeypatch, capsys, caplog) -> None:
    from core.front.cli import main

    pg = cluster()
    url = make_url(pg)
    monkeypatch.setenv("HOME", str(tmp_path))
    caplog.set_level(logging.DEBUG)
    for argv in (["sync", "--to", url], ["search", "anything", "--store", url]):
        assert main(argv) == 1
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], lines
        for secret in ("Wr0ng-S3cret!", pg.password):
            assert secret not in captured.err + captured.out
            assert all(secret not in r.getMessage() for r in caplog.records)


def test_schema_is_created_migrated_and_a_newer_one_refused(tmp_path: Path) -> None:
    url = new_database()
    with connect(url) as conn:
        assert ensure_schema(conn, upto=1) == 1  # what an older relay-search left behind
        conn.execute("INSERT INTO users(name, generation) VALUES ('old-timer', 1)")
    with TeamArchive(url) as team:  # migrates on open
        assert team.list_users() == []  # a user with no sessions lists nothing…
    with connect(url) as conn:
        assert conn.execute("SELECT value FROM relay_meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
        assert conn.execute("SELECT name, last_sync FROM users").fetchall() == [("old-timer", None)]  # …but is kept
        conn.execute("UPDATE relay_meta SET value='99' WHERE key='schema_version'")
    with pytest.raises(StoreError, match="schema version 99, newer than this relay-search understands .*upgrade relay-search"):
        TeamArchive(url)
    with connect(url) as conn:
        conn.execute("UPDATE relay_meta SET value=%s WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        conn.execute("UPDATE relay_meta SET value='1' WHERE key='tokenizer'")
    with pytest.raises(StoreError, match="tokenizer version 1"):
        TeamArchive(url)
    with pytest.raises(BadInput):
        TeamArchive("http://example.com/db")


def test_a_store_from_before_usage_fills_it_on_the_next_sync(tmp_path: Path) -> None:
    """v2 → v3: the usage table appears and each member's next sync reads files whole again."""
    corpus = write_demo_corpus(tmp_path / "alice")
    url = new_database()
    with open_local(tmp_path / "alice", "alice") as local:
        push(local, url, "alice")
        want = local.usage_report(by="session").to_dict()
        with connect(url) as conn:  # what a v2 store looks like
            conn.execute("DROP TABLE usage")
            conn.execute("UPDATE relay_meta SET value='2' WHERE key='schema_version'")
        with TeamArchive(url) as team:  # migrates on open: an empty usage table
            assert team.usage_report().total.responses == 0
        push(local, url, "alice")
        with TeamArchive(url) as team:
            assert team.usage_report(by="session").to_dict() == want
            for sid in corpus.session_ids:  # read whole again: nothing doubled
                assert [m.to_dict() for m in team.session_messages(sid)] == [m.to_dict() for m in local.session_messages(sid)]


def test_concurrent_first_opens_migrate_once() -> None:
    url = new_database()
    errors = []

    def open_one() -> None:
        try:
            with connect(url) as conn:
                ensure_schema(conn)
        except Exception as exc:  # pragma: no cover - the assertion reports it
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM corpus").fetchone()[0] == 1
