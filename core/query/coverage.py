"""What an answer covers: the ref it names, and refusals instead of silent shrinking.

A tool that reads one session, given a chain or a range, used to answer for one of
its sessions without a word. Each call now either serves what its reference names
or refuses with one line that says what to pass instead; inputs that contradict
each other (``slug#4`` with ``session="2"``) are refused the same way. Every answer
carries the reference of exactly what it covers (:func:`ref_for`).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.archive.chains import parse_session_range
from core.errors import BadInput
from core.model import SessionInfo
from core.refs import format_reference, parse_reference
from core.views import Resolved


def ref_for(sessions: Sequence[SessionInfo], chain: Sequence[SessionInfo], *, single: bool = False, turn: int | None = None) -> str:
    """The reference naming exactly ``sessions`` (of ``chain``), or a turn of one."""
    first = sessions[0]
    name = first.chain_name
    if single or not name:
        return f"{first.session_id}:{turn}" if turn is not None else first.session_id
    numbers = [s.session_number or 1 for s in sessions]
    return format_reference(
        slug=name, session_id=first.session_id, numbers=numbers, chain_length=len(chain), turn=turn,
        bare_is_chain=bool(first.slug),
    )  # fmt: skip


def one_session(resolved: Resolved, call: str) -> SessionInfo:
    """The one session a one-session call reads, or a refusal naming the choices."""
    if len(resolved.sessions) == 1:
        return resolved.sessions[0]
    first = resolved.sessions[0]
    covered = ref_for(resolved.sessions, resolved.chain)
    numbers = [s.session_number or 1 for s in resolved.sessions]
    example = f"{first.chain_name}#{numbers[-1]}"
    raise BadInput(
        f"{call} reads one session, but {resolved.ref!r} names {len(resolved.sessions)} sessions ({covered}); "
        f"name one, e.g. {example}"
    )


def turn_number(resolved: Resolved, given: int | None) -> int:
    """The turn a read_turn call asks for: from the reference or the argument, not both differently."""
    if given is not None and resolved.turn is not None and given != resolved.turn:
        raise BadInput(f"Conflicting turns: the reference {resolved.ref!r} names turn {resolved.turn} but turn_number is {given}")
    number = given if given is not None else resolved.turn
    if number is None:
        raise BadInput("Which turn? Give turn_number or a reference like slug#4:12 or id:12")
    return number


def pick_sessions(resolved: Resolved, session: str | None) -> tuple[SessionInfo, ...]:
    """``get_conversation``'s ``session`` range applied to a reference.

    Ignored for a reference naming one session by id (SPEC §5); refused when the
    reference already names sessions (``slug#4``) and the range names others.
    """
    if not session or resolved.single:
        return resolved.sessions
    try:
        picked = parse_session_range(session, len(resolved.chain))
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    chosen = tuple(resolved.chain[i] for i in picked)
    if parse_reference(resolved.ref).sessions is not None and chosen != resolved.sessions:
        raise BadInput(
            f"Conflicting sessions: the reference {resolved.ref!r} names "
            f"{ref_for(resolved.sessions, resolved.chain)} but session is {session!r}; give one of them"
        )
    return chosen
