"""An archive's token usage and session statistics: the usage calls of the query API.

:class:`core.api.Archive`'s ``usage_report``, ``session_usage``, ``session_statistics``
and ``_usage_source`` delegate here, so that ``Archive`` delegates rather than grows;
the sums themselves are :mod:`core.outputs.usage`'s. The functions take the archive as
a :class:`UsageArchive` and go through its own ``_usage_source`` and
``sessions_usage``, which the team store's per-user views override to read the store.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from core.archive import usage_records
from core.archive.catalog import Catalog
from core.archive.library import Library
from core.errors import BadInput
from core.query import answers, coverage
from core.query.read_calls import ReadableArchive

if TYPE_CHECKING:  # imported by the calls (the query API imports this module; a search sums no usage)
    from . import usage, usage_blocks


class UsageArchive(ReadableArchive, Protocol):
    """What the usage calls need of an archive (:class:`core.api.Archive` is one): a
    :class:`~core.query.read_calls.ReadableArchive` with a usage source (an import
    would go up a layer: the outputs sit below the query API).
    """

    def _usage_source(self) -> tuple[list[usage_records.Record], dict[int, usage.Owner]]: ...

    def sessions_usage(self, session_ids: Iterable[str]) -> dict[str, usage.Totals]: ...


def catalog_source(catalog: Catalog, lib: Library) -> tuple[list[usage_records.Record], dict[int, usage.Owner]]:
    """Each API response in the cache's catalog once, and who owns each file."""
    from . import usage

    owners = usage.owners(catalog.files(("file_id", "agent", "session_id", "project_key")), lib.sessions)
    return usage_records.catalog_records(catalog, lib.generation), owners


def usage_report(archive: UsageArchive, *, by: str, date_from: str | None, date_to: str | None,
                 project: str | None, agent: str | None, breakdown: bool = False) -> usage.UsageReport:
    """Totals per group over every API response the archive's ``_usage_source`` gives."""
    from . import usage

    records, owners = archive._usage_source()
    return usage.report(records, owners, by=by, date_from=date_from, date_to=date_to, project=project, agent=agent,
                        breakdown=breakdown)


def block_report(archive: UsageArchive, *, now: float, date_from: str | None = None, date_to: str | None = None,
                 project: str | None = None, agent: str | None = None) -> usage_blocks.BlockReport:
    """The 5-hour billing blocks over every API response (``usage --by block``)."""
    from . import usage_blocks

    records, owners = archive._usage_source()
    return usage_blocks.blocks(records, owners, now=now, date_from=date_from, date_to=date_to, project=project,
                               agent=agent)


def session_usage(archive: UsageArchive, ref: str) -> usage.Totals:
    """Token usage of every session ``ref`` names (a session, a range or a chain)."""
    from . import usage

    ids = [s.session_id for s in archive.resolve(ref).sessions]
    return usage.combined(archive.sessions_usage(ids).values())


def session_statistics(archive: UsageArchive, ref: str) -> dict:
    """Counts and token usage over every session the reference names (a session, a range, a chain)."""
    from . import usage

    resolved = archive.resolve(ref)
    if resolved.turn is not None:
        raise BadInput(f"{ref!r} names a turn; statistics cover sessions (drop the :{resolved.turn})")
    covered = coverage.ref_for(resolved.sessions, resolved.chain, single=resolved.single)
    lib = archive.library
    stats = answers.statistics(resolved.sessions, lambda s: archive.reader.session(lib.files_of(s.session_id)),
                               ref=covered)
    per_session = archive.sessions_usage([s.session_id for s in resolved.sessions])
    stats["usage"] = usage.combined(per_session.values()).to_dict()
    return stats
