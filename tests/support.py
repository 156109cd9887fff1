"""Helpers shared by the tests: real files under a temp HOME, an archive on them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from core.api import Archive
from core.config import Config
from core.fixtures.claude import ClaudeTranscript, project_dir_name
from core.fixtures.demo import DEFAULT_NOW

SHARED = Path(__file__).resolve().parents[2] / "shared"
TRANSCRIPTS = SHARED / "transcripts"
# The public samples sit beside the repo in CI; a fresh clone on its own skips the tests that read them.
needs_transcripts = pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="../shared/transcripts not present")


def config_for(home: Path, **kw) -> Config:
    return Config.from_env({"HOME": str(home), "USER": "tester"}, **kw)


def open_archive(home: Path, **kw) -> Archive:
    return Archive.open(config_for(home), now=lambda: DEFAULT_NOW.timestamp(), **kw)


def transcript(session_id: str, *, cwd: str = "/home/t/work/proj", slug: str | None = None, start: datetime | None = None, version: str = "2.1.39") -> ClaudeTranscript:
    return ClaudeTranscript(
        session_id,
        cwd=cwd,
        slug=slug,
        version=version,
        start=start or datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc),
        step=timedelta(seconds=10),
    )


def project_dir(home: Path, cwd: str = "/home/t/work/proj") -> Path:
    path = home / ".claude" / "projects" / project_dir_name(cwd)
    path.mkdir(parents=True, exist_ok=True)
    return path
