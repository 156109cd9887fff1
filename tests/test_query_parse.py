"""``core.query.syntax`` and ``core.query.ranking`` in-process, with exact values: the
parsed query of each rule (words, prefixes, phrases, exclusions, flags, recency, the
clause cap), the phrase pattern and note, and the total order of hits.

tests/test_query_syntax.py and tests/test_ranking.py check the same on a corpus and
through the CLI; these are small and run in the test process, so a mutation tool
sees them (bench/MUTATION.md).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.index.tokenize import default_tokenizer
from core.model import SearchHit
from core.query import syntax
from core.query.ranking import hit_order, in_total_order
from core.query.syntax import Clause, Query, parse, phrase_note, phrase_pattern, search_results


def c(term: str, prefix: str | None = None, required: bool = False) -> Clause:
    return Clause(term, prefix, required)


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("flaky tests", Query((c("flaki"), c("test")), terms=("flaki", "test"))),
        ("test flaky test", Query((c("test"), c("flaki")), terms=("test", "flaki"))),
        ("flak*", Query((c("flak", "flak"),), terms=("flak",))),
        ("Fl*", Query((c("fl", "fl"),), terms=("fl",))),
        ("f*", Query()),  # one character: no prefix, and "f" is no term
        ("ab-*", Query((c("ab"),), terms=("ab",))),  # not alphanumeric: a word, not a prefix
        ("the*", Query((c("the", "the"),), terms=("the",))),  # a stopword as a prefix still expands
        ("getUserName", Query((c("getusername"), c("user"), c("name")), terms=("getusername", "user", "name"))),
        ("getUser*", Query((c("getuser", "getuser"), c("user")), terms=("getuser", "user"))),
        ('"harbor session 4"', Query((c("harbor", None, True), c("session", None, True)), phrases=("harbor session 4",),
                                     terms=("harbor", "session"))),
        ('"js/app.js"', Query((c("js/app.js", None, True), c("js", None, True), c("app", None, True)),
                              terms=("js/app.js", "js", "app"))),
        ('"open phrase', Query((c("open", None, True), c("phrase", None, True)), phrases=("open phrase",),
                               terms=("open", "phrase"))),
        ('deploy "deploy now"', Query((c("deploy", None, True), c("now", None, True)), phrases=("deploy now",),
                                      terms=("deploy", "now"))),
        ('"deploy now" deploy', Query((c("deploy", None, True), c("now", None, True)), phrases=("deploy now",),
                                      terms=("deploy", "now"))),
        ('deploy -"old stuff"', Query((c("deploy"),), ("old", "stuff"), terms=("deploy",))),
        ('"x y" -staging', Query((), ("stage",), ("x y",))),  # a phrase is something to search for
        ('-"old stuff" -staging', Query((c("stage"),), ("old", "stuff"), terms=("stage",))),  # ... a negative phrase is not
        ("foo -getUserName -getUserName", Query((c("foo"),), ("getusername",), terms=("foo",))),
        ("-staging -deploys", Query((c("stage"), c("deploy")), terms=("stage", "deploy"))),  # nothing else: searched
        ("", Query()),
        ("- * the", Query()),
    ],
)
def test_each_rule_parses_to_its_exact_query(text, query):
    assert parse(text) == query


def test_none_parses_to_an_empty_query():
    assert parse(None) == Query()  # type: ignore[arg-type]
    assert not parse("the") and parse("deploy")


@pytest.mark.parametrize(
    ("text", "recency", "terms"),
    [
        ("most recent deploy", True, ("deploy",)),
        ("the most recently deploy", True, ("deploy",)),
        ("most recent sessions deploy", True, ("deploy",)),
        ("MOST RECENT CONVERSATION deploy", True, ("deploy",)),
        ("recently deploy", True, ("deploy",)),
        ("the latest session about deploys", True, ("about", "deploy")),
        ("newest conversations deploy", True, ("deploy",)),
        ("last sessions deploy", True, ("deploy",)),
        ("last time I deployed", True, ("deploy",)),
        ("the last time we deployed", True, ("deploy",)),
        ("last time they deployed", False, ("last", "time", "deploy")),
        ("latest version", True, ("latest", "version")),  # kept as terms
        ("Newest tokenizer", True, ("newest", "token")),
        ("latestversion deploy", False, ("latestvers", "deploy")),
        ("mostly recent", False, ("most", "recent")),
    ],
)
def test_recency_words_turn_on_the_prior_and_leave_the_terms(text, recency, terms):
    q = parse(text)
    assert (q.recency, q.terms) == (recency, terms)


_WORDS = ("most", "recent", "recently", "latest", "newest", "last", "time", "session", "conversations", "the", "we", "i", "deploy", "laſt", "ﬁx")


@given(st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(("lower", "upper", "title"))), max_size=6), st.text(max_size=8))
def test_recency_is_what_its_patterns_find_in_any_case(words, noise):
    """The patterns run only on a query holding a recency hint: no casing or folding of a hint
    may hide a query the patterns would have found."""
    text = " ".join(getattr(word, case)() for word, case in words) + " " + noise
    expected = bool(re.search(syntax._RECENCY, text, re.IGNORECASE) or re.search(syntax._RECENCY_KEPT, text, re.IGNORECASE))
    assert parse(text).recency == expected


def test_the_word_being_typed_is_a_prefix_of_three_characters_or_more():
    assert parse("deplo", typing=True) == Query((c("deplo", "deplo"),), terms=("deplo",))
    assert parse("deploy Sta", typing=True) == Query((c("deploy"), c("sta", "sta")), terms=("deploy", "sta"))
    assert parse("deploy st", typing=True) == Query((c("deploy"), c("st")), terms=("deploy", "st"))
    assert parse("deploy the", typing=True) == Query((c("deploy"), c("the", "the")), terms=("deploy", "the"))
    assert parse("deploy sta ", typing=True) == Query((c("deploy"), c("sta")), terms=("deploy", "sta"))
    assert parse("sta deploy", typing=True).clauses == (c("sta"), c("deploy", "deploy"))
    assert parse("deplo") == Query((c("deplo"),), terms=("deplo",))  # not typing: a word
    assert parse("x ab_c", typing=True).clauses == (c("ab_c"), c("ab"))  # not alphanumeric
    assert parse('x "ab cd', typing=True).clauses == (c("ab", None, True), c("cd", None, True))
    assert parse("fl*", typing=True).clauses == (c("fl", "fl"),)  # a typed star keeps its own minimum


def test_flags_mark_a_command_line_whose_dash_words_are_searched():
    q = parse("tar -xf archive -verbose")
    assert q.excluded == () and q.terms == ("tar", "xf", "archiv", "verbos")
    assert parse("tar -xzf archive").excluded == ("xzf",)  # three letters: a word, so no command line
    assert parse("deploy --force -staging").excluded == ()
    assert parse("deploy -staging").excluded == ("stage",)
    assert parse("deploy -ab -staging").excluded == ()  # -ab: a flag
    assert parse("deploy -abc").excluded == ("abc",)  # -abc: a word
    assert parse("deploy -a_b_c").excluded == ("a_b_c",)
    assert parse("deploy -_abc").excluded == ()
    assert parse("deploy -a1bc").excluded == ()
    assert parse('"x y" -staging').excluded == ("stage",)
    assert syntax._may_exclude(list(syntax._TOKEN.finditer("-staging -deploys"))) is False
    assert syntax._may_exclude(list(syntax._TOKEN.finditer('-"a b" -staging'))) is False
    assert syntax._may_exclude(list(syntax._TOKEN.finditer("deploy -staging"))) is True


def test_exclusion_terms_are_each_words_whole_term():
    tok = default_tokenizer()
    assert syntax._exclusion_terms(tok, "getUserName the old-stuff") == ["getusername", "old-stuff"]
    assert syntax._exclusion_terms(tok, "") == []


def test_a_pasted_log_counts_its_first_sixty_four_terms():
    words = [f"word{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(70)]
    q = parse(" ".join(words + [f'"p{i} q{i}"' for i in range(70)] + [f"-x{w}" for w in words]))
    first = tuple(dict.fromkeys(default_tokenizer().query_terms(w)[0] for w in words))  # some stem alike
    assert len(q.clauses) == 64 == syntax.MAX_CLAUSES and q.terms == first[:64] and len(first) > 64
    assert len(q.phrases) == 64 and q.phrases[-1] == "p63 q63"
    excluded = tuple(dict.fromkeys(default_tokenizer().terms(f"x{w}")[0] for w in words))
    assert len(q.excluded) == 64 and q.excluded == excluded[:64] and len(excluded) > 64


def test_the_phrase_pattern_counts_every_word():
    assert phrase_pattern("deploy") is None and phrase_pattern("a-") is None
    pat = phrase_pattern("Harbor session 4")
    assert pat is not None and pat.pattern == r"(?<!\w)Harbor\W+session\W+4(?!\w)"
    assert pat.search("in harbor-SESSION  4.") and not pat.search("harbor session 45")
    assert not pat.search("theharbor session 4") and not pat.search("harbor session")
    assert phrase_pattern("a.b").pattern == r"(?<!\w)a\W+b(?!\w)"


def hit(score: float = 1.0, ts: str | None = "2026-11-01T09:00:00Z", sid: str = "s1", seq: int = 0,
        exact: bool | None = None) -> SearchHit:  # fmt: skip
    return SearchHit(session_id=sid, slug=None, session_number=None, project="p", agent="claude", turn_number=1,
                     sequence=seq, score=score, snippet="", timestamp=ts, ref=sid, exact_phrase=exact)  # fmt: skip


def test_the_phrase_note_for_each_front_end():
    missed, shown = [hit(exact=False)], [hit(exact=True)]
    assert phrase_note('"a b" "c d" e', missed) == (
        'No turn holds the exact phrase "a b", "c d"; the turns holding all its words follow.'
    )
    assert phrase_note('"a b"', missed, short=True) == 'no exact "a b": all-words matches'
    assert phrase_note("e", missed) == "No turn holds the exact phrase the quoted phrase; the turns holding all its words follow."
    assert phrase_note('"a b"', shown) is None and phrase_note('"a b"', []) is None
    assert phrase_note("a b", [hit()]) is None
    assert search_results('"a b"', missed) == {
        "results": [missed[0].to_dict()],
        "note": 'No turn holds the exact phrase "a b"; the turns holding all its words follow.',
    }
    assert search_results('"a b"', shown) == {"results": [shown[0].to_dict()]}


# --- ranking -------------------------------------------------------------------------------------


def test_hit_order_is_score_then_newer_then_unknown_times_then_the_stable_id():
    hits = [hit(1.0, None, "a"), hit(1.0, "2026-11-01T09:00:00Z", "b", 2), hit(1.0, "2026-11-02T09:00:00Z", "z"),
            hit(1.0, "2026-11-01T09:00:00Z", "b", 1), hit(1.0, "2026-11-01T09:00:00Z", "a", 9),
            hit(1.000004, None, "c"), hit(2.0, None, "d")]  # fmt: skip
    assert [(h.session_id, h.sequence) for h in sorted(hits, key=hit_order)] == [
        ("d", 0), ("z", 0), ("a", 9), ("b", 1), ("b", 2), ("a", 0), ("c", 0)]  # fmt: skip
    assert hit_order(hit(0.1234567, "2026-11-01T00:00:00Z", "s", 3))[0] == -0.12346
    assert hit_order(hit(1.0, None)) == (-1.0, True, -0.0, "s1", 0)


def test_runs_of_tied_scores_are_put_in_the_stable_order_and_runs_keep_their_place():
    ranked = [hit(3.0, "2026-11-01T09:00:00Z", "b"), hit(3.000001, "2026-11-02T09:00:00Z", "a"),
              hit(2.0, "2026-11-03T09:00:00Z", "z", 5), hit(2.0, None, "y"), hit(2.0, "2026-11-03T09:00:00Z", "z", 4),
              hit(5.0, None, "top"), hit(2.0, "2026-11-04T09:00:00Z", "x", exact=True)]  # fmt: skip
    got = [(h.session_id, h.sequence, tag) for h, tag in in_total_order((h, i) for i, h in enumerate(ranked))]
    assert got == [("a", 0, 1), ("b", 0, 0), ("z", 4, 4), ("z", 5, 2), ("y", 0, 3), ("top", 0, 5), ("x", 0, 6)]


def test_for_recent_runs_of_equal_times_go_by_score_then_the_stable_id():
    t1, t2 = "2026-11-02T09:00:00Z", "2026-11-01T09:00:00Z"
    ranked = [hit(1.0, t1, "b"), hit(2.0, t1, "c"), hit(1.000001, t1, "a"), hit(9.0, t2, "d"), hit(1.0, None, "f", 2),
              hit(1.0, None, "f", 1), hit(0.5, t1, "e")]  # fmt: skip
    got = [h.session_id + str(h.sequence) for (h,) in in_total_order([(h,) for h in ranked], recent=True)]
    assert got == ["c0", "a0", "b0", "d0", "f1", "f2", "e0"]
    # not recent: the same items are runs of scores
    got = [h.session_id + str(h.sequence) for (h,) in in_total_order([(h,) for h in ranked])]
    assert got == ["b0", "c0", "a0", "d0", "f1", "f2", "e0"]


def test_a_capital_x_before_the_star_and_a_compound_after_one_of_its_parts():
    assert parse("maX*") == Query((c("max", "max"), c("ma")), terms=("max", "ma"))  # camelCase: "ma" too
    assert parse("user getUserName") == Query((c("user"), c("getusername"), c("name")),
                                              terms=("user", "getusername", "name"))  # fmt: skip


def test_scores_apart_below_one_are_not_a_tie():
    older, newer = "2026-11-01T09:00:00Z", "2026-11-02T09:00:00Z"
    ranked = [(hit(1.4, older, "b"),), (hit(1.2, newer, "a"),)]
    assert [h.session_id for (h,) in in_total_order(ranked)] == ["b", "a"]
    same_time = [(hit(1.2, older, "a"),), (hit(1.4, older, "b"),)]
    assert [h.session_id for (h,) in in_total_order(same_time, recent=True)] == ["b", "a"]
