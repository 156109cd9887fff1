"""Search pane: an input that searches as you type and the ranked hits.

Each keystroke starts an exclusive worker in group ``search`` (the previous one is
cancelled); results for a query that is no longer in the input are dropped, so
the list only ever shows hits for what is typed now.

Hits come a page at a time (``tasks.SEARCH_LIMIT``): when the highlight or the
scroll nears the end of the list, the next page is fetched with ``offset`` and
appended, so a keystroke never pays for more than one page. By default the list
has one row per session (its best hit, "+N more in this session"), so one long
session cannot flood it; ``g`` switches to every matching turn. A hit takes two
lines (``v``: the roomier four), and while a query is active the pane reports it
(:class:`SearchPane.Active`) so the sessions pane can fold and leave it the column.

A refresh (the index grew, a live change) keeps the selection and the scroll when
the hits from the top down to the selected one are the same; otherwise the new
best hit is selected at the top, so a search typed during a cold index ends on the
complete answer, not scrolled to where its partial first hit went.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from core.query.syntax import phrase_note

from .. import tasks
from ..messages import SearchFinished
from .hit_list import HitList
from .hit_rows import hit_prompt, open_prompt
from .paint_hold import PaintHold
from .query_box import QueryBox

if TYPE_CHECKING:
    from textual import getters

    from ..host import RelayHost


class SearchPane(Vertical):
    """Input + hits. Posts :class:`SearchPane.HitChosen` when a hit is opened, and
    :class:`SearchPane.RefChosen` for the "open slug#4-5" row a typed reference gets."""

    if TYPE_CHECKING:  # (what this pane asks of the app: tui/host.py)
        app = getters.app(RelayHost)

    class RefChosen(Message):
        def __init__(self, ref: str) -> None:
            super().__init__()
            self.ref = ref

    class Active(Message):
        """A query started showing hits (``active``), or was cleared."""

        def __init__(self, active: bool) -> None:
            super().__init__()
            self.active = active

    class HitChosen(Message):
        def __init__(self, hit: Any, query: str) -> None:
            super().__init__()
            self.hit = hit
            self.query = query

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hits: list[Any] = []
        self.opens: str | None = None  # a typed reference: the first row opens it
        self.shown_query = ""
        self.grouped = True  # one row per session; g toggles
        self.compact = True  # two lines a hit; v toggles
        self.complete = True  # False while the last page came back full: there may be more
        self._loading_more = False
        self._rendered_width: int | None = None  # the hit list width hits were laid out for
        self._paint_hold = PaintHold(self)

    def compose(self) -> ComposeResult:
        yield QueryBox(placeholder="Search conversations…   ( / )", id="query")
        yield Static("Type to search every conversation.", id="search-status", classes="pane-status")
        yield HitList(id="hits")

    def on_mount(self) -> None:
        self.set_class(True, "-idle")

    def on_unmount(self) -> None:
        self._paint_hold.release()

    def _set_idle(self, idle: bool) -> None:
        """Idle: no query, no hit list (and the sessions pane has the column back)."""
        if self.has_class("-idle") != idle:
            self.set_class(idle, "-idle")
            self.post_message(self.Active(not idle))

    # --- queries -----------------------------------------------------------

    @property
    def query_text(self) -> str:
        return self.query_one("#query", Input).value

    def run_search(self, *, refresh: bool = False) -> bool:
        """Search for what the input holds (no-op until the archive is open); True when a search started."""
        query = self.query_text
        if not query.strip():
            self.hits = []
            self.opens = None
            self.shown_query = ""
            self.complete = True
            self.query_one(HitList).clear_options()
            self._status("Type to search every conversation.")
            self._set_idle(True)
            self._paint_hold.release()
            return False
        if self.app.archive is None:
            return False
        # a live refresh keeps the pages already loaded (and the selection in them)
        limit = min(max(tasks.SEARCH_LIMIT, len(self.hits)), tasks.MAX_PAGE) if refresh else tasks.SEARCH_LIMIT
        self.app.submit(
            tasks.search,
            query,
            self.app.filters,
            refresh,
            limit=limit,
            grouped=self.grouped,
            reply_to=self,
            group="search",
            exclusive=True,
            name=f"search {query!r}",
        )
        return True

    def load_more(self) -> None:
        """Fetch the page after the hits shown and append it (once at a time)."""
        if self.complete or self._loading_more or not self.hits or self.app.archive is None:
            return
        if self.shown_query != self.query_text:
            return  # a search for what is typed now is on its way
        self._loading_more = True
        self._status(self._count_text(loading=True))
        self.app.submit(
            tasks.search,
            self.shown_query,
            self.app.filters,
            offset=len(self.hits),
            grouped=self.grouped,
            reply_to=self,
            group="search-more",
            exclusive=True,
            name=f"more {self.shown_query!r}",
        )

    def toggle_compact(self) -> None:
        """Two lines a hit ↔ the roomy layout; the same hits, laid out again."""
        self.compact = not self.compact
        if self.hits:
            self._render_hits()

    def toggle_grouped(self) -> None:
        """One row per session ↔ every matching turn; searches again."""
        self.grouped = not self.grouped
        self.hits = []
        self.run_search()

    @on(HitList.NearEnd)
    def _near_end(self, event: HitList.NearEnd) -> None:
        event.stop()
        if self.query_one(HitList).near_end:  # still (the list may have been replaced since)
            self.load_more()

    @on(Input.Changed, "#query")
    def _query_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.run_search():
            self._paint_hold.hold()  # the echo waits for the hits (released in _show_hits)

    @on(Input.Submitted, "#query")
    def _query_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.choose()

    def choose(self) -> None:
        """Open what is highlighted: the typed reference's row, or a hit."""
        if self.opens is not None and self.query_one(HitList).highlighted in (None, 0):
            self.post_message(self.RefChosen(self.opens))
            return
        hit = self.selected_hit
        if hit is not None:
            self.post_message(self.HitChosen(hit, self.shown_query))

    def on_key(self, event: Any) -> None:
        if event.key == "down" and self.query_one("#query", Input).has_focus and (self.hits or self.opens):
            event.stop()
            self.query_one(HitList).focus()

    @on(SearchFinished)
    def _show_hits(self, message: SearchFinished) -> None:
        message.stop()
        if message.query != self.query_text or message.grouped != self.grouped:
            return  # stale: the person typed on (or switched grouping)
        if message.offset:
            self._append_page(message)
            return
        hit_list = self.query_one(HitList)
        # a refresh keeps the selection and scroll if the hits down to the selected one are unchanged
        old_index = hit_list.highlighted
        old_scroll = hit_list.scroll_y
        old_top = [h.ref for h in self.hits[: (old_index or 0) - self._offset + 1]]
        self.hits = message.hits
        self.opens = message.opens
        self.shown_query = message.query
        self.complete = message.complete
        self._loading_more = False
        self._set_idle(False)
        hit_list.highlighted = None  # set below: an old row index must not ask for a next page
        self._render_hits()
        if self.hits or self.opens:
            new_top = [h.ref for h in self.hits[: len(old_top)]]
            same_top = message.refresh and old_index is not None and new_top == old_top
            if same_top and old_index is not None and old_index < hit_list.option_count:
                hit_list.highlighted = old_index
                hit_list.scroll_to(y=old_scroll, animate=False, immediate=True)
            else:
                hit_list.highlighted = 0
                hit_list.scroll_to(y=0, animate=False, immediate=True)
        filters = self.app.filters.describe()
        if self.opens:
            text = f"enter opens {self.opens} · {self._count_text()}"
        elif self.hits:
            note = phrase_note(message.query, self.hits, short=True)
            text = (f"{note} · " if note else "") + self._count_text() + (f" · {filters}" if filters else "")
        elif self.app.syncing:
            text = f"No hits yet for {message.query!r} — still indexing"
        else:
            text = f"No hits for {message.query!r}" + (f" ({filters})" if filters else "")
        self._status(text)
        self._paint_hold.release()

    def _append_page(self, message: SearchFinished) -> None:
        """A further page: append its rows (the ones shown are not laid out again)."""
        if message.query != self.shown_query or message.offset != len(self.hits):
            return  # for a list since replaced
        self._loading_more = False
        self.complete = message.complete
        now = self.app.now()
        width = (self._rendered_width or 47) - 1
        start = len(self.hits)
        self.hits = self.hits + message.hits
        hit_list = self.query_one(HitList)
        hit_list.add_options(
            Option(hit_prompt(hit, self.shown_query, now, width, compact=self.compact), id=f"h{start + i}")
            for i, hit in enumerate(message.hits)
        )
        filters = self.app.filters.describe()
        self._status(self._count_text() + (f" · {filters}" if filters else ""))

    def _count_text(self, *, loading: bool = False) -> str:
        """``25+ sessions`` / ``31 hits``: "+" while the last page came back full (the
        core gives no total, so the count is what is loaded, never a guess)."""
        count = len(self.hits)
        noun = "session" if self.grouped else "hit"
        text = f"{count}{'' if self.complete else '+'} {noun}{'s' if count != 1 else ''}"
        return text + (" · loading more…" if loading else "")

    def _render_hits(self) -> None:
        hit_list = self.query_one(HitList)
        now = self.app.now()
        self._rendered_width = hit_list.scrollable_content_region.width
        width = (self._rendered_width or 47) - 1
        keep = hit_list.highlighted
        options = [Option(open_prompt(self.opens), id="open")] if self.opens else []
        options += [
            Option(hit_prompt(hit, self.shown_query, now, width, compact=self.compact), id=f"h{i}")
            for i, hit in enumerate(self.hits)
        ]
        hit_list.set_options(options)
        if keep is not None and options:
            hit_list.highlighted = min(keep, len(options) - 1)

    @property
    def _offset(self) -> int:
        return 1 if self.opens else 0

    def on_resize(self) -> None:
        hit_list = self.query_one(HitList)
        if self.hits and hit_list.scrollable_content_region.width != self._rendered_width:
            self._render_hits()

    def _status(self, text: str) -> None:
        self.query_one("#search-status", Static).update(text, layout=False)  # height 1: no relayout

    # --- selection ---------------------------------------------------------

    @property
    def selected_hit(self) -> Any | None:
        index = self.query_one(HitList).highlighted
        index = None if index is None else index - self._offset
        if index is None or not (0 <= index < len(self.hits)):
            return self.hits[0] if self.hits else None
        return self.hits[index]

    @on(OptionList.OptionSelected, "#hits")
    def _hit_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id == "open" and self.opens:
            self.post_message(self.RefChosen(self.opens))
            return
        index = event.option_index - self._offset
        if 0 <= index < len(self.hits):
            self.post_message(self.HitChosen(self.hits[index], self.shown_query))
