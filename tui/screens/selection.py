"""What the keys act on: the thing selected in the pane that has focus.

``c``, ``C``, ``r`` and ``E`` act on :func:`selected_ref`, ``t`` on :func:`selected_session`.
"""

from __future__ import annotations

from typing import Any

from ..widgets.hit_list import HitList
from ..widgets.sessions_pane import session_ref

MainScreen = Any  # (the main screen, which imports this module: naming it here would be a circle)


def selected_ref(screen: MainScreen) -> str | None:
    """What ``c``/``C`` act on: the thing selected in the pane you are in."""
    pane = screen.pane_of(screen.focused) or screen.last_pane
    if pane == "reader-pane" and screen.reader.is_open:
        return screen.reader.current_ref()
    if pane == "sessions-pane":
        return screen.sessions_pane.session_list.selection_ref()
    if isinstance(screen.focused, HitList) or pane == "search-pane":
        search = screen.search_pane
        if search.opens and screen.query_one(HitList).highlighted in (None, 0):
            return search.opens  # the "open slug#4-5" row
        hit = search.selected_hit
        if hit is not None:
            return hit.ref
    if screen.reader.is_open:
        return screen.reader.current_ref()
    return screen.sessions_pane.session_list.selection_ref()


def selected_session(screen: MainScreen) -> tuple[str, str] | None:
    """``(session_id, label)`` of what ``t`` tags: the reader's current session,
    the selected hit's, or the selected row's."""
    pane = screen.pane_of(screen.focused) or screen.last_pane
    if pane == "reader-pane" and screen.reader.is_open:
        session = screen.reader.current_session
    elif pane == "search-pane" and screen.search_pane.selected_hit is not None:
        hit = screen.search_pane.selected_hit
        return hit.session_id, hit.ref.rpartition(":")[0] if hit.turn_number is not None else hit.ref
    else:
        session = screen.sessions_pane.selected_session
    return (session.session_id, session_ref(session)) if session is not None else None
