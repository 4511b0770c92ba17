"""Applying rendered DDL (:mod:`yangkey.clickhouse.ddl`) through a connection
(:mod:`yangkey.clickhouse.connection`): idempotent, and saying what existed already."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.connection import Connection
from yangkey.clickhouse.ddl import Statement


@dataclass
class ApplyResult:
    created: list[Statement] = field(default_factory=list)
    existing: list[Statement] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.created) + len(self.existing)


def _existing_collections(conn: Connection) -> set[str] | None:
    """Named collections, or None when this user may not list them."""
    try:
        rows = conn.query("SELECT name FROM system.named_collections")
    except ClickHouseError:
        return None
    return {str(row["name"]) for row in rows}


def _existing_objects(conn: Connection, database: str) -> tuple[bool, set[str]]:
    rows = conn.query(
        "SELECT count() AS n FROM system.databases WHERE name = {db:String}", {"db": database}
    )
    if not rows or int(rows[0]["n"]) == 0:
        return False, set()
    tables = conn.query(
        "SELECT name FROM system.tables WHERE database = {db:String}", {"db": database}
    )
    return True, {str(row["name"]) for row in tables}


def apply(
    conn: Connection,
    statements: Sequence[Statement],
    database: str,
    *,
    on_statement: Callable[[Statement, bool], None] | None = None,
) -> ApplyResult:
    """Run ``statements`` in order (all ``IF NOT EXISTS``: re-running is harmless).

    An object that already exists is left as it is, even if its definition changed: the result
    says which were created and which existed, so that the caller can report drift.
    """
    has_database, tables = _existing_objects(conn, database)
    collections: set[str] | None = None
    if any(statement.kind == "named-collection" for statement in statements):
        collections = _existing_collections(conn)
    prefix = f"{database}."
    result = ApplyResult()
    for statement in statements:
        if statement.kind == "database":
            exists = has_database
        elif statement.kind in ("table", "view") and statement.name.startswith(prefix):
            exists = statement.name[len(prefix) :] in tables
        elif statement.kind == "named-collection" and collections is not None:
            exists = statement.name in collections
        else:
            exists = False
        try:
            conn.command(statement.sql)
        except ClickHouseError as exc:
            raise ClickHouseError(
                f"creating {statement.kind} {statement.name} failed: {exc.reason}",
                source=conn.description,
            ) from None
        (result.existing if exists else result.created).append(statement)
        if on_statement is not None:
            on_statement(statement, exists)
    return result


def validate(conn: Connection, statements: Iterable[Statement]) -> None:
    """Parse every statement with ClickHouse's own parser (``formatQuery``), run nothing."""
    for statement in statements:
        try:
            conn.query("SELECT formatQuery({sql:String}) AS formatted", {"sql": statement.sql})
        except ClickHouseError as exc:
            raise ClickHouseError(
                f"{statement.kind} {statement.name} does not parse: {exc.reason}",
                source=conn.description,
            ) from None
