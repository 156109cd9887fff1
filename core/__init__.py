"""relay-search's headless core: transcripts in, answers out, no Textual, no transport.

The packages are the layers of one flow, each importing only the layers below it
(pinned by ``[tool.importlinter]`` in ``pyproject.toml`` and ``tests/test_layers.py``):

    sources/   files → entries: discovery, JSONL reading, one adapter per agent
    index/     the BM25 segments and the tokenizer
    archive/   the cache: catalog, ingest, indexer, library of sessions and chains, upkeep
    query/     query syntax, execution, ranking, snippets, reading, answers
    outputs/   after finding: export, usage and prices, resume, handoff
    api.py     Archive: the one query API every front end uses
    team/      the same API over a shared PostgreSQL store
    front/     the CLI, the MCP server, the HTTP API

Beside them, the vocabulary every layer shares: ``model`` (entries, turns, sessions),
``views`` (result shapes), ``refs`` (reference syntax), ``config``, ``errors``,
``arguments``, ``budget``, ``timeutil``, ``words``. ``fixtures/`` writes transcripts in
the agents' real formats for the demo, the tests and the bench.
"""
