"""ClickHouse edge of yangkey: DDL rendering, applying, the embedded ingest bridge, queries.

* :mod:`yangkey.clickhouse.ddl` renders the statements from ``yangkey.sql_templates``;
* :mod:`yangkey.clickhouse.apply` connects (chdb or a server) and applies them;
* :mod:`yangkey.clickhouse.ingest` consumes Kafka into embedded ClickHouse (chdb);
* :mod:`yangkey.clickhouse.queries` reads current state and history;
* :mod:`yangkey.clickhouse.commands` holds the ``click`` commands.

The submodules are imported on use: importing this package loads nothing heavy.
"""

from __future__ import annotations

from yangkey.errors import YangkeyError


class ClickHouseError(YangkeyError):
    """ClickHouse refused a statement or query, or is unreachable, or an object is missing."""

    kind = "clickhouse"


__all__ = ["ClickHouseError"]
