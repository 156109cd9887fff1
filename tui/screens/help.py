"""The ``?`` screen: every key, from the same table as the footer and palette."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keys import MAIN_KEYS, OTHER_KEYS


def help_content() -> Content:
    rows: list[Content] = []
    for key in MAIN_KEYS:
        rows.append(Content.assemble((f"{key.display:>10}", "bold $accent"), "   ", key.help))
    rows.append(Content(""))
    for display, text in OTHER_KEYS:
        rows.append(Content.assemble((f"{display:>10}", "bold $accent"), "   ", text))
    return Content("\n").join(rows)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(classes="dialog-screen")

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog help"):
            yield Static("relay-search · keys", classes="dialog-title")
            with VerticalScroll():
                yield Static(help_content(), id="help-keys")
            yield Static(
                "Handoff: c copies a short reference block another agent can act on (with the relay-search "
                "MCP server): the turn, session, chain or marked range; C copies the text of the session, chain "
                "or marked range itself (latest turns kept). Every copy is also saved to last-copy.md (the "
                "notice says where). esc closes.",
                classes="dialog-help",
            )

    def action_close(self) -> None:
        self.dismiss(None)
