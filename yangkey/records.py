"""Raw notification bytes -> keyed messages for Kafka, or a rejection.

See docs/design.md#producer-contract and docs/design.md#bad-input.

This is the producer's per-record function, shared by the Spark job, the demo and the CLI.
It never raises for bad input: every failure becomes a :class:`Rejection` naming the source
position and the reason, so the caller can route it to the dead-letter topic and keep going.

The draft's three producer knobs are :class:`ProducerKnobs`: message keys on/off, a topic per
subscription branch on/off, and the subscription-type topic level (which is part of the
catalog's topic names).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from yangkey.catalog import Catalog, CatalogEntry, type_level
from yangkey.config import SubscriptionType
from yangkey.errors import NotificationError, YangkeyError
from yangkey.keys import KeyDeriver
from yangkey.messages import (
    HEADER_CONTENT_TYPE,
    HEADER_EVENT_TIME,
    HEADER_GENERATION,
    HEADER_SCHEMA_ID,
    HEADER_SEQUENCE_NUMBER,
    HEADER_SUBSCRIPTION_TYPE,
    KeyedMessage,
    Rejection,
)
from yangkey.notifications import decode
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription


@dataclass(frozen=True)
class ProducerKnobs:
    keys: bool = True
    """Off: no key, the producer spreads messages round robin."""
    per_branch: bool = True
    """Off: every message goes to ``single_topic``."""
    single_topic: str = "yang-push"
    schema_id: int | None = None
    learn: bool = True
    """Compile subscriptions found in telemetry-message metadata that the catalog lacks."""

    @classmethod
    def from_catalog(cls, catalog: Catalog, **overrides: Any) -> ProducerKnobs:
        policy = catalog.file.topic_policy
        values: dict[str, Any] = {
            "keys": policy.keys,
            "per_branch": policy.per_branch,
            "single_topic": policy.single_topic,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


class MessageBuilder:
    """Turns raw notifications into keyed messages using a compiled catalog."""

    def __init__(
        self,
        catalog: Catalog,
        knobs: ProducerKnobs | None = None,
        *,
        default_node: str | None = None,
        yang_dirs: tuple[str, ...] = (),
    ) -> None:
        self.catalog = catalog
        self.knobs = knobs or ProducerKnobs.from_catalog(catalog)
        self.default_node = default_node
        self.yang_dirs = (*yang_dirs, *catalog.file.defaults.yang_dirs)
        self.schema = SchemaContext.cached(self.yang_dirs)
        self.ns_modules = self.schema.index.by_namespace
        self._learned: dict[tuple[str, str], CatalogEntry] = {}
        self._fixed_headers: dict[tuple[int, str], tuple[tuple[str, bytes], ...]] = {}

    def fixed_headers(
        self, entry: CatalogEntry, content_type: str
    ) -> tuple[tuple[str, bytes], ...]:
        """The headers that depend only on the subscription and the encoding."""
        headers = [
            (HEADER_CONTENT_TYPE, content_type.encode()),
            (HEADER_GENERATION, str(entry.generation).encode()),
            (HEADER_SUBSCRIPTION_TYPE, entry.subscription_type.encode()),
        ]
        if self.knobs.schema_id is not None:
            headers.append((HEADER_SCHEMA_ID, str(self.knobs.schema_id).encode()))
        return tuple(headers)

    def build(self, raw: bytes, source: str) -> list[KeyedMessage] | Rejection:
        try:
            return self._build(raw, source)
        except YangkeyError as exc:
            return Rejection(source=source, kind=exc.kind, reason=exc.reason, raw=raw)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            # Data shapes no check anticipated (a list where a leaf belongs, …): still a
            # rejection of this record, never a crash of the whole job.
            return Rejection(source, "input", f"unexpected data shape: {exc}", raw)

    def _build(self, raw: bytes, source: str) -> list[KeyedMessage]:
        note = decode(raw, source, self.ns_modules)
        if note.subscription_id is None:
            raise NotificationError("the notification carries no subscription id", source=source)
        entry = self.catalog.entry(note.subscription_id, note.node or self.default_node)
        if entry is None:
            entry = self._learn(note.subscription_id, note.subscription, source)
        derived = entry.deriver.derive(note, default_node=self.default_node)
        fixed = self._fixed_headers.get((entry.id, note.content_type))
        if fixed is None:
            fixed = self._fixed_headers[(entry.id, note.content_type)] = self.fixed_headers(
                entry, note.content_type
            )
        sequence = (HEADER_SEQUENCE_NUMBER, str(note.sequence_number or 0).encode())
        if note.event_time:
            event_time = (HEADER_EVENT_TIME, str(note.event_time).encode())
            header_tuple = (*fixed, sequence, event_time)
        else:
            header_tuple = (*fixed, sequence)
        if not self.knobs.per_branch:
            key = derived.key if self.knobs.keys else None
            return [KeyedMessage(self.knobs.single_topic, key, raw, header_tuple)]
        messages: list[KeyedMessage] = []
        for index, xpaths in enumerate(derived.branch_xpaths):
            if not xpaths:
                continue
            key = derived.branch_key(index) if self.knobs.keys else None
            messages.append(KeyedMessage(entry.topics[index], key, raw, header_tuple))
        return messages

    def _learn(
        self, subscription_id: int, metadata: dict[str, Any] | None, source: str
    ) -> CatalogEntry:
        """Compile a subscription described by telemetry-message metadata, once per filter and
        YANG library content id (docs/design.md#subscription-catalog)."""
        known = ", ".join(str(e.id) for e in self.catalog.entries) or "none"
        if not self.knobs.learn or not metadata:
            raise NotificationError(
                f"unknown subscription id {subscription_id} (catalog has {known}) and no "
                "yang-push-subscription metadata to learn it from",
                source=source,
            )
        xpath = metadata.get("xpath-filter")
        subtree = metadata.get("subtree-filter")
        if not isinstance(xpath, str) and not isinstance(subtree, str):
            raise NotificationError(
                f"subscription {subscription_id}: metadata has neither xpath-filter nor "
                "subtree-filter",
                source=source,
            )
        filter_text = xpath if isinstance(xpath, str) else str(subtree)
        content_id = str(metadata.get("yang-library-content-id", ""))
        cache_key = (filter_text, content_id)
        entry = self._learned.get(cache_key)
        if entry is not None and entry.id == subscription_id:
            return entry
        compiled = compile_subscription(
            filter_text,
            self.schema,
            subtree=not isinstance(xpath, str),
            namespaces=metadata.get("namespaces") if isinstance(xpath, str) else None,
            source=f"subscription {subscription_id} (learned)",
        )
        subscription_type: SubscriptionType = "periodic"
        policy = self.catalog.file.topic_policy
        level = type_level(subscription_type, False) if policy.type_level else None
        entry = CatalogEntry(
            id=subscription_id,
            node_pattern=None,
            subscription_type=subscription_type,
            compaction=False,
            generation=1,
            compiled=compiled,
            topics=tuple(self.catalog.namer.name(b, level=level) for b in compiled.branches),
            deriver=KeyDeriver(compiled),
        )
        self._learned[cache_key] = entry
        return entry
