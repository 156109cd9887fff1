"""Words, slugs and project paths for the generator (all deterministic from a seed).

The perturbation vocabulary mixes the real words of the templates (weighted by their
frequency, so common words stay common) with a long Zipf tail of synthetic identifiers
(``retry_budget``, ``parseLedgerEntry``, ``quorvane``) so that the generated archive has
the growing, heavy-tailed vocabulary of a real one instead of 40 templates' worth.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

_ONSETS = "b c d f g h j k l m n p r s t v w z br cr dr fl gr kl pl pr sk sl sn sp st tr ch sh th".split()
_VOWELS = "a e i o u ai ea ie oo ou".split()
_CODAS = ["", "", "", "n", "r", "s", "x", "l", "nd", "rk", "st", "m"]
_DEV_WORDS = (
    "cache index token parser buffer socket retry handler session ledger shard queue "
    "worker schema router config metric tracer client server bundle render widget "
    "offset cursor commit branch patch diff stream chunk batch lease quota budget "
    "fixture snapshot migration upload payload encoder decoder registry resolver"
).split()
_FILE_EXTS = ["py", "ts", "tsx", "rs", "go", "ex", "md", "json", "toml", "yaml", "sql", "sh"]

SLUG_ADJECTIVES = (
    "velvet modular radiant humble lexical linked drifting dazzling quiet brave silent "
    "golden frozen hidden rustic gentle swift lucid bright mellow crimson amber sleepy "
    "cosmic nimble polished wandering curious tidy bold fuzzy jolly stellar"
).split()
SLUG_VERBS = (
    "puzzling petting floating tumbling soaring painting seeking imagining weaving "
    "humming dancing sorting folding chasing drawing gliding building mapping tracing "
    "juggling sketching brewing knitting wiring"
).split()
SLUG_NOUNS = (
    "eclipse thompson whisper matsumoto music umbrella barto harbor lantern meadow "
    "comet falcon orchard prism glacier tundra beacon canyon marble willow ember "
    "quartz saffron nebula pebble"
).split()

# Varied cwds: macOS and Linux homes, worktrees, monorepo subdirs, one path long enough
# that Claude Code hashes its project-dir name.
PROJECT_CWDS = (
    "/home/alex/work/relay-api",
    "/home/alex/work/relay-api-worktrees/feat-search",
    "/home/alex/work/relay-api-worktrees/fix-watcher",
    "/Users/sam/code/payments-service",
    "/Users/sam/code/payments-service/services/ledger",
    "/home/dev/src/github.com/acme/infra",
    "/home/dev/src/github.com/acme/web-dashboard",
    "/Users/kim/Projects/ml/notebooks",
    "/Users/kim/Projects/ml/feature-store",
    "/home/priya/repos/mobile-app",
    "/home/priya/repos/mobile-app/android",
    "/srv/checkouts/billing-engine",
    "/home/jo/dotfiles",
    "/Users/lee/workspace/docs-site",
    "/Users/lee/workspace/cli-tools",
    "/home/ci/builds/search-indexer",
    "/home/alex/scratch/prototype.v2",
    "/Users/sam/code/payments-service-worktrees/pr-1841",
    "/home/dev/src/github.com/acme/data-pipelines/airflow/dags",
    "/home/research/experiments/2025/long-running-evaluation-harness/"
    "configurations/ablation-study-with-very-long-directory-names/"
    "tokenizer-variants/byte-level-bpe-with-dropout-and-merges-cache/run-042",
)


def project_dir_name(cwd: str) -> str:
    """Claude Code's project-dir name: non-alphanumerics become '-'; long ones are hashed."""
    name = re.sub(r"[^A-Za-z0-9]", "-", cwd)
    if len(name) > 200:
        digest = 0
        for ch in cwd.encode():  # FNV-1a, stable across runs (Python's hash() is salted)
            digest = ((digest ^ ch) * 0x01000193) & 0xFFFFFFFF
        name = f"{name[:200]}-{digest:08x}"
    return name


def make_slug(rng: np.random.Generator) -> str:
    return "-".join(
        (
            SLUG_ADJECTIVES[rng.integers(len(SLUG_ADJECTIVES))],
            SLUG_VERBS[rng.integers(len(SLUG_VERBS))],
            SLUG_NOUNS[rng.integers(len(SLUG_NOUNS))],
        )
    )


def _pseudo_word(rng: np.random.Generator) -> str:
    parts = []
    for _ in range(int(rng.integers(2, 4))):
        parts.append(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))])
    return "".join(parts) + _CODAS[rng.integers(len(_CODAS))]


def _synthetic_term(rng: np.random.Generator) -> str:
    """A made-up word or identifier in one of the shapes developers type."""
    shape = rng.random()
    a, b = _pseudo_word(rng), _DEV_WORDS[rng.integers(len(_DEV_WORDS))]
    if shape < 0.45:
        return a
    if shape < 0.65:
        return f"{a}_{b}" if rng.random() < 0.5 else f"{b}_{a}"
    if shape < 0.82:
        return f"{b}{a.capitalize()}" if rng.random() < 0.5 else f"{a}{b.capitalize()}"
    if shape < 0.93:
        return f"{a}_{b}.{_FILE_EXTS[rng.integers(len(_FILE_EXTS))]}"
    return f"{a.upper()[:4]}{int(rng.integers(100, 9999))}"


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Words to inject, with a cumulative distribution to sample them by."""

    words: np.ndarray  # object[bytes]
    spaced: np.ndarray  # object[bytes]: b" " + word, for insertions
    cdf: np.ndarray  # float64, ascending, last == 1

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Indices of ``n`` words drawn from the distribution."""
        return np.searchsorted(self.cdf, rng.random(n), side="right").clip(0, len(self.words) - 1)


def build_vocabulary(
    real_counts: Counter[bytes], seed: int, *, n_synthetic: int = 60_000, real_share: float = 0.55
) -> Vocabulary:
    """Real template words (weight count**0.75) plus a Zipf(1.05) tail of synthetic terms."""
    rng = np.random.default_rng([seed, 7])
    real = [(w, c) for w, c in real_counts.most_common(40_000) if c >= 2]
    synthetic: dict[str, None] = {}
    while len(synthetic) < n_synthetic:
        synthetic.setdefault(_synthetic_term(rng))
    words = [w for w, _ in real] + [s.encode() for s in synthetic]
    real_w = np.array([c for _, c in real], dtype=np.float64) ** 0.75
    syn_w = 1.0 / np.arange(1, n_synthetic + 1, dtype=np.float64) ** 1.05
    if len(real_w):
        weights = np.concatenate((real_w / real_w.sum() * real_share, syn_w / syn_w.sum() * (1 - real_share)))
    else:
        weights = syn_w
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    words_arr = np.empty(len(words), dtype=object)
    words_arr[:] = words
    spaced = np.empty(len(words), dtype=object)
    spaced[:] = [b" " + w for w in words]
    return Vocabulary(words_arr, spaced, cdf)
