"""Connecting to the team store: one clear line for every failure, never a password.

A store URL is a libpq URL (``postgresql://user:password@host:port/db``) or a
``key=value`` conninfo string. It may carry a password, so nothing that reaches a
log, a terminal or an MCP client prints it raw: :func:`redact` masks it in the URL
and :func:`describe` strips it (and the URL's other spellings of it) from the text of
any driver error before it becomes a :class:`~core.errors.StoreError`.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote, urlsplit, urlunsplit

from core.errors import BadInput, StoreError

SCHEMES = ("postgresql://", "postgres://")
_KV_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"([A-Za-z][\w+.-]*://[^:/@\s]*:)([^@\s]*)(@)")  # any scheme://user:pw@


def check_url(url: str) -> str:
    """The URL stripped, or BadInput for anything that is not a PostgreSQL URL."""
    text = (url or "").strip()
    if text.startswith(SCHEMES) or ("=" in text and "://" not in text):
        return text
    raise BadInput(f"Not a PostgreSQL store URL: {redact(text)!r} (expected postgresql://user@host/dbname)")


def password_of(url: str) -> str | None:
    if url.startswith(SCHEMES):
        try:
            return urlsplit(url).password
        except ValueError:
            return None
    match = _KV_PASSWORD.search(url)
    return match.group(2).strip("'") if match else None


def redact(url: str) -> str:
    """The URL with its password replaced by ``***`` (safe to print)."""
    if url.startswith(SCHEMES):
        try:
            parts = urlsplit(url)
        except ValueError:
            return _URL_PASSWORD.sub(r"\1***\3", url)
        if parts.password is not None:
            host = parts.hostname or ""
            if parts.port:
                host = f"{host}:{parts.port}"
            user = parts.username or ""
            netloc = f"{user}:***@{host}"
            return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
        return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return _URL_PASSWORD.sub(r"\1***\3", _KV_PASSWORD.sub(r"\1***", url))


def scrub(text: str, url: str) -> str:
    """``text`` with every spelling of the URL's password removed."""
    out = _URL_PASSWORD.sub(r"\1***\3", _KV_PASSWORD.sub(r"\1***", text))
    secret = password_of(url)
    if secret:
        for form in {secret, unquote(secret)}:
            if form:
                out = out.replace(form, "***")
    return out


def describe(exc: BaseException, url: str) -> str:
    """One line saying what went wrong with the store, without credentials."""
    text = str(exc).strip() or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[0] if lines else text
    line = re.sub(r"^connection failed:\s*", "", line)
    line = re.sub(r"FATAL:\s+", "", line)
    line = re.sub(r'connection to server at "([^"]+)"(?: \([^)]*\))?, port (\d+) failed: ', r"\1:\2: ", line)
    if "does not exist" in line and "database" in line:
        line += " (create it once with createdb)"
    return scrub(line, url)


def connect(url: str, *, autocommit: bool = True, timeout: int = 10):
    """A psycopg connection, or StoreError with one safe line."""
    try:
        import psycopg
    except ImportError:
        raise BadInput("The team store needs psycopg: pip install 'relay-search[postgres]'") from None
    url = check_url(url)
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=timeout, application_name="relay-search")
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to the team store {redact(url)}: {describe(exc, url)}") from None


class _Scrubber(logging.Filter):
    """Masks the store's password in records the driver or the pool logs."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record with bad args: let logging report it
            return True
        clean = scrub(message, self.url)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def guard_logs(url: str) -> None:
    """Keep the password out of psycopg's and psycopg_pool's own log records."""
    if not password_of(url):
        return
    for name in ("psycopg", "psycopg.pool"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Scrubber) and f.url == url for f in logger.filters):
            logger.addFilter(_Scrubber(url))
