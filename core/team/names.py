"""Whose session a reference names, in a store that holds several users' archives.

Session ids are unique in practice, slugs almost: two members' archives can share a
slug (or, when one person syncs under two names, everything). A reference may carry
its user — ``alice/velvet-puzzling-eclipse#4`` — and must when the bare name is
shared; references the store hands out are qualified exactly then, so they stay
as short as on the member's own machine otherwise.
"""

from __future__ import annotations

import re

from msgspec.structs import replace

from core.archive.library import Library
from core.errors import BadInput
from core.outputs import handoff
from core.refs import parse_reference
from core.views import Resolved


def split_user(ref: str, user: str | None = None) -> tuple[str | None, str]:
    """``alice/ref`` → ("alice", "ref"); a ``user`` argument must agree with the prefix."""
    text = (ref or "").strip()
    owner = None
    if "/" in text:
        head, _, rest = text.partition("/")
        if head and rest:
            owner, text = head, rest
    if user and owner and user != owner:
        raise BadInput(f"Reference {ref!r} names user {owner!r}, not {user!r}")
    return owner or user or None, text


def collisions(libs: dict[str, Library]) -> set[str]:
    """Slugs and session ids that more than one user has."""
    seen: dict[str, str] = {}
    shared: set[str] = set()
    for name, lib in libs.items():
        for key in set(lib.slugs) | set(lib.sessions):
            if seen.setdefault(key, name) != name:
                shared.add(key)
    return shared


def qualify(user: str, lib: Library, shared: set[str]) -> None:
    """Give sessions whose slug or id another user shares a ``user/`` reference."""
    prefix = user + "/"
    for chain in lib.chains.values():
        for i, info in enumerate(chain):
            if not info.ref:
                continue
            bare = info.ref[len(prefix) :] if info.ref.startswith(prefix) else info.ref
            clash = info.session_id in shared or (info.slug is not None and info.slug in shared)
            want = prefix + bare if clash else bare
            if want != info.ref:
                info = replace(info, ref=want)
                chain[i] = info
                lib.sessions[info.session_id] = info


def changed_sessions(old: Library | None, new: Library) -> list[str]:
    if old is None:
        return list(new.sessions)
    return [sid for sid, info in new.sessions.items() if old.sessions.get(sid) != info] + [
        sid for sid in old.sessions if sid not in new.sessions
    ]


def qualify_text(user: str, resolved: Resolved, text: str, shared: set[str]) -> str:
    """Handoff text naming the user where the bare reference would be ambiguous."""
    canonical = handoff.canonical_ref(resolved)
    if parse_reference(canonical).name not in shared:
        return text
    text = text.replace(f"reference: {canonical}", f"reference: {user}/{canonical}")
    text = text.replace(f"# Conversation {canonical}", f"# Conversation {user}/{canonical}")
    text = text.replace(f"server: {canonical})", f"server: {user}/{canonical})")
    return re.sub(r'(session_id(?:_or_slug)?=")', rf"\1{user}/", text)
