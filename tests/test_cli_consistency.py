"""The CLI agrees with the app and the demo (issue 15): ``--demo`` with every
subcommand, ``show --handoff``, one exit rule, plurals, relative dates, and a
progress line on stderr only in a terminal. Real subprocesses of ``relay-search``.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.api import Archive
from core.config import Config
from core.errors import BadInput
from core.fixtures.demo import CHAIN_SLUG, DEFAULT_NOW, write_demo_corpus
from core.timeutil import parse_date, parse_range

SCRIPT = Path(sys.executable).with_name("relay-search")


def run(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("cli-consistency")
    write_demo_corpus(home)
    assert run(home, "index").returncode == 0
    return home


# --- --demo goes with every subcommand ----------------------------------------------------


def test_demo_works_with_every_reading_subcommand(tmp_path):
    # An empty HOME: without --demo there is nothing; with it, the README's examples work.
    plain = run(tmp_path, "show", f"{CHAIN_SLUG}#4-5")
    assert plain.returncode == 1 and "Unknown" in plain.stderr
    shown = run(tmp_path, "--demo", "show", f"{CHAIN_SLUG}#4-5")
    assert shown.returncode == 0, shown.stderr
    assert f"reference: {CHAIN_SLUG}#4-5" in shown.stdout
    after = run(tmp_path, "show", "--demo", f"{CHAIN_SLUG}#4:0")  # after the subcommand too
    assert after.returncode == 0, after.stderr
    found = json.loads(run(tmp_path, "--demo", "search", "bm25", "--json").stdout)["results"]
    assert found and all(h["project"] for h in found)
    listed = json.loads(run(tmp_path, "--demo", "list", "--json").stdout)["sessions"]
    assert CHAIN_SLUG in {s["slug"] for s in listed}
    assert run(tmp_path, "--demo", "index", "--stats").returncode == 0
    assert not (tmp_path / ".claude").exists()  # the demo never writes into your own ~/.claude
    assert (tmp_path / ".cache" / "relay-search-demo" / ".claude" / "projects").is_dir()


def test_the_demo_app_says_how_to_reach_the_demo_from_the_cli(tmp_path):
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", ""), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen([str(SCRIPT), "--demo"], stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    out = b""

    def read_for(seconds: float) -> None:
        nonlocal out
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    out += os.read(leader, 65536)
                except OSError:
                    return

    try:
        read_for(8)  # the app starts and draws
        os.write(leader, b"\x11")  # ctrl+q
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            read_for(0.5)
        read_for(0.5)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    assert proc.returncode == 0
    text = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", out).decode("utf-8", "replace")
    assert f"relay-search --demo show {CHAIN_SLUG}#4-5" in text


# --- show --handoff ------------------------------------------------------------------------


def test_show_handoff_prints_the_block_the_app_copies(home):
    proc = run(home, "show", f"{CHAIN_SLUG}#4-5", "--handoff")
    assert proc.returncode == 0, proc.stderr
    with Archive.open(Config.from_env({"HOME": str(home)}), sync=False) as archive:
        assert proc.stdout == archive.reference_block(f"{CHAIN_SLUG}#4-5") + "\n"


# --- one exit rule ---------------------------------------------------------------------------


def test_one_exit_rule_empty_results_are_0_in_text_and_json_errors_are_1(home):
    for args in (("search", "zzqxjv"), ("search", "zzqxjv", "--json"), ("list", "--project", "nope"), ("list", "--project", "nope", "--json")):
        proc = run(home, *args)
        assert proc.returncode == 0, args
        if "--json" not in args:
            assert proc.stdout == "" and proc.stderr.strip()  # the note goes to stderr
    for args in (("show", "no-such-slug"), ("show", "no-such-slug", "--json"), ("search", "x", "--from", "someday")):
        assert run(home, *args).returncode == 1, args


# --- plurals -----------------------------------------------------------------------------------


def test_counts_are_plural_only_when_not_one(home):
    listing = run(home, "list", "--slug", CHAIN_SLUG).stdout
    assert re.search(r"\b1 turn\b", listing) and "1 turns" not in listing
    assert f"    {CHAIN_SLUG}\n" not in listing  # the line under a session says what it was about, not its slug
    shown = run(home, "show", f"{CHAIN_SLUG}#2").stdout
    assert "(1 turn)" in shown
    one = run(home, "show", f"{CHAIN_SLUG}#4:5")  # errors too
    assert one.returncode == 1 and "(session has 1 turn)" in one.stderr
    stats = run(home, "index", "--stats").stdout
    assert "1 segment(s)" not in stats and not re.search(r"\b1 (sessions|turns|files|segments)\b", stats)


# --- relative dates ------------------------------------------------------------------------------


def test_relative_dates_are_taken_wherever_a_date_is(home):
    def ids(*args: str) -> set[str]:
        proc = run(home, "list", "--limit", "500", "--json", *args)
        assert proc.returncode == 0, (args, proc.stderr)
        return {s["session_id"] for s in json.loads(proc.stdout)["sessions"]}

    days = (time.time() - DEFAULT_NOW.timestamp()) / 86400 + 3  # three days before the demo's "now"
    relative = ids("--from", f"{int(days)}d")
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - int(days) * 86400))
    assert relative == ids("--from", iso)
    assert 0 < len(relative) < len(ids())
    for text in ("yesterday", "last week", "2w", "today"):
        assert run(home, "search", "bm25", "--from", text).returncode == 0, text
        assert run(home, "list", "--to", text).returncode == 0, text


def test_the_date_parser():
    now = DEFAULT_NOW.timestamp()
    day = 86400
    assert parse_date("7d", now=now) == now - 7 * day
    assert parse_date("2w", now=now) == parse_date("14 days ago", now=now) == now - 14 * day
    assert parse_date("last week", now=now) == now - 7 * day
    assert parse_date("last month", now=now) == now - 30 * day
    assert parse_date("3 days ago", now=now) == parse_date("3d", now=now) == now - 3 * day
    assert parse_date("12h", now=now) == now - 12 * 3600
    assert parse_date("yesterday", now=now) == parse_date("2026-11-19", now=now)
    assert parse_date("yesterday", now=now, end_of_day=True) == parse_date("2026-11-19", now=now, end_of_day=True)
    assert parse_date("2026-11-02T14:00:00Z", now=now) == parse_date("2026-11-02T14:00:00+00:00", now=now)
    assert parse_range("2026-11-01..2026-11-10", now=now) == (parse_date("2026-11-01", now=now), parse_date("2026-11-10", now=now, end_of_day=True))
    assert parse_range("3d", now=now) == (now - 3 * day, None)
    for bad in ("someday", "7x", "", "2026-11-10..2026-11-01"):
        with pytest.raises(BadInput):
            parse_range(bad, now=now)


# --- progress on stderr, only in a terminal ----------------------------------------------------


def test_search_prints_progress_on_stderr_only_in_a_terminal(tmp_path):
    write_demo_corpus(tmp_path)
    quiet = run(tmp_path, "search", "bm25")
    assert quiet.returncode == 0 and "indexing" not in quiet.stderr  # not a terminal: nothing
    write_demo_corpus(tmp_path / "again")
    env = {"HOME": str(tmp_path / "again"), "PATH": os.environ.get("PATH", "")}
    leader, follower = pty.openpty()
    proc = subprocess.Popen([str(SCRIPT), "search", "bm25"], stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    stdout, _ = proc.communicate(timeout=120)
    err = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(leader)
    assert proc.returncode == 0
    assert b"indexing" in err and b"files" in err
    assert b"\r" not in stdout and b"files" not in stdout and CHAIN_SLUG.encode() in stdout
