"""Real Claude Code transcripts compiled into a form that clones fast.

A template file is split once into literal byte segments and *slots*: the places whose
bytes change per clone (record uuids, the session id, cwd and project-dir name, slug,
timestamp dates, line ends, and a sample of words inside free-text fields). Rendering a
clone is numpy fancy indexing plus one ``bytes.join``: no JSON is parsed or serialized
per clone, so the record shapes (big ``progress`` and ``toolUseResult`` payloads
included) stay byte-for-byte those Claude Code wrote.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import orjson

# Slot kinds. A clone supplies one value per constant kind; word slots get per-slot values.
K_NL, K_UUID, K_SESSION, K_SLUG, K_CWD, K_PROJDIR, K_WORD = range(7)
K_DATE0 = 7  # K_DATE0 + k = the k-th day of the template (day offset from its first date)
MAX_DAY_OFFSET = 40

UUID_RE = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
DATE_RE = re.compile(rb'(?<=")20\d\d-[01]\d-[0-3]\d(?=T\d\d:)')
# ASCII words of 4+ letters not glued to an escape (``\nfoo``) or another word char.
WORD_RE = re.compile(rb"(?<![\\\w])[A-Za-z]{4,}(?!\w)")
NL_RE = re.compile(rb"\n")

# Keys whose string values are never free text (ids, hashes, paths, base64).
_NON_TEXT_KEYS = frozenset(
    {"signature", "data", "cwd", "uuid", "parentUuid", "sessionId", "timestamp", "id",
     "requestId", "leafUuid", "logicalParentUuid", "slug", "gitBranch", "version",
     "messageId", "toolUseID", "parentToolUseID", "tool_use_id", "agentId", "model"}
)
_MACHINERY_PREFIXES = ("<command-", "<local-command-")


@dataclass(frozen=True, slots=True)
class Template:
    """One compiled transcript file (a main session, or a subagent file of one)."""

    name: str
    size: int
    segments: np.ndarray  # object[bytes]: the literal bytes before slot j
    kinds: np.ndarray  # int16 slot kind per slot
    word_pos: np.ndarray  # int64 slot indices of the word slots, ascending
    word_orig: np.ndarray  # object[bytes]: the original word of each word slot
    nl_slots: np.ndarray  # int64 slot index of each line's newline
    line_ends: np.ndarray  # int64 byte offset just after each line
    line_day: np.ndarray  # int64 day offset of each line's timestamp (carried forward)
    turn_starts: np.ndarray  # int64 line indices where a typed prompt starts a turn
    n_days: int  # distinct day offsets used by K_DATE0 + k slots
    has_slug: bool
    subagents: tuple[Template, ...] = ()

    @property
    def n_lines(self) -> int:
        return len(self.nl_slots)

    def window_bytes(self, first: int, last: int) -> int:
        """Template bytes of lines ``first..last`` inclusive (clone size is close)."""
        start = int(self.line_ends[first - 1]) if first else 0
        return int(self.line_ends[last]) - start


@dataclass(slots=True)
class _Scan:
    """What one pass over the parsed records learns about a template."""

    session_ids: Counter[str]
    cwds: Counter[str]
    slugs: set[str]
    text_spans: list[tuple[int, int]]
    turn_starts: list[int]
    sidechain_records: int
    records: int


def _free_text(obj: Any, out: list[str]) -> None:
    """Collect string values that read like prose/tool output, in document order."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if isinstance(value, str):
                if key not in _NON_TEXT_KEYS and len(value) >= 12 and (" " in value or "\n" in value):
                    out.append(value)
            elif isinstance(value, (dict, list)):
                _free_text(value, out)
    elif isinstance(obj, list):
        for value in obj:
            if isinstance(value, str):
                if len(value) >= 12 and " " in value:
                    out.append(value)
            elif isinstance(value, (dict, list)):
                _free_text(value, out)


def starts_turn(record: dict[str, Any]) -> bool:
    """A typed prompt (SPEC §2): a non-meta user string, or text/image blocks without tool_result."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isCompactSummary"):
        return False
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return bool(content.strip()) and not content.lstrip().startswith(_MACHINERY_PREFIXES)
    if isinstance(content, list):
        kinds = {b.get("type") for b in content if isinstance(b, dict)}
        return "tool_result" not in kinds and "text" in kinds
    return False


def _scan_records(raw: bytes, line_starts: np.ndarray, line_ends: np.ndarray) -> _Scan:
    scan = _Scan(Counter(), Counter(), set(), [], [], 0, 0)
    for i, (a, b) in enumerate(zip(line_starts.tolist(), line_ends.tolist())):
        line = raw[a : b - 1]
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        scan.records += 1
        scan.sidechain_records += bool(record.get("isSidechain"))
        for key, counter in (("sessionId", scan.session_ids), ("cwd", scan.cwds)):
            value = record.get(key)
            if isinstance(value, str) and value:
                counter[value] += 1
        if isinstance(record.get("slug"), str) and record["slug"]:
            scan.slugs.add(record["slug"])
        if starts_turn(record):
            scan.turn_starts.append(i)
        texts: list[str] = []
        _free_text(record, texts)
        cursor = 0
        for text in texts:
            try:
                encoded = orjson.dumps(text)
            except TypeError:  # lone surrogates
                continue
            pos = line.find(encoded, cursor)
            if pos < 0:
                continue
            scan.text_spans.append((a + pos + 1, a + pos + len(encoded) - 1))
            cursor = pos + len(encoded)
    return scan


def _literal_slots(raw: bytes, literals: dict[bytes, int]) -> list[tuple[int, int, int, int]]:
    slots = []
    for literal, kind in literals.items():
        if len(literal) < 4:
            continue
        for m in re.finditer(re.escape(literal), raw):
            slots.append((m.start(), m.end(), m.end(), kind))
    return slots


def _carry_forward(values: np.ndarray) -> np.ndarray:
    """Replace -1 entries by the previous known value (the first known one at the start)."""
    known = np.flatnonzero(values >= 0)
    if not len(known):
        return np.zeros_like(values)
    idx = np.maximum.accumulate(np.where(values >= 0, np.arange(len(values)), -1))
    out = values[np.maximum(idx, 0)]
    out[idx < 0] = values[known[0]]
    return out


def compile_template(
    raw: bytes,
    name: str,
    *,
    rng: np.random.Generator,
    word_rate: float,
    word_counts: Counter[bytes] | None = None,
    subagents: tuple[Template, ...] = (),
) -> tuple[Template, int]:
    """Compile one transcript. Returns the template and its count of sidechain records.

    Every ``sessionId`` value becomes the clone's id (a file can hold two after a
    ``--continue``; subagent files carry the parent's), so a clone is one session.
    ``word_counts`` (if given) is updated with every free-text word, for the vocabulary.
    """
    if not raw.endswith(b"\n"):
        raw += b"\n"
    nl = np.fromiter((m.start() for m in NL_RE.finditer(raw)), dtype=np.int64)
    line_ends = nl + 1
    line_starts = np.concatenate(([0], line_ends[:-1])).astype(np.int64)
    scan = _scan_records(raw, line_starts, line_ends)

    literals: dict[bytes, int] = {}
    for cwd in scan.cwds:  # every cwd (and its project-dir form) becomes the clone's
        literals[cwd.encode()] = K_CWD
        literals[re.sub(r"[^A-Za-z0-9]", "-", cwd).encode()] = K_PROJDIR
    for slug in scan.slugs:
        literals[slug.encode()] = K_SLUG

    # (start, slot_end, cover_end, kind): the slot replaces [start, slot_end); words may
    # not touch [start, cover_end) (a uuid slot swaps 8 chars but covers all 36).
    slots: list[tuple[int, int, int, int]] = [(int(p), int(p) + 1, int(p) + 1, K_NL) for p in nl]
    session_ids = {sid.encode() for sid in scan.session_ids}
    for m in UUID_RE.finditer(raw):
        if m.group() in session_ids:
            slots.append((m.start(), m.end(), m.end(), K_SESSION))
        else:
            slots.append((m.start(), m.start() + 8, m.end(), K_UUID))
    days = sorted({date.fromisoformat(m.group().decode()) for m in DATE_RE.finditer(raw)})
    day_kind = {d.isoformat().encode(): K_DATE0 + min((d - days[0]).days, MAX_DAY_OFFSET) for d in days}
    line_day = np.full(len(nl), -1, dtype=np.int64)
    for m in DATE_RE.finditer(raw):
        kind = day_kind[m.group()]
        slots.append((m.start(), m.end(), m.end(), kind))
        line = int(np.searchsorted(line_ends, m.start(), side="right"))
        if line_day[line] < 0:
            line_day[line] = kind - K_DATE0
    line_day = _carry_forward(line_day)
    slots.extend(_literal_slots(raw, literals))
    slots.sort(key=lambda slot: (slot[0], -slot[2]))  # at one position the longest wins
    kept: list[tuple[int, int, int, int]] = []
    last_cover = -1
    for slot in slots:  # drop overlaps, first wins
        if slot[0] >= last_cover:
            kept.append(slot)
            last_cover = slot[2]

    s_start = np.array([s[0] for s in kept], dtype=np.int64)
    s_cover = np.array([s[2] for s in kept], dtype=np.int64)
    w_start_l: list[int] = []
    w_end_l: list[int] = []
    for a, b in scan.text_spans:
        for m in WORD_RE.finditer(raw, a, b):
            w_start_l.append(m.start())
            w_end_l.append(m.end())
    w_start = np.array(w_start_l, dtype=np.int64)
    w_end = np.array(w_end_l, dtype=np.int64)
    if word_counts is not None and len(w_start):
        sample = rng.random(len(w_start)) < 0.25
        word_counts.update(raw[a:b] for a, b in zip(w_start[sample].tolist(), w_end[sample].tolist()))
    chosen = rng.random(len(w_start)) < word_rate
    w_start, w_end = w_start[chosen], w_end[chosen]
    if len(w_start):  # drop words that touch a structural slot
        before = np.searchsorted(s_start, w_start, side="right") - 1
        clash = (before >= 0) & (s_cover[np.maximum(before, 0)] > w_start)
        after = np.minimum(before + 1, len(s_start) - 1)
        clash |= (s_start[after] < w_end) & (before + 1 < len(s_start))
        w_start, w_end = w_start[~clash], w_end[~clash]

    starts = np.concatenate((s_start, w_start))
    ends = np.concatenate((np.array([s[1] for s in kept], dtype=np.int64), w_end))
    kinds = np.concatenate((np.array([s[3] for s in kept], dtype=np.int16), np.full(len(w_start), K_WORD, np.int16)))
    order = np.argsort(starts, kind="stable")
    starts, ends, kinds = starts[order], ends[order], kinds[order]
    prev_ends = np.concatenate(([0], ends[:-1]))
    segments = np.empty(len(starts), dtype=object)
    segments[:] = [raw[p:s] for p, s in zip(prev_ends.tolist(), starts.tolist())]
    word_pos = np.flatnonzero(kinds == K_WORD)
    word_orig = np.empty(len(word_pos), dtype=object)
    word_orig[:] = [raw[starts[j] : ends[j]] for j in word_pos.tolist()]
    template = Template(
        name=name,
        size=len(raw),
        segments=segments,
        kinds=kinds,
        word_pos=word_pos,
        word_orig=word_orig,
        nl_slots=np.flatnonzero(kinds == K_NL),
        line_ends=line_ends,
        line_day=line_day,
        turn_starts=np.array(scan.turn_starts or [0], dtype=np.int64),
        n_days=min((days[-1] - days[0]).days, MAX_DAY_OFFSET) + 1 if days else 1,
        has_slug=bool(scan.slugs),
        subagents=subagents,
    )
    return template, scan.sidechain_records * 2 > max(scan.records, 1)


# ---------------------------------------------------------------------------------------
# Finding template files


@dataclass(frozen=True, slots=True)
class TemplateFile:
    path: Path
    subagents: tuple[Path, ...]


_SECTION_RE = re.compile(r"^### `([^`]+)`\n(.*?)(?=^### |\Z)", re.S | re.M)


def find_template_files(transcripts: Path, min_bytes: int = 8_000) -> list[TemplateFile]:
    """Main Claude Code sessions recorded by the real CLI, with their subagent files.

    Uses ``INDEX.md`` (format + provenance per file) when present, otherwise sniffs files.
    """
    index = transcripts / "INDEX.md"
    candidates: list[Path] = []
    if index.exists():
        for m in _SECTION_RE.finditer(index.read_text(encoding="utf-8")):
            body = m.group(2)
            if "format: Claude Code JSONL" in body and "provenance: REAL" in body:
                candidates.append(transcripts / m.group(1))
    else:
        for path in sorted(transcripts.rglob("*.jsonl")):
            head = path.open("rb").read(20_000)
            if b'"sessionId"' in head and b'"type":"user"' in head:
                candidates.append(path)
    found = []
    for path in sorted(candidates):
        if (
            not path.is_file()
            or path.name.startswith("agent-")
            or "subagents" in path.parts
            or path.stat().st_size < min_bytes
        ):
            continue
        subdir = path.parent / path.stem / "subagents"
        subs = tuple(sorted(subdir.glob("agent-*.jsonl"))) if subdir.is_dir() else ()
        found.append(TemplateFile(path, subs))
    return found
