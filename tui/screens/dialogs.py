"""Small modal dialogs: pick a filter value, edit a session's tags."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

ANY = ""  # the value meaning "no filter"

# (label, days back; None = any time)
DATE_CHOICES: tuple[tuple[str, int | None], ...] = (
    ("Today", 1),
    ("Last 7 days", 7),
    ("Last 30 days", 30),
    ("Last 365 days", 365),
)


class PickScreen(ModalScreen[str | None]):
    """A list of values; returns the chosen one, ``""`` for *all*, None if cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, values: list[str], kind: str, *, clear: bool = True) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.values = values
        self.kind = kind
        self.clear = clear  # offer "(all — clear this filter)" first (filters do; other picks don't)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-title")
            options = [Option("(all — clear this filter)", id="__all__")] if self.clear else []
            options += [Option(value, id=f"v{i}") for i, value in enumerate(self.values)]
            if not self.values:
                options.append(Option("nothing to choose from yet", disabled=True))
            yield OptionList(*options, id="pick")
            yield Static("enter choose · esc cancel", classes="dialog-help")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id == "__all__":
            self.dismiss(ANY)
        else:
            self.dismiss(self.values[event.option_index - (1 if self.clear else 0)])

    def action_cancel(self) -> None:
        self.dismiss(None)


def parse_tags(text: str) -> list[str]:
    """``"bug, perf  later"`` → ``["bug", "perf", "later"]`` (deduplicated, ordered)."""
    seen: list[str] = []
    for part in text.replace(",", " ").split():
        tag = part.strip().lstrip("#")
        if tag and tag not in seen:
            seen.append(tag)
    return seen


class TagScreen(ModalScreen[list[str] | None]):
    """Edit a session's tags; returns the new list, or None if cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, label: str, tags: list[str]) -> None:
        super().__init__(classes="dialog-screen")
        self.label = label
        self.tags = tags

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(f"Tags for {self.label}", classes="dialog-title")
            yield Input(" ".join(self.tags), placeholder="space or comma separated, e.g. bug perf", id="tags")
            yield Static(
                "enter save · esc cancel · empty clears · stored by relay-search, never in transcripts",
                classes="dialog-help",
            )

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _save(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(parse_tags(event.value))

    def action_cancel(self) -> None:
        self.dismiss(None)
