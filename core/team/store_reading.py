"""The team store's reading calls: the ``TeamReading`` half of :class:`~core.team.store.TeamArchive`.

References, turns, conversations, messages, statistics, token usage, resuming and
handoff: each call routes the reference to the user whose sessions it names and
asks that user's :class:`~core.team.view.UserView` (the embedded store's own code),
then qualifies the reference it answers with (``alice/…``) where two users share
the name. ``stats`` counts the whole store. Separate from :mod:`core.team.store`,
which connects and keeps the users' libraries current, so that each module has one
job; the store mixes it in, and the routing it uses is the store's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from core.archive import usage_records
from core.model import Message, SessionInfo, Turn
from core.outputs import handoff, resume, usage
from core.views import Conversation, IndexStats, MessageContext, MessagesPage, Resolved

from .names import qualify_text

if TYPE_CHECKING:
    from core.archive.library import Library

    from .view import UserView


class TeamReading:
    """The reading calls, routed to one user's view (mixed into ``TeamArchive``)."""

    if TYPE_CHECKING:  # the store's (core.team.store.TeamArchive)
        _collisions: set[str]

        def _query(self, sql: str, params: Any = ()) -> list[tuple]: ...
        def _current(self) -> dict[str, Library]: ...
        def _view(self, name: str, lib: Library) -> UserView: ...
        def _views(self, user: str | None = None) -> list[UserView]: ...
        def _route(self, ref: str, user: str | None = None) -> tuple[UserView, str]: ...
        def _qualified(self, user: str, ref: str) -> str: ...

    # --- references and reading ---------------------------------------------------------------

    def resolve(self, ref: str, *, user: str | None = None) -> Resolved:
        view, bare = self._route(ref, user)
        return view.resolve(bare)

    def one_session(self, ref: str, call: str = "This call", *, user: str | None = None) -> SessionInfo:
        view, bare = self._route(ref, user)
        return view.one_session(bare, call)

    def session_messages(self, ref: str, *, user: str | None = None) -> list[Message]:
        view, bare = self._route(ref, user)
        return view.session_messages(bare)

    def turns(self, info: SessionInfo) -> list[Turn]:
        return self._view(info.user or "", self._current()[info.user or ""]).turns(info)

    def read_turn(self, ref: str, turn_number: int | None = None, *, user: str | None = None, **options: Any) -> Turn:
        view, bare = self._route(ref, user)
        turn = view.read_turn(bare, turn_number, **options)
        return replace(turn, ref=self._qualified(view._user, turn.ref)) if turn.ref else turn

    def get_conversation(self, ref: str, *, user: str | None = None, **options: Any) -> Conversation:
        view, bare = self._route(ref, user)
        conv = view.get_conversation(bare, **options)
        return replace(conv, ref=self._qualified(view._user, conv.ref))

    def get_message_context(self, ref: str, sequence: int, *, user: str | None = None, **options: Any) -> MessageContext:
        view, bare = self._route(ref, user)
        ctx = view.get_message_context(bare, sequence, **options)
        return replace(ctx, ref=self._qualified(view._user, ctx.ref))

    def message_sessions(self, ref: str, *, user: str | None = None) -> tuple[str, tuple[SessionInfo, ...]]:
        view, bare = self._route(ref, user)
        covered, sessions = view.message_sessions(bare)
        return self._qualified(view._user, covered), sessions

    def iter_session_messages(self, ref: str, *, user: str | None = None, **options: Any) -> Iterator[Message]:
        view, bare = self._route(ref, user)
        return view.iter_session_messages(bare, **options)

    def session_messages_page(self, ref: str, *, user: str | None = None, **options: Any) -> MessagesPage:
        view, bare = self._route(ref, user)
        page = view.session_messages_page(bare, **options)
        return replace(page, ref=self._qualified(view._user, page.ref))

    def session_statistics(self, ref: str, *, user: str | None = None) -> dict:
        view, bare = self._route(ref, user)
        stats = view.session_statistics(bare)
        return {**stats, "ref": self._qualified(view._user, stats["ref"]), "user": view._user}

    # --- token usage and resuming --------------------------------------------------------

    def usage_report(self, *, user: str | None = None, **options: Any) -> usage.UsageReport:
        records: list[usage_records.Record] = []
        owners: dict[int, usage.Owner] = {}
        for view in self._views(user):
            got, mine = view._usage_source()
            records += got
            owners.update(mine)
        return usage.report(records, owners, **options)

    def sessions_usage(self, session_ids, *, user: str | None = None) -> dict[str, usage.Totals]:
        wanted = list(session_ids)
        out: dict[str, usage.Totals] = {}
        for view in self._views(user):
            mine = [sid for sid in wanted if sid in view.library.sessions]
            if mine:
                out.update(view.sessions_usage(mine))
        return {sid: out.get(sid, usage.Totals()) for sid in wanted}

    def session_usage(self, ref: str, *, user: str | None = None) -> usage.Totals:
        view, bare = self._route(ref, user)
        return view.session_usage(bare)

    def resume_plan(self, ref: str, *, user: str | None = None) -> resume.ResumePlan:
        view, bare = self._route(ref, user)
        return view.resume_plan(bare)

    def reference_block(self, ref: str, *, user: str | None = None) -> str:
        view, bare = self._route(ref, user)
        resolved = view.resolve(bare)
        return qualify_text(view._user, resolved, handoff.reference_block(resolved), self._collisions)

    def content_markdown(self, ref: str, budget_chars: int = handoff.DEFAULT_BUDGET, *, user: str | None = None) -> str:
        view, bare = self._route(ref, user)
        resolved = view.resolve(bare)
        text = handoff.content_markdown(resolved, view.turns, budget_chars)
        return qualify_text(view._user, resolved, text, self._collisions)

    # --- stats ----------------------------------------------------------------------------

    def stats(self) -> IndexStats:
        libs = self._current()
        files = self._query("SELECT path, size, skipped, error FROM files")
        documents = self._query("SELECT n_docs FROM corpus WHERE id=1")[0][0]
        index_bytes = self._query("SELECT pg_database_size(current_database())")[0][0]
        agents: dict[str, int] = {}
        for lib in libs.values():
            for s in lib.sessions.values():
                agents[s.agent] = agents.get(s.agent, 0) + 1
        return IndexStats(
            files=len(files),
            sessions=sum(len(lib.sessions) for lib in libs.values()),
            turns=sum(s.turn_count for lib in libs.values() for s in lib.sessions.values()),
            documents=int(documents),
            segments=0,
            transcript_bytes=sum(max(0, f[1]) for f in files),
            index_bytes=int(index_bytes),
            skipped_lines=sum(f[2] for f in files),
            files_with_skips=tuple((f[0], f[2]) for f in files if f[2]),
            errors=tuple((f[0], f[3]) for f in files if f[3]),
            agents=agents,
            semantic={"on": False, "reason": "team search is by words (BM25) only"},
        )

