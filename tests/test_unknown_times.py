"""An unreadable timestamp is an unknown time (issue 11 point 6).

It is null in JSON, "—" in the CLI and the app, sorts after every known time (newest
first lists, search tie-breaks), and never passes a date filter. One rule in
``core.timeutil`` decides what is readable, for every agent.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

import pytest

from core.timeutil import clean_ts, newest_first, parse_ts
from tui.formatting import clock, relative_time

from .hostile_support import cli_json, exchange, run_cli, write_jsonl

GARBAGE = ["zzz-garbage", "NaN", "[trimmed for fixture]", "", "2026-13-45T99:99:00Z", "  ", 1767225600]
GOOD = "2026-01-10T10:00:00.000Z"


def _sid(n: int) -> str:
    return f"{n:08d}-0000-4000-8000-000000000000"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    home = tmp_path_factory.mktemp("times")
    project = home / ".claude" / "projects" / "-home-t-proj"
    write_jsonl(project / f"{_sid(0)}.jsonl", exchange(_sid(0), "alpha kettle descaling", "use citric acid", GOOD, ids=("u0", "a0")))
    for n, bad in enumerate(GARBAGE, start=1):
        write_jsonl(project / f"{_sid(n)}.jsonl", exchange(_sid(n), "alpha kettle descaling", "use citric acid", bad, ids=(f"u{n}", f"a{n}")))
    assert run_cli(home, "index").returncode == 0
    return home


def test_unknown_times_are_null_and_listed_last(home):
    sessions = cli_json(home, "list")["sessions"]
    assert [s["session_id"] for s in sessions][0] == _sid(0)
    assert sessions[0]["last_timestamp"] == GOOD
    assert len(sessions) == 1 + len(GARBAGE)
    for s in sessions[1:]:
        assert s["first_timestamp"] is None and s["last_timestamp"] is None, s


def test_unknown_times_never_pass_a_date_filter(home):
    for flags in (("--to", "2025-01-01"), ("--from", "2000-01-01"), ("--from", "2026-01-01", "--to", "2026-12-31")):
        listed = [s["session_id"] for s in cli_json(home, "list", *flags)["sessions"]]
        found = {h["session_id"] for h in cli_json(home, "search", "kettle", *flags)["results"]}
        expected = [_sid(0)] if "2026-12-31" in flags or "2000-01-01" in flags else []
        assert listed == expected, flags
        assert found == set(expected), flags


def test_search_ties_put_unknown_times_last(home):
    hits = cli_json(home, "search", "kettle", "--limit", "20")["results"]
    assert len({h["score"] for h in hits}) == 1  # the same text: only time breaks the tie
    assert hits[0]["session_id"] == _sid(0) and hits[0]["timestamp"] == GOOD
    assert all(h["timestamp"] is None for h in hits[1:])
    # … and among unknown times, the order is the same on every run
    assert [h["session_id"] for h in hits] == [h["session_id"] for h in cli_json(home, "search", "kettle", "--limit", "20")["results"]]


def test_cli_shows_unknown_times_as_a_dash(home):
    out = run_cli(home, "list").stdout.decode()
    rows = [line for line in out.splitlines() if re.search(r"\b\d+ turns?\b", line)]
    assert len(rows) == 1 + len(GARBAGE)
    assert rows[0].removesuffix(" ●live").rstrip().endswith("2026-01-10 10:00")
    for row in rows[1:]:
        assert row.removesuffix(" ●live").rstrip().endswith("—"), row
    for bad in ("zzz", "NaN", "trimmed", "2026-13"):
        assert bad not in out
    shown = run_cli(home, "show", _sid(1)).stdout.decode()
    assert "zzz" not in shown and "turn 0 · —" in shown
    text = run_cli(home, "search", "kettle", "--limit", "20").stdout.decode()
    assert "zzz" not in text and text.count("· —]") == len(GARBAGE)


@pytest.mark.parametrize("value", [*GARBAGE, None, 12, 1.5, math.nan, [], {}])
def test_one_rule_for_unknown_times(value):
    assert clean_ts(value) is None
    assert math.isnan(parse_ts(value))
    assert newest_first(value) < newest_first("1970-01-01T00:00:00Z")
    now = datetime(2026, 2, 1, tzinfo=UTC)
    assert relative_time(value, now) == "—"  # the app (tui.formatting) uses the same rule
    assert clock(value) in ("", "—")


@pytest.mark.parametrize("value", [GOOD, "2026-01-10T10:00:00+02:00", "2026-01-10T10:00:00", "2026-01-10"])
def test_known_times_are_kept_verbatim(value):
    assert clean_ts(value) == value
    assert not math.isnan(parse_ts(value))


def test_codex_garbage_times_are_unknown_too(tmp_path):
    """The same rule for another agent: a Codex rollout stamped with garbage."""
    import re

    from core.fixtures.codex import CodexRollout, codex_id

    from .support import config_for, open_archive

    good = CodexRollout(config_for(tmp_path).codex_home, codex_id(1))
    good.turn("rebase the feature branch", "Rebased.")
    bad = CodexRollout(config_for(tmp_path).codex_home, codex_id(2))
    bad.turn("rebase the feature branch", "Rebased.")
    bad.path.write_text(re.sub(r'"timestamp": ?"[^"]*"', '"timestamp": "2026-13-45T99:99:00Z"', bad.path.read_text()))
    with open_archive(tmp_path) as archive:
        listed = archive.list_sessions()
        assert [s.session_id for s in listed] == [codex_id(1), codex_id(2)]
        assert listed[1].first_timestamp is None and listed[1].last_timestamp is None
        hits = archive.search("rebase feature branch")
        assert [h.session_id for h in hits] == [codex_id(1), codex_id(2)] and hits[1].timestamp is None
        assert [s.session_id for s in archive.list_sessions(date_to="2100-01-01")] == [codex_id(1)]


def test_a_chain_numbers_a_session_of_unknown_time_last(tmp_path):
    project = tmp_path / ".claude" / "projects" / "-home-t-proj"
    write_jsonl(project / f"{_sid(1)}.jsonl", exchange(_sid(1), "draft the migration", "drafted", "zzz-garbage", slug="brave-lime-otter"))
    write_jsonl(project / f"{_sid(2)}.jsonl", exchange(_sid(2), "run the migration", "ran", GOOD, ids=("u2", "a2"), slug="brave-lime-otter"))
    chain = cli_json(tmp_path, "list", "--slug", "brave-lime-otter")["sessions"]
    assert [(s["session_id"], s["session_number"]) for s in chain] == [(_sid(2), 1), (_sid(1), 2)]


def test_full_build_and_lazy_chain_path_number_a_chain_alike(tmp_path):
    """``list --slug`` numbers the chain from the full build; ``show slug#N`` in a fresh
    process numbers only that chain (the lazy path). Both must put the session of
    unknown time last, or ``#1`` means two different sessions."""
    project = tmp_path / ".claude" / "projects" / "-home-t-proj"
    write_jsonl(project / f"{_sid(1)}.jsonl", exchange(_sid(1), "draft the migration", "drafted", "zzz-garbage", slug="brave-lime-otter"))
    write_jsonl(project / f"{_sid(2)}.jsonl", exchange(_sid(2), "run the migration", "ran", GOOD, ids=("u2", "a2"), slug="brave-lime-otter"))
    write_jsonl(project / f"{_sid(3)}.jsonl", exchange(_sid(3), "check the migration", "checked", "2026-01-11T10:00:00.000Z", ids=("u3", "a3"), slug="brave-lime-otter"))
    listed = {s["session_number"]: s["session_id"] for s in cli_json(tmp_path, "list", "--slug", "brave-lime-otter")["sessions"]}
    assert listed == {1: _sid(2), 2: _sid(3), 3: _sid(1)}
    for number, session_id in listed.items():
        shown = cli_json(tmp_path, "show", f"brave-lime-otter#{number}")
        assert (shown["session_id"], shown["ref"]) == (session_id, f"brave-lime-otter#{number}")
