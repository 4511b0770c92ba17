"""The producer's side: the value schema of each derived topic, registered under
``<topic>-value`` in any Confluent-compatible registry, and its id for the ``schema-id`` header.

Nothing here is specific to yangkey's own registry: the calls are the standard
``confluent_kafka.schema_registry`` client's (lookup first, so a registry where the schemas were
registered ahead of time and writes are refused still works; register when it is missing).
Credentials (URL userinfo, ``basic.auth.user.info``) reach the client only: every message names
the registry by :func:`shown_url`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from yangkey.catalog import Catalog
from yangkey.entries import CatalogEntry
from yangkey.errors import ConfigError
from yangkey.kafka.config import env_overlay
from yangkey.modules import ModuleInfo
from yangkey.registry.errors import RegistryError
from yangkey.registry.jsonschema import branch_schema
from yangkey.schema import SchemaContext

NOT_FOUND = (40401, 40403)
ENV_URL = "YANGKEY_SCHEMA_REGISTRY"
ENV_PREFIX = "YANGKEY_SCHEMA_REGISTRY_"
"""``YANGKEY_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO`` -> ``basic.auth.user.info`` (the client's
property names hold no ``_``): secrets stay off the command line."""


def subject_for(topic: str) -> str:
    """The subject of a topic's value schema (Confluent's TopicNameStrategy)."""
    return f"{topic}-value"


def shown_url(url: str) -> str:
    """``url`` (a comma-separated list, as the client takes) without passwords."""
    shown = []
    for one in url.split(","):
        parts = urlsplit(one.strip())
        if parts.password is not None:
            host = parts.netloc.rpartition("@")[2]
            parts = parts._replace(netloc=f"{parts.username}:***@{host}")
        shown.append(urlunsplit(parts))
    return ",".join(shown)


def _secrets(url: str, config: Mapping[str, str]) -> list[str]:
    found = [p for one in url.split(",") if (p := urlsplit(one.strip()).password)]
    info = config.get("basic.auth.user.info", "")
    if ":" in info:
        found.append(info.partition(":")[2])
    found.extend(v for k, v in config.items() if "password" in k or "secret" in k)
    return [secret for secret in found if secret]


def _typed(config: Mapping[str, str]) -> dict[str, object]:
    """Command-line and environment text as the client's property types: it refuses
    ``max.retries="3"`` and takes ``ssl.ca.location=False`` to skip verification."""
    typed: dict[str, object] = {}
    for key, value in config.items():
        text = value.strip().lower()
        if text.isdigit():
            typed[key] = int(text)
        elif text in ("true", "false"):
            typed[key] = text == "true"
        else:
            typed[key] = value
    return typed


@dataclass(frozen=True)
class RegistrySettings:
    """Where the producer's registry is and how to talk to it: plain values, shipped to
    executors, hashable (the key of the per-process client)."""

    url: str
    config: tuple[tuple[str, str], ...] = ()
    """``SchemaRegistryClient`` properties besides ``url`` (TLS, basic auth, retries)."""

    @classmethod
    def from_options(
        cls, url: str, kv: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
    ) -> RegistrySettings:
        """Properties from ``YANGKEY_SCHEMA_REGISTRY_<KEY>``, then ``kv`` (later wins)."""
        merged = {**env_overlay(environ, ENV_PREFIX), **(kv or {})}
        return cls(url, tuple(sorted(merged.items())))

    @property
    def shown(self) -> str:
        return shown_url(self.url)


def _entry_schema(schema: SchemaContext, entry: CatalogEntry, index: int, topic: str) -> str:
    branch = entry.compiled.branches[index]
    document = branch_schema(schema, branch, entry.compiled.modules, title=topic)
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS).decode()


def topic_schemas(catalog: Catalog, *, yang_dirs: Iterable[str] = ()) -> dict[str, str]:
    """``{topic: JSON Schema text}`` for every derived topic of ``catalog``.

    The YANG search path is ``yang_dirs`` then the catalog's (the file's ``yang_dirs``,
    resolved against its directory), as the producer resolves modules
    (:class:`yangkey.producer.MessageBuilder`).
    """
    schema = SchemaContext.cached(tuple(dict.fromkeys((*yang_dirs, *catalog.yang_dirs))))
    found: dict[str, str] = {}
    for entry in catalog.entries:
        for index, topic in enumerate(entry.topics):
            if topic not in found:
                found[topic] = _entry_schema(schema, entry, index, topic)
    return dict(sorted(found.items()))


def learned_topic_schema(catalog: Catalog, topic: str) -> str | None:
    """The JSON Schema text of ``topic`` if a learned subscription derives it, else None (the
    dead-letter topic, a single topic). Learned entries are compiled against the catalog's
    own search path (:meth:`Catalog.learn`), and so is their schema."""
    for entry in catalog.learned:
        if topic in entry.topics:
            return _entry_schema(catalog.schema(), entry, entry.topics.index(topic), topic)
    return None


class SchemaIds:
    """Schema ids by topic, each registered or looked up once per instance."""

    def __init__(self, url: str, config: Mapping[str, str] | None = None) -> None:
        from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: PLC0415

        self.url = url
        self.source = shown_url(url)
        self._secrets = _secrets(url, config or {})
        try:
            self.client = SchemaRegistryClient({"url": url, **_typed(config or {})})
        except (ValueError, TypeError) as exc:  # a bad URL or an unknown property
            raise ConfigError(
                f"schema registry client: {self._scrub(str(exc))}", source=self.source
            ) from None
        self._ids: dict[str, int] = {}

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def known(self, topic: str) -> int | None:
        return self._ids.get(topic)

    def remember(self, ids: Mapping[str, int]) -> None:
        """Ids the driver found: an executor never asks the registry for those."""
        self._ids.update(ids)

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
                self._scrub(f"{subject}: {exc.error_message}"),
                source=self.source,
            ) from None
        except Exception as exc:  # the transport's own errors (refused, DNS, TLS)
            reason = str(exc) or type(exc).__name__
            raise RegistryError(
                503,
                50003,
                self._scrub(f"{subject}: cannot reach the registry: {reason}"),
                source=self.source,
            ) from None


_PROCESS: dict[RegistrySettings, SchemaIds] = {}


def process_ids(settings: RegistrySettings) -> SchemaIds:
    """The one client (and id cache) of this Python process for ``settings``: every task an
    executor runs shares it, so a learned topic costs one registry call per executor."""
    ids = _PROCESS.get(settings)
    if ids is None:
        ids = _PROCESS[settings] = SchemaIds(settings.url, dict(settings.config))
    return ids


def learned_topic_id(settings: RegistrySettings, catalog: Catalog, topic: str) -> int | None:
    """The id of a topic a learned subscription derives (registered on first use in this
    process), or None for a topic no subscription derives."""
    ids = process_ids(settings)
    known = ids.known(topic)
    if known is not None:
        return known
    text = learned_topic_schema(catalog, topic)
    return None if text is None else ids.id_for(topic, text)


def register_topic_schemas(
    registry: str | SchemaIds, catalog: Catalog, *, yang_dirs: Iterable[str] = ()
) -> dict[str, int]:
    """Register (or look up) the value schema of every derived topic; ``{topic: id}``."""
    ids = SchemaIds(registry) if isinstance(registry, str) else registry
    return {
        topic: ids.id_for(topic, text)
        for topic, text in topic_schemas(catalog, yang_dirs=yang_dirs).items()
    }


def module_order(catalog: Catalog, *, yang_dirs: Iterable[str] = ()) -> list[ModuleInfo]:
    """The YANG modules the catalog's subscriptions use, with everything they import or
    include, dependencies first (YANG forbids import cycles)."""
    index = SchemaContext.cached(tuple(dict.fromkeys((*yang_dirs, *catalog.yang_dirs)))).index
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
    registry: str | SchemaIds, catalog: Catalog, *, yang_dirs: Iterable[str] = ()
) -> dict[str, tuple[int, int]]:
    """Register each module the catalog uses as a ``YANG`` schema under its own name, with a
    reference per import/include; ``{module: (id, version)}``."""
    from confluent_kafka.schema_registry import Schema, SchemaReference  # noqa: PLC0415

    ids = SchemaIds(registry) if isinstance(registry, str) else registry
    registered: dict[str, tuple[int, int]] = {}
    for info in module_order(catalog, yang_dirs=yang_dirs):
        references = [
            SchemaReference(name, name, registered[name][1])
            for name in (*info.imports, *info.includes)
        ]
        schema = Schema(info.path.read_text(encoding="utf-8"), "YANG", references)
        registered[info.name] = ids.subject_version(info.name, schema)
    return registered
