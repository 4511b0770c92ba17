"""The ClickHouse a command talks to: ``--clickhouse URL`` or ``--embedded PATH`` (from the
strongest source, :func:`yangkey.cli.options.resolve_target`), opened for the command's block.

A server is given as ``http[s]://user@host:port[/database]``; the password is read from
``CLICKHOUSE_PASSWORD`` only (never from the command line, never printed).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

from yangkey.cli.options import resolve_target
from yangkey.clickhouse.connection import Connection, ServerConnection, connect
from yangkey.errors import ConfigError

DEFAULT_DATABASE = "yangkey"


@contextlib.contextmanager
def connected(
    clickhouse: str | None,
    embedded: str | None,
    database: str | None = None,
    *,
    create: bool = False,
) -> Iterator[tuple[Connection, str]]:
    """The connection, closed after the block, and the database to use: ``database``, else
    the one the server URL names, else :data:`DEFAULT_DATABASE`. Without ``create``, a missing
    embedded directory is an error (a query would leave an empty store behind)."""
    clickhouse, embedded = resolve_target(clickhouse, embedded)
    if embedded is not None and not create and not Path(embedded).is_dir():
        raise ConfigError(
            "no embedded ClickHouse here (`yangkey ddl apply` or `yangkey ingest` creates it)",
            source=embedded,
        )
    if clickhouse is not None:
        # clickhouse-connect logs a failed request before raising it: the error line says it.
        driver = logging.getLogger("clickhouse_connect")
        driver.addHandler(logging.NullHandler())
        driver.propagate = False
    conn = connect(clickhouse=clickhouse, embedded=embedded)
    url_database = conn.database if isinstance(conn, ServerConnection) else None
    try:
        yield conn, database or url_database or DEFAULT_DATABASE
    finally:
        conn.close()
