"""Textual's strips make their memo caches when first used (tui/strip_caches.py)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.cache import FIFOCache
from textual.strip import Strip

from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.strip_caches import _textual_init, made_by, make_strip_caches_when_used
from tui.testing import settle, show_hits

CACHES = ("_divide_cache", "_crop_cache", "_style_cache", "_filter_cache", "_line_length_cache",
          "_crop_extend_cache", "_offsets_cache")


def _unset(strip: Strip, name: str) -> bool:
    try:
        object.__getattribute__(strip, name)  # (not through __getattr__, which would make it)
    except AttributeError:
        return True
    return False


def _as_textual_builds(segments: list[Segment], cell_length: int | None = None) -> Strip:
    strip = Strip.__new__(Strip)
    _textual_init(strip, segments, cell_length)
    return strip


@contextmanager
def _strip_put_back() -> Iterator[None]:
    init, own_getattr = Strip.__init__, Strip.__dict__.get("__getattr__")
    try:
        yield
    finally:
        Strip.__init__ = init  # type: ignore[method-assign]
        if own_getattr is None:
            Strip.__dict__.get("__getattr__") and delattr(Strip, "__getattr__")
        else:
            Strip.__getattr__ = own_getattr  # type: ignore[attr-defined]


@pytest.fixture
def lean_strips() -> Iterator[None]:
    """The patch, and the Strip of before put back after."""
    with _strip_put_back():
        assert make_strip_caches_when_used()
        yield


@pytest.fixture
def textual_strips() -> Iterator[None]:
    """Textual's own Strip (an app built earlier in this process patched it), put back after:
    what an app test sees is what that app applied."""
    with _strip_put_back():
        Strip.__init__ = _textual_init  # type: ignore[method-assign]
        Strip.__dict__.get("__getattr__") and delattr(Strip, "__getattr__")
        yield


def test_a_strip_makes_a_cache_when_first_asked_for_it(lean_strips) -> None:
    strip = Strip([Segment("hello "), Segment("world", Style(bold=True))], 11)
    assert all(_unset(strip, name) for name in CACHES)
    assert strip.crop(0, 5).text == "hello"
    assert [name for name in CACHES if not _unset(strip, name)] == ["_crop_cache"]
    cache = object.__getattribute__(strip, "_crop_cache")
    assert isinstance(cache, FIFOCache) and cache._maxsize == 16 and len(cache) == 1
    assert strip.crop(0, 5) is strip.crop(0, 5)  # (memoized as Textual memoizes it)
    with pytest.raises(AttributeError):
        strip.no_such_thing  # noqa: B018  (any other missing attribute is still missing)


CONSOLE = Console(color_system="truecolor")
texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
styles = st.sampled_from([Style(), Style(bold=True), Style(color="red", italic=True)])


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(texts, styles), min_size=1, max_size=5), st.lists(st.integers(0, 40), max_size=4),
       st.integers(0, 30), st.integers(0, 40))
def test_every_cut_of_a_lean_strip_is_textuals(lean_strips, parts, cuts, start, end) -> None:
    segments = [Segment(text, style) for text, style in parts]
    lean, textual = Strip(segments), _as_textual_builds(segments)
    for _ in range(2):  # (made, then from the cache)
        assert lean.crop(start, end) == textual.crop(start, end)
        assert lean.divide(sorted(cuts)) == textual.divide(sorted(cuts))
        assert lean.crop_extend(start, end, None) == textual.crop_extend(start, end, None)
        assert lean.apply_style(Style(underline=True)) == textual.apply_style(Style(underline=True))
        assert lean.adjust_cell_length(end) == textual.adjust_cell_length(end)
        assert lean.apply_offsets(start, end).render(CONSOLE) == textual.apply_offsets(start, end).render(CONSOLE)
        assert lean.text == textual.text and lean.cell_length == textual.cell_length


def test_ten_thousand_strips_hold_under_a_third_of_textuals_bytes(lean_strips) -> None:
    segments = [Segment("def beacon_retry_budget(x):", Style(bold=True)), Segment("  return x")]

    def held(build) -> int:
        tracemalloc.start()
        try:
            strips = [build(segments, 37) for _ in range(10_000)]
            size = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        assert len(strips) == 10_000
        return size

    lean, textual = held(Strip), held(_as_textual_builds)
    assert lean < textual / 3, (lean, textual)


def test_a_textual_whose_strips_differ_is_left_alone() -> None:
    assert made_by(_textual_init) is not None  # (today's Textual is as the module expects)

    def with_another_cache(self, segments, cell_length=None):
        _textual_init(self, segments, cell_length)
        self._cell_count = 0  # (an attribute that does not start empty: not what the patch sets)

    assert made_by(with_another_cache) is None


async def test_the_apps_strips_carry_only_the_caches_they_used(demo_home, textual_strips) -> None:
    """Built by the app: most of its live strips (lines and their cuts) never used most caches."""
    import gc

    home, _corpus = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await show_hits(pilot, "checkout sidebar")
        strips = [o for o in gc.get_objects() if isinstance(o, Strip)]
        lean = sum(sum(_unset(s, name) for name in CACHES) >= 5 for s in strips)
    assert len(strips) > 100 and lean > len(strips) / 2, (lean, len(strips))
