"""Small modal dialogs: pick a filter value, edit a session's tags (the export dialog:
:mod:`.export_dialog`)."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

ANY = ""  # the value meaning "no filter"
CUSTOM = "Custom range…"  # the date picker's last choice: asks for FROM..TO

# (label, days back; None = any time)
DATE_CHOICES: tuple[tuple[str, int | None], ...] = (
    ("Today", 1),
    ("Last 7 days", 7),
    ("Last 30 days", 30),
    ("Last 365 days", 365),
)


def sort_values(values: list[str]) -> list[str]:
    """Case-insensitive order (``api``, ``Billing``, ``cli``), ties by exact text."""
    return sorted(values, key=lambda v: (v.casefold(), v))


class PickScreen(ModalScreen[str | None]):
    """A list of values; returns the chosen one, ``""`` for *all*, None if cancelled.

    Typing filters the list (case-insensitive, anywhere in the value);
    backspace takes a letter back; ``enter`` picks the highlighted value.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("backspace", "unfilter", "Delete", show=False)]

    def __init__(self, title: str, values: list[str], kind: str, *, clear: bool = True) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.values = values
        self.kind = kind
        self.clear = clear  # offer "(all — clear this filter)" first (filters do; other picks don't)
        self.filter = ""
        self.shown: list[str] = list(values)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-title")
            yield Static("", id="pick-filter")
            yield OptionList(*self._options(), id="pick")
            yield Static("type to filter · enter choose · esc cancel", classes="dialog-help")

    def _options(self) -> list[Option]:
        options = [Option("(all — clear this filter)", id="__all__")] if self.clear else []
        options += [Option(value, id=f"v{i}") for i, value in enumerate(self.shown)]
        if not self.shown:
            options.append(Option("nothing matches" if self.filter else "nothing to choose from yet", disabled=True))
        return options

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.query_one("#pick-filter").display = False

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character:
            event.stop()
            event.prevent_default()
            self._set_filter(self.filter + (event.character or " "))

    def action_unfilter(self) -> None:
        if self.filter:
            self._set_filter(self.filter[:-1])

    def _set_filter(self, text: str) -> None:
        self.filter = text
        needle = text.casefold()
        self.shown = [v for v in self.values if needle in v.casefold()]
        box = self.query_one("#pick-filter", Static)
        box.display = bool(text)
        box.update(f"filter: {text}▏  ({len(self.shown)} of {len(self.values)})")
        listing = self.query_one(OptionList)
        listing.set_options(self._options())
        listing.highlighted = 1 if self.shown and text and self.clear else 0

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id == "__all__":
            self.dismiss(ANY)
        elif event.option.id and event.option.id.startswith("v"):
            self.dismiss(self.shown[int(event.option.id[1:])])

    def action_cancel(self) -> None:
        self.dismiss(None)


class RangeScreen(ModalScreen[str | None]):
    """The date picker's custom range: ``2w``, ``yesterday``, ``2026-11-01..2026-11-10``."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Custom date range", classes="dialog-title")
            yield Input(placeholder="7d · 2w · yesterday · last week · 2026-11-01..2026-11-10", id="range")
            yield Static(
                "FROM or FROM..TO · enter apply · esc cancel", id="range-help", classes="dialog-help"
            )

    def __init__(self, now: float) -> None:
        super().__init__(classes="dialog-screen")
        self.now = now

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _apply(self, event: Input.Submitted) -> None:
        event.stop()
        from core.errors import BadInput
        from core.timeutil import parse_range

        try:
            parse_range(event.value, now=self.now)
        except BadInput as error:
            self.query_one("#range-help", Static).update(str(error))
            return
        self.dismiss(event.value.strip())

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
