"""Rows on stdout, in the format a terminal or a pipe wants.

* ``table``: a rich table for people (the default on a terminal);
* ``tsv``: a header line, then one line per row, fields separated by TAB, with backslash, TAB,
  LF and CR inside a field escaped as ``\\\\``, ``\\t``, ``\\n``, ``\\r`` (clickhouse-client's
  TabSeparated escaping; the default when stdout is not a terminal);
* ``csv``: RFC 4180 quoting, and LF / CR / backslash inside a field escaped as in TSV, so one
  record is one physical line for ``wc``, ``grep`` and ``head``;
* ``json``: JSON Lines, one object per row.

Arrays are JSON-encoded in ``tsv`` and ``csv``. A paged result ends with a cursor line when
there is a next page (:func:`emit_cursor`).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import sys
from collections.abc import Sequence
from typing import Any

import click

_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_LINE_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r"})


def _plain(value: Any) -> Any:
    """What JSON cannot hold as is: a server's native values (clickhouse-connect returns
    datetime, Decimal, UUID, IP addresses, bytes) as ClickHouse writes them in text."""
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_plain)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | dict | tuple):
        return _json(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return str(_plain(value))


def tsv_field(value: Any) -> str:
    """One TSV field: no raw TAB, LF or CR left."""
    return _text(value).translate(_ESCAPES)


def tsv_lines(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> list[str]:
    lines = ["\t".join(tsv_field(c) for c in columns)]
    lines += ["\t".join(tsv_field(row.get(c)) for c in columns) for row in rows]
    return lines


def csv_text(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_text(row.get(c)).translate(_LINE_ESCAPES) for c in columns])
    return buffer.getvalue()


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    return _text(value)


def print_table(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[str],
    *,
    title: str = "",
    truncate: dict[str, int] | None = None,
) -> None:
    from rich.console import Console  # noqa: PLC0415 - only for tables
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    table = Table(title=title or None, title_justify="left", show_lines=True)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        cells = []
        for column in columns:
            text = _cell(row.get(column))
            limit = (truncate or {}).get(column)
            if limit is not None and len(text) > limit:
                text = text[: limit - 3] + "..."
            # Text, not markup: XPaths and payloads hold [...] that rich would parse.
            cells.append(Text(text))
        table.add_row(*cells)
    # Piped on request (--format table), a table is not squeezed to 80 columns.
    console = Console() if sys.stdout.isatty() else Console(width=200)
    console.print(table)


def emit_rows(
    rows: Sequence[dict[str, Any]],
    fmt: str,
    *,
    columns: Sequence[str] | None = None,
    table_columns: Sequence[str] | None = None,
    title: str = "",
    truncate: dict[str, int] | None = None,
) -> None:
    """Print ``rows`` in ``fmt``: every column in ``columns`` (default: the first row's keys);
    the table shows ``table_columns`` only, when given."""
    names = list(columns if columns is not None else (rows[0] if rows else ()))
    if fmt == "json":
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False, default=_plain))
    elif fmt == "tsv":
        if names:
            click.echo("\n".join(tsv_lines(rows, names)))
    elif fmt == "csv":
        if names:
            click.echo(csv_text(rows, names), nl=False)
    else:
        print_table(rows, table_columns or names, title=title, truncate=truncate)
        click.echo(f"{len(rows)} row(s)", err=True)


def emit_cursor(token: str | None, fmt: str) -> None:
    """The cursor of the next page: the last line of a piped page (``# next page: --after
    TOKEN``; a JSON object in ``json``), stderr under a table; nothing on the last page."""
    if token is None:
        return
    if fmt == "json":
        click.echo(json.dumps({"next_page": {"after": token}}))
    elif fmt == "table":
        click.echo(f"next page: --after {token}", err=True)
    else:
        click.echo(f"# next page: --after {token}")
