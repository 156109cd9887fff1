"""The relay-search terminal app (SPEC §7): a thin Textual front end on ``core.api``.

Use :func:`tui.app.make_app` to build the app; it is shared by the CLI, the demo,
the tests and the screenshot script.
"""

from __future__ import annotations

__all__ = ["make_app", "RelayApp"]


def __getattr__(name: str):
    # Lazy so that `import tui` stays cheap (and never drags Textual into core).
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(name)
