"""Connections to ClickHouse: embedded chdb or a server, and where a URL points.

:class:`Connection` is the one small protocol the rest of ``yangkey.clickhouse`` talks to:
``query(sql, params)`` returns rows as dicts, ``command(sql, params)`` runs a statement,
``insert(table, columns, data, fmt)`` loads encoded rows. Values always travel as server-side
query parameters (``{name:Type}`` placeholders), never spliced into the SQL.

chdb quirk: one process holds at most one chdb data path at a time (the embedded server is
process-wide; opening a second path fails until every session on the first is closed).
:func:`open_embedded` turns that into a clear :class:`ClickHouseError`. So does another
process holding the directory (chdb locks ``<dir>/status``); :func:`connect` then queries
through the ``yangkey ingest`` holding it (:mod:`yangkey.clickhouse.query_socket`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import unquote, urlsplit

from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.identifiers import quote_literal
from yangkey.errors import ConfigError

PASSWORD_ENV = "CLICKHOUSE_PASSWORD"

_CODE = re.compile(
    r"Code: (\d+)\. DB::Exception: (.*?)(?: \(([A-Z_]+)\))?(?:\.?\s*Stack trace|\s*$)", re.S
)


@runtime_checkable
class Connection(Protocol):
    """What queries, DDL and ingestion need from a ClickHouse connection."""

    description: str
    """Where the connection goes (no credentials), for messages."""

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Rows of a SELECT as dicts (column name -> value)."""
        ...

    def command(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        """Run a statement that returns no rows."""
        ...

    def insert(self, table: str, columns: Sequence[str], data: bytes, fmt: str) -> None:
        """Insert ``data`` encoded in ``fmt`` into ``table`` (a quoted ``db.table``)."""
        ...

    def close(self) -> None: ...


def _clean_message(text: str) -> str:
    """``Code: 81. DB::Exception: Database x does not exist. (UNKNOWN_DATABASE)`` -> the middle."""
    match = _CODE.search(text)
    if match:
        text = match.group(2)
    # an engine stack trace or a multi-line message never reaches the user: one line
    text = text.split("Stack trace", 1)[0].strip()
    return text.splitlines()[0].strip().rstrip(".") if text else "unknown error"


def clickhouse_error(exc: BaseException, source: str, what: str | None = None) -> ClickHouseError:
    """A :class:`ClickHouseError` naming ``source`` (and ``what`` was being done)."""
    reason = _clean_message(str(exc))
    if what:
        reason = f"{what}: {reason}"
    return ClickHouseError(reason, source=source)


# -- parameter formatting for chdb ---------------------------------------------------------
# chdb reads a query parameter's value in the "escaped" text format of its declared type
# (TSV rules: backslash, tab and newline escaped) when it is a scalar, but an array or a tuple
# in the quoted format alone (each string a single-quoted literal, no TSV layer over it:
# escaping it twice breaks a string holding a quote).


def _escape_tsv(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _quoted(value: Any) -> str:
    """A value inside an array or tuple parameter (quoted format)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        inner = ",".join(_quoted(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return quote_literal(value.isoformat(sep=" ") if isinstance(value, dt.datetime) else str(value))


def format_chdb_param(value: Any) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return _quoted(list(value) if isinstance(value, list) else value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, bytes):
        return _escape_tsv(value.decode("utf-8"))
    return _escape_tsv(str(value))


class ChdbConnection:
    """Embedded ClickHouse (chdb) on a data directory."""

    def __init__(self, path: str | Path) -> None:
        from chdb import session  # noqa: PLC0415 - a large native module: import on use

        self.path = str(path)
        self.description = f"embedded ClickHouse at {self.path}"
        factory: Any = session.Session
        self._session: Any = None
        # the ingest's insert thread and its query socket share the one session
        self._lock = threading.RLock()
        _check_unlocked(self.path)
        try:
            self._session = factory(self.path)
        except Exception as exc:
            text = str(exc)
            if "already initialized with path" in text:
                raise ClickHouseError(
                    "chdb can hold one data path per process and another one is open: "
                    "close it first",
                    source=self.description,
                ) from None
            raise clickhouse_error(exc, self.description, "cannot open") from None
        self.command("SET output_format_json_quote_64bit_integers = 0")
        self.command("SET output_format_json_quote_64bit_floats = 0")
        # invalid UTF-8 in a String (a poison payload) must not break the JSON of a result
        self.command("SET output_format_json_validate_utf8 = 1")
        # the views on a parsed table (history, current state, errors) run side by side:
        # about a third faster ingestion on two cores (benchmarks/bench_clickhouse.py)
        self.command("SET parallel_view_processing = 1")

    def _run(self, sql: str, fmt: str, params: Mapping[str, Any] | None) -> bytes:
        return self.run_formatted(
            sql, fmt, {k: format_chdb_param(v) for k, v in (params or {}).items()}
        )

    def run_formatted(self, sql: str, fmt: str, params: Mapping[str, str]) -> bytes:
        """chdb's output in ``fmt``; ``params`` already formatted (:func:`format_chdb_param`)."""
        try:
            with self._lock:
                result = self._session.query(sql, fmt, params=dict(params) or None)
        except Exception as exc:
            raise clickhouse_error(exc, self.description) from None
        data = result.bytes()
        return data if isinstance(data, bytes) else bytes(data)

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        data = self._run(sql, "JSONEachRow", params)
        return [json.loads(line) for line in data.splitlines() if line.strip()]

    def command(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        self._run(sql, "TSV", params)

    def insert(self, table: str, columns: Sequence[str], data: bytes, fmt: str) -> None:
        column_list = ", ".join(columns)
        statement = f"INSERT INTO {table} ({column_list})" if columns else f"INSERT INTO {table}"
        try:
            with self._lock:
                inserter = self._session.send_insert(statement, fmt)
                inserter.append(data)
                inserter.finish()
        except Exception as exc:
            raise clickhouse_error(exc, self.description, f"insert into {table}") from None

    def close(self) -> None:
        session, self._session = getattr(self, "_session", None), None
        if session is not None:
            session.close()

    def __enter__(self) -> ChdbConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_unlocked(path: str) -> None:
    """A directory another process holds is one clear error, not chdb's two raw lines."""
    from yangkey.clickhouse.query_socket import lock_holder, locked_error  # noqa: PLC0415

    pid = lock_holder(path)
    if pid is not None and pid != os.getpid():
        raise locked_error(path, pid)


class SocketConnection:
    """The process holding an embedded directory (``yangkey ingest``), queried over its socket
    (:mod:`yangkey.clickhouse.query_socket`): queries and statements, no inserts."""

    def __init__(self, directory: str | Path, pid: int | None = None) -> None:
        from yangkey.clickhouse.query_socket import socket_path  # noqa: PLC0415

        self.path = socket_path(directory)
        self.pid = pid
        holder = f"yangkey ingest, pid {pid}" if pid else "yangkey ingest"
        self.description = f"embedded ClickHouse at {directory} (through {holder})"

    def _run(self, sql: str, fmt: str, params: Mapping[str, Any] | None) -> bytes:
        from yangkey.clickhouse.query_socket import request  # noqa: PLC0415

        formatted = {k: format_chdb_param(v) for k, v in (params or {}).items()}
        return request(self.path, sql, fmt, formatted, self.description)

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        data = self._run(sql, "JSONEachRow", params)
        return [json.loads(line) for line in data.splitlines() if line.strip()]

    def command(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        self._run(sql, "TSV", params)

    def insert(self, table: str, columns: Sequence[str], data: bytes, fmt: str) -> None:
        raise ClickHouseError(
            "the directory is held by a running `yangkey ingest`, which is the one writer: "
            "stop it first",
            source=self.description,
        )

    def close(self) -> None:
        pass


def follower_connection(directory: str | Path) -> SocketConnection | None:
    """A connection to the ``yangkey ingest`` holding ``directory``, if one answers there."""
    from yangkey.clickhouse.query_socket import follower_pid  # noqa: PLC0415

    pid = follower_pid(directory)
    return None if pid is None else SocketConnection(directory, pid or None)


class ServerConnection:
    """A ClickHouse server through a clickhouse-connect client (HTTP or HTTPS).

    Parameters are bound server-side: clickhouse-connect sends ``{name:Type}`` placeholders
    and the values as ``param_<name>``, so no value is ever formatted into the SQL text.
    """

    def __init__(self, client: Any, description: str, database: str | None = None) -> None:
        self._client = client
        self.description = description
        self.database = database
        """The database named in the URL, if any (a default for commands)."""

    @classmethod
    def open(
        cls,
        host: str,
        port: int,
        username: str,
        password: str,
        *,
        secure: bool = False,
        database: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> ServerConnection:
        import clickhouse_connect  # noqa: PLC0415

        scheme = "https" if secure else "http"
        description = f"ClickHouse {scheme}://{username}@{host}:{port}"
        try:
            client = clickhouse_connect.get_client(
                host=host,
                port=port,
                username=username,
                password=password,
                secure=secure,
                settings=dict(settings or {}),
            )
        except Exception as exc:
            raise clickhouse_error(exc, description, "cannot connect") from None
        return cls(client, description, database)

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        try:
            result = self._client.query(sql, parameters=dict(params or {}))
        except Exception as exc:
            raise clickhouse_error(exc, self.description) from None
        return list(result.named_results())

    def command(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        try:
            self._client.command(sql, parameters=dict(params or {}))
        except Exception as exc:
            raise clickhouse_error(exc, self.description) from None

    def insert(self, table: str, columns: Sequence[str], data: bytes, fmt: str) -> None:
        try:
            self._client.raw_insert(table, list(columns) or None, insert_block=data, fmt=fmt)
        except Exception as exc:
            raise clickhouse_error(exc, self.description, f"insert into {table}") from None

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ServerConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class ServerURL:
    host: str
    port: int
    username: str
    secure: bool
    database: str | None


def parse_server_url(url: str) -> ServerURL:
    """``http[s]://user@host[:port][/database]``; the password comes from the environment."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket
        raise ConfigError(f"invalid ClickHouse URL: {exc}", source="--clickhouse") from None
    if parts.scheme not in ("http", "https"):
        raise ConfigError(
            "the ClickHouse URL must start with http:// or https://", source="--clickhouse"
        )
    if parts.password is not None:
        raise ConfigError(
            f"do not put the password in the URL: set {PASSWORD_ENV} instead",
            source="--clickhouse",
        )
    if not parts.hostname:
        raise ConfigError("the ClickHouse URL has no host", source="--clickhouse")
    secure = parts.scheme == "https"
    try:
        port = parts.port or (8443 if secure else 8123)
    except ValueError:
        raise ConfigError("the ClickHouse URL has an invalid port", source="--clickhouse") from None
    database = unquote(parts.path.strip("/")) or None
    return ServerURL(
        host=parts.hostname,
        port=port,
        username=unquote(parts.username) if parts.username else "default",
        secure=secure,
        database=database,
    )


def open_server(url: str, *, environ: Mapping[str, str] | None = None) -> ServerConnection:
    parsed = parse_server_url(url)
    env = os.environ if environ is None else environ
    return ServerConnection.open(
        parsed.host,
        parsed.port,
        parsed.username,
        env.get(PASSWORD_ENV, ""),
        secure=parsed.secure,
        database=parsed.database,
    )


def open_embedded(path: str | Path) -> ChdbConnection:
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the data directory: {exc.strerror}", source=str(path)
        ) from None
    return ChdbConnection(path)


def connect(*, clickhouse: str | None = None, embedded: str | Path | None = None) -> Connection:
    """Exactly one of a server URL or an embedded data path (through the ``yangkey ingest``
    holding it, if one runs: :mod:`yangkey.clickhouse.query_socket`)."""
    if (clickhouse is None) == (embedded is None):
        raise ConfigError("give exactly one of --clickhouse URL or --embedded PATH")
    if clickhouse is not None:
        return open_server(clickhouse)
    assert embedded is not None
    # a running `yangkey ingest` holds the directory: it answers for it
    return follower_connection(embedded) or open_embedded(embedded)
