"""The cache on disk and what keeps it current.

The catalog (SQLite: files, sessions, usage records), ingest and the indexer that turn
source entries into turns and segments, the writer lock, the library of sessions and
slug chains built from the catalog, tags, and the upkeep that syncs and watches.
"""
