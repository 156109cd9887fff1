"""Screens: the main three-pane view, help, empty state and small pickers."""
