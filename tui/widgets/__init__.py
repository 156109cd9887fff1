"""The app's panes and the reader's building blocks."""
