"""One SQL template run alone on chdb: rows in, the rows its SELECT makes out.

After dbt-clickhouse's macro harness (``tests/unit/macro_harness.py`` there): a materialized
view template is rendered as ``yangkey ddl`` renders it (:func:`render_ddl`, so with the
column sets, header names and kinds the pipeline uses), and its ``SELECT`` runs as a plain
query over a ``Memory`` copy of the view's source table holding the rows a test crafted. No
view fires and no Null table swallows the result: a test sees every column the view
produces, including the ``error``/``error_kind`` that the pipeline only shows through the
tables downstream.
"""

from __future__ import annotations

from typing import Any

from yangkey.clickhouse.apply import apply
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ddl import DdlOptions, render_ddl
from yangkey.clickhouse.identifiers import qualified, quote_identifier
from yangkey.clickhouse.ingest.arrow import insert_rows
from yangkey.clickhouse.ingest.rows import QueueRow
from yangkey.clickhouse.tables import topic_tables
from yangkey.topics import TopicSpec


class TemplateHarness:
    """The DDL of one topic in database ``database`` (applied, so that its tables exist to
    copy), and a database ``<database>_in`` for the harness's Memory source tables."""

    def __init__(self, conn: ChdbConnection, database: str, spec: TopicSpec) -> None:
        self.conn = conn
        self.database = database
        self.inputs = f"{database}_in"
        self.spec = spec
        self.tables = topic_tables(spec.name, database)
        self.statements = render_ddl([spec], DdlOptions(database=database, mode="embedded"))
        apply(conn, self.statements, database)
        conn.command(f"CREATE DATABASE IF NOT EXISTS {quote_identifier(self.inputs)}")

    def query(self, view: str, source: str, copy: str) -> str:
        """The SELECT of the view ``view`` (e.g. ``tables.mv_parse``) as rendered, reading
        ``copy`` instead of its source table ``source``."""
        wanted = f"{self.database}.{view}"
        (statement,) = (s for s in self.statements if s.name == wanted)
        # "CREATE MATERIALIZED VIEW … TO … AS <query>": the query is what the view runs on
        # each block inserted into its source.
        query = statement.sql.split("\nAS ", 1)[1]
        original = f"FROM {qualified(self.database, source)}"
        assert query.count(original) == 1, query
        return query.replace(original, f"FROM {copy}")

    def copy(self, table: str) -> str:
        """A fresh Memory table in the inputs database with ``table``'s columns."""
        copy = qualified(self.inputs, table)
        self.conn.command(f"DROP TABLE IF EXISTS {copy}")
        self.conn.command(
            f"CREATE TABLE {copy} AS {qualified(self.database, table)} ENGINE = Memory"
        )
        return copy

    def _queue(self, rows: list[QueueRow]) -> str:
        # insert_rows names the queue table from the database: the same name in both here.
        assert topic_tables(self.spec.name, self.inputs).queue == self.tables.queue
        copy = self.copy(self.tables.queue)
        insert_rows(self.conn, self.inputs, self.spec.name, rows)
        return copy

    def parse(self, rows: list[QueueRow]) -> list[dict[str, Any]]:
        """What ``mv_parse`` makes of queue rows inserted as ``yangkey ingest`` inserts them."""
        queue = self._queue(rows)
        parsed = self.conn.query(self.query(self.tables.mv_parse, self.tables.queue, queue))
        return sorted(parsed, key=lambda r: int(r["kafka_offset"]))

    def errors(self, rows: list[QueueRow]) -> list[dict[str, Any]]:
        """What ``mv_errors`` makes of ``mv_parse``'s rows for queue rows (stored in a copy of
        the parsed table first: they must fit it)."""
        queue = self._queue(rows)
        parsed = self.copy(self.tables.parsed)
        select = self.query(self.tables.mv_parse, self.tables.queue, queue)
        self.conn.command(f"INSERT INTO {parsed} {select}")
        found = self.conn.query(self.query(self.tables.mv_errors, self.tables.parsed, parsed))
        return sorted(found, key=lambda r: int(r["kafka_offset"]))
