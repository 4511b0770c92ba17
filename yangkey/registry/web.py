"""The registry's ASGI application: HTTP as Confluent's registry (and Karapace) speak it, in
front of the API routes of :mod:`yangkey.registry.server` (issue 31, item 2).

* **Routing** on the raw path: a ``%2F`` stays inside a subject name, and a path segment whose
  escapes are not UTF-8 is refused rather than decoded to U+FFFD (two names would alias).
* **Content negotiation** as Karapace tests it: ``Accept`` picks the response type among
  ``application/vnd.schemaregistry.v1+json`` (the default, also for ``*/*``),
  ``application/vnd.schemaregistry+json`` and ``application/json``, with ``q`` weights, else
  406; a ``POST``/``PUT`` body must be one of those or ``application/octet-stream``, else 415,
  in any charset Python knows.
* **Bodies** are read up to ``max_body`` bytes (413/42209 beyond, before reading any of it when
  ``Content-Length`` says so), chunked or not, within ``body_timeout`` seconds (408).
* **Who may**: with a users file, HTTP basic auth and the role the request needs
  (:mod:`yangkey.registry.auth`): 401/40101 or 403/40301, as Confluent's RBAC answers.
* **Errors** are always Confluent's JSON ``{"error_code", "message"}``: unknown routes 404, a
  method a route does not take 405 (with ``Allow``), a bug 500 (the server goes on).
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

import orjson
from starlette.exceptions import HTTPException
from starlette.routing import Route, Router
from starlette.types import Message, Receive, Scope, Send

from yangkey.registry.auth import Users, needed_role
from yangkey.registry.errors import RegistryError, invalid_subject, schema_too_large
from yangkey.registry.registry import Registry

log = logging.getLogger("yangkey.registry")

DEFAULT_TYPE = "application/vnd.schemaregistry.v1+json"
RESPONSE_TYPES = (DEFAULT_TYPE, "application/vnd.schemaregistry+json", "application/json")
REQUEST_TYPES = (*RESPONSE_TYPES, "application/octet-stream")
REALM = 'Basic realm="yangkey schema registry", charset="UTF-8"'


@dataclass
class Call:
    """One request as a route handler sees it."""

    registry: Registry
    params: dict[str, str]
    query: dict[str, str]
    body: Any


Handler = Callable[[Call], Any]
Memory = Callable[[Call], Any]
"""A handler's fast path, run on the event loop: memory only, None when it cannot answer."""


# ---------------------------------------------------------------------- negotiation


def _media(value: str) -> tuple[str, dict[str, str]]:
    kind, *params = value.split(";")
    found = {}
    for param in params:
        name, _, text = param.partition("=")
        found[name.strip().lower()] = text.strip().strip('"')
    return kind.strip().lower(), found


@lru_cache(maxsize=256)
def response_type(accept: str | None) -> str:
    """The response's content type for an ``Accept`` header (RFC 9110 12.5.1). Clients send
    the same header every time: the answers are remembered."""
    if not accept or not accept.strip():
        return DEFAULT_TYPE
    best, best_q = "", 0.0
    for wanted in RESPONSE_TYPES:
        quality, precision = 0.0, -1
        for item in accept.split(","):
            kind, params = _media(item)
            if kind in ("*", "*/*") or kind.startswith("*/"):
                match = 0
            elif kind.endswith("/*") and wanted.startswith(kind[:-1]):
                match = 1
            elif kind == wanted:
                match = 2
            else:
                continue
            try:
                q = float(params.get("q", "1"))
            except ValueError:
                q = 0.0
            if match > precision:
                quality, precision = q, match
        # Ties go to the first in RESPONSE_TYPES: the registry's own type.
        if quality > best_q:
            best, best_q = wanted, quality
    if not best:
        raise RegistryError(406, 406, "HTTP 406 Not Acceptable")
    return best


def request_charset(content_type: str | None) -> str:
    """The body's charset, after checking its media type (415 otherwise)."""
    kind, params = _media(content_type or "application/json")
    if kind not in REQUEST_TYPES:
        raise RegistryError(415, 415, "HTTP 415 Unsupported Media Type")
    charset = params.get("charset", "utf-8")
    try:
        return codecs.lookup(charset).name
    except LookupError:
        raise RegistryError(
            415, 415, f"HTTP 415 Unsupported Media Type: charset {charset}"
        ) from None


# ---------------------------------------------------------------------- bodies


async def read_body(receive: Receive, declared: str | None, limit: int, timeout: float) -> bytes:
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise schema_too_large(f"the request body is {declared} bytes; the limit is {limit}")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise RegistryError(400, 400, "the client went away mid-body")
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise schema_too_large(f"the request body is over the limit of {limit} bytes")
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
    except TimeoutError:
        raise RegistryError(
            408, 408, f"the request body did not arrive within {timeout:g}s"
        ) from None


def parse_body(raw: bytes, charset: str) -> Any:
    if not raw:
        return None
    try:
        text: bytes | str = raw if charset == "utf-8" else raw.decode(charset)
        return orjson.loads(text)
    except (orjson.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RegistryError(400, 400, f"the request body is not JSON: {exc}") from None


# ---------------------------------------------------------------------- the application


_BAD_ESCAPE = re.compile("%(?![0-9A-Fa-f]{2})")


def decode_param(name: str, value: str) -> str:
    """A path parameter as sent (``value`` holds the raw bytes as Latin-1): escapes and raw
    bytes alike must make UTF-8, and a ``%`` starts an escape (RFC 3986, 2.1): else ``u-%``
    and ``u-%G1`` would be kept as they are and alias ``u-%25`` and ``u-%25G1``."""
    if "%" not in value or not _BAD_ESCAPE.search(value):
        try:
            return unquote_to_bytes(value.encode("latin-1")).decode("utf-8")
        except UnicodeDecodeError:
            pass
    if name == "subject":
        raise invalid_subject(value)
    raise RegistryError(404, 404, "HTTP 404 Not Found")


class Endpoint:
    """One path: decode its parameters, run the method's handler (its memory fast path on the
    event loop, else in the thread pool: registry calls may wait for Kafka), answer JSON."""

    def __init__(self, app: RegistryApp, handlers: dict[str, tuple[Handler, Memory | None]]):
        self.app = app
        self.handlers = handlers
        if "GET" in handlers:
            self.handlers["HEAD"] = handlers["GET"]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler, memory = self.handlers[scope["method"]]
        params = {k: decode_param(k, v) for k, v in scope["path_params"].items()}
        raw_query = scope["query_string"]
        query = dict(parse_qsl(raw_query.decode("latin-1"))) if raw_query else {}
        call = Call(self.app.registry, params, query, scope["yangkey.body"])
        result = memory(call) if memory is not None else None
        if result is None:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self.app.workers, handler, call)
        await send_json(send, 200, result, scope["yangkey.type"])


async def send_json(
    send: Send,
    status: int,
    payload: Any,
    content_type: str,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    data = orjson.dumps(payload)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type.encode()),
                (b"content-length", str(len(data)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


class RegistryApp:
    """The ASGI application (uvicorn serves it: :mod:`yangkey.registry.httpd`)."""

    def __init__(
        self,
        registry: Registry,
        routes: list[tuple[str, str, Handler, Memory | None]],
        *,
        users: Users | None = None,
        max_body: int = 2 * 1024 * 1024,
        body_timeout: float = 10.0,
    ) -> None:
        self.registry = registry
        self.users = users
        self.max_body = max_body
        self.body_timeout = body_timeout
        # Handlers that may wait for Kafka run here (cheaper to reach than anyio's pool).
        self.workers = ThreadPoolExecutor(max_workers=32, thread_name_prefix="registry")
        paths: dict[str, dict[str, tuple[Handler, Memory | None]]] = {}
        for method, pattern, handler, memory in routes:
            paths.setdefault(pattern or "/", {})[method] = (handler, memory)
        # One route per path, so that a 405 lists every method the path takes.
        self.router = Router(
            [
                Route(path, Endpoint(self, methods), methods=list(methods))
                for path, methods in paths.items()
            ],
            redirect_slashes=False,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        content_type = DEFAULT_TYPE
        extra: list[tuple[bytes, bytes]] = []
        try:
            content_type = response_type(_header(scope, b"accept"))
            method = scope["method"]
            # Routing on the raw path: %2F stays in a segment, escapes are decoded per
            # parameter (strictly) by the endpoint.
            path = scope.get("raw_path", scope["path"].encode()).decode("latin-1")
            path = path.rstrip("/") or "/"
            if self.users is not None:
                await self._authorize(scope, method, path)
            body = None
            if method in ("POST", "PUT"):
                charset = request_charset(_header(scope, b"content-type"))
                raw = await read_body(
                    receive, _header(scope, b"content-length"), self.max_body, self.body_timeout
                )
                body = parse_body(raw, charset)
            routed = {
                **scope,
                "path": path,
                "root_path": "",
                "app": self,
                "yangkey.body": body,
                "yangkey.type": content_type,
            }
            await self.router(routed, receive, send)
            return
        except RegistryError as error:
            status, payload = error.status, {"error_code": error.code, "message": error.reason}
            if error.status == 401:
                extra.append((b"www-authenticate", REALM.encode()))
            if error.status in (408, 413):  # the rest of the body is not worth reading
                extra.append((b"connection", b"close"))
        except HTTPException as error:
            status = error.status_code
            payload = {"error_code": status, "message": f"HTTP {status} {error.detail}"}
            extra += [(k.encode(), v.encode()) for k, v in (error.headers or {}).items()]
        except Exception as error:  # a bug answers 500 and the server goes on
            log.exception("registry: internal error")
            status, payload = 500, {"error_code": 500, "message": f"internal error: {error!r}"}
        await send_json(send, status, payload, content_type, extra)

    async def _authorize(self, scope: Scope, method: str, path: str) -> None:
        assert self.users is not None
        self.users.refresh()
        credential = _header(scope, b"authorization")
        if not credential:
            raise RegistryError(401, 40101, "Unauthorized: this registry needs basic auth")
        user = self.users.remembered(credential)
        if user is None:
            loop = asyncio.get_running_loop()
            user = await loop.run_in_executor(self.workers, self.users.check, credential)
        if user is None:
            raise RegistryError(401, 40101, "Unauthorized: unknown user or wrong password")
        segments = [s for s in path.split("/") if s]
        permanent = re.search(rb"(^|&)permanent=true(&|$)", scope["query_string"].lower())
        needed = needed_role(method, segments, permanent is not None)
        if not user.may(needed):
            raise RegistryError(
                403,
                40301,
                f"User {user.name} is denied operation {method} on this resource: it needs "
                f"the {needed} role, the user has {user.role}",
            )


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message: Message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
