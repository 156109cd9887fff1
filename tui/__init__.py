"""The relay-search terminal app (SPEC §7): a thin Textual front end on ``core.api``.

Use :func:`tui.app.make_app` to build the app; it is shared by the CLI, the demo,
the tests and the screenshot script.
"""

from __future__ import annotations

import os

# Textual repaints a changed screen at most TEXTUAL_FPS times a second, and a repaint asked
# for soon after another waits one to two of its periods (its timer skips one period more
# than it missed): at the default 60 the hits for a key waited 17-33 ms behind the key's
# echo. At 120, keystroke → hit list on the 1.8 GB bench went from p50 37-41 / p95 56-68 ms
# to 28-34 / 49-60 ms (240 was no better). Set before Textual is imported; a user's own
# setting wins.
os.environ.setdefault("TEXTUAL_FPS", "120")

__all__ = ["make_app", "RelayApp"]


def __getattr__(name: str):
    # Lazy so that `import tui` stays cheap (and never drags Textual into core).
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(name)
