"""ClickHouse edge of yangkey: DDL rendering, applying, the embedded ingest bridge, queries.

* :mod:`yangkey.clickhouse.identifiers`, :mod:`yangkey.clickhouse.tables` — quoting, and the
  names of every topic's objects;
* :mod:`yangkey.clickhouse.columns` — the typed columns of a topic's instance tables;
* :mod:`yangkey.clickhouse.templating`, :mod:`yangkey.clickhouse.ddl` — the statements,
  rendered from ``yangkey.sql_templates``;
* :mod:`yangkey.clickhouse.connection` — chdb or a server behind one small protocol;
  :mod:`yangkey.clickhouse.apply` applies the statements;
* :mod:`yangkey.clickhouse.instances` — the instance feed ingest computes;
* :mod:`yangkey.clickhouse.shared_topics` — the one follower of the shared catalog;
* :mod:`yangkey.clickhouse.ingest` — Kafka into embedded ClickHouse (chdb), a package;
  :mod:`yangkey.clickhouse.query_socket` — the queries of other processes, answered by the
  ingest holding the directory;
* :mod:`yangkey.clickhouse.queries` — current state and history;
* :mod:`yangkey.clickhouse.targets`, :mod:`yangkey.clickhouse.progress`,
  :mod:`yangkey.clickhouse.query_commands`, :mod:`yangkey.clickhouse.commands` — the
  ``click`` commands: their ClickHouse target, ingest's progress, the commands.

The submodules are imported on use: importing this package loads nothing heavy.
"""

from __future__ import annotations

from yangkey.errors import YangkeyError


class ClickHouseError(YangkeyError):
    """ClickHouse refused a statement or query, or is unreachable, or an object is missing."""

    kind = "clickhouse"


__all__ = ["ClickHouseError"]
