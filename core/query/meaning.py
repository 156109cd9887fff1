"""Meaning in a search: the query's vector beside the passages', and what a search lacks when
passages have no vectors yet (:mod:`core.query.hybrid` fuses them with BM25)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from . import hybrid

if TYPE_CHECKING:  # (a search by words alone loads no vector code)
    from core.archive.semantic_job import SemanticJob
    from core.semantic.vectors import Vectors


class MeaningArchive(Protocol):
    """What a search by meaning needs of an archive (:class:`core.api.Archive` is one)."""

    semantic: SemanticJob


def semantic_query(archive: MeaningArchive, query: str) -> tuple[Vectors, np.ndarray] | None:
    """The embedded vectors and the query's vector, or None when semantic recall cannot run (then BM25 alone)."""
    from core.semantic.embedder import model_folder

    if model_folder(archive.semantic.env) is None:
        return None  # turned off: the vectors would be read (17 MB at 1.8 GB) for nothing
    vectors = archive.semantic.store.load()
    if not vectors.count or not archive.semantic.state().on:
        return None
    vector = archive.semantic.query_vector(query)
    return None if vector is None else (vectors, vector)


def meant_text(query: str, typing: bool) -> str:
    """What of ``query`` is matched by meaning: while typing, the words finished so far (a half-typed
    last word means nothing yet, and the query's vector then changes once a word, not once a key)."""
    if not typing or query[-1:].isspace():
        return query
    words = query.split()
    return " ".join(words[:-1])


def meaning_gap(archive: MeaningArchive, query: str, mode: str = "auto", sort: str = "relevance") -> dict[str, Any] | None:
    """When a search of ``query`` would use meaning but some passages have no vectors yet: how many,
    and the one line every front end says (the results are then by words for those); else None."""
    if not hybrid.uses_meaning(query, hybrid.check_mode(mode), sort) or not archive.semantic.state().on:
        return None
    embedded, passages = archive.semantic.counts()
    missing = passages - embedded
    if missing <= 0:
        return None
    maker = "`relay-search index` (or a running app, `mcp` or `serve`) makes them"
    if not embedded:
        note = f"no passage has vectors yet, so this search ran by words only; {maker}"
    else:
        note = f"{missing:,} of {passages:,} passages have no vectors yet and were searched by words only; {maker}"
    return {"missing": missing, "passages": passages, "note": note}
