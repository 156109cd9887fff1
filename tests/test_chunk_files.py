"""A chunk of a cold index holds at most CHUNK_FILES files (core/archive/planning.py):
its outputs are held until it is written, and 100,000 small sessions in 64 MB chunks
took ~770 MB. A session's files still stay in one chunk."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from core.archive import planning
from core.archive.ingest import Job
from core.sources import SUBAGENT
from core.sources.base import SourceFile


def _job(root: Path, name: str, mtime: int, session: str | None = None, parent: str | None = None) -> Job:
    kind = SUBAGENT if parent else "main"
    return Job(SourceFile(root / name, "claude", kind, session_id=session, parent_session_id=parent), 1,
               size=10, mtime_ns=mtime)


def test_chunks_of_many_small_files_are_capped_by_count_and_sessions_stay_whole(tmp_path: Path) -> None:
    jobs = [_job(tmp_path, f"p/s{i}.jsonl", i, session=f"s{i}") for i in range(7)]
    jobs += [_job(tmp_path, f"p/s6/subagents/agent-{k}.jsonl", 6, parent="s6") for k in range(2)]
    chunks = planning.plan_chunks(jobs, chunk_bytes=1 << 30, max_files=2)
    assert [len(c) for c in chunks] == [3, 2, 2, 2]  # s6 with its two subagents, then pairs
    assert sorted(j.file.path.name for c in chunks for j in c) == sorted(j.file.path.name for j in jobs)
    assert len(planning.plan_chunks(jobs, chunk_bytes=1 << 30)) == 1  # the default cap is far above 9


def test_the_last_chunks_shrink_so_the_workers_finish_together(tmp_path: Path) -> None:
    """Guided scheduling: once fewer bytes are left than a full chunk per worker, each
    chunk is about what is left over the workers (down to 4 MB). With full-size chunks
    to the end, one worker read the last chunk alone while the other idled."""
    mb = 1 << 20
    jobs = [replace(_job(tmp_path, f"p/s{i}.jsonl", i, session=f"s{i}"), size=4 * mb) for i in range(20)]
    sizes = lambda chunks: [sum(j.size for j in c) // mb for c in chunks]  # noqa: E731
    assert sizes(planning.plan_chunks(jobs, chunk_bytes=16 * mb, workers=1)) == [16, 16, 16, 16, 16]
    two = planning.plan_chunks(jobs, chunk_bytes=16 * mb, workers=2)
    assert sizes(two) == [16, 16, 16, 16, 8, 4, 4]
    assert sorted(j.file.path.name for c in two for j in c) == sorted(j.file.path.name for j in jobs)
