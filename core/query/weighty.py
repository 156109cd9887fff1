"""The words of a prose query worth highlighting in the reader (issue #36).

A prose query ("distributed tracing so hook calls show up as spans") is ranked by all
its words, but highlighting every "show", "up" and "calls" of a long session buries
the passage the hit was about (972 matches in one session). The reader highlights,
counts and lands on the query's *weighty* words only: not a common English word
(the index already drops stopwords: these are the next few hundred), and not a word
most passages of the archive hold (document frequency over half the passages). At
least the rarest word is always kept. A code-like query (an identifier, a path, a
quoted phrase, two words or fewer: :func:`core.query.hybrid.is_code_like`) keeps
every word: there each word was typed on purpose.
"""

from __future__ import annotations

from functools import lru_cache

from core.index.bm25 import TOOL_FIELD, Snapshot
from core.index.tokenize import default_tokenizer, term_id

from .hybrid import is_code_like
from .syntax import parse

COMMON_SHARE = 0.5  # a word more than this share of passages hold is not weighty
# Frequent English words beyond the index's stopwords (general prose, not code):
# a query's glue, which says nothing about which passage was meant.
COMMON_WORDS = """
about above after again all also always am any anything around ask away back bad because been before being below
best better between big both call calls came can cannot case change come could day did different do does done down
during each either else end enough even ever every fine first found from get give given go goes good got great had
has have having he her here him his how however if instead itself just keep kind know last later least left less let
like little long look lot made make many may maybe me mean might more most much must my need never new next nice now
number off ok okay old once one ones only other our out over own part place point put quite rather really right run
said same saw say see seem set several shall she should show side since small so some something still sure take tell
than thank thanks thing think those though thought through time too took try tried turn two under until up upon us
use used very want way we well went were what whatever when where whether which while who whole why will within
without work would yes yet you your
""".split()


@lru_cache(maxsize=1)
def common_terms() -> frozenset[str]:
    """The index terms (stems) of :data:`COMMON_WORDS`."""
    tok = default_tokenizer()
    return frozenset(t for word in COMMON_WORDS for t in tok.terms(word)[:1])


def weighty_terms(snapshot: Snapshot | None, query: str) -> tuple[str, ...] | None:
    """The index terms of ``query`` worth highlighting, or None when every term is (a code-like query)."""
    if is_code_like(query):
        return None
    parsed = parse(query, typing=True)
    terms = list(dict.fromkeys(c.term for c in parsed.clauses))
    if not terms:
        return None
    n = snapshot.n_docs if snapshot is not None else 0

    def df(term: str) -> int:
        if snapshot is None:
            return 0
        tid = int(term_id(term))
        return max(snapshot._postings(tid)[1], snapshot._postings(tid + int(TOOL_FIELD))[1])

    freq = {t: df(t) for t in terms}
    common = common_terms()
    kept = [t for t in terms if t not in common and not (n and freq[t] > COMMON_SHARE * n)]
    if not kept:  # always the rarest (then the first typed)
        kept = [min(terms, key=lambda t: (freq[t], terms.index(t)))]
    return tuple(kept)



def archive_weighty_terms(archive: object, query: str) -> tuple[str, ...] | None:
    """:func:`weighty_terms` over an archive's index (an embedded :class:`core.api.Archive`;
    a store without one, as the team store's view: the common words alone decide)."""
    return weighty_terms(getattr(archive, "_snapshot", None), query)
