"""``yangkey state``, ``history`` and ``sql``: reading the tables (embedded or a server).

Errors are raised as :class:`yangkey.errors.YangkeyError` subclasses for the main CLI to print.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from yangkey.cli.declaration import Declaration
from yangkey.cli.options import (
    DATABASE,
    DATABASE_FROM_URL,
    TOPIC,
    UNTIL,
    format_option,
    resolve_format,
    subscription_filter_options,
    target_options,
)
from yangkey.cli.reporting import reports_errors
from yangkey.clickhouse.targets import connected

UINT64_MAX = 2**64 - 1
"""Bound of the ClickHouse columns, parameters and settings the numeric options end in (a
{limit:UInt64} parameter would read 2**64 as 0); the same value as yangkey.clickhouse.queries,
which is not imported here to keep `yangkey --help` light."""

LIMIT = Declaration(
    ("--limit",),
    "limit",
    "At most this many {what}.",
    metavar="N",
    attrs={"type": click.IntRange(1, UINT64_MAX)},
)


#: The compact table of stored messages (the line formats carry every column): the key's
#: parts and a one-line summary of the payload, as ``yangkey demo`` shows current state.
TABLE_COLUMNS = ("node", "sub", "XPaths (key line 3)", "event time", "seq", "value")


def compact(row: dict[str, Any], *, summary_width: int) -> dict[str, Any]:
    """A stored message as a row of the compact table."""
    from yangkey.summary import summarize  # noqa: PLC0415

    return {
        "node": row.get("node"),
        "sub": row.get("subscription_id"),
        "XPaths (key line 3)": row.get("xpaths"),
        "event time": _to_millis(row.get("event_time")),
        "seq": row.get("sequence_number"),
        "value": summarize(str(row.get("payload") or ""), summary_width),
    }


def _to_millis(value: Any) -> Any:
    """``2026-11-26T11:57:00.150000000Z`` -> ``2026-11-26T11:57:00.150Z`` (a table's width)."""
    text = str(value) if value is not None else ""
    head, dot, fraction = text.partition(".")
    if dot and fraction.endswith("Z") and fraction[:-1].isdigit():
        return f"{head}.{fraction[:3]}Z"
    return value


def emit_rows(
    rows: Sequence[dict[str, Any]], fmt: str | None, *, title: str = "", node: str | None = None
) -> str:
    """Print stored messages in ``fmt`` (resolved for the terminal); the format used. A table
    is the compact view, without the node column when ``node`` filtered the rows."""
    import shutil  # noqa: PLC0415

    from yangkey.cli.output import emit_rows as emit  # noqa: PLC0415
    from yangkey.clickhouse.queries import ROW_FIELDS  # noqa: PLC0415

    used = resolve_format(fmt)
    if used != "table":
        emit(rows, used, columns=ROW_FIELDS, title=title)
        return used
    columns = [c for c in TABLE_COLUMNS if not (node is not None and c == "node")]
    # the value gets what the terminal has left after the key columns (at least 30)
    width = max(30, shutil.get_terminal_size((120, 24)).columns - 90)
    table = [compact(row, summary_width=width) for row in rows]
    emit(table, used, columns=columns, title=f"{title} of {node}" if node else title)
    return used


STATE_EPILOG = """\b
Examples:
  yangkey state --embedded ./clickhouse --node router-nyc-01
  yangkey state --clickhouse http://default@127.0.0.1:8123 -x /ietf-interfaces: --format json
  yangkey state --embedded ./clickhouse | cut -f2,4     # piped: TSV, one message per line
"""


@click.command("state", epilog=STATE_EPILOG)
@target_options
@DATABASE.but(note=DATABASE_FROM_URL)
@subscription_filter_options("keys")
@click.option("--xpath-prefix", "-x", default=None, help="Keep keys with an XPath starting so.")
@TOPIC.but(what="'s current-state table")
@LIMIT.but(what="keys", default=None, note="In message key order [default: all].")
@format_option()
@reports_errors
def state(
    *,
    clickhouse: str | None,
    embedded: str | None,
    database: str | None,
    node: str | None,
    subscription_id: int | None,
    xpath_prefix: str | None,
    topic: str | None,
    limit: int | None,
    fmt: str | None,
) -> None:
    """Current state: the latest message per key (current generation).

    \b
    Examples:
      yangkey state --node pe1.nyc --embedded ch
      yangkey state --subscription-id 1042 --xpath-prefix /ietf-interfaces: --embedded ch \\
          --format json
      yangkey state --node pe1.nyc --clickhouse http://yangkey@localhost:8123
    """
    from yangkey.clickhouse.queries import current_state  # noqa: PLC0415

    with connected(clickhouse, embedded, database) as (conn, db):
        rows = current_state(
            conn,
            db,
            node=node,
            subscription_id=subscription_id,
            xpath_prefix=xpath_prefix,
            topic=topic,
            limit=limit,
        )
    emit_rows(rows, fmt, title="current state", node=node)


HISTORY_EPILOG = """\b
Examples:
  yangkey history --embedded ./clickhouse --node router-nyc-01 --since 2026-11-20T10:00:00Z
  yangkey history --embedded ./clickhouse -k $'router-nyc-01\\n1042\\n/ietf-system:system/clock'
  # the next page: the --after token of the page's last line (stderr under a table)
  yangkey history --embedded ./clickhouse --node router-nyc-01 --after TOKEN
"""


@click.command("history", epilog=HISTORY_EPILOG)
@target_options
@DATABASE.but(note=DATABASE_FROM_URL)
@click.option(
    "--key", "-k", default=None, help="Full message key (use $'node\\nid\\nxpath' in a shell)."
)
@subscription_filter_options("messages")
@TOPIC.but(what="'s messages (its history table)")
@click.option(
    "--since",
    default=None,
    metavar="WHEN",
    help="Where reading starts (inclusive): an RFC 3339 time.",
)
@UNTIL.but(note="an RFC 3339 time.")
@LIMIT.but(what="messages per page", default=100, show_default=True)
@click.option("--after", default=None, help="Cursor token printed by the previous page.")
@click.option(
    "--order",
    type=click.Choice(["time", "offset"]),
    default="time",
    show_default=True,
    help="time: by event time, sequence number and key; offset: by Kafka position.",
)
@click.option(
    "--current-generation",
    is_flag=True,
    help="Only messages of the newest generation of their subscription.",
)
@format_option()
@reports_errors
def history(
    *,
    clickhouse: str | None,
    embedded: str | None,
    database: str | None,
    key: str | None,
    node: str | None,
    subscription_id: int | None,
    topic: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    after: str | None,
    order: str,
    current_generation: bool,
    fmt: str | None,
) -> None:
    """History of messages, one page at a time; a page that has a next one ends with its
    cursor (``# next page: --after TOKEN``; on stderr under a table).

    \b
    Examples:
      yangkey history --node pe1.nyc --since 2026-11-20T10:00:00Z --limit 50 --embedded ch
      yangkey history --key $'pe1.nyc\\n2001\\n/ietf-system:system/clock' --embedded ch
      yangkey history --node pe1.nyc --embedded ch --after TOKEN   # the next page
    """
    from yangkey.cli.output import emit_cursor  # noqa: PLC0415
    from yangkey.clickhouse.queries import (  # noqa: PLC0415
        check_time,
        decode_cursor,
        encode_cursor,
    )
    from yangkey.clickhouse.queries import history as read_history  # noqa: PLC0415

    if key is None and node is None and topic is None:
        raise click.UsageError("give --key, --node or --topic")
    cursor = decode_cursor(after) if after else None
    for value, what in ((since, "--since"), (until, "--until")):
        if value is not None:
            check_time(value, what)  # before anything is opened
    with connected(clickhouse, embedded, database) as (conn, db):
        page = read_history(
            conn,
            db,
            key=key,
            node=node,
            since=since,
            until=until,
            limit=limit,
            after=cursor,
            subscription_id=subscription_id,
            topic=topic,
            order=order,
            current_generation=current_generation,
        )
    used = emit_rows(page.rows, fmt, title="history", node=node)
    emit_cursor(None if page.next_cursor is None else encode_cursor(page.next_cursor), used)


SQL_EPILOG = """\b
Examples:
  yangkey sql --embedded ./clickhouse \\
      "SELECT kafka_topic, count() AS n FROM yangkey.history GROUP BY kafka_topic"
  echo "SELECT version()" | yangkey sql --clickhouse http://default@127.0.0.1:8123
  yangkey sql --embedded ./clickhouse --format csv < query.sql > result.csv
"""


@click.command("sql", epilog=SQL_EPILOG)
@target_options
@format_option()
@click.argument("query", required=False, default="-")
@reports_errors
def sql_command(
    *, clickhouse: str | None, embedded: str | None, fmt: str | None, query: str
) -> None:
    """Run one ad-hoc query (QUERY, or - / nothing: read it from stdin) and print its rows."""
    from yangkey.cli.output import emit_rows as emit  # noqa: PLC0415

    text = sys.stdin.read() if query == "-" else query
    text = text.strip().rstrip(";").strip()
    if not text:
        raise click.UsageError("give a query (an argument, or on stdin)")
    with connected(clickhouse, embedded) as (conn, _):
        rows = conn.query(text)
    emit(rows, resolve_format(fmt), title="")
