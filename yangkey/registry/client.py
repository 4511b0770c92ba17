"""The producer's side: the value schema of each derived topic, registered under
``<topic>-value`` in any Confluent-compatible registry, and its id for the ``schema-id`` header.

Nothing here is specific to yangkey's own registry: the calls are the standard
``confluent_kafka.schema_registry`` client's (lookup first, so a registry where the schemas were
registered ahead of time and writes are refused still works; register when it is missing).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from yangkey.catalog import Catalog
from yangkey.registry.errors import RegistryError
from yangkey.registry.jsonschema import branch_schema
from yangkey.schema import ModuleInfo, SchemaContext

NOT_FOUND = (40401, 40403)


def subject_for(topic: str) -> str:
    """The subject of a topic's value schema (Confluent's TopicNameStrategy)."""
    return f"{topic}-value"


def topic_schemas(catalog: Catalog, *, yang_dirs: Iterable[str] = ()) -> dict[str, str]:
    """``{topic: JSON Schema text}`` for every derived topic of ``catalog``.

    The YANG search path is ``yang_dirs`` then the file's default ``yang_dirs``, as the
    producer resolves modules (:class:`yangkey.records.MessageBuilder`).
    """
    schema = SchemaContext.cached((*yang_dirs, *catalog.file.defaults.yang_dirs))
    found: dict[str, str] = {}
    for entry in catalog.entries:
        for branch, topic in zip(entry.compiled.branches, entry.topics, strict=True):
            if topic not in found:
                document = branch_schema(schema, branch, entry.compiled.modules, title=topic)
                found[topic] = orjson.dumps(document, option=orjson.OPT_SORT_KEYS).decode()
    return dict(sorted(found.items()))


class SchemaIds:
    """Schema ids by topic, each registered or looked up once per process."""

    def __init__(self, url: str, config: dict[str, Any] | None = None) -> None:
        from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: PLC0415

        self.url = url
        self.client = SchemaRegistryClient({"url": url, **(config or {})})
        self._ids: dict[str, int] = {}

    def id_for(self, topic: str, schema_text: str, schema_type: str = "JSON") -> int:
        known = self._ids.get(topic)
        if known is not None:
            return known
        from confluent_kafka.schema_registry import Schema  # noqa: PLC0415

        schema_id, _ = self.subject_version(subject_for(topic), Schema(schema_text, schema_type))
        self._ids[topic] = schema_id
        return schema_id

    def subject_version(self, subject: str, schema: Any) -> tuple[int, int]:
        """(id, version) of ``schema`` under ``subject``: looked up, else registered."""
        from confluent_kafka.schema_registry.error import SchemaRegistryError  # noqa: PLC0415

        try:
            try:
                found = self.client.lookup_schema(subject, schema)
            except SchemaRegistryError as exc:
                if exc.error_code not in NOT_FOUND:
                    raise
                self.client.register_schema(subject, schema)
                found = self.client.lookup_schema(subject, schema)
            return int(found.schema_id or 0), int(found.version or 0)
        except SchemaRegistryError as exc:
            raise RegistryError(
                exc.http_status_code,
                exc.error_code,
                f"{subject}: {exc.error_message}",
                source=self.url,
            ) from None
        except Exception as exc:  # the transport's own errors (refused, DNS, TLS)
            raise RegistryError(
                503, 50003, f"{subject}: cannot reach the registry: {exc}", source=self.url
            ) from None


def register_topic_schemas(
    url: str, catalog: Catalog, *, yang_dirs: Iterable[str] = ()
) -> dict[str, int]:
    """Register (or look up) the value schema of every derived topic; ``{topic: id}``."""
    ids = SchemaIds(url)
    return {
        topic: ids.id_for(topic, text)
        for topic, text in topic_schemas(catalog, yang_dirs=yang_dirs).items()
    }


def module_order(catalog: Catalog, *, yang_dirs: Iterable[str] = ()) -> list[ModuleInfo]:
    """The YANG modules the catalog's subscriptions use, with everything they import or
    include, dependencies first (YANG forbids import cycles)."""
    index = SchemaContext.cached((*yang_dirs, *catalog.file.defaults.yang_dirs)).index
    order: list[ModuleInfo] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        info = index.get(name)
        for dependency in (*info.imports, *info.includes):
            visit(dependency)
        order.append(info)

    for entry in catalog.entries:
        for name in entry.compiled.modules:
            visit(name)
    return order


def register_yang_modules(
    url: str, catalog: Catalog, *, yang_dirs: Iterable[str] = ()
) -> dict[str, tuple[int, int]]:
    """Register each module the catalog uses as a ``YANG`` schema under its own name, with a
    reference per import/include; ``{module: (id, version)}``."""
    from confluent_kafka.schema_registry import Schema, SchemaReference  # noqa: PLC0415

    ids = SchemaIds(url)
    registered: dict[str, tuple[int, int]] = {}
    for info in module_order(catalog, yang_dirs=yang_dirs):
        references = [
            SchemaReference(name, name, registered[name][1])
            for name in (*info.imports, *info.includes)
        ]
        schema = Schema(info.path.read_text(encoding="utf-8"), "YANG", references)
        registered[info.name] = ids.subject_version(info.name, schema)
    return registered
