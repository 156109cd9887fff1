"""Realistic search queries drawn from a generated archive.

Queries come from the text both systems index (typed prompts and assistant text), so
every query has matches in the corpus. Kinds, mixed on purpose:

- ``phrase``: 2-4 consecutive words of a real prompt (what people paste or remember)
- ``common``: one frequent word (many matches: stresses long posting lists)
- ``rare``: one or two words seen in a single sampled turn (few matches)
- ``identifier``: snake_case / camelCase / file names (``session_store.py``)
- ``mixed``: a common word plus a rare word or identifier
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import orjson

from bench.templates import starts_turn

STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with i you we me my our can could would should "
    "do does did have has had let lets just also what which who how why when where from "
    "here your its been were them than so all any some about over only more most very".split()
)
_WORD_RE = re.compile(r"(?a)\b\w*[A-Za-z]\w*\b")  # whole \w runs, as bm25s tokenizes
_IDENT_RE = re.compile(
    r"\b(?:[a-z][a-z0-9]+(?:_[a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Za-z][\w-]*\.(?:py|ts|tsx|js|ex|exs|rs|go|md|json|toml|yaml|sql|sh))\b"
)
KIND_WEIGHTS = {"phrase": 0.30, "common": 0.15, "rare": 0.20, "identifier": 0.20, "mixed": 0.15}


def _turn_texts(path: Path) -> tuple[list[str], list[str]]:
    """(typed prompts, assistant text blocks) of one session file."""
    prompts, answers = [], []
    with path.open("rb") as fh:
        for line in fh:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                continue
            message = record.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if starts_turn(record):
                if isinstance(content, str):
                    prompts.append(content)
                else:
                    prompts.extend(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
            elif record.get("type") == "assistant" and isinstance(content, list):
                answers.extend(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return prompts, answers


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD_RE.findall(text) if len(w) >= 3 and w.lower() not in STOPWORDS]


def generate_queries(out: Path, manifest: dict | None = None, *, n: int = 200, seed: int = 42,
                     sample_files: int = 120) -> list[str]:
    """Draw ``n`` distinct queries from the archive under ``out``; writes ``out/queries.json``."""
    rng = np.random.default_rng([seed, 5])
    if manifest is None:
        manifest = orjson.loads((out / "manifest.json").read_bytes())
    paths = [out / s["path"] for s in manifest["session_files"]]
    picked = rng.choice(len(paths), size=min(sample_files, len(paths)), replace=False)
    prompts: list[str] = []
    turns: list[list[str]] = []
    idents: set[str] = set()
    for i in sorted(picked.tolist()):
        p, a = _turn_texts(paths[i])
        prompts.extend(x for x in p if len(_content_words(x)) >= 2)
        turns.extend(_content_words(x) for x in p + a)
        idents.update(m for x in p + a for m in _IDENT_RE.findall(x))
    df: Counter[str] = Counter()
    for words in turns:
        df.update(dict.fromkeys((w.lower() for w in words), 1))  # ordered: ties rank stably
    by_freq = [w for w, _ in df.most_common() if len(w) >= 4 and not w.isdigit()]
    common = by_freq[: max(50, len(by_freq) // 200)]
    rare = [w for w in by_freq if df[w] == 1 and len(w) >= 5 and not any(c.isdigit() for c in w)]
    ident_list = sorted(idents)
    if not (prompts and common and rare):
        raise RuntimeError(f"too little text under {out} to draw queries from")
    pools = {"common": common, "rare": rare, "identifier": ident_list or rare}

    def draw(kind: str) -> str:
        if kind == "phrase":
            words = _content_words(prompts[int(rng.integers(len(prompts)))])
            k = int(rng.integers(2, 5))
            start = int(rng.integers(max(1, len(words) - k + 1)))
            return " ".join(words[start : start + k])
        if kind == "rare" and rng.random() < 0.3:
            return " ".join(rng.choice(rare, size=2, replace=False).tolist())
        if kind == "mixed":
            other = pools["identifier"] if rng.random() < 0.5 else rare
            parts = [common[int(rng.integers(len(common)))], other[int(rng.integers(len(other)))]]
            if rng.random() < 0.3:
                parts.append(common[int(rng.integers(len(common)))])
            return " ".join(parts)
        pool = pools[kind]
        return pool[int(rng.integers(len(pool)))]

    kinds = list(KIND_WEIGHTS)
    probs = np.array(list(KIND_WEIGHTS.values()))
    chosen: dict[str, str] = {}
    attempts = 0
    while len(chosen) < n and attempts < n * 50:
        attempts += 1
        kind = kinds[int(rng.choice(len(kinds), p=probs))]
        q = draw(kind).strip()
        if q and q.lower() not in chosen and 1 <= len(q.split()) <= 4:
            chosen[q.lower()] = f"{kind}\t{q}"
    items = [{"query": v.split("\t", 1)[1], "kind": v.split("\t", 1)[0]} for v in chosen.values()]
    (out / "queries.json").write_bytes(orjson.dumps({"seed": seed, "queries": items}, option=orjson.OPT_INDENT_2))
    return [item["query"] for item in items]


def load_queries(path: Path) -> list[str]:
    return [item["query"] for item in orjson.loads(path.read_bytes())["queries"]]
