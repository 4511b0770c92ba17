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
from yangkey.schema import SchemaContext

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
        from confluent_kafka.schema_registry.error import SchemaRegistryError  # noqa: PLC0415

        schema = Schema(schema_text, schema_type)
        subject = subject_for(topic)
        try:
            try:
                schema_id = int(self.client.lookup_schema(subject, schema).schema_id or 0)
            except SchemaRegistryError as exc:
                if exc.error_code not in NOT_FOUND:
                    raise
                schema_id = int(self.client.register_schema(subject, schema))
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
        self._ids[topic] = schema_id
        return schema_id


def register_topic_schemas(
    url: str, catalog: Catalog, *, yang_dirs: Iterable[str] = ()
) -> dict[str, int]:
    """Register (or look up) the value schema of every derived topic; ``{topic: id}``."""
    ids = SchemaIds(url)
    return {
        topic: ids.id_for(topic, text)
        for topic, text in topic_schemas(catalog, yang_dirs=yang_dirs).items()
    }
