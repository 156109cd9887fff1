"""A session's messages as one chronological stream, and a chain's sessions stitched.

A session is several files: its main transcript(s) and its subagents' transcripts.
Reading them file after file puts a subagent's work after the whole main stream,
although it happened in the middle; a client following the session by ``since``
would then see old messages again. Here each file keeps its own order (its records
are sorted by their own time, stably: a record written after a later one — Claude
Code writes a compaction summary before the `/compact` command that caused it —
takes its place in time, so a client paging by ``since`` never skips it) and the
files are merged by time; ties go to the earlier file, then to write order. A
message without a timestamp keeps the time of the message written before it, so it
stays right after that message.

``since`` is strictly after on that same time: a message is new when its time
(as the merge orders it) is later than the time a client last saw.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import groupby

from core.model import Message, SessionInfo
from core.timeutil import parse_ts
from core.views import BOUNDARY  # the type of the marker between sessions of a chain or range


def _timed(stream: Iterable[Message]) -> list[tuple[float, Message]]:
    """(time, message) of one file in time order (stable); an untimed message takes
    the time of the message written before it. An Ash branch (a run of one ``branch``
    value, as the adapter emits them: the default view, then each other branch) stays
    one block, in time order inside."""
    last = float("-inf")
    block = 0
    keyed: list[tuple[int, float, Message]] = []
    for message in stream:
        if keyed and message.branch != keyed[-1][2].branch:
            block += 1
        t = parse_ts(message.timestamp) if message.timestamp else None
        if t:
            last = t
        keyed.append((block, last, message))
    keyed.sort(key=lambda k: (k[0], k[1]))  # (stable: equal times keep write order)
    return [(t, m) for _, t, m in keyed]


def merge_by_time(files: Sequence[Iterable[Message]]) -> Iterator[tuple[float, Message]]:
    """Messages of several files, in time order; (time, message) pairs.

    Each file is ordered whole (its records may be written out of time order); the
    files are then merged lazily.
    """
    keyed = [_keyed(index, f) for index, f in enumerate(files)]
    for t, _, _, message in heapq.merge(*keyed):
        yield t, message


def _keyed(index: int, stream: Iterable[Message]) -> Iterator[tuple[float, int, int, Message]]:
    # (a function, not an inline generator: that read ``index`` late, when every file's was the
    # last one, so two files' messages of equal time and position compared the messages: a TypeError)
    return ((t, index, pos, m) for pos, (t, m) in enumerate(_timed(stream)))


def chronological(messages: list[Message]) -> list[Message]:
    """A session's stitched (file-by-file) list in time order (same merge)."""
    by_file = [list(group) for _, group in groupby(messages, key=lambda m: m.file_index)]
    return [m for _, m in merge_by_time(by_file)]


def boundary(info: SessionInfo, ref: str) -> Message:
    """The marker a stitched stream puts before each session's messages."""
    number = info.session_number or 1
    total = info.chain_length or 1
    return Message(
        session_id=info.session_id,
        agent=info.agent,
        sequence=-1,
        role="system",
        type=BOUNDARY,
        text=f"Session {number} of {total} ({ref}): {info.session_id}",
        timestamp=info.first_timestamp,
        uuid=None,
        parent_uuid=None,
        is_sidechain=False,
        file_index=-1,
        entry_index=-1,
        turn=None,
    )


def stitched(
    sessions: Sequence[tuple[SessionInfo, str, Sequence[Iterable[Message]]]],
    *,
    since: float | None,
    keep: Callable[[Message], bool],
    markers: bool,
) -> Iterator[Message]:
    """Sessions one after another (each in time order), a boundary marker before
    each session that has anything to show when ``markers`` is set.

    ``sessions`` holds (session, its ref, its files' message streams).
    """
    for info, ref, files in sessions:
        marked = not markers
        for t, message in merge_by_time(files):
            if since is not None and t <= since:
                continue
            if not keep(message):
                continue
            if not marked:
                marked = True
                yield boundary(info, ref)
            yield message
