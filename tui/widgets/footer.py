"""Textual's footer, with its keys updated in place when focus moves.

The footer shows the focused pane's keys (:meth:`MainScreen.active_bindings`), so
moving focus, as opening a hit or a session does, changes them. Textual's
:class:`~textual.widgets.Footer` then recomposes: it removes every key and mounts
new ones, whose styles are all worked out again. That took 70–100 ms of the UI
thread at each focus move, as long as reading a 2,000-turn session, and it landed
inside every open from a list. This footer keeps its key widgets and changes
their text; it adds or removes only the difference in their number. It looks
exactly like Textual's (same widgets, same classes); anything it does not handle
(key groups) goes the old way.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, NamedTuple

from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class KeySpec(NamedTuple):
    """What one footer key shows (the arguments Textual's footer gives a FooterKey)."""

    key: str
    key_display: str
    description: str
    action: str
    disabled: bool
    tooltip: str


class KeysFooter(Footer):
    """A :class:`~textual.widgets.Footer` that updates its keys instead of remounting them."""

    def _specs(self) -> tuple[list[KeySpec], KeySpec | None] | None:
        """The keys :meth:`Footer.compose` would yield and its command palette key, or
        None when it would yield something else too (a group of keys)."""
        active = self.screen.active_bindings
        by_action: defaultdict[str, list[tuple[Any, bool, str]]] = defaultdict(list)
        for _node, binding, enabled, tooltip in active.values():
            if binding.show:
                by_action[binding.action].append((binding, enabled, tooltip))
        if any(multi[0][0].group is not None for multi in by_action.values()):
            return None
        specs = []
        for multi in by_action.values():
            binding, enabled, tooltip = multi[0]
            specs.append(KeySpec(binding.key, self.app.get_key_display(binding), binding.description, binding.action, not enabled, tooltip))
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE and self.app.COMMAND_PALETTE_BINDING in active:
            _node, binding, enabled, tooltip = active[self.app.COMMAND_PALETTE_BINDING]
            palette = KeySpec(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                              not enabled, binding.tooltip or binding.description)  # fmt: skip
        return specs, palette

    async def recompose(self) -> None:
        if not self.is_attached or self._bindings_ready is False:
            await super().recompose()
            return
        wanted = self._specs()
        keys = [k for k in self.query_children(FooterKey) if not k.has_class("-command-palette")]
        palettes = [k for k in self.query_children(FooterKey) if k.has_class("-command-palette")]
        others = [w for w in self.children if not isinstance(w, FooterKey)]
        if wanted is None or others or not keys or len(palettes) != (wanted[1] is not None):
            await super().recompose()  # groups, labels or a first compose: Textual's way
            return
        specs, palette = wanted
        self.styles.grid_size_columns = len(specs)
        with self.app.batch_update():
            for widget, spec in zip(keys, specs):
                _update(widget, spec)
            if palette is not None:
                _update(palettes[0], palette)
            if len(specs) > len(keys):
                new = [
                    FooterKey(s.key, s.key_display, s.description, s.action, disabled=s.disabled, tooltip=s.tooltip).data_bind(
                        compact=Footer.compact
                    )
                    for s in specs[len(keys) :]
                ]
                await self.mount_all(new, after=keys[-1])
            elif len(specs) < len(keys):
                await self.remove_children(keys[len(specs) :])


def _update(widget: FooterKey, spec: KeySpec) -> None:
    """Make ``widget`` show ``spec`` as a new FooterKey(spec) would."""
    if (widget.key, widget.key_display, widget.description, widget.action) == spec[:4] and widget._disabled == spec.disabled:
        if widget.tooltip == (spec.tooltip or None):
            return
    widget.key, widget.key_display, widget.description, widget.action = spec[:4]
    widget._disabled = spec.disabled
    widget.set_class(spec.disabled, "-disabled")
    widget.tooltip = spec.tooltip or None
    widget.refresh(layout=True)
