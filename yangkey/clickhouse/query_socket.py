"""Queries on an embedded directory while ``yangkey ingest`` holds it.

Embedded ClickHouse (chdb) is one process per data directory: it locks ``<dir>/status``, and a
second process cannot open the directory. So the process that holds it (``yangkey ingest``,
following or not) answers the queries of the other ``yangkey`` commands over a Unix socket,
``<dir>/yangkey.sock``: owner-only (mode 0600, and on Linux the peer's uid is checked), one
request per connection. :func:`yangkey.clickhouse.connection.follower_connection` finds it;
:class:`~yangkey.clickhouse.connection.SocketConnection` is a
:class:`yangkey.clickhouse.connection.Connection` over it, so ``state``, ``history``, ``sql`` and
``ddl apply`` print the same rows in the same formats as when they open the directory.

Protocol (version 1): the client sends one JSON line ``{"sql", "params", "fmt"}`` (parameters
already in chdb's text form, :func:`yangkey.clickhouse.connection.format_chdb_param`); the server
answers one JSON line, ``{"ok": true}`` or ``{"error": reason}``, then chdb's output bytes,
and closes. Statements run in the follower's session, one at a time, between its INSERTs.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import socketserver
import struct
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from yangkey.clickhouse import ClickHouseError

SOCKET_NAME = "yangkey.sock"
PROTOCOL = 1
CONNECT_TIMEOUT = 5.0
"""Seconds to connect and send a request (a query itself may take longer)."""

#: sun_path is 108 bytes on Linux, 104 on BSD and macOS (with the NUL byte).
_MAX_PATH = 100


class Formatted(Protocol):
    """What the socket serves queries with: the embedded engine's
    :class:`~yangkey.clickhouse.connection.ChdbConnection` (named by this protocol, not
    imported: the connection module opens follower connections through this one)."""

    def run_formatted(self, sql: str, fmt: str, params: Mapping[str, str]) -> bytes: ...


def socket_path(directory: str | Path) -> Path:
    return Path(directory) / SOCKET_NAME


@contextlib.contextmanager
def _address(path: Path) -> Iterator[str]:
    """An address for ``path`` short enough for sun_path: itself, or (Linux) the socket's
    name under ``/proc/self/fd/N`` of its directory, kept open for the block."""
    text = os.fsdecode(path)
    if len(os.fsencode(text)) <= _MAX_PATH:
        yield text
        return
    if not Path("/proc/self/fd").is_dir():
        raise OSError(errno.ENAMETOOLONG, "the socket path is too long", text)
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def _peer(sock: socket.socket) -> tuple[int, int] | None:
    """The peer's (pid, uid), where the platform says (Linux SO_PEERCRED)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, 12))
    return pid, uid


# -- the server, in the process that holds the directory -----------------------------------


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        peer = _peer(self.request)
        if peer is not None and peer[1] != os.getuid():
            return  # another user: the mode bits should have stopped them already
        try:
            request = json.loads(self.rfile.readline(1 << 24))
            if request.get("v") != PROTOCOL:
                raise ValueError(f"protocol version {request.get('v')!r}, not {PROTOCOL}")
            sql, fmt = str(request["sql"]), str(request.get("fmt", "JSONEachRow"))
            params = {str(k): str(v) for k, v in dict(request.get("params") or {}).items()}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self._reply({"error": f"bad request: {exc}"})
            return
        try:
            data = self.server.conn.run_formatted(sql, fmt, params)
        except ClickHouseError as exc:
            self._reply({"error": exc.reason})
            return
        self._reply({"ok": True}, data)

    def _reply(self, header: Mapping[str, Any], data: bytes = b"") -> None:
        with contextlib.suppress(OSError):  # the client went away: nothing to tell it
            self.wfile.write(json.dumps(header).encode("utf-8") + b"\n")
            self.wfile.write(data)


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    conn: Formatted


@contextlib.contextmanager
def serve_queries(
    conn: Formatted, directory: str | Path, log: Callable[[str], None] | None = None
) -> Iterator[Path | None]:
    """Answer queries on ``<directory>/yangkey.sock`` for the block; the socket's path, or
    None when it cannot be made (said through ``log``: the ingest goes on without it)."""
    path = socket_path(directory)
    try:
        with _address(path) as address:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(address)  # left by a killed process: we hold the directory now
            server = _Server(address, _Handler, bind_and_activate=False)
            try:
                server.server_bind()
                os.chmod(address, 0o600)
                server.server_activate()
            except BaseException:
                server.server_close()
                raise
    except OSError as exc:
        if log is not None:
            log(f"{path}: cannot answer queries here: {exc.strerror or exc}")
        yield None
        return
    server.conn = conn
    thread = threading.Thread(
        target=server.serve_forever, args=(0.2,), name="yangkey-queries", daemon=True
    )
    thread.start()
    try:
        yield path
    finally:
        server.shutdown()
        server.server_close()
        with contextlib.suppress(OSError), _address(path) as address:
            os.unlink(address)


# -- the client, in the other commands -----------------------------------------------------


def request(path: Path, sql: str, fmt: str, params: Mapping[str, str], source: str) -> bytes:
    """Run ``sql`` in the process answering on ``path``: chdb's output in ``fmt`` (``params``
    already in chdb's text form); its refusal, or a socket that stops answering, is a
    :class:`ClickHouseError` naming ``source``."""
    message = {"v": PROTOCOL, "sql": sql, "fmt": fmt, "params": dict(params)}
    try:
        with _connected(path) as sock:
            sock.sendall(json.dumps(message).encode("utf-8") + b"\n")
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(None)  # a query takes what it takes
            with sock.makefile("rb") as stream:
                header = json.loads(stream.readline() or b"{}")
                data = stream.read()
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ClickHouseError(
            f"the ingest holding the directory stopped answering ({reason}): run the command again",
            source=source,
        ) from None
    if not header.get("ok"):
        raise ClickHouseError(str(header.get("error", "no answer")), source=source)
    return bytes(data)


@contextlib.contextmanager
def _connected(path: Path) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        with _address(path) as address:
            sock.connect(address)
        yield sock
    finally:
        sock.close()


def follower_pid(directory: str | Path) -> int | None:
    """The pid of the ``yangkey ingest`` answering for ``directory`` (0 where the platform does
    not say), or None when nothing answers there (no socket, or a stale one)."""
    path = socket_path(directory)
    if not path.is_socket():
        return None
    try:
        with _connected(path) as sock:
            peer = _peer(sock)
    except OSError:
        return None  # stale (its process is gone) or not ours: the caller opens the directory
    return peer[0] if peer else 0


# -- who holds a directory -----------------------------------------------------------------


def lock_holder(directory: str | Path) -> int | None:
    """The pid of the process holding ``directory`` (chdb's lock on ``status``), 0 if the pid
    is unknown, None if nobody holds it."""
    import fcntl  # noqa: PLC0415 - POSIX only, as chdb is

    status = Path(directory) / "status"
    try:
        fd = os.open(status, os.O_RDONLY)
    except OSError:
        return None  # never opened, or closed cleanly (chdb removes it)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            text = os.read(fd, 4096).decode("utf-8", "replace")
            for line in text.splitlines():
                if line.startswith("PID:") and line[4:].strip().isdigit():
                    return int(line[4:].strip())
            return 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _command_line(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    words = [os.fsdecode(w) for w in raw.split(b"\0") if w]
    # `python .../yangkey ingest ...` reads best as `yangkey ingest ...`
    for i, word in enumerate(words):
        if Path(word).name == "yangkey" or word == "yangkey.cli":
            words = ["yangkey", *words[i + 1 :]]
            break
    text = " ".join(words)
    return text if len(text) <= 60 else text[:57] + "..."


def locked_error(directory: str | Path, pid: int) -> ClickHouseError:
    """The one-line error for a directory another process holds."""
    command = _command_line(pid) if pid else ""
    who = f"pid {pid}" + (f", `{command}`" if command else "") if pid else "another process"
    source = f"embedded ClickHouse at {directory}"
    stop = f"stop it (kill {pid})" if pid else "stop it"
    if follower_pid(directory) is not None:
        return ClickHouseError(
            f"in use by a running `yangkey ingest` ({who}), the directory's one writer: "
            f"{stop} first, or query through it (state, history, sql)",
            source=source,
        )
    if socket_path(directory).exists():
        reason = (
            f"in use by {who}, and its query socket {socket_path(directory)} does not answer: "
            f"{stop}, or query a ClickHouse server instead"
        )
    else:
        reason = (
            f"in use by {who}, which does not answer queries (only `yangkey ingest` does): "
            f"{stop} and run the command again"
        )
    return ClickHouseError(reason, source=source)
