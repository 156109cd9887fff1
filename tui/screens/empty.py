"""First run on a machine without transcripts: say where we looked, offer the demo."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from core.words import plural

if TYPE_CHECKING:
    from textual import getters

    from ..host import RelayHost


def looked_in(config: object) -> list[tuple[str, Path]]:
    """The places each agent's transcripts would be (SPEC §1)."""
    places: list[tuple[str, Path]] = []
    agents = getattr(config, "agents", ("claude", "codex", "gemini", "ash"))
    if "claude" in agents:
        places.append(("Claude Code", config.claude_projects))  # type: ignore[attr-defined]
    if "codex" in agents:
        places.append(("Codex", config.codex_home / "sessions"))  # type: ignore[attr-defined]
    if "gemini" in agents:
        places.append(("Gemini CLI", config.gemini_home / "tmp"))  # type: ignore[attr-defined]
    if "ash" in agents:
        places.append(("Ash", config.ash_home / "sessions"))  # type: ignore[attr-defined]
    return places


class EmptyScreen(Screen[None]):
    """Shown while the archive has no sessions; the app dismisses it when one appears."""

    if TYPE_CHECKING:  # (what this pane asks of the app: tui/host.py)
        app = getters.app(RelayHost)

    BINDINGS = [Binding("ctrl+q", "app.quit", "Quit"), Binding("r", "rescan", "Rescan")]

    def __init__(self, config: object, skipped: int = 0) -> None:
        super().__init__()
        self.config = config
        self.skipped = skipped

    def compose(self) -> ComposeResult:
        lines: list[Content] = [
            Content.styled("No conversations found yet", "bold $accent"),
            Content(""),
            Content("relay-search looked for coding-agent transcripts in:"),
        ]
        for name, path in looked_in(self.config):
            state = ("found, but empty" if path.exists() else "not there", "$text-muted")
            lines.append(Content.assemble(f"  {name:<12} ", (str(path), "bold"), "  ", state))
        if self.skipped:
            lines.append(Content.styled(f"\n{plural(self.skipped, 'unreadable line')} {'was' if self.skipped == 1 else 'were'} skipped.", "$warning"))
        lines += [
            Content(""),
            Content("Try it on a generated demo corpus:"),
            Content.styled("    relay-search --demo", "bold $success"),
            Content(""),
            Content("Or point it elsewhere: relay-search --root DIR (a Claude projects dir), or HOME=DIR relay-search."),
            Content.styled(
                "This screen is watching those folders and closes as soon as a session is written.",
                "$text-muted italic",
            ),
        ]
        with Center():
            with Vertical(id="empty-box"):
                yield Static(Content("\n").join(lines), id="empty-text")
        yield Footer()

    def action_rescan(self) -> None:
        self.app.rescan()
