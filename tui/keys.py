"""Every key of the main screen, in one table: bindings, footer, help and palette.

Keeping them here means the footer, the ``?`` screen and the command palette can
never disagree about what a key does. The footer shows only the keys of the pane
that has focus (``where``), so it fits 80 columns; in the search box, where
letters are typed, it shows only the keys that still work there (``IN_INPUT``).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True, slots=True)
class Key:
    key: str  # Textual key name(s), comma separated
    display: str  # how the footer and help show it
    description: str  # short, for the footer
    action: str  # action on the main screen
    help: str  # one line for the help screen and the palette
    show: bool = True  # in the footer
    palette: bool = True  # offered in the command palette
    where: tuple[str, ...] = ("hits", "sessions", "reader")  # panes whose footer shows it


HITS, SESSIONS, READER, INPUT = "hits", "sessions", "reader", "input"


MAIN_KEYS: tuple[Key, ...] = (
    Key("slash", "/", "Search", "focus_search", "Focus the search box (search as you type; in the reader / finds)", where=(HITS, SESSIONS)),
    Key("escape", "esc", "Leave box", "escape", "Leave the search box (a second esc clears it)", palette=False, where=(INPUT,)),
    Key("enter", "enter", "Open", "open", "Open the selected hit or session", where=(INPUT, HITS, SESSIONS)),
    Key("tab", "tab", "Pane", "cycle_panes(1)", "Cycle panes: search → sessions → reader", show=False, palette=False),
    Key("shift+tab", "⇧tab", "Pane back", "cycle_panes(-1)", "Cycle panes backwards", show=False, palette=False),
    Key("c", "c", "Copy ref", "copy_ref", "Copy a reference block for another agent", where=(HITS, SESSIONS, READER)),
    Key("C", "C", "Copy text", "copy_content", "Copy the text itself as markdown (latest turns kept)", show=False),
    Key("f", "f", "Follow", "follow", "Follow a live session like tail -f (again: stop)", where=(SESSIONS, READER)),
    Key("g", "g", "Group", "group_hits", "Hits: one row per session or every matching turn", show=False),
    Key("v", "v", "Hit layout", "hit_layout", "Hits: two lines each, or roomy", show=False),
    Key("n", "n", "Next hit", "hit(1)", "Next match (of the search or a find) in the reader", where=(READER,)),
    Key("N", "N", "Prev hit", "hit(-1)", "Previous search hit in the reader", show=False),
    Key("ctrl+f", "/", "Find", "find", "Find a word in the open session (/ in the reader; enter, n, N move; esc closes)", where=(READER,)),
    Key("z", "z", "Zoom", "maximise_reader", "Maximise the reader (hide the search and sessions); z again restores", where=(READER,)),
    Key("p", "p", "Project", "filter('project')", "Filter by project (type to narrow the list)", where=(SESSIONS,)),
    Key("a", "a", "Agent", "filter('agent')", "Filter by agent", show=False),
    Key("d", "d", "Date", "filter('date')", "Filter by date: today, 7 or 30 days, a range (7d, ISO)", show=False),
    Key("T", "T", "Tag filter", "filter('tag')", "Filter by tag", show=False),
    Key("x", "x", "Clear filters", "clear_filters", "Clear all filters", show=False),
    Key("r", "r", "Resume", "resume", "Copy the command that resumes the session", show=False),
    Key("E", "E", "Export", "export", "Export the selection to md, html or json", show=False),
    Key("u", "u", "Usage", "usage", "Token usage and cost by day, project, model…", show=False),
    Key("t", "t", "Tag", "tag", "Tag the session (kept by relay-search)", where=(HITS, SESSIONS)),
    Key("question_mark", "?", "Help", "help", "Show every key", where=(HITS, SESSIONS, READER)),
    Key("q", "q", "Quit", "quit", "Quit (outside the search box; with a query open, q twice; ctrl+q anywhere)", show=False),
)

OTHER_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓  j k", "Move (j k outside the search box; ↓ leaves it)"),
    ("space", "Sessions: mark a session of a chain (c then copies slug#4,6) · on a chain: fold / unfold"),
    ("← →", "Sessions: fold / unfold the chain"),
    ("⇧↑ ⇧↓", "Sessions: extend a marked range within a chain (slug#4-5)"),
    ("esc", "Search box: leave it (again: clear it) · reader: back to the box, query kept · sessions: clear marks · dialogs: close"),
    ("[  ]", "Reader: previous / next turn"),
    ("e", "Reader: expand / fold the turn's tool calls"),
    ("home end", "Reader: first / last turn"),
    ("pgup pgdn", "Reader: a page up / down"),
    ("click", "Reader: a ▸ line expands a tool call or thinking"),
    ("ctrl+p", "Command palette (every action above)"),
    ("ctrl+q", "Quit from anywhere"),
)


def bindings() -> list[BindingType]:
    return [
        Binding(k.key, k.action, k.description, show=k.show, key_display=k.display, tooltip=k.help)
        for k in MAIN_KEYS
    ]


def footer_actions(context: str) -> frozenset[str]:
    """Actions the footer shows when focus is in ``context`` (a pane, or the input)."""
    return frozenset(k.action for k in MAIN_KEYS if k.show and context in k.where)
