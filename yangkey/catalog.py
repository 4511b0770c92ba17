"""Subscriptions file -> compiled catalog: subscription -> branches -> templates -> topics.

The catalog owns "subscription -> compiled entry -> topics": it compiles the file's
subscriptions (Phases 1 and 2), and, when the file says ``learn: true``, the subscriptions that
telemetry-message metadata describes. Learned entries are cached per (filter text, YANG
library content id), so the same subscription seen again, or from another node, costs a dict
lookup, and their number is bounded by ``limits.max_learned_subscriptions``
(docs/design.md#subscription-catalog). Phase 3 walkers are generated on an entry's first use:
``ddl generate`` never builds one.

A catalog attached to a shared catalog (:meth:`Catalog.attach`, seed 001) writes its file's
subscriptions and every subscription it learns through it, and learns a subscription whose
messages carry no metadata from it when another process learned it first. The shared catalog
is handed in: nothing here does I/O (:mod:`yangkey.kafka.catalog_topic` is the Kafka edge).
"""

from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from yangkey.config import (
    Subscription,
    SubscriptionsFile,
    SubscriptionType,
    load_subscriptions_file,
    parse_duration,
)
from yangkey.errors import NotificationError, TopicError, YangkeyError
from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.shared_catalog import Origin, SharedBranch, SharedSubscription
from yangkey.templates import CompiledSubscription, compile_subscription
from yangkey.topics import TopicNamer, TopicSpec, check_collisions, replicas

TYPE_LEVELS: dict[tuple[SubscriptionType, bool], str] = {
    ("periodic", False): "stats",
    ("on-change", False): "state-change",
    ("on-change-sync", False): "state",
    ("on-change-sync", True): "current-state",
}


def type_level(subscription_type: SubscriptionType, compaction: bool) -> str:
    """The draft's subscription-type topic level (section 3.2)."""
    return TYPE_LEVELS.get((subscription_type, compaction), TYPE_LEVELS[(subscription_type, False)])


@dataclass(frozen=True)
class CatalogEntry:
    """One compiled subscription with its per-branch topic names."""

    id: int
    node_pattern: str | None
    subscription_type: SubscriptionType
    compaction: bool
    generation: int
    compiled: CompiledSubscription
    topics: tuple[str, ...]
    """One topic per branch, same order as ``compiled.branches``."""
    origin: Origin = "file"
    filter_text: str = ""
    """The filter as the file or the metadata gave it."""
    subtree: bool = False
    content_id: str = ""
    """The YANG library content id of a learned subscription."""
    namespaces: tuple[tuple[str, str], ...] = ()

    @functools.cached_property
    def deriver(self) -> KeyDeriver:
        """Phase 3 for this subscription; its walkers are generated on first use."""
        return KeyDeriver(self.compiled)

    def applies_to(self, node: str | None) -> bool:
        if self.node_pattern is None or node is None:
            return True
        return fnmatch.fnmatchcase(node, self.node_pattern)


class SharedStore(Protocol):
    """Where subscriptions are shared (:class:`yangkey.shared_catalog.SharedCatalog`)."""

    def publish(self, record: SharedSubscription) -> SharedSubscription:
        """Write ``record`` unless it is there; the record that won."""

    def find(self, subscription_id: int) -> list[SharedSubscription]:
        """The records of a subscription id, oldest generation first."""


@dataclass(frozen=True)
class Catalog:
    file: SubscriptionsFile
    entries: tuple[CatalogEntry, ...]
    topics: tuple[TopicSpec, ...]
    namer: TopicNamer
    yang_dirs: tuple[str, ...] = ()
    """Where the file's subscriptions found their modules; learned ones search the same."""
    _learned: dict[tuple[int, str, str, str], CatalogEntry] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _compiled: dict[tuple[str, str, str], CompiledSubscription] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _shared: list[SharedStore] = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def dead_letter_topic(self) -> str:
        return self.file.dead_letter_topic

    @property
    def learned(self) -> tuple[CatalogEntry, ...]:
        return tuple(self._learned.values())

    def schema(self) -> SchemaContext:
        return SchemaContext.cached(self.yang_dirs)

    @property
    def shared(self) -> SharedStore | None:
        return self._shared[0] if self._shared else None

    def attach(self, shared: SharedStore) -> None:
        """Share this catalog: its file's subscriptions are written to ``shared`` now, the
        ones it learns when it learns them."""
        for entry in self.entries:
            shared.publish(self.shared_record(entry))
        self._shared[:] = [shared]

    def shared_record(self, entry: CatalogEntry) -> SharedSubscription:
        """``entry`` as the shared catalog stores it, with the sizes of its topics."""
        defaults = self.file.defaults
        partitions, retention = defaults.partitions, defaults.retention
        factor, in_sync = self.file.replicated(defaults)
        if entry.origin == "file":
            for subscription in self.file.subscriptions:
                if subscription.id == entry.id and subscription.node == entry.node_pattern:
                    partitions = subscription.partitions or partitions
                    if subscription.retention is not None:
                        retention = subscription.retention
                    factor, in_sync = self.file.replicated(subscription)
                    break
        return SharedSubscription(
            id=entry.id,
            origin=entry.origin,
            filter=entry.filter_text,
            subtree=entry.subtree,
            xpath=entry.compiled.xpath,
            content_id=entry.content_id,
            generation=entry.generation,
            subscription_type=entry.subscription_type,
            compaction=entry.compaction,
            node_pattern=entry.node_pattern,
            namespaces=entry.namespaces,
            partitions=partitions,
            replication_factor=replicas(factor),
            min_insync_replicas=in_sync,
            retention_seconds=parse_duration(retention),
            warnings=entry.compiled.warnings,
            branches=tuple(
                SharedBranch(topic, b.template, b.schema_path, b.target, b.extractions)
                for b, topic in zip(entry.compiled.branches, entry.topics, strict=True)
            ),
        )

    def learn(
        self, subscription_id: int, metadata: dict[str, Any] | None, source: str
    ) -> CatalogEntry:
        """The entry of a subscription the file lacks, compiled from telemetry-message
        ``yang-push-subscription`` metadata: only with ``learn: true``, once per filter and
        YANG library content id, and at most ``limits.max_learned_subscriptions`` of them."""
        known = ", ".join(str(e.id) for e in self.entries) or "none"
        given = metadata or {}
        described = any(isinstance(given.get(k), str) for k in ("xpath-filter", "subtree-filter"))
        if self.file.learn and not described and self._shared:
            found = self._from_shared(subscription_id, source)
            if found is not None:
                return found
        if not self.file.learn or not metadata:
            why = (
                "no yang-push-subscription metadata to learn it from"
                if self.file.learn
                else "learning is off (learn: true in the subscriptions file turns it on)"
            )
            raise NotificationError(
                f"unknown subscription id {subscription_id} (catalog has {known}); {why}",
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
        namespaces = metadata.get("namespaces") if isinstance(xpath, str) else None
        content_id = str(metadata.get("yang-library-content-id", ""))
        pairs = (
            tuple(sorted((str(k), str(v)) for k, v in namespaces.items()))
            if isinstance(namespaces, dict)
            else ()
        )
        compile_key = (filter_text, content_id, repr(list(pairs)) if pairs else "")
        entry = self._learned.get((subscription_id, *compile_key))
        if entry is not None:
            return entry
        self._check_limit(subscription_id, source)
        compiled = self._compile(
            compile_key,
            filter_text,
            subtree=not isinstance(xpath, str),
            namespaces=namespaces if isinstance(namespaces, dict) else None,
            source=f"subscription {subscription_id} (learned)",
        )
        subscription_type: SubscriptionType = "periodic"
        level = type_level(subscription_type, False) if self.file.topic_policy.type_level else None
        entry = CatalogEntry(
            id=subscription_id,
            node_pattern=None,
            subscription_type=subscription_type,
            compaction=False,
            generation=1,
            compiled=compiled,
            topics=tuple(self.namer.name(b, level=level) for b in compiled.branches),
            origin="learned",
            filter_text=filter_text,
            subtree=not isinstance(xpath, str),
            content_id=content_id,
            namespaces=pairs,
        )
        if self._shared:
            # Written through before its first message is: whoever reads that message
            # (ingest creating its tables) can find the subscription first.
            winner = self._shared[0].publish(self.shared_record(entry))
            entry = replace(entry, generation=winner.generation)
        self._learned[(subscription_id, *compile_key)] = entry
        return entry

    def _check_limit(self, subscription_id: int, source: str) -> None:
        limit = self.file.limits.max_learned_subscriptions
        if len(self._learned) >= limit:
            # Refused rather than evicted: evicting would let a stream of made-up
            # subscriptions make the producer compile (and create topics) without end.
            raise NotificationError(
                f"unknown subscription id {subscription_id}: the limit of {limit} learned "
                "subscriptions is reached (limits.max_learned_subscriptions)",
                source=source,
            )

    def _compile(
        self,
        compile_key: tuple[str, str, str],
        filter_text: str,
        *,
        subtree: bool,
        namespaces: dict[str, str] | None,
        source: str,
    ) -> CompiledSubscription:
        compiled = self._compiled.get(compile_key)
        if compiled is None:
            compiled = self._compiled[compile_key] = compile_subscription(
                filter_text, self.schema(), subtree=subtree, namespaces=namespaces, source=source
            )
        return compiled

    def _from_shared(self, subscription_id: int, source: str) -> CatalogEntry | None:
        """The newest generation another process learned (or a file declared) for an id this
        catalog lacks, recompiled from its XPath; its topics are the ones its writer named,
        so that every producer routes it where ingest expects it."""
        assert self._shared
        records = [r for r in self._shared[0].find(subscription_id) if r.node_pattern is None]
        if not records:
            return None
        record = records[-1]
        pairs = record.namespaces
        compile_key = (record.filter, record.content_id, repr(list(pairs)) if pairs else "")
        entry = self._learned.get((subscription_id, *compile_key))
        if entry is not None and entry.generation == record.generation:
            return entry
        self._check_limit(subscription_id, source)
        compiled = self._compile(
            (record.xpath, record.content_id, compile_key[2]),
            record.xpath,
            subtree=False,
            namespaces=dict(pairs) or None,
            source=f"subscription {subscription_id} (shared catalog)",
        )
        topics = record.topics
        if len(topics) != len(compiled.branches):
            level = (
                type_level(record.subscription_type, record.compaction)
                if self.file.topic_policy.type_level
                else None
            )
            topics = tuple(self.namer.name(b, level=level) for b in compiled.branches)
        entry = CatalogEntry(
            id=subscription_id,
            node_pattern=None,
            subscription_type=record.subscription_type,
            compaction=record.compaction,
            generation=record.generation,
            compiled=compiled,
            topics=topics,
            origin="learned",
            filter_text=record.filter,
            subtree=record.subtree,
            content_id=record.content_id,
            namespaces=pairs,
        )
        self._learned[(subscription_id, *compile_key)] = entry
        return entry

    def entry(self, subscription_id: int, node: str | None = None) -> CatalogEntry | None:
        for entry in self.entries:
            if entry.id == subscription_id and entry.applies_to(node):
                return entry
        return None

    def topic(self, name: str) -> TopicSpec:
        for spec in self.topics:
            if spec.name == name:
                return spec
        raise KeyError(name)


def build_catalog(
    file: SubscriptionsFile,
    *,
    yang_dirs: tuple[str, ...] = (),
    base_dir: Path | None = None,
) -> Catalog:
    """Compile every subscription of ``file``; errors name the subscription."""
    defaults = file.defaults
    policy = file.topic_policy
    namer = TopicNamer(
        prefix=file.organisation_prefix,
        max_length=policy.max_length,
        separator=policy.separator,
        type_level_position=policy.type_level_position,
    )

    def resolve(dirs: tuple[str, ...]) -> tuple[str, ...]:
        if base_dir is None:
            return dirs
        return tuple(str((base_dir / d).resolve()) for d in dirs)

    entries: list[CatalogEntry] = []
    by_topic: dict[str, list[tuple[CatalogEntry, int]]] = {}
    for subscription in file.subscriptions:
        line = file.line_of(subscription.id)
        source = f"subscription {subscription.id}" + (f" (line {line})" if line else "")
        dirs = (*yang_dirs, *resolve(subscription.yang_dirs), *resolve(defaults.yang_dirs))
        try:
            schema = SchemaContext.cached(dirs, file.features)
            compiled = compile_subscription(
                subscription.filter_text,
                schema,
                subtree=subscription.subtree is not None,
                source=subscription.xpath or "subtree filter",
            )
            level = (
                type_level(subscription.type, subscription.compaction)
                if policy.type_level
                else None
            )
            names = tuple(namer.name(branch, level=level) for branch in compiled.branches)
        except YangkeyError as exc:
            raise exc.within(source) from None
        entry = CatalogEntry(
            id=subscription.id,
            node_pattern=subscription.node,
            subscription_type=subscription.type,
            compaction=subscription.compaction,
            generation=subscription.generation,
            compiled=compiled,
            topics=names,
            filter_text=subscription.filter_text,
            subtree=subscription.subtree is not None,
        )
        entries.append(entry)
        for index, name in enumerate(names):
            by_topic.setdefault(name, []).append((entry, index))

    check_collisions(
        [
            (file.dead_letter_topic, "the dead-letter topic"),
            *(
                (name, entry.compiled.branches[index].schema_path)
                for name, users in by_topic.items()
                for entry, index in users
            ),
        ]
    )

    specs: list[TopicSpec] = []
    by_id = {s.id: s for s in file.subscriptions}
    for name, users in by_topic.items():
        subscriptions = [by_id[entry.id] for entry, _ in users]
        kinds = {(s.type, s.compaction) for s in subscriptions}
        if len(kinds) > 1:
            ids = ", ".join(str(s.id) for s in subscriptions)
            raise TopicError(
                f"subscriptions {ids} share topic {name!r} but differ in type or compaction; "
                "turn on topic_policy.type_level or align them"
            )
        first = subscriptions[0]
        factor, in_sync = _replication(file, name, subscriptions)
        retention = max(
            parse_duration(s.retention if s.retention is not None else defaults.retention)
            for s in subscriptions
        )
        specs.append(
            TopicSpec(
                name=name,
                schema_path=users[0][0].compiled.branches[users[0][1]].schema_path,
                subscription_ids=tuple(sorted({s.id for s in subscriptions})),
                subscription_type=first.type,
                compaction=first.compaction,
                retention_seconds=retention,
                partitions=max(s.partitions or defaults.partitions for s in subscriptions),
                replication_factor=factor,
                min_insync_replicas=in_sync,
                templates=tuple(
                    sorted({entry.compiled.branches[i].template for entry, i in users})
                ),
            )
        )
    specs.sort(key=lambda spec: spec.name)
    return Catalog(
        file=file,
        entries=tuple(entries),
        topics=tuple(specs),
        namer=namer,
        yang_dirs=(*yang_dirs, *resolve(defaults.yang_dirs)),
    )


def _replication(
    file: SubscriptionsFile, topic: str, subscriptions: list[Subscription]
) -> tuple[int, int | None]:
    """A shared topic's replication: the most any of its subscriptions asks for."""
    pairs = [file.replicated(s) for s in subscriptions]
    factor = max((f for f, _ in pairs if f is not None), default=None)
    in_sync = max((m for _, m in pairs if m is not None), default=None)
    if factor is not None and in_sync is not None and in_sync > factor:
        ids = ", ".join(str(s.id) for s in subscriptions)
        raise TopicError(
            f"subscriptions {ids} share topic {topic!r}: min_insync_replicas {in_sync} exceeds"
            f" their largest replication_factor {factor}; align them"
        )
    return replicas(factor), in_sync


def load_catalog(path: str | Path, *, yang_dirs: tuple[str, ...] = ()) -> Catalog:
    """Read and compile a subscriptions file; relative ``yang_dirs`` are relative to it."""
    path = Path(path)
    try:
        return build_catalog(
            load_subscriptions_file(path), yang_dirs=yang_dirs, base_dir=path.parent.resolve()
        )
    except YangkeyError as exc:
        raise exc.within(str(path)) from None
