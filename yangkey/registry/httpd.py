"""Serving the registry's ASGI application with uvicorn (issue 31, item 2), on a background
thread (``registry serve``, the demo, tests).

uvicorn parses HTTP/1.1 (httptools), keeps connections alive with an idle timeout, reads
chunked bodies, and serves TLS. What it lacks against slow clients is added here, in its
protocol class: a deadline for a request's line and headers (from the connection's start or
the previous response; 408 then close) and a cap on their size (431), so a client that
trickles headers (slowloris) or opens connections and sends nothing holds a few bytes of
memory for ``client_timeout`` seconds, never a thread. Bodies have the same deadline
(:mod:`yangkey.registry.web`). Connections beyond ``max_connections`` are answered 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import orjson
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from yangkey.errors import ConfigError
from yangkey.registry.auth import Users
from yangkey.registry.registry import Registry
from yangkey.registry.server import ROUTES
from yangkey.registry.web import DEFAULT_TYPE, RegistryApp

BACKLOG = 1024
MAX_HEADER_BYTES = 64 * 1024
REASONS = {400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large"}


class _Refused(Exception):
    pass


class _Coalesced:
    """The transport a response is written to: the status line and headers wait for the
    body's write, so a small response leaves in one send (two cost twice the syscalls, and
    the registry's answers are small). Everything else is the real transport's."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._head = b""

    def write(self, data: bytes) -> None:
        # A 100 Continue goes at once: the client waits for it before sending the body.
        if data.startswith(b"HTTP/1.1 ") and not data.startswith(b"HTTP/1.1 100 "):
            self._head += data
            return
        if self._head:
            data, self._head = self._head + data, b""
        self._transport.write(data)

    def close(self) -> None:
        if self._head:
            self._transport.write(self._head)
            self._head = b""
        self._transport.close()

    def __getattr__(self, name: str) -> object:
        return getattr(self._transport, name)


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline and a size cap for request headers, and
    Confluent-style JSON for the requests it refuses before the application sees them."""

    header_timeout = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_bytes = 0
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._header_bytes = 0
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        self._refuse(408, f"the request headers did not arrive within {self.header_timeout:g}s")

    def _refuse(self, status: int, message: str) -> None:
        if self.transport.is_closing():
            return
        body = orjson.dumps({"error_code": status, "message": message})
        self.transport.write(
            b"".join(
                (
                    f"HTTP/1.1 {status} {REASONS[status]}\r\n".encode(),
                    f"content-type: {DEFAULT_TYPE}\r\n".encode(),
                    f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode(),
                    body,
                )
            )
        )
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # Still no complete headers after this read (asyncio reads at most 256 KiB at once):
        # the parser holds it, so it counts against the cap.
        if self._header_timer is not None:
            self._count(len(data))

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value))
        super().on_header(name, value)

    def _count(self, size: int) -> None:
        self._header_bytes += size
        if self._header_bytes > MAX_HEADER_BYTES:
            self._disarm()
            self._refuse(431, f"the request line and headers exceed {MAX_HEADER_BYTES} bytes")
            raise _Refused  # stops the parser (uvicorn then closes, already done)

    def on_headers_complete(self) -> None:
        self._disarm()
        self._header_bytes = 0
        super().on_headers_complete()
        # A HEAD response has no body write to carry its headers.
        if self.cycle is not None and self.scope["method"] != "HEAD":
            self.cycle.transport = _Coalesced(self.transport)  # type: ignore[assignment]

    def on_response_complete(self) -> None:
        pipelined = bool(self.pipeline)  # those have their headers already
        super().on_response_complete()
        if not pipelined and not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        # A malformed request (bad Content-Length, bad chunking): JSON, not uvicorn's text.
        self._disarm()
        self._refuse(400, f"HTTP 400 Bad Request: {msg}")


@dataclass(frozen=True)
class TLS:
    """The server's certificate and key (PEM); ``client_ca``: require client certificates
    signed by it (mutual TLS)."""

    cert: Path
    key: Path
    client_ca: Path | None = None


class RegistryHTTPServer:
    """The registry's HTTP(S) server on a background thread: :meth:`start`, then :meth:`stop`."""

    def __init__(
        self,
        registry: Registry,
        host: str = "127.0.0.1",
        port: int = 8081,
        *,
        verbose: bool = False,
        users: Users | None = None,
        tls: TLS | None = None,
        max_body: int = 2 * 1024 * 1024,
        client_timeout: float = 10.0,
        max_connections: int = 1000,
    ) -> None:
        self.registry = registry
        self.tls = tls
        self.app = RegistryApp(
            registry, ROUTES, users=users, max_body=max_body, body_timeout=client_timeout
        )
        protocol = type("Guarded", (GuardedProtocol,), {"header_timeout": client_timeout})
        self.config = uvicorn.Config(
            self.app,
            http=protocol,
            loop="asyncio",
            lifespan="off",
            interface="asgi3",
            log_config=None,
            log_level="info" if verbose else "error",
            access_log=verbose,
            proxy_headers=False,
            server_header=False,
            backlog=BACKLOG,
            timeout_keep_alive=5,
            timeout_graceful_shutdown=5,
            limit_concurrency=max_connections,
            ssl_certfile=tls.cert if tls else None,
            ssl_keyfile=tls.key if tls else None,
            ssl_ca_certs=tls.client_ca if tls else None,
            ssl_cert_reqs=ssl.CERT_REQUIRED if tls and tls.client_ca else ssl.CERT_NONE,
        )
        try:
            self.config.load()  # here, so that a bad certificate is one error line
        except (OSError, ssl.SSLError) as exc:
            where = str(tls.cert) if tls else "TLS"
            raise ConfigError(f"cannot load the certificate or key: {exc}", source=where) from None
        self.socket = _listen(host, port)
        self.server = uvicorn.Server(self.config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.socket.getsockname()[:2]
        if ":" in host:
            host = f"[{host}]"
        return f"{'https' if self.tls else 'http'}://{host}:{port}"

    def start(self) -> threading.Thread:
        """Serve on a background thread (returns once it accepts connections)."""
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, name="registry-http"
        )
        self._thread.daemon = True
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started and self._thread.is_alive():
            if time.monotonic() > deadline:
                raise ConfigError("the HTTP server did not start", source=self.url)
            time.sleep(0.01)
        return self._thread

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
        self.app.workers.shutdown(wait=False, cancel_futures=True)
        with contextlib.suppress(OSError):
            self.socket.close()


def _listen(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigError(f"cannot listen: {exc.strerror}", source=f"{host}:{port}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen: {exc.strerror}", source=f"{host}:{port}") from None
    return sock
