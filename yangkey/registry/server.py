"""The Confluent Schema Registry REST API over :class:`Registry`, on the stdlib HTTP server.

Errors are Confluent's JSON (``{"error_code": 40401, "message": "..."}``) with its HTTP status,
so clients written for that registry (``confluent_kafka.schema_registry``, Java serdes,
Kafka Connect) branch on them as usual.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import orjson

from yangkey.registry.errors import RegistryError
from yangkey.registry.registry import Registry
from yangkey.registry.schematypes import SCHEMA_TYPES, raw

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"

Query = dict[str, str]
Handler = Callable[[Registry, dict[str, str], Query, Any], Any]
ROUTES: list[tuple[str, re.Pattern[str], Handler]] = []


def route(method: str, pattern: str) -> Callable[[Handler], Handler]:
    regex = re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern) + "/?$")

    def register(handler: Handler) -> Handler:
        ROUTES.append((method, regex, handler))
        return handler

    return register


def flag(query: Query, name: str) -> bool:
    return query.get(name, "false").lower() == "true"


def page(items: list[Any], query: Query) -> list[Any]:
    try:
        offset = int(query.get("offset", "0") or 0)
        limit = int(query.get("limit", "-1") or -1)
    except ValueError:
        raise RegistryError(400, 400, "offset and limit must be integers") from None
    items = items[max(offset, 0) :]
    return items if limit < 0 else items[:limit]


def body_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise RegistryError(422, 42201, "Invalid schema: the request body is not a JSON object")
    return body


def schema_id(params: dict[str, str]) -> int:
    try:
        return int(params["id"])
    except ValueError:
        raise RegistryError(404, 40403, "Schema not found") from None


@route("GET", "")
def root(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    return {}


@route("GET", "/schemas/types")
def schema_types(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    return list(SCHEMA_TYPES)


@route("GET", "/schemas/ids/{id}")
def get_schema(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    definition = registry.schema(schema_id(params))
    text = registry.formatted(definition, query.get("format"))
    result: dict[str, Any] = {"schema": text, "schemaType": definition.schema_type}
    if definition.references:
        result["references"] = [r.to_json() for r in definition.references]
    return result


@route("GET", "/schemas/ids/{id}/schema")
def get_raw_schema(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    return raw(registry.schema(schema_id(params)))


@route("GET", "/schemas/ids/{id}/versions")
def schema_versions(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    usages = registry.schema_usages(schema_id(params), deleted=flag(query, "deleted"))
    subject = query.get("subject")
    return page([{"subject": s, "version": v} for s, v in usages if subject in (None, s)], query)


@route("GET", "/schemas/ids/{id}/subjects")
def schema_subjects(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    usages = registry.schema_usages(schema_id(params), deleted=flag(query, "deleted"))
    return page(sorted({s for s, _ in usages}), query)


@route("GET", "/subjects")
def subjects(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    prefix = query.get("subjectPrefix", "")
    if flag(query, "deleted_only"):
        live = set(registry.subjects(prefix=prefix))
        names = [s for s in registry.subjects(deleted=True, prefix=prefix) if s not in live]
    else:
        names = registry.subjects(deleted=flag(query, "deleted"), prefix=prefix)
    return page(names, query)


@route("POST", "/subjects/{subject}")
def lookup(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    found = registry.lookup(
        params["subject"],
        body_object(body),
        deleted=flag(query, "deleted"),
        normalize=flag(query, "normalize"),
    )
    return found.to_json()


@route("DELETE", "/subjects/{subject}")
def delete_subject(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    return registry.delete_subject(params["subject"], permanent=flag(query, "permanent"))


@route("GET", "/subjects/{subject}/versions")
def versions(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    subject = params["subject"]
    if flag(query, "deleted_only"):
        live = set(registry.versions(subject))
        return page([v for v in registry.versions(subject, deleted=True) if v not in live], query)
    return page(registry.versions(subject, deleted=flag(query, "deleted")), query)


@route("POST", "/subjects/{subject}/versions")
def register(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    found = registry.register(
        params["subject"], body_object(body), normalize=flag(query, "normalize")
    )
    return found.to_json()


@route("GET", "/subjects/{subject}/versions/{version}")
def get_version(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    found = registry.version(params["subject"], params["version"], deleted=flag(query, "deleted"))
    answer = found.to_json()
    answer["schema"] = registry.formatted(found.definition, query.get("format"))
    return answer


@route("GET", "/subjects/{subject}/versions/{version}/schema")
def get_version_schema(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    found = registry.version(params["subject"], params["version"], deleted=flag(query, "deleted"))
    return raw(found.definition)


@route("GET", "/subjects/{subject}/versions/{version}/referencedby")
def referenced_by(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    return page(registry.referenced_by(params["subject"], params["version"]), query)


@route("DELETE", "/subjects/{subject}/versions/{version}")
def delete_version(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    return registry.delete_version(
        params["subject"], params["version"], permanent=flag(query, "permanent")
    )


def _compatibility(registry: Registry, subject: str, version: str, query: Query, body: Any) -> Any:
    problems = registry.check(
        subject, version, body_object(body), normalize=flag(query, "normalize")
    )
    result: dict[str, Any] = {"is_compatible": not problems}
    if flag(query, "verbose"):
        result["messages"] = problems
    return result


@route("POST", "/compatibility/subjects/{subject}/versions/{version}")
def compatibility_version(
    registry: Registry, params: dict[str, str], query: Query, body: Any
) -> Any:
    return _compatibility(registry, params["subject"], params["version"], query, body)


@route("POST", "/compatibility/subjects/{subject}/versions")
def compatibility_all(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    return _compatibility(registry, params["subject"], "all", query, body)


@route("GET", "/config")
def get_global_config(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    return {"compatibilityLevel": registry.compatibility(None, fallback=True)}


@route("PUT", "/config")
def put_global_config(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    return {
        "compatibility": registry.set_compatibility(None, body_object(body).get("compatibility"))
    }


@route("DELETE", "/config")
def delete_global_config(
    registry: Registry, params: dict[str, str], query: Query, body: Any
) -> Any:
    return {"compatibilityLevel": registry.delete_compatibility(None)}


@route("GET", "/config/{subject}")
def get_config(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    level = registry.compatibility(params["subject"], fallback=flag(query, "defaultToGlobal"))
    return {"compatibilityLevel": level}


@route("PUT", "/config/{subject}")
def put_config(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    level = registry.set_compatibility(params["subject"], body_object(body).get("compatibility"))
    return {"compatibility": level}


@route("DELETE", "/config/{subject}")
def delete_config(registry: Registry, params: dict[str, str], query: Query, body: Any) -> Any:
    return {"compatibilityLevel": registry.delete_compatibility(params["subject"])}


class RegistryRequestHandler(BaseHTTPRequestHandler):
    server: RegistryHTTPServer
    protocol_version = "HTTP/1.1"
    # Headers and body leave in two writes: with Nagle on, a keep-alive client's delayed ACK
    # holds every response back ~40 ms.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        path = url.path.rstrip("/")
        status, payload = HTTPStatus.OK, None
        try:
            body = self._body()
            matched = False
            for route_method, regex, handler in ROUTES:
                found = regex.match(path)
                matched = matched or found is not None
                if found and route_method == method:
                    params = {k: unquote(v) for k, v in found.groupdict().items()}
                    payload = handler(self.server.registry, params, query, body)
                    break
            else:
                code = HTTPStatus.METHOD_NOT_ALLOWED if matched else HTTPStatus.NOT_FOUND
                raise RegistryError(code, code, f"{method} {url.path}: no such endpoint")
        except RegistryError as error:
            status, payload = (
                HTTPStatus(error.status),
                {
                    "error_code": error.code,
                    "message": error.reason,
                },
            )
        except Exception as error:  # a bug must not kill the server thread silently
            status, payload = (
                HTTPStatus.INTERNAL_SERVER_ERROR,
                {
                    "error_code": 500,
                    "message": f"internal error: {error!r}",
                },
            )
        data = orjson.dumps(payload)
        self.send_response(status)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        if not length:
            return None
        raw = self.rfile.read(length)
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise RegistryError(400, 400, f"the request body is not JSON: {exc}") from None

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:  # no route takes it: a JSON 405 rather than stdlib HTML
        self._dispatch("PATCH")


class RegistryHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        registry: Registry,
        host: str = "127.0.0.1",
        port: int = 8081,
        *,
        verbose: bool = False,
    ) -> None:
        self.registry = registry
        self.verbose = verbose
        super().__init__((host, port), RegistryRequestHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> threading.Thread:
        """Serve on a background thread (tests, the demo); stop with :meth:`stop`."""
        thread = threading.Thread(target=self.serve_forever, name="registry-http", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
