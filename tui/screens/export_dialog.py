"""``E``: export the selected session, range or turn, into a directory shown and changeable,
never over a file without asking (the files themselves: :mod:`core.outputs.export`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from .. import tasks
from ..messages import ExportDone

if TYPE_CHECKING:
    from textual import getters

    from ..host import RelayHost


class ExportScreen(ModalScreen[tuple[str, str] | None]):
    """``E``: the format and the directory to export into, shown and editable.

    Runs the export itself (:func:`tui.tasks.export`), so it can ask before replacing:
    when a file it would write exists, nothing is written and the dialog says which
    file and waits for ``y`` (replace it) or ``n``. Returns the line saying what was
    written and the directory (the caller offers it next time), or None if cancelled.
    """

    if TYPE_CHECKING:  # (what this pane asks of the app: tui/host.py)
        app = getters.app(RelayHost)

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    ExportScreen #export-format { height: auto; max-height: 6; }
    ExportScreen #export-dir { margin: 0 0 0 0; }
    ExportScreen #export-status { margin: 1 0 0 0; }
    """
    def __init__(self, ref: str, formats: dict[str, str], directory: str) -> None:
        super().__init__(classes="dialog-screen")
        self.ref = ref
        self.formats = formats
        self.directory = directory
        self.fmt: str | None = None
        self.replacing: str | None = None  # the file that exists, while asking

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(f"Export {self.ref}", classes="dialog-title")
            yield OptionList(*[Option(label, id=fmt) for label, fmt in self.formats.items()], id="export-format")
            yield Static("into the directory (tab to change it):")
            yield Input(self.directory, id="export-dir")
            yield Static("", id="export-status")
            yield Static("enter export · tab directory · esc cancel", id="export-help", classes="dialog-help")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _format(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.fmt = event.option.id
        self._run(force=False)

    @on(Input.Submitted)
    def _directory(self, event: Input.Submitted) -> None:
        event.stop()
        listing = self.query_one(OptionList)
        option = listing.get_option_at_index(listing.highlighted or 0)
        self.fmt = option.id
        self._run(force=False)

    def on_key(self, event: events.Key) -> None:
        if self.replacing is None or event.key not in ("y", "n"):
            return
        event.stop()
        event.prevent_default()
        if event.key == "y":
            self._run(force=True)
        else:
            self.replacing = None
            self._say("Not replaced. Pick a format, or change the directory.")

    def _run(self, *, force: bool) -> None:
        directory = self.query_one("#export-dir", Input).value.strip() or self.directory
        self.directory = directory
        config = self.app.config
        roots = [config.claude_projects, config.codex_home, config.gemini_home, config.ash_home]
        self.replacing = None
        self._say(f"Exporting into {directory} …")
        output = directory if directory.endswith(("/", "\\")) else directory + "/"
        self.app.submit(tasks.export, self.ref, self.fmt, Path.cwd(), roots, output, force, reply_to=self,
                        group="export", name=f"export {self.ref}")

    @on(ExportDone)
    def _done(self, message: ExportDone) -> None:
        message.stop()
        if message.exists:
            self.replacing = message.exists
            self.query_one(OptionList).focus()
            self._say(f"{message.exists} already exists. Replace it? y replace · n keep it")
            return
        if message.error:
            self._say(f"Not exported: {message.error}")
            return
        self.dismiss((message.description, self.directory))

    def _say(self, text: str) -> None:
        self.query_one("#export-status", Static).update(text)

    def action_cancel(self) -> None:
        self.dismiss(None)
