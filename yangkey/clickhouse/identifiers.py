"""Quoting of ClickHouse identifiers and string literals, and topic -> table names.

``clickhouse_connect.driver.binding.quote_identifier`` is not used on purpose: it returns an
argument that already *looks* quoted (starts and ends with a backtick or a double quote)
unchanged, so a database name given as ``\\`x\\``` on the command line would reach the SQL
verbatim. Here every identifier is always escaped and wrapped, whatever it looks like.
"""

from __future__ import annotations

import hashlib
import re

from yangkey.errors import ConfigError

_UNSAFE_FILENAME_CHAR = re.compile(r"[^a-zA-Z0-9_]")

#: ClickHouse caps a table name by the file names it may need (``computeMaxTableNameLength``):
#: ``<name>.sql.detached`` in ``metadata/`` and ``<database>.<name>.<uuid>.sql.detached`` in
#: ``metadata_dropped/``, all escaped (``escapeForFileName``) and within NAME_MAX (255 bytes).
#: The embedded chdb here omits ``.detached`` from the second (database ``yangkey``: 206, found
#: by experiment); newer servers count it (197). The stricter rule holds on both.
_NAME_MAX = 255
_CREATE_RESERVE = len(".sql.detached")
_DROPPED_RESERVE = len("..") + 36 + len(".sql.detached")

#: The longest suffix :func:`table_base` leaves room for (cluster mode's local history table).
LONGEST_SUFFIX = "__history_local"
#: Room for the shortest base a long topic is cut to: one character, ``_``, 8 hex digits.
_SHORTEST_BASE = 10


def quote_identifier(name: str) -> str:
    """Backtick-quote ``name``; backslashes and backticks inside are escaped."""
    if not name:
        raise ValueError("an identifier cannot be empty")
    if "\x00" in name:
        raise ValueError("an identifier cannot contain NUL")
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def qualified(database: str, table: str) -> str:
    """``database.table``, both quoted."""
    return f"{quote_identifier(database)}.{quote_identifier(table)}"


_LITERAL_ESCAPES = {
    "\\": "\\\\",
    "'": "\\'",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\x00": "\\0",
}


def quote_literal(value: str) -> str:
    """A ClickHouse single-quoted string literal."""
    return "'" + "".join(_LITERAL_ESCAPES.get(ch, ch) for ch in value) + "'"


def escaped_file_name_length(name: str) -> int:
    """Length of ``escapeForFileName(name)`` in ClickHouse (bytes)."""
    length = 0
    for ch in name:
        if _UNSAFE_FILENAME_CHAR.match(ch):
            length += 3 * len(ch.encode("utf-8"))
        else:
            length += 1
    return length


def max_table_name_length(database: str) -> int:
    """The longest (escaped) table name ClickHouse accepts in ``database``."""
    dropped = _NAME_MAX - _DROPPED_RESERVE - escaped_file_name_length(database)
    return min(_NAME_MAX - _CREATE_RESERVE, dropped)


def check_database_name(database: str) -> None:
    """Refuse a database name that leaves no room for the table names of a topic."""
    if max_table_name_length(database) < _SHORTEST_BASE + len(LONGEST_SUFFIX):
        raise ConfigError(
            f"database name {database[:40]!r}... is too long for ClickHouse table names "
            "(at most 179 characters of [a-zA-Z0-9_], 3 per byte of any other)",
            source="--database",
        )


def table_base(topic: str, database: str) -> str:
    """The part of every table name of ``topic`` in ``database`` that comes from the topic.

    The topic name itself when its longest table name fits (:func:`max_table_name_length`);
    otherwise the topic cut to fit, plus ``_`` and 8 hex digits of the SHA-256 of the full
    topic name, so that two long topics sharing a prefix still get different tables.
    """
    check_database_name(database)
    budget = max_table_name_length(database) - len(LONGEST_SUFFIX)
    if escaped_file_name_length(topic) <= budget:
        return topic
    digest = hashlib.sha256(topic.encode("utf-8")).hexdigest()[:8]
    cut = topic
    while cut and escaped_file_name_length(cut) + 1 + len(digest) > budget:
        cut = cut[:-1]
    return f"{cut.rstrip('-.')}_{digest}"
