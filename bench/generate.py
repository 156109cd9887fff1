"""Deterministic generator of a large, real-shaped Claude Code archive.

    python -m bench.generate --out bench/data/archive-1800mb [--size-mb 1800] [--sessions 2400]

Writes ``<out>/.claude/projects/<project-dir>/<session-uuid>.jsonl`` (plus
``<session-uuid>/subagents/agent-*.jsonl`` for sessions cloned from templates that had
subagents), ``<out>/manifest.json`` and ``<out>/queries.json``. Use ``<out>`` as HOME.

Each session is cloned from one or more windows of real transcripts (see
``templates.py``) with a new session id, new record uuids, a project cwd, a slug (shared
along slug chains), shifted dates and perturbed free text. The same arguments always
produce byte-identical output.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import orjson

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.builtin_templates import builtin_templates
from bench.queries import generate_queries
from bench.templates import K_DATE0, K_WORD, Template, compile_template, find_template_files
from bench.vocab import PROJECT_CWDS, Vocabulary, build_vocabulary, make_slug, project_dir_name

DEFAULT_TRANSCRIPTS = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
BASE_DATE = date(2025, 1, 1)
FIRST_DAY, LAST_DAY = 60, 420  # sessions start between 2025-03-02 and 2026-02-25
WORD_RATE = 0.15  # share of free-text words that become perturbation slots
P_REPLACE, P_INSERT = 0.45, 0.20  # per clone and slot; the rest keep the original word
MANIFEST_VERSION = 1
GENERATED_MARKER = ".bench-generated"


@dataclass(frozen=True, slots=True)
class Piece:
    """Lines ``first..last`` of template ``template``; its day offset 0 lands on ``day``."""

    template: int
    first: int
    last: int
    day: int


@dataclass(frozen=True, slots=True)
class SessionPlan:
    index: int
    session_id: str
    prefix: str  # 8 hex chars that replace the start of every record uuid
    cwd: str
    project_dir: str
    slug: str
    chain_pos: int  # 1-based position in its slug chain
    pieces: tuple[Piece, ...]
    with_subagents: bool
    planned_bytes: int


# ---------------------------------------------------------------------------------------
# Templates


def load_templates(transcripts: Path | None, seed: int) -> tuple[list[Template], Vocabulary]:
    """Compile the real transcripts (or the built-in set) and build the vocabulary."""
    counts: Counter[bytes] = Counter()
    templates: list[Template] = []
    files = find_template_files(transcripts) if transcripts and transcripts.is_dir() else []
    if files:
        for i, tf in enumerate(files):
            rng = np.random.default_rng([seed, 3, i])
            raw = tf.path.read_bytes()
            main, sidechain = compile_template(raw, str(tf.path), rng=rng, word_rate=WORD_RATE,
                                               word_counts=counts)
            if sidechain:
                continue
            subs = tuple(
                compile_template(p.read_bytes(), str(p), rng=rng, word_rate=WORD_RATE)[0]
                for p in tf.subagents
            )
            templates.append(_with_subagents(main, subs))
    else:
        print("generate: no transcripts dir, using the built-in templates", file=sys.stderr)
        for i, (name, raw) in enumerate(builtin_templates(seed)):
            rng = np.random.default_rng([seed, 3, i])
            templates.append(compile_template(raw, name, rng=rng, word_rate=WORD_RATE, word_counts=counts)[0])
    return templates, build_vocabulary(counts, seed)


def _with_subagents(t: Template, subs: tuple[Template, ...]) -> Template:
    fields = {name: getattr(t, name) for name in t.__slots__}
    fields["subagents"] = subs
    return Template(**fields)


# ---------------------------------------------------------------------------------------
# Planning (cheap, single process, fully determined by the seed)


def _uuid_from(rng: np.random.Generator) -> str:
    h = f"{int(rng.integers(2**63)):016x}{int(rng.integers(2**63)):016x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(rng.integers(4))]}{h[17:20]}-{h[20:32]}"


def _chains(rng: np.random.Generator, project_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Chain id and 1-based position per session: consecutive sessions of a project."""
    chain_id = np.zeros(len(project_of), dtype=np.int64)
    chain_pos = np.zeros(len(project_of), dtype=np.int64)
    next_id = 0
    for project in np.unique(project_of):
        members = np.flatnonzero(project_of == project)
        i = 0
        while i < len(members):
            length = 1 if rng.random() < 0.5 else int(rng.integers(2, 7))
            for pos, s in enumerate(members[i : i + length], start=1):
                chain_id[s], chain_pos[s] = next_id, pos
            next_id += 1
            i += length
    return chain_id, chain_pos


def _pieces(rng: np.random.Generator, templates: list[Template], weights: np.ndarray,
            target: int, day: int) -> tuple[tuple[Piece, ...], int]:
    pieces: list[Piece] = []
    remaining = target
    total = 0
    while remaining > 0 and len(pieces) < 6:
        ti = int(rng.choice(len(templates), p=weights))
        t = templates[ti]
        if pieces or rng.random() < 0.35:
            first = int(t.turn_starts[0]) if pieces else 0
        else:
            first = int(rng.choice(t.turn_starts))
        start_off = int(t.line_ends[first - 1]) if first else 0
        last = int(np.searchsorted(t.line_ends, start_off + remaining, side="left"))
        last = min(max(last, first), t.n_lines - 1)
        size = t.window_bytes(first, last)
        piece_day = day - int(t.line_day[first])
        pieces.append(Piece(ti, first, last, piece_day))
        day = piece_day + int(t.line_day[last]) + 1
        remaining -= size
        total += size
    return tuple(pieces), total


def plan_archive(templates: list[Template], n_sessions: int, total_bytes: int, seed: int) -> list[SessionPlan]:
    """Decide every session (template windows, ids, project, slug chain, dates, size)."""
    rng = np.random.default_rng([seed, 1])
    n_projects = len(PROJECT_CWDS)
    pw = 1.0 / np.arange(1, n_projects + 1) ** 0.9
    pw = rng.permutation(pw / pw.sum())
    project_of = rng.choice(n_projects, size=n_sessions, p=pw)
    chain_id, chain_pos = _chains(rng, project_of)
    n_chains = int(chain_id.max()) + 1
    chain_len = np.bincount(chain_id, minlength=n_chains)
    slugs: dict[str, None] = {}
    while len(slugs) < n_chains:
        slugs.setdefault(make_slug(rng) + ("" if len(slugs) < 8000 else f"-{len(slugs)}"))
    chain_slug = list(slugs)
    chain_day = rng.integers(FIRST_DAY, LAST_DAY, size=n_chains)
    gaps = rng.integers(1, 4, size=n_sessions)
    raw_sizes = rng.lognormal(0.0, 1.1, size=n_sessions)
    session_ids = [_uuid_from(rng) for _ in range(n_sessions)]
    mix = int(rng.integers(2**32))

    sizes = np.array([t.size for t in templates], dtype=np.float64)
    weights_all = np.sqrt(sizes) / np.sqrt(sizes).sum()
    slug_mask = np.array([t.has_slug for t in templates])
    weights_slug = np.where(slug_mask, weights_all, 0.0)
    weights_slug = weights_slug / weights_slug.sum() if weights_slug.sum() else weights_all

    main_budget = float(total_bytes)
    plans: list[SessionPlan] = []
    for _ in range(4):  # rescale until main + subagent bytes land near the target
        targets = np.clip(raw_sizes / raw_sizes.sum() * main_budget, 3_000, 40_000_000).astype(np.int64)
        plans = []
        day_of: dict[int, int] = {}
        for i in range(n_sessions):
            srng = np.random.default_rng([seed, 2, i])
            cid = int(chain_id[i])
            day = day_of.get(cid, int(chain_day[cid]))
            weights = weights_slug if chain_len[cid] > 1 else weights_all
            pieces, planned = _pieces(srng, templates, weights, int(targets[i]), day)
            day_of[cid] = day + int(gaps[i]) + _span_days(templates, pieces)
            t0 = templates[pieces[0].template]
            with_subs = bool(t0.subagents) and (pieces[0].last - pieces[0].first) * 3 >= t0.n_lines
            if with_subs:
                planned += sum(s.size for s in t0.subagents)
            cwd = PROJECT_CWDS[int(project_of[i])]
            plans.append(SessionPlan(
                index=i, session_id=session_ids[i], prefix=f"{(i * 0x9E3779B1 + mix) & 0xFFFFFFFF:08x}",
                cwd=cwd, project_dir=project_dir_name(cwd), slug=chain_slug[cid], chain_pos=int(chain_pos[i]),
                pieces=pieces, with_subagents=with_subs, planned_bytes=planned,
            ))
        planned_total = sum(p.planned_bytes for p in plans)
        if abs(planned_total - total_bytes) < 0.01 * total_bytes:
            break
        main_budget *= total_bytes / planned_total
    return plans


def _span_days(templates: list[Template], pieces: tuple[Piece, ...]) -> int:
    last = pieces[-1]
    return last.day + int(templates[last.template].line_day[last.last]) - pieces[0].day


# ---------------------------------------------------------------------------------------
# Rendering (parallel; each session from its own seeded generator)

_STATE: dict[str, object] = {}
_DATES = [(BASE_DATE + timedelta(days=d)).isoformat().encode() for d in range(-60, 900)]


def _date_bytes(day: int) -> bytes:
    return _DATES[day + 60]


def render_window(t: Template, first: int, last: int, consts: np.ndarray,
                  rng: np.random.Generator, vocab: Vocabulary) -> bytes:
    """Lines ``first..last`` of ``t`` with every slot filled for this clone."""
    s = int(t.nl_slots[first - 1]) + 1 if first else 0
    e = int(t.nl_slots[last]) + 1
    vals = consts[t.kinds[s:e]]
    lo, hi = np.searchsorted(t.word_pos, (s, e))
    if hi > lo:
        where = t.word_pos[lo:hi] - s
        words = t.word_orig[lo:hi].copy()
        roll = rng.random(hi - lo)
        replace = roll < P_REPLACE
        insert = (roll >= P_REPLACE) & (roll < P_REPLACE + P_INSERT)
        words[replace] = vocab.words[vocab.sample(rng, int(replace.sum()))]
        words[insert] = words[insert] + vocab.spaced[vocab.sample(rng, int(insert.sum()))]
        vals[where] = words
    out = np.empty(2 * (e - s), dtype=object)
    out[0::2] = t.segments[s:e]
    out[1::2] = vals
    return b"".join(out.tolist())


def _consts(t: Template, plan: SessionPlan, day: int) -> np.ndarray:
    fixed = [b"\n", plan.prefix.encode(), plan.session_id.encode(), plan.slug.encode(),
             plan.cwd.encode(), plan.project_dir.encode(), b""]
    consts = np.empty(K_DATE0 + t.n_days, dtype=object)
    consts[:] = fixed + [_date_bytes(day + k) for k in range(t.n_days)]
    assert len(fixed) == K_DATE0 and fixed[K_WORD] == b""
    return consts


def write_session(plan: SessionPlan) -> tuple[int, int]:
    """Render and write one session (and its subagents). Returns (bytes, files)."""
    templates: list[Template] = _STATE["templates"]  # type: ignore[assignment]
    vocab: Vocabulary = _STATE["vocab"]  # type: ignore[assignment]
    projects: Path = _STATE["projects"]  # type: ignore[assignment]
    rng = np.random.default_rng([_STATE["seed"], 4, plan.index])  # type: ignore[list-item]
    parts = [render_window(templates[p.template], p.first, p.last,
                           _consts(templates[p.template], plan, p.day), rng, vocab) for p in plan.pieces]
    project = projects / plan.project_dir
    path = project / f"{plan.session_id}.jsonl"
    path.write_bytes(b"".join(parts))
    written, files = sum(map(len, parts)), 1
    if plan.with_subagents:
        sub_dir = project / plan.session_id / "subagents"
        sub_dir.mkdir(parents=True, exist_ok=True)
        day = plan.pieces[0].day
        for sub in templates[plan.pieces[0].template].subagents:
            data = render_window(sub, 0, sub.n_lines - 1, _consts(sub, plan, day), rng, vocab)
            (sub_dir / Path(sub.name).name).write_bytes(data)
            written += len(data)
            files += 1
    last = plan.pieces[-1]
    end_day = last.day + int(templates[last.template].line_day[last.last])
    mtime = datetime.combine(BASE_DATE + timedelta(days=end_day), datetime.min.time(), timezone.utc)
    stamp = mtime.timestamp() + 18 * 3600
    os.utime(path, (stamp, stamp))
    return written, files


# ---------------------------------------------------------------------------------------


def default_out(size_mb: float, sessions: int, seed: int) -> Path:
    return Path(__file__).resolve().parent / "data" / f"archive-{size_mb:g}mb-{sessions}s-seed{seed}"


def generate(out: Path, *, size_mb: float = 1800, sessions: int = 2400, seed: int = 42,
             transcripts: Path | None = DEFAULT_TRANSCRIPTS, workers: int | None = None,
             n_queries: int = 200, quiet: bool = False) -> dict:
    """Generate the archive under ``out`` (replacing a previous generated one)."""
    t0 = time.perf_counter()
    projects = out / ".claude" / "projects"
    marker = out / GENERATED_MARKER
    if (out / ".claude").exists():
        if not marker.exists():
            raise SystemExit(f"{out} has a .claude dir not made by this generator; refusing to delete it")
        shutil.rmtree(out / ".claude")
    (out / "manifest.json").unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    marker.write_text("generated by bench/generate.py; safe to delete\n")
    templates, vocab = load_templates(transcripts, seed)
    total_bytes = int(size_mb * 1_000_000)
    plans = plan_archive(templates, sessions, total_bytes, seed)
    for d in {p.project_dir for p in plans}:
        (projects / d).mkdir(parents=True, exist_ok=True)
    t_setup = time.perf_counter() - t0
    _STATE.update(templates=templates, vocab=vocab, projects=projects, seed=seed)
    t1 = time.perf_counter()
    workers = workers or os.cpu_count() or 1
    written = files = 0
    ctx = mp.get_context("fork")
    with ctx.Pool(workers) as pool:
        for n, (b, f) in enumerate(pool.imap_unordered(write_session, plans, chunksize=4), start=1):
            written += b
            files += f
            if not quiet and sys.stderr.isatty() and n % 50 == 0:
                print(f"\r  {n}/{len(plans)} sessions, {written / 1e6:,.0f} MB", end="", file=sys.stderr)
    t_write = time.perf_counter() - t1
    if not quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    manifest = {
        "version": MANIFEST_VERSION, "seed": seed, "size_mb": size_mb, "sessions": sessions,
        "total_bytes": written, "files": files, "subagent_files": files - sessions,
        "projects": len({p.project_dir for p in plans}),
        "chains": len({p.slug for p in plans}),
        "templates": [Path(t.name).name for t in templates],
        "setup_s": round(t_setup, 3), "write_s": round(t_write, 3),
        "write_mb_per_s": round(written / 1e6 / t_write, 1),
        "session_files": [
            {"path": f".claude/projects/{p.project_dir}/{p.session_id}.jsonl", "slug": p.slug,
             "chain_pos": p.chain_pos, "cwd": p.cwd}
            for p in plans
        ],
    }
    queries = generate_queries(out, manifest, n=n_queries, seed=seed)
    manifest["queries"] = len(queries)
    manifest["total_s"] = round(time.perf_counter() - t0, 3)
    (out / "manifest.json").write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    if not quiet:
        print(
            f"generated {written:,} bytes ({written / 1e6:,.1f} MB) in {files:,} files "
            f"({sessions:,} sessions + {files - sessions:,} subagent files, {manifest['projects']} projects, "
            f"{manifest['chains']:,} slug chains) under {out}\n"
            f"  write {t_write:.1f} s = {written / 1e6 / t_write:,.0f} MB/s; setup {t_setup:.1f} s; "
            f"total {manifest['total_s']:.1f} s; {len(queries)} queries -> {out / 'queries.json'}"
        )
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=1800, help="total transcript bytes, in MB (10^6)")
    ap.add_argument("--sessions", type=int, default=2400, help="number of main session files")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, help="output dir, used as HOME (default bench/data/archive-…)")
    ap.add_argument("--transcripts", type=Path, default=DEFAULT_TRANSCRIPTS, help="template transcripts dir")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args(argv)
    out = args.out or default_out(args.size_mb, args.sessions, args.seed)
    generate(out, size_mb=args.size_mb, sessions=args.sessions, seed=args.seed,
             transcripts=args.transcripts, workers=args.workers, n_queries=args.queries)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["generate", "generate_queries", "plan_archive", "SessionPlan", "Piece"]
