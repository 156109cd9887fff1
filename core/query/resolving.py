"""Which sessions (and maybe which turn) a reference names in a library (SPEC §4).

:mod:`core.refs` reads a reference's text; this module looks its name up: a slug or
a slug-less chain's name (with an optional session range), else a session id or a
unique prefix of one. What it cannot name exactly it refuses with one line: an
unknown name, an ambiguous prefix, a turn of several sessions.
"""

from __future__ import annotations

from core.archive.chains import parse_session_range
from core.archive.library import Library
from core.errors import BadInput, NotFound
from core.refs import parse_reference
from core.views import Resolved


def resolve(lib: Library, ref: str) -> Resolved:
    """Sessions (and maybe a turn) named by any reference form."""
    parsed = parse_reference(ref)
    slug_chain = lib.slug_chain(parsed.name)
    if slug_chain is None and parsed.sessions:  # a slug-less chain's name takes a range: 0fae0449#1-2
        key = lib.chain_names.get(parsed.name)
        slug_chain = lib.chains[key] if key else None
    if slug_chain is not None:
        chain = tuple(slug_chain)
        if parsed.sessions:
            try:
                picked = parse_session_range(parsed.sessions, len(chain))
            except ValueError as exc:
                raise BadInput(str(exc)) from None
            sessions = tuple(chain[i] for i in picked)
        else:
            sessions = chain
        if parsed.turn is not None and len(sessions) != 1:
            raise BadInput(f"Bad reference {ref!r}: a turn needs exactly one session, e.g. {parsed.name}#{len(chain)}:{parsed.turn}")
        return Resolved(ref=ref, sessions=sessions, chain=chain, turn=parsed.turn, single=False)
    if parsed.sessions:
        raise NotFound(f"Unknown session_id: {parsed.name}")
    found = lib.find_ids(parsed.name)
    if not found:
        raise NotFound(f"Unknown session_id: {parsed.name}")
    if len(found) > 1:
        shown = ", ".join(found[:5])
        raise BadInput(f"Ambiguous session id prefix {parsed.name!r}: matches {len(found)} sessions ({shown}); give more characters")
    info = lib.session(found[0])
    if info is None:  # find_ids names only sessions of this library
        raise NotFound(f"Unknown session_id: {parsed.name}")
    return Resolved(ref=ref, sessions=(info,), chain=tuple(lib.chain(info.session_id)), turn=parsed.turn, single=True)
