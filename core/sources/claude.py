"""Claude Code transcripts: ``~/.claude/projects/<project-dir>/<session>.jsonl``.

Records are decoded by :mod:`.claude_records` and turned into entries by
:mod:`.claude_reader` (the turn rules of SPEC §2, compaction, summaries, titles;
what a text means is :mod:`.claude_text`); this module finds the files and walks
their blocks of lines. A line that is not a JSON object at all is skipped and
counted.

Subagent transcripts come in two layouts: ``<session>/subagents/agent-*.jsonl``
(2.1.x; the dir names the parent) and ``agent-*.jsonl`` beside the sessions (2.0.x;
the parent is the records' ``sessionId``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.config import Config
from core.model import FileMeta

from .base import MAIN, SUBAGENT, ReadResult, SourceFile

AGENT = "claude"
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _is_compaction_agent(path: Path) -> bool:
    """``agent-acompact-*``: the summarizer behind a compaction, not the user's work.

    Its prompt is Claude Code's fixed summarization instructions, which would
    match every query about summaries; the compaction itself is already a message
    of the parent session. Its responses are billed all the same, so the file is
    read for its usage only (:func:`_billed_only`): no messages, no turns.
    """
    return path.name.startswith("agent-acompact")


def _billed_only(result: ReadResult) -> ReadResult:
    """A compaction summarizer's read: its responses' usage, under its parent session."""
    meta = FileMeta(session_id=result.meta.session_id, first_timestamp=result.meta.first_timestamp,
                    last_timestamp=result.meta.last_timestamp)
    return ReadResult(entries=[], meta=meta, offset=result.offset, skipped=result.skipped, replace=result.replace,
                      state=result.state, error=result.error, reasons=result.reasons, usage=result.usage)


class ClaudeSource:
    agent = AGENT
    append_only = True

    # --- discovery ------------------------------------------------------------------

    def watch_roots(self, config: Config) -> list[Path]:
        return [config.claude_projects]

    def project_dirs(self, config: Config) -> list[Path]:
        root = config.claude_projects
        try:
            children = sorted(root.iterdir())
        except OSError:
            return []
        # Every project: --pattern filters at query time (core/archive/scope.py), so one cache
        # serves processes of every scope.
        return [p for p in children if p.is_dir()]

    def discover(self, config: Config) -> Iterator[SourceFile]:
        for project in self.project_dirs(config):
            try:
                entries = sorted(project.iterdir())
            except OSError:
                continue
            for path in entries:
                if path.suffix == ".jsonl" and path.is_file():
                    yield self._top_level(path, project.name)
                elif path.is_dir():
                    sub = path / "subagents"
                    if sub.is_dir():
                        for agent_file in sorted(sub.glob("*.jsonl")):
                            yield self._nested_subagent(agent_file, project.name, path.name)

    def classify(self, path: Path, config: Config) -> SourceFile | None:
        if path.suffix != ".jsonl":
            return None
        try:
            rel = path.relative_to(config.claude_projects)
        except ValueError:
            return None
        parts = rel.parts
        if not parts:
            return None
        if len(parts) == 2:
            return self._top_level(path, parts[0])
        if len(parts) == 4 and parts[2] == "subagents":
            return self._nested_subagent(path, parts[0], parts[1])
        return None

    @staticmethod
    def _top_level(path: Path, project_key: str) -> SourceFile:
        stem = path.stem
        if stem.startswith("agent-"):
            return SourceFile(path, AGENT, SUBAGENT, project_key, order_key=stem)
        session_id = stem if UUID_RE.match(stem) else None
        return SourceFile(path, AGENT, MAIN, project_key, session_id=session_id, order_key=stem)

    @staticmethod
    def _nested_subagent(path: Path, project_key: str, parent: str) -> SourceFile:
        return SourceFile(
            path, AGENT, SUBAGENT, project_key, parent_session_id=parent, order_key=path.stem
        )

    # --- reading ----------------------------------------------------------------------

    def read(
        self,
        file: SourceFile,
        *,
        offset: int = 0,
        state: dict[str, Any] | None = None,
        full_text: bool = False,
    ) -> ReadResult:
        # (the reader, imported when a file is read: finding files, all a search with nothing
        # new does here, needs none of it)
        from .claude_reader import _FileReader
        from .claude_records import WANTED_TYPES, decode_block
        from .jsonl import iter_blocks

        reader = _FileReader(file, state if offset else None, full_text)
        end = offset
        index = (state or {}).get("lines", 0) if offset else 0
        for end, block in iter_blocks(file.path, offset):  # noqa: B007 (the last end is the offset)
            records = decode_block(block)
            if records is not None:
                feed = reader.feed_record
                for at in [i for i, r in enumerate(records) if r.type in WANTED_TYPES]:
                    feed(records[at], index + at)
                index += len(records)
            else:  # some line is malformed or odd: take them one at a time
                for line in block.splitlines(keepends=True):
                    reader.feed(line, index)
                    index += 1
        result = reader.result(end, replace=offset == 0, lines=index)
        return _billed_only(result) if _is_compaction_agent(file.path) else result
