"""Shaping what a reading call returns: pages, the size budget, statistics.

:class:`core.api.Archive` resolves the reference, checks what it covers
(:mod:`core.query.coverage`) and reads the messages (:mod:`core.query.streams`); the functions
here turn what was read into the answer every front end prints: the turns a
conversation call asks for, a page of turns or messages that fits
:data:`core.budget.RESULT_BUDGET`, a message's neighbourhood, the counts of some
sessions. They read nothing themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
from msgspec.structs import replace

from core.budget import RESULT_BUDGET, clip_to_fit, take_within
from core.errors import BadInput, NotFound
from core.model import Message, SessionInfo, Turn
from core.timeutil import is_known, parse_ts, parse_user_time
from core.views import Conversation, MessageContext, MessagesPage, turn_to_dict

TURN_ROLES = ("user", "assistant", "tool")  # get_conversation's roles
AROUND_WINDOW_SECONDS = 2 * 3600


def clipped_turn(turn: Turn, budget: int | None) -> Turn:
    """``read_turn``: a turn whose texts alone exceed the budget, clipped with a note."""
    session = (turn.ref or turn.session_id).split(":")[0]
    where = f"get_message_context(session_id={session!r}, sequence={turn.first_sequence}) reads its messages"
    (user, assistant), _ = clip_to_fit(
        [turn.user_text, turn.assistant_text],
        lambda t: turn_to_dict(replace(turn, user_text=t[0], assistant_text=t[1])), budget, where,
    )  # fmt: skip
    return replace(turn, user_text=user, assistant_text=assistant)


def check_roles(roles: Sequence[str] | None) -> None:
    """``get_conversation``'s ``roles``: each one of user, assistant, tool."""
    unknown = [r for r in roles or () if r not in TURN_ROLES]
    if unknown:
        raise BadInput(f"roles must be among user, assistant, tool; not {unknown[0]!r}")


def selected_turns(turns: list[Turn], *, turn: int | None, around_timestamp: str | None, roles: Sequence[str] | None) -> list[Turn]:
    """``get_conversation``'s turns: the reference's one turn, those near a time, only some roles' texts."""
    if turn is not None:
        turns = [t for t in turns if t.number == turn]
    if around_timestamp:
        center = parse_user_time(around_timestamp, name="around_timestamp")
        if center is not None:  # (a non-empty time always reads as one, or raises BadInput)
            turns = _around(turns, center)
    if roles:
        turns = [_only_roles(t, set(roles)) for t in turns]
    return turns


def _around(turns: list[Turn], center: float) -> list[Turn]:
    """The turns within the window of ``center``; where none is (the sessions were
    picked first, and the time falls in another), the window moves to the nearest
    turn, so a session with turns never answers with none (SPEC seed 000)."""
    near = [t for t in turns if abs(parse_ts(t.timestamp) - center) <= AROUND_WINDOW_SECONDS]
    timed = [t for t in turns if is_known(parse_ts(t.timestamp))]
    if near or not timed:
        return near if timed else turns  # (no turn has a known time: the window cannot apply)
    nearest = min(timed, key=lambda t: abs(parse_ts(t.timestamp) - center))
    return _around(turns, parse_ts(nearest.timestamp))


def _only_roles(turn: Turn, roles: set[str]) -> Turn:
    return replace(
        turn,
        user_text=turn.user_text if "user" in roles else "",
        assistant_text=turn.assistant_text if "assistant" in roles else "",
        tools_used=turn.tools_used if ("tool" in roles or "assistant" in roles) else (),
        notes=turn.notes if ("tool" in roles or "assistant" in roles) else (),
    )


def conversation_page(
    sessions: Sequence[SessionInfo], turns: list[Turn], *, ref: str, offset: int, limit: int | None, budget: int | None
) -> Conversation:
    """``get_conversation``: turns[offset:offset+limit], fewer if the budget says so."""
    page = turns[offset : None if limit is None else offset + limit]

    def build(kept: Sequence[Turn], cut: str | None = None) -> Conversation:
        end = offset + len(kept)
        return Conversation(
            sessions=tuple(sessions), turns=tuple(kept), total_turns=len(turns), ref=ref, offset=offset,
            limit=limit, next_offset=end if end < len(turns) else None, cut=cut,
        )  # fmt: skip

    n = take_within(page, lambda kept: build(kept).to_dict(), budget)
    if n < len(page):
        return build(page[:n], f"{len(page) - n} of {len(page)} turns left out to stay within the "
                               f"{RESULT_BUDGET:,}-character result budget; call again with offset={offset + n}")  # fmt: skip
    if not page or budget is None:
        return build(page)
    first = page[0]  # a page of one turn too big on its own
    where = f"read_turn({ref!r}) on turn {first.number}, or get_message_context, reads its messages"
    texts, cut = clip_to_fit(
        [first.user_text, first.assistant_text],
        lambda t: build([replace(first, user_text=t[0], assistant_text=t[1])]).to_dict(), budget, where,
    )  # fmt: skip
    if not cut:
        return build(page)
    note = f"{cut:,} characters of turn {first.number} cut to stay within the {RESULT_BUDGET:,}-character result budget"
    return build([replace(first, user_text=texts[0], assistant_text=texts[1])], note)


def message_context(
    messages: list[Message], sequence: int, *, before: int, after: int, include_tool_outputs: bool,
    info: SessionInfo, ref: str, budget: int | None,
) -> MessageContext:  # fmt: skip
    """``get_message_context`` over a session's messages in time order."""
    total = len(messages)
    if not include_tool_outputs:
        messages = [m for m in messages if m.type != "tool_result" or m.sequence == sequence]
    index = next((i for i, m in enumerate(messages) if m.sequence == sequence), None)
    if index is None:
        raise NotFound(f"Sequence {sequence} out of range (session has messages 0-{total - 1})")
    lo = max(0, index - max(0, before))
    hi = min(len(messages), index + 1 + max(0, after))
    shown = messages[lo:hi]

    def build(texts: list[str], cut: str | None = None) -> MessageContext:
        clipped = [msgspec.structs.replace(m, text=t) for m, t in zip(shown, texts)]
        at = index - lo
        return MessageContext(
            previous=tuple(clipped[:at]), current=clipped[at], following=tuple(clipped[at + 1 :]),
            has_more_before=lo > 0, has_more_after=hi < len(messages), first_sequence=shown[0].sequence,
            last_sequence=shown[-1].sequence, session_id=info.session_id, project=info.project, ref=ref,
            total_messages=len(shown), cut=cut,  # (the messages returned: SPEC seed 003)
        )  # fmt: skip

    where = "ask for fewer neighbours (before/after), or read it whole with the HTTP messages API"
    texts, cut = clip_to_fit([m.text for m in shown], lambda t: build(t).to_dict(), budget, where)
    note = f"{cut:,} characters of long messages cut to stay within the {RESULT_BUDGET:,}-character result budget"
    return build(texts, note if cut else None)


def messages_page(
    stream: list[Message], sessions: tuple[SessionInfo, ...], *, ref: str, offset: int, budget: int | None
) -> MessagesPage:
    """``get_session_messages``: the stream from ``offset``, as much as fits the budget."""
    rest = stream[offset:]

    def build(kept: Sequence[Message], cut: str | None = None) -> MessagesPage:
        end = offset + len(kept)
        return MessagesPage(ref=ref, sessions=sessions, messages=tuple(kept), offset=offset,
                            next_offset=end if end < len(stream) else None, cut=cut)  # fmt: skip

    n = take_within(rest, lambda kept: build(kept).to_dict(), budget)
    if n < len(rest):
        return build(rest[:n], f"{len(rest) - n} messages left out to stay within the {RESULT_BUDGET:,}-character "
                               f"result budget; call again with offset={offset + n} (same since)")  # fmt: skip
    if not rest or budget is None:
        return build(rest)
    first = rest[0]  # one message too big on its own
    texts, cut = clip_to_fit(
        [first.text], lambda t: build([msgspec.structs.replace(first, text=t[0])]).to_dict(), budget,
        "the HTTP messages API has it whole",
    )  # fmt: skip
    if not cut:
        return build(rest)
    note = f"{cut:,} characters of one long message cut to stay within the {RESULT_BUDGET:,}-character result budget"
    return build([msgspec.structs.replace(first, text=texts[0])], note)


def statistics(sessions: Sequence[SessionInfo], messages_of: Callable[[SessionInfo], list[Message]], *, ref: str) -> dict[str, Any]:
    """``get_session_statistics`` over the sessions a reference names.

    A plain dict with one key per count, so a new count (usage, say) is one more key
    here and one more field on the MCP model.
    """
    tools: dict[str, int] = {}
    count = 0
    for info in sessions:
        for m in messages_of(info):
            count += 1
            if m.type == "tool_use":
                tools[m.tool_name or "tool"] = tools.get(m.tool_name or "tool", 0) + 1
    firsts = [s.first_timestamp for s in sessions if s.first_timestamp]
    lasts = [s.last_timestamp for s in sessions if s.last_timestamp]
    return {
        "ref": ref,
        "session_id": sessions[0].session_id,
        "session_ids": [s.session_id for s in sessions],
        "turns": sum(s.turn_count for s in sessions),
        "messages": count,
        "tool_calls": sum(tools.values()),
        "tool_calls_by_name": dict(sorted(tools.items(), key=lambda kv: -kv[1])),
        "first_activity": min(firsts) if firsts else None,
        "last_activity": max(lasts) if lasts else None,
    }
