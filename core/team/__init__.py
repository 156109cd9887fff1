"""Team mode: one shared PostgreSQL archive for a whole team (SPEC §9).

Each member's ``relay-search sync --to URL`` pushes the sessions parsed by their
own embedded archive (:mod:`core.team.push`, :mod:`core.team.sync`); every front end
can then read the team store through :class:`core.team.store.TeamArchive`, which
answers the same query API as :class:`core.api.Archive`. :func:`open_store` picks
the store: a URL (``--store`` or ``RELAY_SEARCH_STORE``) means the team store,
none the embedded one.

Importing this package costs nothing: psycopg is imported only when a URL is used,
so the embedded store works without it installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from core.errors import BadInput

if TYPE_CHECKING:
    from core.config import Config

ENV_STORE = "RELAY_SEARCH_STORE"


def store_url(explicit: str | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """The team store URL: ``--store`` first, then ``RELAY_SEARCH_STORE``; None = embedded."""
    if explicit and explicit.strip():
        return explicit.strip()
    value = (os.environ if env is None else env).get(ENV_STORE, "")
    return value.strip() or None


def open_store(
    config: Config,
    store_url_: str | None = None,
    *,
    progress: Callable[[Any], None] | None = None,
    sync: bool = False,
    now: Callable[[], float] | None = None,
):
    """The store front ends query: a TeamArchive for a URL, else the embedded Archive."""
    url = store_url(store_url_, config.env or None)
    if url:
        try:
            from .store import TeamArchive
        except ImportError:
            raise BadInput("The team store needs psycopg: pip install 'relay-search[postgres]'") from None
        return TeamArchive.open(url, config=config, now=now)
    from core.api import Archive

    return Archive.open(config, progress=progress, sync=sync, now=now)
