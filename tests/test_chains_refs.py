"""Slug chains, session numbers, session ranges and references (SPEC §3, §4).

``parse_session_range`` and the reference syntax are tested directly; resolution runs
through ``Archive`` on the demo corpus (a five-session chain) written under a temp HOME.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from core.api import Archive
from core.archive.chains import parse_session_range
from core.config import Config
from core.errors import BadInput, NotFound
from core.fixtures.claude import ClaudeTranscript
from core.fixtures.demo import CHAIN_SLUG, write_demo_corpus
from core.refs import Reference, compress_numbers, format_reference, parse_reference

# --- parse_session_range ------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, total, expected",
    [
        ("4", 6, [3]),
        ("4-5", 6, [3, 4]),
        ("1,3,5", 6, [0, 2, 4]),
        ("1-2,4", 6, [0, 1, 3]),
        (" 1 , 3 - 4 ", 6, [0, 2, 3]),
        ("5,1,3", 6, [0, 2, 4]),  # sorted
        ("2,1-3,2", 6, [0, 1, 2]),  # overlaps counted once
        ("1", 6, [0]),  # first edge
        ("6", 6, [5]),  # last edge
        ("1-6", 6, [0, 1, 2, 3, 4, 5]),
        ("3-3", 6, [2]),
        ("1", 1, [0]),
    ],
)
def test_parse_session_range_valid(spec, total, expected):
    assert parse_session_range(spec, total) == expected


@pytest.mark.parametrize(
    "spec, message",
    [
        ("7", "Session 7 out of range (1-6)"),
        ("0", "Session 0 out of range (1-6)"),
        ("5-7", "Session 7 out of range (1-6)"),
        ("1,3,9", "Session 9 out of range (1-6)"),
    ],
)
def test_parse_session_range_out_of_range_exact_text(spec, message):
    with pytest.raises(ValueError) as info:
        parse_session_range(spec, 6)
    assert str(info.value) == message


@pytest.mark.parametrize("spec", ["5-3", "abc", "1-", "-2", "1,,2", "1.5", "4-5-6", "#4", "one", "", "   "])
def test_parse_session_range_bad_syntax_is_a_clear_one_line_error(spec):
    with pytest.raises(ValueError) as info:
        parse_session_range(spec, 6)
    message = str(info.value)
    assert message and "\n" not in message
    assert "out of range" not in message
    assert "range" in message.lower()  # says what was expected, e.g. "… a range like 4-5 …"


def test_reversed_range_says_so():
    with pytest.raises(ValueError, match="backwards"):
        parse_session_range("5-3", 6)


# --- reference syntax ----------------------------------------------------------------------

ID = "a378da2b-1c2d-4e5f-8a9b-0c1d2e3f4a5b"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("velvet-puzzling-eclipse", Reference("velvet-puzzling-eclipse")),
        ("velvet-puzzling-eclipse#4", Reference("velvet-puzzling-eclipse", sessions="4")),
        ("velvet-puzzling-eclipse#4-5", Reference("velvet-puzzling-eclipse", sessions="4-5")),
        ("velvet-puzzling-eclipse#1,3,5", Reference("velvet-puzzling-eclipse", sessions="1,3,5")),
        ("velvet-puzzling-eclipse#4:12", Reference("velvet-puzzling-eclipse", sessions="4", turn=12)),
        (ID, Reference(ID)),
        ("a378da2b", Reference("a378da2b")),
        ("a378da2b:12", Reference("a378da2b", turn=12)),
        (f"{ID}:0", Reference(ID, turn=0)),
        ("  velvet-puzzling-eclipse#2  ", Reference("velvet-puzzling-eclipse", sessions="2")),
    ],
)
def test_parse_reference_every_form(text, expected):
    assert parse_reference(text) == expected


@pytest.mark.parametrize(
    "kwargs, text",
    [
        (dict(slug="velvet-puzzling-eclipse", session_id=ID, numbers=[4], chain_length=6), "velvet-puzzling-eclipse#4"),
        (dict(slug="velvet-puzzling-eclipse", session_id=ID, numbers=[4, 5], chain_length=6), "velvet-puzzling-eclipse#4-5"),
        (dict(slug="velvet-puzzling-eclipse", session_id=ID, numbers=[1, 3, 5], chain_length=6), "velvet-puzzling-eclipse#1,3,5"),
        (dict(slug="velvet-puzzling-eclipse", session_id=ID, numbers=[4], turn=12), "velvet-puzzling-eclipse#4:12"),
        (dict(slug="velvet-puzzling-eclipse", session_id=ID, numbers=list(range(1, 7)), chain_length=6), "velvet-puzzling-eclipse"),
        (dict(slug=None, session_id=ID), ID),
        (dict(slug=None, session_id=ID, turn=12), f"{ID}:12"),
    ],
)
def test_format_reference_and_round_trip(kwargs, text):
    assert format_reference(**kwargs) == text
    parsed = parse_reference(text)
    if kwargs["slug"]:
        assert parsed.name == kwargs["slug"]
        if parsed.sessions is None:
            assert kwargs["numbers"] == list(range(1, kwargs["chain_length"] + 1))
        else:
            picked = parse_session_range(parsed.sessions, kwargs.get("chain_length") or max(kwargs["numbers"]))
            assert [i + 1 for i in picked] == kwargs["numbers"]
    else:
        assert parsed.name == ID
    assert parsed.turn == kwargs.get("turn")
    assert format_reference(**kwargs) == format_reference(**kwargs)  # stable


def test_compress_numbers():
    assert compress_numbers([1, 2, 3, 5]) == "1-3,5"
    assert compress_numbers([5, 1, 3, 3]) == "1,3,5"
    assert compress_numbers([4]) == "4"


@pytest.mark.parametrize("text", ["", "   ", "#4", "slug#", "slug#4:x", "slug#:3"])
def test_parse_reference_errors(text):
    with pytest.raises(BadInput) as info:
        parse_reference(text)
    assert str(info.value) and "\n" not in str(info.value)


# --- resolution on the demo corpus ------------------------------------------------------------

PREFIX_A = "abcdef12-0000-4000-8000-00000000000a"
PREFIX_B = "abcdef12-0000-4000-8000-00000000000b"
START = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    home = tmp_path_factory.mktemp("chains-home")
    corpus = write_demo_corpus(home)
    for n, session_id in enumerate((PREFIX_A, PREFIX_B)):  # two sessions sharing an 8-char prefix
        t = ClaudeTranscript(session_id, cwd="/home/demo/work/twins", start=START + timedelta(hours=n))
        t.user(f"twin session {n} about the prefix collision")
        t.assistant("ok")
        t.write_under(corpus.root)
    archive = Archive.open(Config.from_env({"HOME": str(home)}))
    yield archive, corpus
    archive.close()


def test_chain_is_numbered_oldest_first(demo):
    archive, corpus = demo
    chain = archive.list_sessions(slug=CHAIN_SLUG)
    assert [s.session_id for s in chain] == list(corpus.chain_session_ids)
    assert [s.session_number for s in chain] == [1, 2, 3, 4, 5]
    assert all(s.chain_length == 5 for s in chain)
    stamps = [s.first_timestamp for s in chain]
    assert stamps == sorted(stamps)
    assert [s.ref for s in chain] == [f"{CHAIN_SLUG}#{n}" for n in range(1, 6)]


def test_resolve_slug_is_the_whole_chain(demo):
    archive, corpus = demo
    resolved = archive.resolve(CHAIN_SLUG)
    assert [s.session_id for s in resolved.sessions] == list(corpus.chain_session_ids)
    assert resolved.chain == resolved.sessions
    assert resolved.turn is None and not resolved.single


@pytest.mark.parametrize(
    "suffix, numbers",
    [("#4", [4]), ("#4-5", [4, 5]), ("#1,3,5", [1, 3, 5]), ("#1-2,4", [1, 2, 4]), ("#1", [1]), ("#5", [5])],
)
def test_resolve_slug_with_sessions(demo, suffix, numbers):
    archive, corpus = demo
    resolved = archive.resolve(CHAIN_SLUG + suffix)
    assert [s.session_number for s in resolved.sessions] == numbers
    assert [s.session_id for s in resolved.sessions] == [corpus.chain_session_ids[n - 1] for n in numbers]
    assert len(resolved.chain) == 5


def test_resolve_slug_session_turn(demo):
    archive, corpus = demo
    resolved = archive.resolve(f"{CHAIN_SLUG}#3:1")
    assert [s.session_id for s in resolved.sessions] == [corpus.chain_session_ids[2]]
    assert resolved.turn == 1
    turn = archive.read_turn(f"{CHAIN_SLUG}#3:1")
    assert turn.user_text == "ok continue, the partial last line test still fails"
    resolved = archive.resolve(f"{CHAIN_SLUG}#4:12")
    assert resolved.turn == 12 and resolved.sessions[0].session_number == 4
    with pytest.raises(NotFound) as info:
        archive.read_turn(f"{CHAIN_SLUG}#4:12")
    assert str(info.value) == "Turn 12 out of range (session has 1 turn)"


def test_resolve_slug_range_errors(demo):
    archive, _ = demo
    with pytest.raises(BadInput) as info:
        archive.resolve(f"{CHAIN_SLUG}#7")
    assert str(info.value) == "Session 7 out of range (1-5)"
    with pytest.raises(BadInput):
        archive.resolve(f"{CHAIN_SLUG}#2-3:1")  # a turn needs exactly one session
    with pytest.raises(BadInput):
        archive.resolve(f"{CHAIN_SLUG}#x")


def test_resolve_full_id_prefix_and_id_turn(demo):
    archive, corpus = demo
    session_id = corpus.chain_session_ids[1]
    for ref in (session_id, session_id[:8], session_id[:13], session_id[:20]):
        resolved = archive.resolve(ref)
        assert [s.session_id for s in resolved.sessions] == [session_id]
        assert resolved.single and resolved.turn is None
        assert len(resolved.chain) == 5  # the chain it belongs to
    resolved = archive.resolve(f"{session_id[:8]}:0")
    assert resolved.turn == 0 and resolved.sessions[0].session_id == session_id
    assert archive.read_turn(f"{session_id}:0").user_text.startswith("Continuing on the BM25 index")


def test_ambiguous_prefix_is_a_clear_error(demo):
    archive, _ = demo
    with pytest.raises(BadInput) as info:
        archive.resolve("abcdef12")
    message = str(info.value)
    assert "Ambiguous" in message and PREFIX_A in message and PREFIX_B in message
    assert "\n" not in message
    assert archive.resolve("abcdef12-0000-4000-8000-00000000000a").sessions[0].session_id == PREFIX_A
    assert archive.resolve(PREFIX_B[:-1] + "b").sessions[0].session_id == PREFIX_B


@pytest.mark.parametrize("ref", ["x", "no-such-slug", "ffffffff-ffff-4fff-8fff-ffffffffffff", "ffffffff"])
def test_unknown_reference(demo, ref):
    archive, _ = demo
    with pytest.raises(NotFound) as info:
        archive.resolve(ref)
    assert str(info.value) == f"Unknown session_id: {ref}"


def test_prefix_shorter_than_eight_is_unknown(demo):
    archive, corpus = demo
    short = corpus.chain_session_ids[0][:7]
    with pytest.raises(NotFound) as info:
        archive.resolve(short)
    assert str(info.value) == f"Unknown session_id: {short}"


def test_unknown_slug_with_sessions_is_unknown(demo):
    archive, _ = demo
    with pytest.raises(NotFound) as info:
        archive.resolve("no-such-slug#2")
    assert str(info.value) == "Unknown session_id: no-such-slug"


# --- continuation links -------------------------------------------------------------------------


def _write(home: Path, *transcripts: ClaudeTranscript) -> None:
    for t in transcripts:
        t.write_under(home / ".claude" / "projects")


def test_slugless_continuation_via_summary_leaf_joins_the_chain(tmp_path):
    first = ClaudeTranscript("1a1a1a1a-0000-4000-8000-000000000001", cwd="/home/t/work/legacy", version="1.0.51",
                             git_branch=None, start=START)
    first.user("add the heron exporter")
    leaf = first.assistant("Heron exporter added.")
    later = ClaudeTranscript("0b0b0b0b-0000-4000-8000-000000000002", cwd="/home/t/work/legacy", version="1.0.51",
                             git_branch=None, start=START + timedelta(days=1))
    later.summary("Heron exporter", leaf)
    later.user("now test the heron exporter")
    later.assistant("Tested.")
    lone = ClaudeTranscript("2c2c2c2c-0000-4000-8000-000000000003", cwd="/home/t/work/legacy", version="1.0.51",
                            git_branch=None, start=START + timedelta(days=2))
    lone.user("unrelated question")
    lone.assistant("Unrelated answer.")
    _write(tmp_path, first, later, lone)
    with Archive.open(Config.from_env({"HOME": str(tmp_path)})) as archive:
        chain = archive.resolve(later.session_id).chain
        assert [s.session_id for s in chain] == [first.session_id, later.session_id]
        assert [s.session_number for s in chain] == [1, 2]
        assert archive.resolve(first.session_id).chain == chain
        assert [s.session_id for s in archive.resolve(lone.session_id).chain] == [lone.session_id]


def test_slugless_continuation_of_a_slugged_session_takes_its_slug_and_number(tmp_path):
    slug = "mossy-ridge-walker"
    first = ClaudeTranscript("3d3d3d3d-0000-4000-8000-000000000001", cwd="/home/t/work/moss", slug=slug, start=START)
    first.user("sketch the moss renderer")
    first.assistant("Sketched.")
    first.user("add shading")
    leaf = first.assistant("Shading added.")
    later = ClaudeTranscript("0e0e0e0e-0000-4000-8000-000000000002", cwd="/home/t/work/moss", start=START + timedelta(days=1))
    later.summary("Moss renderer shading", leaf)
    later.user("continue with the moss renderer")
    later.assistant("Continuing.")
    _write(tmp_path, first, later)
    with Archive.open(Config.from_env({"HOME": str(tmp_path)})) as archive:
        resolved = archive.resolve(slug)
        assert [s.session_id for s in resolved.sessions] == [first.session_id, later.session_id]
        second = resolved.sessions[1]
        assert (second.session_number, second.slug, second.ref) == (2, slug, f"{slug}#2")
        assert archive.resolve(f"{slug}#2").sessions[0].session_id == later.session_id
        assert [s.session_id for s in archive.list_sessions(slug=slug)] == [first.session_id, later.session_id]
