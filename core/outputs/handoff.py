"""Handing a conversation to another Claude (SPEC §4).

The reference block names the conversation, says in one line what it is, and
gives the exact MCP call that reads it; the content mode renders the turns as
markdown within a size budget, for a Claude without the MCP server. When the budget
cuts, the latest turns stay (what a receiving Claude needs most to carry on) and a
note at the top says how many earlier turns were left out and how to read them.
"""

from __future__ import annotations

from collections.abc import Callable

from core.model import SessionInfo, Turn
from core.query.coverage import ref_for
from core.refs import compress_numbers
from core.views import Resolved

DEFAULT_BUDGET = 40_000
NOTE_ROOM = 300  # characters kept for the "left out" note
MIN_CUT = 200  # a turn cut to less than this says too little to be worth its place
CUT_MARK = "\n\n_[… turn cut here: {more:,} more characters]_\n"


def _span(sessions: tuple[SessionInfo, ...]) -> str:
    first = (sessions[0].first_timestamp or "")[:10]
    last = (sessions[-1].last_timestamp or "")[:10]
    return first if first == last or not last else f"{first} → {last}"


def canonical_ref(resolved: Resolved) -> str:
    sessions = resolved.sessions
    first = sessions[0]
    if not first.slug and first.chain_name and not (resolved.single and len(sessions) == 1):
        # a slug-less chain: its name takes a range (0fae0449#1-2); alone it is an id prefix
        return ref_for(sessions, resolved.chain, turn=resolved.turn)
    if not first.slug or resolved.single and len(resolved.chain) == 1:
        base = first.session_id
        return f"{base}:{resolved.turn}" if resolved.turn is not None else base
    numbers = [s.session_number or 1 for s in sessions]
    if resolved.turn is not None:
        return f"{first.slug}#{numbers[0]}:{resolved.turn}"
    if len(numbers) == len(resolved.chain) and len(resolved.chain) > 1:
        return first.slug
    return f"{first.slug}#{compress_numbers(numbers)}"


def about(info: SessionInfo) -> str:
    """What a session was about: its summary, unless that is only its slug (SPEC's
    summary order falls back to the slug), then its title, then its first prompt."""
    summary = info.summary or ""
    if summary and summary != info.slug:
        return summary
    if info.title and info.title != info.slug:
        return info.title
    return info.first_prompt or summary


def reference_block(resolved: Resolved) -> str:
    sessions = resolved.sessions
    first = sessions[0]
    ref = canonical_ref(resolved)
    total = len(resolved.chain)
    numbers = [s.session_number or 1 for s in sessions]
    if first.chain_name and total > 1:
        which = f"session {numbers[0]} of {total}" if len(numbers) == 1 else f"sessions {compress_numbers(numbers)} of {total}"
    else:
        which = "1 session"
    if resolved.turn is not None:
        which += f", turn {resolved.turn}"
    summary = " ".join(about(first).split())[:120]
    context = f"{first.agent} · project {first.project} · {which} · {_span(sessions)} · {summary}"
    if resolved.turn is not None:
        call = f'read_turn(session_id="{ref}")'
    elif not first.slug and first.chain_name and not (resolved.single and len(sessions) == 1):
        call = f'get_conversation(session_id_or_slug="{ref}")'
    elif first.slug and total > 1 and not (resolved.single and len(sessions) == 1):
        session_arg = compress_numbers(numbers)
        call = f'get_conversation(session_id_or_slug="{first.slug}", session="{session_arg}")'
    else:
        call = f'get_conversation(session_id_or_slug="{first.session_id}")'
    return (
        f"relay-search reference: {ref}\n"
        f"{context}\n"
        f"Read it with the relay-search MCP server: {call}"
    )


def content_markdown(resolved: Resolved, turns_of: Callable[[SessionInfo], list[Turn]], budget: int = DEFAULT_BUDGET) -> str:
    """The conversation as markdown within ``budget`` characters, latest turns kept."""
    ref = canonical_ref(resolved)
    head = [f"# Conversation {ref}\n", reference_block(resolved).split("\n")[1] + "\n"]
    pieces: list[tuple[str, str]] = []  # (session header it belongs under, turn chunk)
    for info in resolved.sessions:
        header = f"\n## Session {info.session_number or 1}: {info.session_id}\n"
        for turn in turns_of(info):
            if resolved.turn is not None and turn.number != resolved.turn:
                continue
            tools = ", ".join(_tool_line(t) for t in turn.tools_used)
            chunk = f"\n### Turn {turn.number} — {turn.timestamp or ''}\n\n**User:** {turn.user_text}\n\n**Assistant:** {turn.assistant_text}\n"
            if tools:
                chunk += f"\n_Tools: {tools}_\n"
            pieces.append((header, chunk))
    room = budget - sum(len(p) for p in head) - NOTE_ROOM
    kept: list[tuple[str, str]] = []
    used = 0
    cut = False
    for header, chunk in reversed(pieces):  # newest first, until the budget is spent
        header_cost = len(header) if not kept or kept[0][0] != header else 0
        cost = len(chunk) + header_cost
        if used + cost > room:
            # the nearest turn that does not fit fills what is left, marked as cut, so a
            # huge turn cannot leave the copy at a few thousand characters
            space = room - used - header_cost
            if space >= MIN_CUT or not kept:
                kept.insert(0, (header, _cut_turn(chunk, max(space, MIN_CUT))))
                cut = True
            break
        kept.insert(0, (header, chunk))
        used += cost
    left_out = len(pieces) - len(kept)
    parts = list(head)
    if left_out or cut:
        if not left_out:
            what = "the turn is cut" if len(kept) == 1 else "the earliest turn is cut"
        else:
            what = f"{left_out} earlier turn{'' if left_out == 1 else 's'} left out"
        kept_note = "the latest turns are kept"
        if cut and left_out:
            kept_note += ", the earliest of them cut where marked" if len(kept) > 1 else "; the latest turn is cut"
        parts.append(
            f"\n_({what} to stay within {budget:,} characters; {kept_note} — "
            f"read the rest with the relay-search MCP server: {ref})_\n"
        )
    current = None
    for header, chunk in kept:
        if header != current:
            parts.append(header)
            current = header
        parts.append(chunk)
    return "".join(parts)


def _cut_turn(chunk: str, space: int) -> str:
    """The start of ``chunk`` within ``space`` characters, marked as cut (at a line or a word)."""
    mark_room = len(CUT_MARK.format(more=len(chunk)))
    head = chunk[: max(space - mark_room, 0)]
    for sep in ("\n", " "):
        at = head.rfind(sep)
        if at > len(head) * 3 // 4:
            head = head[:at]
            break
    return head.rstrip() + CUT_MARK.format(more=len(chunk) - len(head.rstrip()))


def _tool_line(tool: dict) -> str:
    detail = tool.get("file") or tool.get("command") or tool.get("pattern") or tool.get("description") or ""
    return f"{tool['tool']} {detail}".strip()
