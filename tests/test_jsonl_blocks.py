"""The JSONL block reader and the depth guard, at their edges (found by mutation
testing: the 8 MB block and the bracket shortcut are never reached by small files).

- ``iter_blocks`` yields whole lines only, whatever the block size, with each
  block's end offset; a half-written last line stays unread, a blank one is read
  (the offset reaches the end of the file); a block is about the block size.
- ``too_deep`` asks the raw bytes only after walking ``WALK_FIRST`` containers: a
  wide but shallow record is never "too deep", a deep one always is.
"""

from __future__ import annotations

import json

import pytest

from core.sources.jsonl import MAX_DEPTH, WALK_FIRST, iter_blocks, too_deep

LINES = [b'{"a":1}\n', b'{"text":"' + b"x" * 37 + b'"}\n', b"\n", b'{"b":[1,2,3]}\n', b'{"c":"last"}\n']


@pytest.mark.parametrize("block_bytes", [1, 3, 7, 16, 64, 4096])
def test_blocks_are_whole_lines_with_their_end_offsets(tmp_path, block_bytes):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(LINES) + b'{"half":')  # the last line is still being written
    blocks = list(iter_blocks(path, block_bytes=block_bytes))
    assert b"".join(block for _, block in blocks) == b"".join(LINES)
    assert all(block.endswith(b"\n") for _, block in blocks)
    ends = [end for end, _ in blocks]
    assert ends == sorted(ends) and ends[-1] == len(b"".join(LINES))
    position = 0
    for end, block in blocks:  # each end offset is where that block stops in the file
        position += len(block)
        assert end == position


def test_blocks_resume_from_an_offset(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(LINES))
    start = len(LINES[0]) + len(LINES[1])
    blocks = list(iter_blocks(path, start, block_bytes=5))
    assert b"".join(b for _, b in blocks) == b"".join(LINES[2:])
    assert blocks[-1][0] == len(b"".join(LINES))


@pytest.mark.parametrize("block_bytes", [1, 8, 9, 4096])
def test_a_blank_last_line_is_read_to_the_end_of_the_file(tmp_path, block_bytes):
    """(With 8, the last read is the blank line alone: a newline at a block's first byte.)"""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n\n')
    blocks = list(iter_blocks(path, block_bytes=block_bytes))
    assert b"".join(block for _, block in blocks) == b'{"a":1}\n\n'
    assert blocks[-1][0] == 9  # the stored offset: the end of the file, not one short


def test_blocks_stay_near_the_block_size(tmp_path):
    """The file is read a block at a time, not whole: lines of 8 bytes in blocks of 16."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"i":0}\n' * 10)
    blocks = list(iter_blocks(path, block_bytes=16))
    assert blocks == [(16 * n, b'{"i":0}\n' * 2) for n in range(1, 6)]


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth - 1):
        value = [value]
    return [value]


@pytest.mark.parametrize("with_raw", [True, False])
def test_depth_guard_at_its_edges(with_raw):
    wide = {f"k{i}": [i] for i in range(WALK_FIRST * 3)}  # many containers, depth 2
    for value, expected in ((wide, False), (_nested(MAX_DEPTH), False), (_nested(MAX_DEPTH + 1), True)):
        raw = json.dumps(value).encode() if with_raw else None
        assert too_deep(value, raw) is expected
    # deep under a wide top: the shortcut must not answer before the walk gets there
    deep_after_wide = {**wide, "zz": _nested(MAX_DEPTH)}
    raw = json.dumps(deep_after_wide).encode() if with_raw else None
    assert too_deep(deep_after_wide, raw) is True
    # few brackets in the bytes: the shortcut says "not deep" for a value of many containers
    few = {f"k{i}": {} for i in range(WALK_FIRST + 1)}
    assert too_deep(few, b"{}" if with_raw else None) is False
