"""The reading calls of the query API: a turn, a conversation page, a message's context, a message stream.

:class:`core.api.Archive` checks the arguments of ``read_turn``, ``get_conversation``,
``get_message_context``, ``message_sessions``, ``iter_session_messages`` and
``session_messages_page`` and hands the rest to the functions here: resolve the
reference, check what it covers (:mod:`core.query.coverage`), read the sessions
(:mod:`core.query.streams`) and shape the answer (:mod:`core.query.answers`). They
are separate so that ``Archive`` delegates rather than grows; they take the archive
as a :class:`ReadableArchive` (the team store's per-user views are ones too), so
whatever it overrides — its library, its reader — is what they read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from msgspec.structs import replace

from core.archive.library import Library
from core.errors import BadInput, NotFound
from core.model import Message, SessionInfo, Turn
from core.timeutil import parse_user_time
from core.views import Conversation, MessageContext, MessagesPage, Resolved
from core.words import plural

from . import answers, coverage
from .reading import MessageReader
from .streams import chronological, stitched


class ReadableArchive(Protocol):
    """What the reading calls need of an archive (:class:`core.api.Archive` is one).

    A protocol, not an import: the query layer sits below the query API and must
    not import it.
    """

    reader: MessageReader

    @property
    def library(self) -> Library: ...

    def resolve(self, ref: str) -> Resolved: ...

    def turns(self, info: SessionInfo) -> list[Turn]: ...

    def message_sessions(self, ref: str) -> tuple[str, tuple[SessionInfo, ...]]: ...

    def iter_session_messages(
        self, ref: str, *, since: str | None = None, include_tools: bool = False, include_thinking: bool = False
    ) -> Iterator[Message]: ...


def read_turn(archive: ReadableArchive, ref: str, turn_number: int | None, *, budget: int | None) -> Turn:
    """One turn of one session (a chain, a range or a conflicting turn_number is refused)."""
    resolved = archive.resolve(ref)
    number = coverage.turn_number(resolved, turn_number)
    info = coverage.one_session(resolved, "read_turn")
    turns = archive.turns(info)
    if number < 0 or number >= len(turns):
        raise NotFound(f"Turn {number} out of range (session has {plural(max(info.turn_count, len(turns)), 'turn')})")
    turn_ref = coverage.ref_for((info,), resolved.chain, single=resolved.single, turn=number)
    return answers.clipped_turn(replace(turns[number], ref=turn_ref), budget)


def conversation(
    archive: ReadableArchive,
    ref: str,
    *,
    session: str | None,
    around_timestamp: str | None,
    roles: list[str] | None,
    offset: int,
    limit: int | None,
    budget: int | None,
) -> Conversation:
    """A page of a conversation's turns (its arguments already checked)."""
    resolved = archive.resolve(ref)
    sessions = coverage.pick_sessions(resolved, session)
    turns = [t for info in sessions for t in archive.turns(info)]
    turns = answers.selected_turns(turns, turn=resolved.turn, around_timestamp=around_timestamp, roles=roles)
    covered = coverage.ref_for(sessions, resolved.chain, single=resolved.single, turn=resolved.turn)
    return answers.conversation_page(sessions, turns, ref=covered, offset=offset, limit=limit, budget=budget)


def message_context(
    archive: ReadableArchive, ref: str, sequence: int, *, before: int, after: int, include_tool_outputs: bool,
    budget: int | None,
) -> MessageContext:  # fmt: skip
    """A message and its neighbours in the session's time order (subagents interleaved)."""
    resolved = archive.resolve(ref)
    info = coverage.one_session(resolved, "get_message_context")
    messages = chronological(archive.reader.session(archive.library.files_of(info.session_id)))
    covered = coverage.ref_for((info,), resolved.chain, single=resolved.single)
    return answers.message_context(
        messages, sequence, before=before, after=after, include_tool_outputs=include_tool_outputs, info=info,
        ref=covered, budget=budget,
    )  # fmt: skip


def message_sessions(archive: ReadableArchive, ref: str) -> tuple[str, tuple[SessionInfo, ...]]:
    """(the ref covered, the sessions) a messages call streams: a session, a range or a chain."""
    resolved = archive.resolve(ref)
    if resolved.turn is not None:
        raise BadInput(f"{ref!r} names a turn; the messages API streams sessions (use read_turn for a turn)")
    return coverage.ref_for(resolved.sessions, resolved.chain, single=resolved.single), resolved.sessions


def iter_messages(
    archive: ReadableArchive, ref: str, *, since: str | None, include_tools: bool, include_thinking: bool
) -> Iterator[Message]:
    """Messages of a session, range or chain, streamed (``since``: strictly after it)."""
    _, sessions = archive.message_sessions(ref)
    threshold = parse_user_time(since, name="since")
    lib = archive.library
    plan = []
    for info in sessions:
        own = coverage.ref_for((info,), lib.chain(info.session_id)) if len(sessions) > 1 else info.session_id
        plan.append((info, own, [archive.reader.iter_file(f) for f in lib.files_of(info.session_id)]))

    def keep(message: Message) -> bool:
        if message.type in ("tool_use", "tool_result") and not include_tools:
            return False
        return message.type != "thinking" or include_thinking

    return stitched(plan, since=threshold, keep=keep, markers=len(sessions) > 1)


def messages_page(
    archive: ReadableArchive, ref: str, *, since: str | None, include_tools: bool, include_thinking: bool,
    offset: int, budget: int | None,
) -> MessagesPage:  # fmt: skip
    """One budget-sized page of the archive's ``iter_session_messages`` (its offset already checked)."""
    covered, sessions = archive.message_sessions(ref)
    stream = list(archive.iter_session_messages(ref, since=since, include_tools=include_tools, include_thinking=include_thinking))
    return answers.messages_page(stream, sessions, ref=covered, offset=offset, budget=budget)
