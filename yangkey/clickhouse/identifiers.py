"""Quoting of ClickHouse identifiers and string literals, and topic -> table names.

``clickhouse_connect.driver.binding.quote_identifier`` is not used on purpose: it returns an
argument that already *looks* quoted (starts and ends with a backtick or a double quote)
unchanged, so a database name given as ``\\`x\\``` on the command line would reach the SQL
verbatim. Here every identifier is always escaped and wrapped, whatever it looks like.
"""

from __future__ import annotations

import hashlib
import re

_UNSAFE_FILENAME_CHAR = re.compile(r"[^a-zA-Z0-9_]")

#: ClickHouse stores each table's metadata as ``escapeForFileName(name).sql`` (plus ``.tmp``
#: while it is written); a file name longer than 255 bytes cannot be created. Every character
#: outside ``[a-zA-Z0-9_]`` is written as ``%XX`` (three bytes per UTF-8 byte). Keep a margin.
MAX_ESCAPED_TABLE_NAME = 230

#: The longest suffix :func:`table_names` appends to a topic's base name.
LONGEST_SUFFIX = "__history_local"


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


def table_base(topic: str) -> str:
    """The part of every table name that comes from the topic.

    The topic name itself when the longest derived table name fits in a file name; otherwise
    the topic cut to fit, plus ``_`` and 8 hex digits of the SHA-256 of the full topic name so
    that two long topics sharing a prefix still get different tables.
    """
    budget = MAX_ESCAPED_TABLE_NAME - len(LONGEST_SUFFIX)
    if escaped_file_name_length(topic) <= budget:
        return topic
    digest = hashlib.sha256(topic.encode("utf-8")).hexdigest()[:8]
    cut = topic
    while cut and escaped_file_name_length(cut) + 1 + len(digest) > budget:
        cut = cut[:-1]
    return f"{cut.rstrip('-.')}_{digest}"
