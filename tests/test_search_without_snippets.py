"""``Archive.search(..., snippets=False)``: the same hits, in the same order, without
building their snippets (what the app's reader asks for to mark the turns hit)."""

from __future__ import annotations

from msgspec.structs import replace


def test_hits_without_snippets_are_the_same_hits_with_empty_snippets(demo):
    archive, corpus = demo
    for query, session_id in corpus.queries:
        for options in ({"session_id": session_id, "limit": 500, "typing": True}, {"limit": 20}, {"limit": 10, "group": "session"}):
            full = archive.search(query, **options)
            bare = archive.search(query, **options, snippets=False)
            assert full, (query, options)
            assert all(h.snippet for h in full) and not any(h.snippet for h in bare)
            # (without a snippet a hit points at its passage's first message, not at its snippet's)
            starts = {(h.session_id, h.turn_number): h.sequence for h in bare}
            assert bare == [replace(h, snippet="", sequence=starts.get((h.session_id, h.turn_number), -1)) for h in full], (query, options)
