"""Answering questions over an archive: query syntax and execution, ranking, snippets,
session filters, resolving references, reading conversations back, answer shapes."""
