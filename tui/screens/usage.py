"""The usage screen: tokens and estimated cost, grouped by day, week, month,
project, model, session or agent (the same report as ``relay-search usage``), the
numbers right-aligned so their digits line up."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from core.outputs.usage import ESTIMATE_NOTE, human, money

from .. import tasks
from ..messages import UsageLoaded

if TYPE_CHECKING:
    from textual import getters

    from ..host import RelayHost

GROUPINGS = {"d": "day", "w": "week", "m": "month", "p": "project", "o": "model", "s": "session", "a": "agent"}
COLUMNS = ("input", "output", "cache write", "cache read", "total", "est. cost")


class UsageScreen(ModalScreen[None]):

    if TYPE_CHECKING:  # (what this pane asks of the app: tui/host.py)
        app = getters.app(RelayHost)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,u,q", "close", "Close"), *(Binding(key, f"group('{by}')", by.capitalize()) for key, by in GROUPINGS.items())
    ]

    def __init__(self, by: str = "day") -> None:
        super().__init__(classes="dialog-screen")
        self.by = by
        self.report: Any = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog usage-dialog"):
            yield Static("Token usage", classes="dialog-title", id="usage-title")
            yield DataTable(id="usage-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="usage-note", classes="dialog-help")
            yield Static(
                "d day · w week · m month · p project · o model · s session · a agent · esc close",
                classes="dialog-help",
            )

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self.load()

    def load(self) -> None:
        self.app.submit(tasks.usage_report, self.by, reply_to=self, group="usage", exclusive=True, name="usage")

    def action_group(self, by: str) -> None:
        self.by = by
        self.load()

    def action_close(self) -> None:
        self.dismiss(None)

    @on(UsageLoaded)
    def _loaded(self, message: UsageLoaded) -> None:
        self.report = report = message.report
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_column(report.by, key="group")
        for name in COLUMNS:
            table.add_column(Text(name, justify="right"), key=name)
        for label, totals in [*report.rows, ("TOTAL", report.total)]:
            cost = money(totals.cost_usd, bool(totals.unpriced_models))
            figures = (human(totals.input), human(totals.output), human(totals.cache_creation),
                       human(totals.cache_read), human(totals.total), cost)
            table.add_row(label, *(Text(f, justify="right") for f in figures), key=label)
        self.query_one("#usage-title", Static).update(f"Token usage by {report.by}")
        note = f"Cost: {ESTIMATE_NOTE}."
        if report.total.unpriced_models:
            unpriced = ", ".join(sorted(report.total.unpriced_models))
            note += f" No price known for: {unpriced} (tokens counted, no cost)."
        if not report.rows:
            note = "No token usage recorded. " + note
        self.query_one("#usage-note", Static).update(note)
