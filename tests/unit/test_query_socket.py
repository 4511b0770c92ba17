"""The query socket of :mod:`yangkey.clickhouse.query_socket`: the protocol, owner-only access,
long directory paths, and naming the process that holds a directory (no chdb here: the
server side is given a stand-in with ``run_formatted``; the real engine is in
tests/integration/test_query_while_ingesting.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import pytest

from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.connection import SocketConnection, follower_connection
from yangkey.clickhouse.query_socket import lock_holder, locked_error, serve_queries


class Engine:
    """Echoes what it was asked, as chdb's JSONEachRow would print it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, str]]] = []

    def run_formatted(self, sql: str, fmt: str, params: Mapping[str, str]) -> bytes:
        self.calls.append((sql, fmt, dict(params)))
        if "boom" in sql:
            raise ClickHouseError("Unknown identifier boom", source="engine")
        return b'{"a":1,"s":"x\\ty"}\n{"a":2,"s":null}\n'


def test_rows_and_parameters_travel_unchanged(tmp_path: Path) -> None:
    engine = Engine()
    with serve_queries(cast(Any, engine), tmp_path) as path:
        assert path == tmp_path / "yangkey.sock"
        assert path.stat().st_mode & 0o777 == 0o600
        conn = follower_connection(tmp_path)
        assert isinstance(conn, SocketConnection)
        assert conn.description.startswith(f"embedded ClickHouse at {tmp_path} (through ")
        rows = conn.query("SELECT {n:String}", {"n": "a\tb", "k": [1, 2], "t": (1, "x")})
        assert rows == [{"a": 1, "s": "x\ty"}, {"a": 2, "s": None}]
        # formatted as chdb reads them (TSV-escaped, arrays and tuples in quoted form)
        assert engine.calls[-1] == (
            "SELECT {n:String}",
            "JSONEachRow",
            {"n": "a\\tb", "k": "[1,2]", "t": "(1,'x')"},
        )
        conn.command("SYSTEM FLUSH LOGS")
        assert engine.calls[-1][1] == "TSV"
        with pytest.raises(ClickHouseError, match="Unknown identifier boom") as raised:
            conn.query("SELECT boom")
        assert raised.value.source == conn.description
        with pytest.raises(ClickHouseError, match="one writer"):
            conn.insert("db.t", (), b"", "Arrow")
    assert not (tmp_path / "yangkey.sock").exists()
    assert follower_connection(tmp_path) is None


def test_a_long_directory_path_still_serves(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*(["d" * 30] * 5))
    deep.mkdir(parents=True)
    assert len(str(deep / "yangkey.sock")) > 108
    with serve_queries(cast(Any, Engine()), deep) as path:
        assert path is not None and path.is_socket()
        conn = follower_connection(deep)
        assert conn is not None
        assert conn.query("SELECT 1")[0]["a"] == 1


def test_a_socket_that_cannot_be_made_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    missing = tmp_path / "not-there"
    said: list[str] = []
    with serve_queries(cast(Any, Engine()), missing, said.append) as path:
        assert path is None
    assert len(said) == 1 and "cannot answer queries here" in said[0]


def test_a_stale_socket_file_is_no_connection(tmp_path: Path) -> None:
    import socket  # noqa: PLC0415

    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(tmp_path / "yangkey.sock"))
    stale.close()
    assert follower_connection(tmp_path) is None
    # and a new server takes its place
    with serve_queries(cast(Any, Engine()), tmp_path):
        assert follower_connection(tmp_path) is not None


HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.write(fd, f"PID: {os.getpid()}\\nStarted at: now\\n".encode())
print("held", flush=True)
time.sleep(60)
"""


def test_the_holder_is_named_by_its_pid(tmp_path: Path) -> None:
    assert lock_holder(tmp_path) is None  # no status file
    (tmp_path / "status").write_text("PID: 1\n")
    assert lock_holder(tmp_path) is None  # a status file nobody locks: a clean exit's leftover
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / "status")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert lock_holder(tmp_path) == holder.pid
        error = locked_error(tmp_path, holder.pid)
        assert error.reason.startswith(f"in use by pid {holder.pid}, `")
        assert "does not answer queries" in error.reason
        assert f"kill {holder.pid}" in error.reason
        assert "\n" not in str(error)
    finally:
        holder.kill()
        holder.wait(30)
    assert lock_holder(tmp_path) is None
