"""Pilot tests: the footer updates its keys in place (tui/widgets/footer.py) and shows
exactly what Textual's own footer would, in every pane."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.testing import settle
from tui.widgets.footer import KeysFooter

SIZE = (120, 40)


def shown(footer: Footer) -> list[tuple]:
    """Every footer key as drawn: what it says, its classes, tooltip and place."""
    return [
        (key.key, key.key_display, key.description, key.action, key._disabled, sorted(key.classes), key.tooltip, key.region)
        for key in footer.query(FooterKey)
    ]


async def test_the_footer_after_a_focus_move_is_what_textual_would_compose(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer = app.main.query_one(KeysFooter)
        seen = []
        for _ in range(4):  # search box → hits/sessions → reader → back to the search box
            first_keys = list(footer.query(FooterKey))
            await pilot.press("tab")
            await settle(pilot)
            updated = shown(footer)
            kept = [key for key in footer.query(FooterKey) if key in first_keys]
            seen.append((updated, len(kept)))
            footer.call_later(Footer.recompose, footer)  # what Textual's footer does: new keys from scratch
            await settle(pilot)
            assert not [key for key in footer.query(FooterKey) if key in first_keys]
            assert shown(footer) == updated
        # the keys did change with the pane, and the widgets were reused, not remounted
        assert len({tuple(k[:3] for k in keys) for keys, _ in seen}) > 1
        assert all(kept for _, kept in seen)
