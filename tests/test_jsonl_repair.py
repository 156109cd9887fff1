"""Repairing what agents write that a strict JSON decoder refuses, in-process (the
CLI tests in test_hostile_values.py check the same as a user sees it; a mutation
tool sees only these).

- A lone surrogate escape (half an emoji cut by Node's JSON.stringify) becomes
  ``\\ufffd``; a pair stays; an escaped backslash before ``u`` is text.
- A byte-order mark before the first record is dropped.
- ``repair`` answers None when there is nothing to repair, and ``decode_object``
  gives the reason of the line as it is when the repair does not help.
"""

from __future__ import annotations

import pytest

from core.sources.jsonl import BOM, INVALID_JSON, INVALID_UTF8, decode_object, repair

# (JSON text, what repair makes of it: None = nothing to repair)
CASES = [
    (rb'"a\ud83d b"', rb'"a\ufffd b"'),  # a lone high half
    (rb'"\udc00"', rb'"\ufffd"'),  # a lone low half
    (rb'"\ud83d\ude00"', None),  # a pair: one character
    (rb'"\uD83D\uDE00 \uDBFF"', rb'"\uD83D\uDE00 \ufffd"'),  # hex digits of either case
    (rb'"\uDBFF\uDFFF \udbff\udfff"', None),  # pairs whose high half is past 9, in either case
    (rb'"\ud83d\uDB00 \uD83D\udb00"', rb'"\ufffd\ufffd \ufffd\ufffd"'),  # high, high: no pair
    (rb'"\ud83d\ud83d\ude00"', rb'"\ufffd\ud83d\ude00"'),  # a high half before a pair
    (rb'"\ude00\ud83d"', rb'"\ufffd\ufffd"'),  # low then high: two halves, no pair
    (rb'"\ud83d \ude00"', rb'"\ufffd \ufffd"'),  # not adjacent: no pair
    (rb'"C:\\ud83d"', None),  # an escaped backslash, then the text "ud83d"
    (rb'"\\\ud83d"', rb'"\\\ufffd"'),  # a backslash, then a lone half
    (rb'"\ud83d\\ude00"', rb'"\ufffd\\ude00"'),  # the high half, then text
    (rb'"\ud83d\\\ude00"', rb'"\ufffd\\\ufffd"'),  # a backslash between the halves
    (rb'"\ud7ff \ue000 \u0041"', None),  # not surrogates
    (rb'"plain"', None),
]


@pytest.mark.parametrize(("raw", "fixed"), CASES)
def test_lone_surrogate_escapes_are_replaced_and_pairs_kept(raw, fixed):
    assert repair(raw) == fixed


def test_a_byte_order_mark_is_dropped_at_the_start_only():
    assert repair(BOM + b'{"a":1}') == b'{"a":1}'
    assert repair(BOM + rb'{"t":"\ud83d"}') == rb'{"t":"\ufffd"}'  # both at once
    assert repair(b'{"a":"' + BOM + b'"}') is None  # inside a string it is text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (rb'{"t":"cut \ud83d","n":1}', ({"t": "cut \ufffd", "n": 1}, None)),
        (rb'{"t":"\ud83d\ude00 ok"}', ({"t": "\U0001f600 ok"}, None)),
        (BOM + b'{"a":[1,2]}', ({"a": [1, 2]}, None)),
        (BOM + rb'{"t":"\udc00x"}', ({"t": "\ufffdx"}, None)),
        (b'{"t":"\\U0001f600"}', (None, INVALID_JSON)),  # not a JSON escape: nothing to repair
        (BOM + b'{"a":', (None, INVALID_JSON)),  # repaired, still cut short: the reason of the line
        (rb'{"t":"\ud83d",', (None, INVALID_JSON)),
        (b'{"t":"\xff \\ud83d"}', (None, INVALID_UTF8)),
    ],
)
def test_a_line_is_decoded_after_its_repair_or_skipped_with_its_reason(raw, expected):
    assert decode_object(raw) == expected
