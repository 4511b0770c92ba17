"""The Confluent Schema Registry REST API over :class:`Registry`: the routes and what they
answer. HTTP itself (negotiation, limits, auth, errors) is :mod:`yangkey.registry.web`;
serving it, :mod:`yangkey.registry.httpd`.

Errors are Confluent's JSON (``{"error_code": 40401, "message": "..."}``) with its HTTP status,
so clients written for that registry (``confluent_kafka.schema_registry``, Java serdes,
Kafka Connect) branch on them as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from yangkey.registry.errors import RegistryError
from yangkey.registry.schematypes import SCHEMA_TYPES, raw
from yangkey.registry.store import SchemaDef
from yangkey.registry.web import Call, Handler, Memory

ROUTES: list[tuple[str, str, Handler, Memory | None]] = []


def route(
    method: str, pattern: str, *, memory: Memory | None = None
) -> Callable[[Handler], Handler]:
    """Declare a handler; ``memory``: its fast path (answers from memory or returns None)."""

    def register(handler: Handler) -> Handler:
        ROUTES.append((method, pattern, handler, memory))
        return handler

    return register


def flag(call: Call, name: str) -> bool:
    return call.query.get(name, "false").lower() == "true"


def page(items: list[Any], call: Call) -> list[Any]:
    try:
        offset = int(call.query.get("offset", "0") or 0)
        limit = int(call.query.get("limit", "-1") or -1)
    except ValueError:
        raise RegistryError(400, 400, "offset and limit must be integers") from None
    items = items[max(offset, 0) :]
    return items if limit < 0 else items[:limit]


def body_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise RegistryError(422, 42201, "Invalid schema: the request body is not a JSON object")
    return body


def schema_id(call: Call) -> int:
    text = call.params["id"]
    if not text.isdigit():  # Jersey's answer to an {id} that is no integer
        raise RegistryError(404, 404, "HTTP 404 Not Found")
    return int(text)


def schema_json(call: Call, definition: SchemaDef) -> dict[str, Any]:
    text = call.registry.formatted(definition, call.query.get("format"))
    result: dict[str, Any] = {"schema": text, "schemaType": definition.schema_type}
    if definition.references:
        result["references"] = [r.to_json() for r in definition.references]
    if flag(call, "includeSubjects"):  # Karapace's
        usages = call.registry.schema_usages(schema_id(call), deleted=flag(call, "deleted"))
        result["subjects"] = sorted({s for s, _ in usages})
    if flag(call, "fetchMaxId"):
        result["maxId"] = call.registry.store.next_id - 1
    return result


@route("GET", "")
def root(call: Call) -> Any:
    return {}


@route("GET", "/schemas/types")
def schema_types(call: Call) -> Any:
    return list(SCHEMA_TYPES)


@route("GET", "/contexts")
def contexts(call: Call) -> Any:
    return ["."]  # the default context only


@route("GET", "/schemas")
def all_schemas(call: Call) -> Any:
    found = call.registry.schemas(
        prefix=call.query.get("subjectPrefix", ""),
        deleted=flag(call, "deleted"),
        latest_only=flag(call, "latestOnly"),
    )
    return page([f.to_json() for f in found], call)


def _cached_schema(call: Call) -> Any:
    if call.query:
        return None
    definition = call.registry.cached_schema(schema_id(call))
    return None if definition is None else schema_json(call, definition)


@route("GET", "/schemas/ids/{id}", memory=_cached_schema)
def get_schema(call: Call) -> Any:
    return schema_json(call, call.registry.schema(schema_id(call)))


def _cached_raw_schema(call: Call) -> Any:
    definition = call.registry.cached_schema(schema_id(call))
    return None if definition is None else raw(definition)


@route("GET", "/schemas/ids/{id}/schema", memory=_cached_raw_schema)
def get_raw_schema(call: Call) -> Any:
    return raw(call.registry.schema(schema_id(call)))


@route("GET", "/schemas/ids/{id}/versions")
def schema_versions(call: Call) -> Any:
    usages = call.registry.schema_usages(schema_id(call), deleted=flag(call, "deleted"))
    subject = call.query.get("subject")
    return page([{"subject": s, "version": v} for s, v in usages if subject in (None, s)], call)


@route("GET", "/schemas/ids/{id}/subjects")
def schema_subjects(call: Call) -> Any:
    usages = call.registry.schema_usages(schema_id(call), deleted=flag(call, "deleted"))
    return page(sorted({s for s, _ in usages}), call)


@route("GET", "/subjects")
def subjects(call: Call) -> Any:
    registry, prefix = call.registry, call.query.get("subjectPrefix", "")
    if flag(call, "deleted_only"):
        live = set(registry.subjects(prefix=prefix))
        names = [s for s in registry.subjects(deleted=True, prefix=prefix) if s not in live]
    else:
        names = registry.subjects(deleted=flag(call, "deleted"), prefix=prefix)
    return page(names, call)


@route("POST", "/subjects/{subject}")
def lookup(call: Call) -> Any:
    subject = call.params["subject"]
    found = call.registry.lookup(
        subject,
        body_object(call.body),
        deleted=flag(call, "deleted"),
        normalize=flag(call, "normalize"),
    )
    return found.to_json()


@route("DELETE", "/subjects/{subject}")
def delete_subject(call: Call) -> Any:
    return call.registry.delete_subject(call.params["subject"], permanent=flag(call, "permanent"))


@route("GET", "/subjects/{subject}/versions")
def versions(call: Call) -> Any:
    registry, subject = call.registry, call.params["subject"]
    if flag(call, "deleted_only"):
        live = set(registry.versions(subject))
        return page([v for v in registry.versions(subject, deleted=True) if v not in live], call)
    return page(registry.versions(subject, deleted=flag(call, "deleted")), call)


@route("POST", "/subjects/{subject}/versions")
def register(call: Call) -> Any:
    found = call.registry.register(
        call.params["subject"], body_object(call.body), normalize=flag(call, "normalize")
    )
    return found.to_json()


def _cached_version(call: Call) -> Any:
    if "format" in call.query:
        return None
    found = call.registry.cached_version(
        call.params["subject"], call.params["version"], deleted=flag(call, "deleted")
    )
    return None if found is None else found.to_json()


@route("GET", "/subjects/{subject}/versions/{version}", memory=_cached_version)
def get_version(call: Call) -> Any:
    found = call.registry.version(
        call.params["subject"], call.params["version"], deleted=flag(call, "deleted")
    )
    answer = found.to_json()
    answer["schema"] = call.registry.formatted(found.definition, call.query.get("format"))
    return answer


@route("GET", "/subjects/{subject}/versions/{version}/schema")
def get_version_schema(call: Call) -> Any:
    found = call.registry.version(
        call.params["subject"], call.params["version"], deleted=flag(call, "deleted")
    )
    return raw(found.definition)


@route("GET", "/subjects/{subject}/versions/{version}/referencedby")
def referenced_by(call: Call) -> Any:
    return page(call.registry.referenced_by(call.params["subject"], call.params["version"]), call)


@route("DELETE", "/subjects/{subject}/versions/{version}")
def delete_version(call: Call) -> Any:
    return call.registry.delete_version(
        call.params["subject"], call.params["version"], permanent=flag(call, "permanent")
    )


def _compatibility(call: Call, version: str) -> Any:
    problems = call.registry.check(
        call.params["subject"], version, body_object(call.body), normalize=flag(call, "normalize")
    )
    result: dict[str, Any] = {"is_compatible": not problems}
    if flag(call, "verbose"):
        result["messages"] = problems
    return result


@route("POST", "/compatibility/subjects/{subject}/versions/{version}")
def compatibility_version(call: Call) -> Any:
    return _compatibility(call, call.params["version"])


@route("POST", "/compatibility/subjects/{subject}/versions")
def compatibility_all(call: Call) -> Any:
    return _compatibility(call, "all")


def _level(body: Any) -> Any:
    """``compatibility`` (the REST API's name) or ``compatibilityLevel`` (what GET answers,
    and what ``confluent_kafka``'s ``ServerConfig`` sends)."""
    request = body_object(body)
    return request.get("compatibility", request.get("compatibilityLevel"))


@route("GET", "/config")
def get_global_config(call: Call) -> Any:
    return {"compatibilityLevel": call.registry.compatibility(None, fallback=True)}


@route("PUT", "/config")
def put_global_config(call: Call) -> Any:
    return {"compatibility": call.registry.set_compatibility(None, _level(call.body))}


@route("DELETE", "/config")
def delete_global_config(call: Call) -> Any:
    return {"compatibilityLevel": call.registry.delete_compatibility(None)}


@route("GET", "/config/{subject}")
def get_config(call: Call) -> Any:
    level = call.registry.compatibility(
        call.params["subject"], fallback=flag(call, "defaultToGlobal")
    )
    return {"compatibilityLevel": level}


@route("PUT", "/config/{subject}")
def put_config(call: Call) -> Any:
    return {
        "compatibility": call.registry.set_compatibility(call.params["subject"], _level(call.body))
    }


@route("DELETE", "/config/{subject}")
def delete_config(call: Call) -> Any:
    return {"compatibilityLevel": call.registry.delete_compatibility(call.params["subject"])}


@route("GET", "/mode")
def get_global_mode(call: Call) -> Any:
    return {"mode": call.registry.mode(None, fallback=True)}


@route("PUT", "/mode")
def put_global_mode(call: Call) -> Any:
    mode = body_object(call.body).get("mode")
    return {"mode": call.registry.set_mode(None, mode, force=flag(call, "force"))}


@route("DELETE", "/mode")
def delete_global_mode(call: Call) -> Any:
    return {"mode": call.registry.delete_mode(None)}


@route("GET", "/mode/{subject}")
def get_mode(call: Call) -> Any:
    mode = call.registry.mode(call.params["subject"], fallback=flag(call, "defaultToGlobal"))
    return {"mode": mode}


@route("PUT", "/mode/{subject}")
def put_mode(call: Call) -> Any:
    mode = body_object(call.body).get("mode")
    return {"mode": call.registry.set_mode(call.params["subject"], mode, force=flag(call, "force"))}


@route("DELETE", "/mode/{subject}")
def delete_mode(call: Call) -> Any:
    return {"mode": call.registry.delete_mode(call.params["subject"])}
