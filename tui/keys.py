"""Every key of the main screen, in one table: bindings, footer, help and palette.

Keeping them here means the footer, the ``?`` screen and the command palette can
never disagree about what a key does.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True, slots=True)
class Key:
    key: str  # Textual key name(s), comma separated
    display: str  # how the footer and help show it
    description: str  # short, for the footer
    action: str  # action on the main screen
    help: str  # one line for the help screen and the palette
    show: bool = True  # in the footer
    palette: bool = True  # offered in the command palette


MAIN_KEYS: tuple[Key, ...] = (
    Key("slash", "/", "Search", "focus_search", "Focus the search box (search as you type)"),
    Key("enter", "enter", "Open", "open", "Open the selected hit or session in the reader"),
    Key("tab", "tab", "Pane", "cycle_panes(1)", "Cycle panes: search → sessions → reader", show=False, palette=False),
    Key("shift+tab", "⇧tab", "Pane back", "cycle_panes(-1)", "Cycle panes backwards", show=False, palette=False),
    Key("c", "c", "Copy ref", "copy_ref", "Copy a reference block for another agent (session, range slug#4-5 or turn)"),
    Key("C", "C", "Copy text", "copy_content", "Copy the conversation itself as markdown (size-bounded)"),
    Key("f", "f", "Follow", "follow", "Follow a live session like tail -f (again to stop)"),
    Key("n", "n", "Next hit", "hit(1)", "Next search hit in the reader"),
    Key("N", "N", "Prev hit", "hit(-1)", "Previous search hit in the reader", show=False),
    Key("p", "p", "Project", "filter('project')", "Filter by project"),
    Key("a", "a", "Agent", "filter('agent')", "Filter by agent"),
    Key("d", "d", "Date", "filter('date')", "Filter by date (today, 7 days, 30 days)", show=False),
    Key("T", "T", "Tag filter", "filter('tag')", "Filter by tag", show=False),
    Key("x", "x", "Clear filters", "clear_filters", "Clear all filters", show=False),
    Key("r", "r", "Resume", "resume", "Show and copy the command that resumes the session in its agent", show=False),
    Key("E", "E", "Export", "export", "Export the selected session, range or turn to a file (md, html, json)", show=False),
    Key("u", "u", "Usage", "usage", "Token usage and estimated cost by day, week, month, project, model or session", show=False),
    Key("t", "t", "Tag", "tag", "Tag the selected session (stored by relay-search, never in transcripts)"),
    Key("question_mark", "?", "Help", "help", "Show every key"),
)

OTHER_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓", "Move in a list; ↓ from the search box goes to the hits"),
    ("space", "Sessions: mark a session of a chain (c then copies slug#4,6)"),
    ("⇧↑ ⇧↓", "Sessions: extend a marked range within a chain (slug#4-5)"),
    ("esc", "Sessions: clear marks · dialogs: close"),
    ("[  ]", "Reader: previous / next turn"),
    ("e", "Reader: expand or fold the tool calls of the current turn"),
    ("home end", "Reader: first / last turn"),
    ("click", "Reader: a ▸ line expands a tool call, thinking or subagent work"),
    ("ctrl+p", "Command palette (every action above)"),
    ("ctrl+q", "Quit"),
)


def bindings() -> list[Binding]:
    return [
        Binding(k.key, k.action, k.description, show=k.show, key_display=k.display, tooltip=k.help)
        for k in MAIN_KEYS
    ]
