"""The team store's schema, created and migrated by relay-search itself.

``relay_meta`` holds ``schema_version``; :data:`MIGRATIONS` step a database from
any older version to :data:`SCHEMA_VERSION` in one transaction under an advisory
lock (two members starting at once migrate once). A database from a newer
relay-search is refused with a line saying to upgrade. ``tokenizer`` records the
tokenizer version the postings were made with: terms hashed by another version
would never match, so a mismatch is refused too.

Layout (per user, everything keyed by the user's id):

* ``users``: who synced; ``generation`` bumps on every commit touching the user,
  so readers know when to reload that user's sessions.
* ``files``: one row per transcript file with the sync position (byte offset,
  adapter and turn-builder state, size/mtime/inode), updated in the same
  transaction as the rows it produced — a sync that dies mid-way resumes exactly.
* ``sessions``: the local catalog's session row (``extra``) plus remote file ids.
* ``messages``: the full stitched stream, file-local (``idx`` = position in the
  file); a reader adds the file's sequence/turn base like the embedded reader.
* ``docs`` / ``postings`` / ``corpus``: the BM25 index — a turn passage per doc,
  postings ``(term hash, field, doc, tf, doc length)`` (the primary key covers them,
  so a query's postings come from an index-only scan) and running totals for N and
  the average field lengths. Messages and postings carry no foreign keys: they are
  written in bulk with COPY and deleted explicitly with their file or doc.
* ``usage``: token usage per API response of each file (v3).
* ``docs.seen``: a passage's tool inputs and compaction summaries, for phrases (v4).
"""

from __future__ import annotations

from core.errors import StoreError
from core.index.tokenize import TOKENIZER_VERSION

SCHEMA_VERSION = 4
LOCK_KEY = 0x7265_6C61  # "rela": advisory lock namespace of relay-search

_V1 = """
CREATE TABLE IF NOT EXISTS relay_meta(key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE users(
    user_id serial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    generation bigint NOT NULL DEFAULT 0
);
CREATE TABLE files(
    file_id bigserial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users ON DELETE CASCADE,
    path text NOT NULL,
    session_id text,
    agent text NOT NULL,
    kind text NOT NULL,
    project_key text NOT NULL DEFAULT '',
    order_key text NOT NULL DEFAULT '',
    replay_key text,
    n_messages integer NOT NULL DEFAULT 0,
    n_turns integer NOT NULL DEFAULT 0,
    size bigint NOT NULL DEFAULT 0,
    mtime_ns bigint NOT NULL DEFAULT 0,
    inode bigint NOT NULL DEFAULT 0,
    read_offset bigint NOT NULL DEFAULT 0,
    state bytea,
    skipped integer NOT NULL DEFAULT 0,
    error text,
    UNIQUE(user_id, path)
);
CREATE INDEX files_session ON files(user_id, session_id);
CREATE TABLE sessions(
    user_id integer NOT NULL REFERENCES users ON DELETE CASCADE,
    session_id text NOT NULL,
    agent text NOT NULL,
    project_key text NOT NULL,
    cwd text,
    slug text,
    title text,
    summary text,
    first_ts text,
    last_ts text,
    turn_count integer NOT NULL DEFAULT 0,
    message_count integer NOT NULL DEFAULT 0,
    file_ids bigint[] NOT NULL DEFAULT '{}',
    mtime_ns bigint NOT NULL DEFAULT 0,
    extra jsonb NOT NULL,
    digest text NOT NULL,
    PRIMARY KEY(user_id, session_id)
);
CREATE INDEX sessions_slug ON sessions(slug);
CREATE TABLE messages(
    file_id bigint NOT NULL,
    idx integer NOT NULL,
    role text NOT NULL,
    type text NOT NULL,
    text text NOT NULL,
    ts text,
    uuid text,
    parent_uuid text,
    side boolean NOT NULL DEFAULT false,
    entry_index integer NOT NULL DEFAULT 0,
    turn integer,
    tool_name text,
    tool_input jsonb,
    branch text,
    PRIMARY KEY(file_id, idx)
);
CREATE SEQUENCE doc_ids;
CREATE TABLE docs(
    doc_id bigint PRIMARY KEY,
    file_id bigint NOT NULL REFERENCES files ON DELETE CASCADE,
    turn integer NOT NULL,
    part integer NOT NULL DEFAULT 0,
    first_seq integer NOT NULL,
    last_seq integer NOT NULL,
    ts text,
    ts_epoch double precision NOT NULL DEFAULT 0,
    side boolean NOT NULL DEFAULT false,
    body text,
    len_main real NOT NULL,
    len_tool real NOT NULL,
    UNIQUE(file_id, turn, part)
);
CREATE TABLE postings(
    term bigint NOT NULL,
    field smallint NOT NULL,
    doc_id bigint NOT NULL,
    tf real NOT NULL,
    dl real NOT NULL,
    PRIMARY KEY(term, field, doc_id) INCLUDE (tf, dl)  -- a query reads the index only
);
CREATE INDEX postings_doc ON postings(doc_id);
CREATE TABLE corpus(
    id integer PRIMARY KEY CHECK (id = 1),
    n_docs bigint NOT NULL DEFAULT 0,
    sum_main double precision NOT NULL DEFAULT 0,
    sum_tool double precision NOT NULL DEFAULT 0
);
INSERT INTO corpus(id) VALUES (1);
"""

# v2: when and from where each member last synced (shown by `sync`, kept for admins).
_V2 = """
ALTER TABLE users ADD COLUMN last_sync timestamptz;
ALTER TABLE users ADD COLUMN host text;
"""

# v3: token usage per API response (core.outputs.usage), merged per (file, response key).
# Files synced before had none recorded: their read offset is reset so the next
# sync of each member reads them whole again and fills it.
_V3 = """
CREATE TABLE usage(
    file_id bigint NOT NULL REFERENCES files ON DELETE CASCADE,
    key text NOT NULL,
    ts text,
    model text,
    input bigint NOT NULL DEFAULT 0,
    output bigint NOT NULL DEFAULT 0,
    cache_creation bigint NOT NULL DEFAULT 0,
    cache_read bigint NOT NULL DEFAULT 0,
    PRIMARY KEY(file_id, key)
);
UPDATE files SET read_offset = 0, size = -1;
"""

# v4: each passage's tool-call inputs and compaction summaries, checked for phrases (issue 34),
# and what Claude Code showed besides the conversation (a parser change): every file is read again.
_V4 = """
ALTER TABLE docs ADD COLUMN IF NOT EXISTS seen text;
UPDATE files SET read_offset = 0, size = -1;
"""

MIGRATIONS: dict[int, str] = {1: _V1, 2: _V2, 3: _V3, 4: _V4}


def current_version(conn) -> int:
    """0 for an empty database (no relay_meta table)."""
    # a catalog query (not to_regclass, which may answer from a stale relation cache
    # right after another process's migration committed)
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'relay_meta')"
    ).fetchone()
    if not row[0]:
        return 0
    got = conn.execute("SELECT value FROM relay_meta WHERE key='schema_version'").fetchone()
    return int(got[0]) if got else 0


def ensure_schema(conn, *, upto: int = SCHEMA_VERSION) -> int:
    """Create or migrate the schema to ``upto``; refuse a newer one. Returns the version."""
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"The team store has schema version {version}, newer than this relay-search understands "
            f"({SCHEMA_VERSION}): upgrade relay-search to use it"
        )
    if version < upto:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_KEY,))
            version = current_version(conn)  # another process may have migrated meanwhile
            if version > SCHEMA_VERSION:
                raise StoreError(f"The team store has schema version {version}; upgrade relay-search to use it")
            for step in range(version + 1, upto + 1):
                conn.execute(MIGRATIONS[step])
                conn.execute(
                    "INSERT INTO relay_meta VALUES('schema_version', %s) ON CONFLICT (key) DO UPDATE SET value=EXCLUDED.value",
                    (str(step),),
                )
            conn.execute(
                "INSERT INTO relay_meta VALUES('tokenizer', %s) ON CONFLICT (key) DO NOTHING", (str(TOKENIZER_VERSION),)
            )
            version = upto
    check_tokenizer(conn)
    return version


def ensure_schema_or_explain(conn, url: str) -> int:
    """:func:`ensure_schema`, with a driver error (no CREATE right, …) as one safe line."""
    import psycopg

    from .db import describe, redact

    try:
        return ensure_schema(conn)
    except psycopg.Error as exc:
        raise StoreError(f"cannot set up the team store schema at {redact(url)}: {describe(exc, url)}") from None


def check_tokenizer(conn) -> None:
    got = conn.execute("SELECT value FROM relay_meta WHERE key='tokenizer'").fetchone()
    if got and got[0] != str(TOKENIZER_VERSION):
        raise StoreError(
            f"The team store's search index was built with tokenizer version {got[0]}; this relay-search "
            f"uses {TOKENIZER_VERSION}, so its terms would not match: use the same relay-search version as the team"
        )
