"""The ``?`` screen: every key, grouped, from the same table as the footer and palette.

Four groups (Search, Sessions, Reader, Handoff) in two columns so it fits 120×35;
each key's text wraps under itself (a grid cell), never back under the key. The
last copy (what went where, a preview) is shown at the bottom, so the notice after
``c`` can stay one short line.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keys import MAIN_KEYS, OTHER_KEYS

GROUPS = ("Search", "Sessions", "Reader", "Handoff")
COLUMNS = (("Search", "Sessions"), ("Reader", "Handoff"))

# a key's group by its action (a key added later without a place here goes by its panes)
ACTION_GROUPS = {
    "focus_search": "Search", "escape": "Search", "open": "Search", "group_hits": "Search", "hit_layout": "Search",
    "filter('project')": "Search", "filter('agent')": "Search", "filter('date')": "Search",
    "filter('tag')": "Search", "clear_filters": "Search",
    "tag": "Sessions", "follow": "Sessions",
    "hit(1)": "Reader", "hit(-1)": "Reader",
    "copy_ref": "Handoff", "copy_content": "Handoff", "resume": "Handoff", "export": "Handoff", "usage": "Handoff",
}
# the app-wide keys: one line under the groups
GENERAL = "tab ⇧tab cycle panes · ? this screen · ctrl+p command palette · q quit (not in the search box; twice with a query) · ctrl+q quit"
SKIP = {"cycle_panes(1)", "cycle_panes(-1)", "help", "quit"}


def grouped_keys() -> dict[str, list[tuple[str, str]]]:
    """``{group: [(key, text), …]}`` for every key of the main screen and the others."""
    groups: dict[str, list[tuple[str, str]]] = {name: [] for name in GROUPS}
    for key in MAIN_KEYS:
        if key.action in SKIP:
            continue
        group = ACTION_GROUPS.get(key.action) or ("Reader" if key.where == ("reader",) else "Search")
        groups[group].append((key.display, key.help))
    for display, text in OTHER_KEYS:
        pane, _, rest = text.partition(": ")
        if display in ("ctrl+p", "ctrl+q"):
            continue
        if pane in ("Sessions", "Reader"):
            groups[pane].append((display, rest[0].upper() + rest[1:]))
        else:
            groups["Search" if display.startswith("↑") else "Sessions"].append((display, text))
    return groups


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(classes="dialog-screen")

    def compose(self) -> ComposeResult:
        groups = grouped_keys()
        with Vertical(classes="dialog help"):
            yield Static("relay-search · keys   (esc closes)", classes="dialog-title")
            with VerticalScroll(id="help-body"):
                with Horizontal(id="help-columns"):
                    for column in COLUMNS:
                        with Vertical(classes="help-column"):
                            for name in column:
                                first = " -first" if name == column[0] else ""
                                yield Static(name, classes=f"help-group{first}")
                                with Grid(classes="help-keys"):
                                    for display, text in groups[name]:
                                        yield Static(display, classes="help-key", markup=False)
                                        yield Static(text, classes="help-text", markup=False)
                            if column is COLUMNS[-1]:  # the shorter column has room for the rest
                                yield Static(GENERAL, classes="help-general", markup=False)
                                last = self.last_copy()
                                yield Static(last, id="help-last-copy", classes="help-general", markup=False)

    def last_copy(self) -> str:
        last = getattr(self.app, "last_copy", "")
        if last:
            return f"Last copy: {last}"
        return (
            "Handoff: c copies a short reference block another agent can act on (relay-search MCP server); "
            "C copies the text itself. Every copy is also saved to last-copy.md; the last one shows here."
        )

    def action_close(self) -> None:
        self.dismiss(None)
