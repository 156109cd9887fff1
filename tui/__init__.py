"""The relay-search terminal app (SPEC §7): a thin Textual front end on ``core.api``.

Use :func:`tui.app.make_app` to build the app; it is shared by the CLI, the demo,
the tests and the screenshot script.
"""

from __future__ import annotations

import os

# Textual paints a changed screen at its next frame; at its default 60 frames a second a
# keystroke's hits waited 8 ms for it on average (up to 17), a sixth of the 50 ms a key
# may take. 120 halves that wait and costs nothing while nothing changes; read when
# Textual is imported (every submodule of this package imports it after this line), and
# a TEXTUAL_FPS set by the person wins.
os.environ.setdefault("TEXTUAL_FPS", "120")

__all__ = ["make_app", "RelayApp"]


def __getattr__(name: str):
    # Lazy so that `import tui` stays cheap (and never drags Textual into core).
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(name)
