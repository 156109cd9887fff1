"""Slug chains and session numbers (SPEC §3).

A chain is every main session sharing a slug, oldest first; a session's number is
its 1-based position. A slug-less session that provably continues another (the
indexer records the link from ``summary.leafUuid`` or replayed record uuids) joins
that session's chain. A chain's sessions get their numbers, the chain its name (its
slug, or a slug-less chain's first id prefix) and each session its reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Protocol

from msgspec.structs import replace

from core.model import SessionInfo
from core.refs import MIN_PREFIX, format_reference

_RANGE_PART = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_session_range(spec: str, total: int) -> list[int]:
    """Sorted 0-based indices for ``"4"``, ``"4-5"``, ``"1,3,5"`` or any comma list.

    Raises ``ValueError("Session 7 out of range (1-6)")`` for a number outside the
    chain and a message naming the bad part for bad syntax.
    """
    if spec is None or not str(spec).strip():
        raise ValueError("Empty session range: use a number, a range like 4-5, or a list like 1,3,5")
    chosen: set[int] = set()
    for part in str(spec).split(","):
        match = _RANGE_PART.match(part)
        if not match:
            raise ValueError(
                f"Bad session range {str(spec).strip()!r}: {part.strip()!r} is not a number or a range"
                " (use e.g. 4, 4-5 or 1,3,5)"
            )
        start = int(match.group(1))
        end = int(match.group(2)) if match.group(2) else start
        if end < start:
            raise ValueError(f"Bad session range {part.strip()!r}: the range runs backwards")
        for number in (start, end):
            if number < 1 or number > total:
                raise ValueError(f"Session {number} out of range (1-{total})")
        chosen.update(range(start - 1, end))
    return sorted(chosen)


def group_chains(
    sessions: Iterable[SessionInfo], continues: Mapping[str, str], slugs: Mapping[str, str | None]
) -> dict[str, list[SessionInfo]]:
    """Chains keyed by chain key, each oldest first.

    ``slugs`` maps session id → slug so a slug-less continuation inherits the slug
    of the session it continues (its chain is then the slug's chain).
    """
    chains: dict[str, list[SessionInfo]] = {}
    for session in sessions:
        key = _effective_key(session.session_id, continues, slugs)
        chains.setdefault(key, []).append(session)
    for members in chains.values():
        members.sort(key=chain_order)
    return chains


def chain_order(session: SessionInfo) -> tuple[bool, str, str]:
    """Where a session sits in its chain: oldest first, an unknown time after every
    known one (docs/architecture.md), the id breaking ties. The one rule for the full
    build and the lazy one-chain path, so ``list --slug`` and ``show slug#N`` agree."""
    return (session.first_timestamp is None, session.first_timestamp or "", session.session_id)


class Lookup(Protocol):
    """What the chain key reads: a dict, or the row reader's column view."""

    def get(self, key: str, /) -> str | None: ...


def _effective_key(session_id: str, continues: Lookup, slugs: Lookup) -> str:
    seen = set()
    current = session_id
    while True:
        slug = slugs.get(current)
        if slug:
            return f"slug:{slug}"
        nxt = continues.get(current)
        if nxt is None or nxt in seen or nxt == current:
            return f"root:{current}"
        seen.add(current)
        current = nxt


def number_chain(key: str, members: list[SessionInfo], names: dict[str, str]) -> list[SessionInfo]:
    """A chain's sessions (oldest first) with their numbers, chain name and references.

    ``names`` (name → chain key) gets the name of a slug-less chain of several sessions.
    The lazy one-chain path passes an empty dict: it cannot see the other chains, so a
    name taken by two chains (two first ids sharing 8 characters) is not lengthened there.
    """
    chain_slug = key[5:] if key.startswith("slug:") else None
    name = chain_slug or (unslugged_name(members[0].session_id, names) if len(members) > 1 else None)
    if name and not chain_slug:
        names[name] = key
    numbered = []
    for number, info in enumerate(members, start=1):
        slug = info.slug or chain_slug
        numbered.append(
            replace(
                info,
                slug=slug,
                chain_name=name,
                session_number=number,
                chain_length=len(members),
                ref=format_reference(slug=name, session_id=info.session_id, numbers=[number], chain_length=len(members)),
            )
        )
    return numbered


def unslugged_name(first_id: str, taken: dict[str, str]) -> str:
    """A slug-less chain's name: its first session's id prefix (8 characters, longer
    if another chain already has that name), so ``0fae0449#1-2`` can address it."""
    length = MIN_PREFIX
    while first_id[:length] in taken and length < len(first_id):
        length += 1
    return first_id[:length] if first_id[:length] not in taken else first_id
