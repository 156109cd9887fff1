"""Sessions pane: chains grouped under their slug, numbered, newest activity first.

Rows are options of one :class:`SessionList` (fast for thousands of sessions). A
chain is a header row (open it to read the whole chain) followed by its numbered
sessions; ``space`` marks sessions and ``shift+up/down`` extends a range, so ``c``
copies ``slug#4-5`` and ``enter`` opens just those (the status line says what is
marked). ``left``/``right`` (or ``space`` on the header) fold and unfold a chain.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual import on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from .. import tasks
from ..formatting import compress_numbers, one_line, relative_time, spread
from ..messages import SessionsLoaded

if TYPE_CHECKING:
    from textual import getters

    from ..host import RelayHost

PAGE = 200
LIVE = "●"


@dataclass(frozen=True, slots=True)
class Row:
    """What an option in the list stands for."""

    kind: str  # chain | session | more
    slug: str | None = None
    session: Any = None
    chain: tuple[Any, ...] = ()

    @property
    def key(self) -> str:
        if self.kind == "chain":
            return f"chain:{self.slug}"
        if self.kind == "session":
            return f"s:{self.session.session_id}"
        return "more"


def session_ref(session: Any) -> str:
    """The reference that names exactly this session."""
    if session.ref:
        return session.ref
    if session.slug and session.session_number:
        return f"{session.slug}#{session.session_number}"
    return session.session_id


def group_rows(sessions: list[Any], chains: dict[str, list[Any]]) -> list[Row]:
    """Chains (whole, oldest first inside) and single sessions, newest activity first."""
    rows: list[Row] = []
    done: set[str] = set()
    by_slug: dict[str, list[Any]] = {}
    for session in sessions:
        if session.slug:
            by_slug.setdefault(session.slug, []).append(session)
    for session in sessions:
        slug = session.slug
        members = chains.get(slug or "") or by_slug.get(slug or "", [])
        if slug and (len(members) > 1 or (session.chain_length or 1) > 1):
            if slug in done:
                continue
            done.add(slug)
            chain = tuple(sorted(members, key=lambda s: (s.session_number or 0, s.first_timestamp or "")))
            rows.append(Row("chain", slug=slug, chain=chain))
            rows.extend(Row("session", slug=slug, session=s, chain=chain) for s in chain)
        else:
            rows.append(Row("session", slug=slug, session=session))
    return rows


def about(session: Any) -> str:
    """What the session was about: its summary, unless that is just its slug."""
    summary = session.summary or ""
    if summary == session.slug:
        # SPEC's summary order puts the slug before the first prompt; a list row
        # says more with the prompt (or a title) than with the slug it already shows
        summary = (session.title if session.title and session.title != session.slug else "") or (session.first_prompt or "")
    return summary


def _tags(session: Any) -> str:
    return "  " + " ".join(f"#{t}" for t in session.tags) if session.tags else ""


def _when(session: Any, now: datetime) -> Content:
    live = Content.styled(f"{LIVE} live  ", "bold $text-success") if session.is_live else Content("")
    return live + Content.styled(relative_time(session.last_timestamp, now), "$text-muted")


def row_prompt(row: Row, now: datetime, marked: bool, width: int, folded: bool = False) -> Content:
    """One option: a chain header (2 lines), a numbered chain member, or a single session."""
    width = max(width, 30)
    if row.kind == "more":
        return Content.styled("  … more sessions (enter)", "$text-muted italic")
    if row.kind == "chain":
        last = max(row.chain, key=lambda s: s.last_timestamp or "")
        first = row.chain[0]
        live = any(s.is_live for s in row.chain)
        head = Content.assemble(
            ("▸ " if folded else "▾ ", "$text-muted"),
            (row.slug or "", "bold $text-accent"),
            (f"  {len(row.chain)} sessions", "$text-muted"),
        )
        # the live marker sits with the time (one line at 80 columns, as on session rows)
        when = Content.styled(f"{LIVE} ", "bold $text-success") if live else Content("")
        where = spread(
            Content.assemble("  ", (first.project or "—", "bold"), "  ", (first.agent, "$text-secondary")),
            when + Content.styled(relative_time(last.last_timestamp, now), "$text-muted"),
            width,
        )
        return Content("\n").join([head, where])
    session = row.session
    mark = Content.styled("▌", "bold $text-warning") if marked else Content(" ")
    turns = f"{session.turn_count} turn{'s' if session.turn_count != 1 else ''}"
    tags = Content.styled(_tags(session), "$text-warning")
    if row.chain:
        number = Content.styled(f" #{session.session_number or '?'}", "bold $text-accent")
        label = mark + number + Content.styled(f"  {turns}", "$text-muted") + tags
        line = spread(label, _when(session, now), width)
        text = about(session)
        if text:
            line = line + "\n" + Content.styled("     " + one_line(text, width - 6), "")
        return line
    # the core's name for it (a slug-less chain's member is ``67a8478e#2``, as in the CLI)
    title = session.slug or (session.ref if session.ref and "#" in session.ref else session.session_id[:8])
    style = "bold $text-accent" if session.slug else "bold"
    head = spread(mark + Content.styled(title, style), _when(session, now), width)
    room = width - len(session.agent) - len(turns) - 7  # one line, even at 80 columns
    where = Content.assemble(
        "  ", (one_line(session.project or "—", max(room, 8)), "bold"), "  ", (session.agent, "$text-secondary"),
        (f"  {turns}", "$text-muted"),
    ) + tags
    lines = [head, where]
    text = about(session)
    if text:
        lines.append(Content("  " + one_line(text, width - 3)))
    return Content("\n").join(lines)


class SessionList(OptionList):
    """The list itself; marks live here because they are about these rows."""

    if TYPE_CHECKING:  # (what this pane asks of the app: tui/host.py)
        app = getters.app(RelayHost)

    BINDINGS = [
        Binding("space", "toggle_mark", "Mark", show=False),
        Binding("shift+down", "extend(1)", "Extend range", show=False),
        Binding("shift+up", "extend(-1)", "Extend range", show=False),
        Binding("escape", "clear_marks", "Clear marks", show=False),
        Binding("left", "fold(True)", "Fold chain", show=False),
        Binding("right", "fold(False)", "Unfold chain", show=False),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]

    class MarksChanged(Message):
        """Sessions were marked or unmarked (the pane's status line says which)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: list[Row] = []  # the visible rows (folded chains show their header only)
        self.all_rows: list[Row] = []
        self.folded: set[str] = set()  # slugs of folded chains
        self.marked: set[str] = set()  # session ids, all in one chain
        self.range_anchor: int | None = None  # where a shift+arrow range started (Widget.anchor is a method)
        self.rendered_width: int | None = None  # the width rows were laid out for
        self.visited = False  # the person has been in the list: a reload keeps their row

    def on_focus(self) -> None:
        self.visited = True

    @property
    def current_row(self) -> Row | None:
        index = self.highlighted
        return self.rows[index] if index is not None and 0 <= index < len(self.rows) else None

    def set_rows(self, rows: list[Row], keep: str | None = None) -> None:
        self.all_rows = rows
        self.render_rows(keep=keep)

    def render_rows(self, keep: str | None = None) -> None:
        now = self.app.now()
        self.rendered_width = self.scrollable_content_region.width
        width = (self.rendered_width or 47) - 1
        old = self.highlighted
        self.rows = [r for r in self.all_rows if not (r.kind == "session" and r.chain and r.slug in self.folded)]
        self.set_options(
            Option(
                row_prompt(
                    row, now, row.kind == "session" and row.session.session_id in self.marked, width, row.slug in self.folded
                ),
                id=row.key,
            )
            for row in self.rows
        )
        if not self.rows:
            return
        keys = [row.key for row in self.rows]
        if not self.visited:  # nobody has moved here (a cold start's chunks landing): the top shows
            self.highlighted = 0
            self.scroll_to(y=0, animate=False, immediate=True)
        elif keep in keys:
            self.highlighted = keys.index(keep)
        else:
            self.highlighted = min(old or 0, len(self.rows) - 1)

    def _refresh_marks(self) -> None:
        self.render_rows(keep=self.current_row.key if self.current_row else None)
        self.post_message(self.MarksChanged())

    def action_fold(self, fold: bool) -> None:
        row = self.current_row
        if row is None or not row.chain or not row.slug:
            return
        if fold == (row.slug in self.folded):
            return
        if fold:
            self.folded.add(row.slug)
            self.render_rows(keep=f"chain:{row.slug}")
        else:
            self.folded.discard(row.slug)
            self.render_rows(keep=row.key)

    def marked_text(self) -> str:
        """``2 marked: #4-5`` (empty when nothing is marked)."""
        numbers = [r.session.session_number for r in self.all_rows if r.kind == "session" and r.session.session_id in self.marked]
        if not self.marked:
            return ""
        which = f"#{compress_numbers(numbers)}" if numbers and all(numbers) else ""
        return f"{len(self.marked)} marked: {which}".rstrip(": ")

    def action_toggle_mark(self) -> None:
        row = self.current_row
        if row is not None and row.kind == "chain":
            self.action_fold(row.slug not in self.folded)
            return
        if row is None or row.kind != "session" or not row.chain:
            self.app.bell()
            return
        sid = row.session.session_id
        chain_ids = {s.session_id for s in row.chain}
        if not self.marked <= chain_ids:
            self.marked = set()
        self.marked ^= {sid}
        self.range_anchor = self.highlighted
        self._refresh_marks()

    def action_extend(self, step: int) -> None:
        row = self.current_row
        index = self.highlighted
        if row is None or index is None or row.kind != "session" or not row.chain:
            return
        target = index + step
        if not (0 <= target < len(self.rows)):
            return
        nxt = self.rows[target]
        if nxt.kind != "session" or nxt.slug != row.slug:
            return
        if self.range_anchor is None or not self.marked:
            self.range_anchor = index
            self.marked = {row.session.session_id}
        lo, hi = sorted((self.range_anchor, target))
        self.marked = {self.rows[i].session.session_id for i in range(lo, hi + 1)}
        self.highlighted = target
        self._refresh_marks()

    def action_clear_marks(self) -> None:
        if not self.marked:
            raise SkipAction()  # esc goes on to the screen (clears the search box)
        self.marked = set()
        self.range_anchor = None
        self._refresh_marks()

    def selection_ref(self) -> str | None:
        """``slug#4-5`` for marked sessions, else the highlighted chain or session."""
        row = self.current_row
        if self.marked:
            for r in self.all_rows:
                if r.kind == "session" and r.session.session_id in self.marked and r.chain:
                    numbers = [s.session_number for s in r.chain if s.session_id in self.marked]
                    if all(numbers):
                        return f"{r.slug}#{compress_numbers(numbers)}"
        if row is None or row.kind == "more":
            return None
        if row.kind == "chain":
            return row.slug
        return session_ref(row.session)


class SessionsPane(Vertical):
    """Header line + :class:`SessionList`; posts :class:`SessionsPane.Chosen`."""

    if TYPE_CHECKING:  # (what this pane asks of the app: tui/host.py)
        app = getters.app(RelayHost)

    class Chosen(Message):
        def __init__(self, ref: str, row: Row) -> None:
            super().__init__()
            self.ref = ref
            self.row = row

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limit = PAGE
        self.sessions: list[Any] = []
        self._summary = "Sessions"

    def compose(self) -> ComposeResult:
        yield Static("Sessions", id="sessions-status", classes="pane-status")
        yield SessionList(id="sessions")

    @property
    def session_list(self) -> SessionList:
        return self.query_one(SessionList)

    def reload(self, *, refresh: bool = False) -> None:
        if self.app.archive is None:
            return
        self.app.submit(
            tasks.list_sessions,
            self.app.filters,
            self.limit,
            refresh,
            reply_to=self,
            group="sessions",
            exclusive=True,
            name="list sessions",
        )

    @on(SessionsLoaded)
    def _loaded(self, message: SessionsLoaded) -> None:
        message.stop()
        listing = self.session_list
        keep = listing.current_row.key if listing.current_row else None
        self.sessions = message.sessions
        rows = group_rows(message.sessions, message.chains)
        if len(message.sessions) >= message.limit:
            rows.append(Row("more"))
        listing.set_rows(rows, keep=keep)
        live = sum(1 for s in message.sessions if s.is_live)
        filters = self.app.filters.describe()
        count = len(message.sessions)
        text = f"{count}{'+' if count >= message.limit else ''} session{'' if count == 1 else 's'}"
        if live:
            text += f" · {live} live"
        if filters:
            text += f" · {filters}"
        self._summary = text
        self.update_status()

    def update_status(self) -> None:
        marked = self.session_list.marked_text()
        text = f"{marked} · {self._summary}" if marked else self._summary
        if self.folded:
            text = f"▸ {text} · tab: show"  # "11 sessions · 1 live" says what is folded; a click shows them too
        self.query_one("#sessions-status", Static).update(text)

    @property
    def folded(self) -> bool:
        return self.has_class("-folded")

    def fold(self, folded: bool) -> None:
        """Folded to one line while a query's hits have the column (the list keeps its rows)."""
        if folded == self.folded or (folded and self.session_list.has_focus):
            return
        self.set_class(folded, "-folded")
        self.update_status()

    def show_list(self) -> None:
        """Unfold and focus the list (tab, esc or a click on the folded line)."""
        self.fold(False)
        self.session_list.focus()

    def on_click(self) -> None:
        if self.folded:
            self.show_list()

    @on(SessionList.MarksChanged)
    def _marks_changed(self, message: SessionList.MarksChanged) -> None:
        message.stop()
        self.update_status()

    def on_resize(self) -> None:
        # Rows are laid out for a width; a height change (the search pane above
        # growing while someone types) needs no re-render of hundreds of rows, nor does
        # folding while a query's hits have the column (the list is hidden, width 0):
        # unfolded at the same width, the rows laid out before are still right.
        rows = self.session_list
        width = rows.scrollable_content_region.width
        if rows.rows and width and width != rows.rendered_width:
            rows._refresh_marks()

    @on(OptionList.OptionSelected, "#sessions")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        listing = self.session_list
        row = listing.rows[event.option_index]
        if row.kind == "more":
            self.limit += PAGE
            self.reload()
            return
        ref = listing.selection_ref()
        if ref:
            self.post_message(self.Chosen(ref, row))

    @property
    def selected_session(self) -> Any | None:
        row = self.session_list.current_row
        if row is None:
            return None
        if row.kind == "session":
            return row.session
        if row.kind == "chain" and row.chain:
            return row.chain[-1]
        return None
