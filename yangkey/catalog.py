"""Subscriptions file -> compiled catalog: subscription -> branches -> templates -> topics.

The catalog owns "subscription -> compiled entry -> topics": it compiles the file's
subscriptions (Phases 1 and 2), and, when the file says ``learn: true``, the subscriptions that
telemetry-message metadata describes. A subscription is identified by (node, id): RFC 8639
ids are per publisher, and which entry a notification uses is :mod:`yangkey.fleet`'s
precedence (exact node, then node pattern, then fleet-wide). Learned entries are per (node,
id); their compilations are cached per (filter text, YANG library content id), so the same
subscription from another node costs a dict lookup, and their number is bounded by
``limits.max_learned_subscriptions`` (docs/design.md#subscription-catalog). Phase 3 walkers
are generated on an entry's first use: ``ddl generate`` never builds one.

A file entry that does not compile is skipped: reported (file, line, reason), left out of the
topics, and remembered, so that its notifications are dead-lettered naming it while every
other subscription runs (``strict`` raises at the first one instead).

A catalog attached to a shared catalog (:meth:`Catalog.attach`, seed 001) writes its file's
subscriptions and every subscription it learns through it, and learns a subscription whose
messages carry no metadata from it when another process learned it first. The shared catalog
is handed in: nothing here does I/O (:mod:`yangkey.kafka.catalog_topic` is the Kafka edge).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from yangkey.catalog_topics import catalog_topics
from yangkey.compiled import CompiledSubscription
from yangkey.compiler import compile_filter
from yangkey.config import (
    Subscription,
    SubscriptionsFile,
    SubscriptionType,
    load_subscriptions_file,
    parse_duration,
)
from yangkey.entries import CatalogEntry, SkippedSubscription, type_level
from yangkey.errors import NotificationError, YangkeyError
from yangkey.fleet import FleetIndex, describe, for_node
from yangkey.schema import SchemaContext
from yangkey.shared_catalog import SharedBranch, SharedSubscription
from yangkey.topics import TopicNamer, TopicSpec, replicas


class SharedStore(Protocol):
    """Where subscriptions are shared (:class:`yangkey.shared_catalog.SharedCatalog`)."""

    def publish(self, record: SharedSubscription) -> SharedSubscription:
        """Write ``record`` unless it is there; the record that won."""

    def find(self, subscription_id: int) -> list[SharedSubscription]:
        """The records of a subscription id, every node's, oldest generation first."""


KNOWN_SHOWN = 10
"""Subscription ids an "unknown subscription" error lists at most."""
_LearnKey = tuple[str | None, int, str, str, str]
"""(node, id, filter, YANG library content id, namespaces) of a learned entry."""
_Item = CatalogEntry | SkippedSubscription


@dataclass(frozen=True)
class Catalog:
    file: SubscriptionsFile
    entries: tuple[CatalogEntry, ...]
    topics: tuple[TopicSpec, ...]
    namer: TopicNamer
    yang_dirs: tuple[str, ...] = ()
    """Where the file's subscriptions found their modules; learned ones search the same."""
    skipped: tuple[SkippedSubscription, ...] = ()
    """The file's subscriptions that did not compile, in file order."""
    _learned: dict[_LearnKey, CatalogEntry] = field(
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

    @property
    def warnings(self) -> tuple[str, ...]:
        """One line each: every skipped subscription and the file's own warnings (an entry
        repeated identically), naming the file and line; then each compiled subscription's
        (a root-relative path, a non-key filter), naming the subscription."""
        return (
            *(s.message() for s in self.skipped),
            *self.file.warnings,
            *(f"{e.label}: {w}" for e in self.entries for w in e.compiled.warnings),
        )

    @functools.cached_property
    def _index(self) -> FleetIndex[_Item]:
        index: FleetIndex[_Item] = FleetIndex()
        # In file order: of several node patterns, the first declared wins (entries the file
        # does not list, a catalog put together by hand, come after, in their order).
        order = {s.identity: n for n, s in enumerate(self.file.subscriptions)}
        items: list[_Item] = [*self.entries, *self.skipped]
        for item in sorted(items, key=lambda i: order.get(i.identity, len(order))):
            index.add(item.id, item.node_pattern, item)
        return index

    def resolve(self, subscription_id: int, node: str | None) -> _Item | None:
        """The file's subscription that ``node`` uses for ``subscription_id``, a skipped one
        included (exact node, else node pattern, else fleet-wide: :mod:`yangkey.fleet`)."""
        return self._index.pick(subscription_id, node)

    def fleet_wide(self, subscription_id: int) -> frozenset[str] | None:
        """The node names :meth:`resolve` does not answer the fleet-wide subscription of
        ``subscription_id`` for when it does for every other node name; None when no
        subscription of that id is every other node's (:meth:`FleetIndex.fleet_wide`)."""
        return self._index.fleet_wide(subscription_id)

    def entry(self, subscription_id: int, node: str | None = None) -> CatalogEntry | None:
        """:meth:`resolve`, compiled entries only."""
        found = self.resolve(subscription_id, node)
        return found if isinstance(found, CatalogEntry) else None

    def topic(self, name: str) -> TopicSpec:
        for spec in self.topics:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def schema(self) -> SchemaContext:
        return SchemaContext.cached(self.yang_dirs)

    # ------------------------------------------------------------------ shared catalog

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
                if subscription.identity == entry.identity:
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

    # ------------------------------------------------------------------ learning

    def learn(
        self,
        subscription_id: int,
        metadata: dict[str, Any] | None,
        source: str,
        node: str | None = None,
    ) -> CatalogEntry:
        """The entry of a subscription the file lacks for ``node``, compiled from
        telemetry-message ``yang-push-subscription`` metadata: only with ``learn: true``, once
        per (node, id), filter and YANG library content id, and at most
        ``limits.max_learned_subscriptions`` of them. What a device says its subscription is
        holds for that device only (RFC 8639 ids are per publisher)."""
        given = metadata or {}
        described = any(isinstance(given.get(k), str) for k in ("xpath-filter", "subtree-filter"))
        if self.file.learn and not described and self._shared:
            found = self._from_shared(subscription_id, node, source)
            if found is not None:
                return found
        if not self.file.learn or not metadata:
            why = (
                "no yang-push-subscription metadata to learn it from"
                if self.file.learn
                else "learning is off (learn: true in the subscriptions file turns it on)"
            )
            raise NotificationError(
                f"unknown subscription id {subscription_id}{for_node(node)} "
                f"({self.known(node)}); {why}",
                source=source,
            )
        xpath = metadata.get("xpath-filter")
        subtree = metadata.get("subtree-filter")
        if not isinstance(xpath, str) and not isinstance(subtree, str):
            raise NotificationError(
                f"{describe(subscription_id, node)}: metadata has neither xpath-filter nor "
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
        learn_key: _LearnKey = (node, subscription_id, *compile_key)
        entry = self._learned.get(learn_key)
        if entry is not None:
            return entry
        self._check_limit(subscription_id, node, source)
        compiled = self._compile(
            compile_key,
            filter_text,
            subtree=not isinstance(xpath, str),
            namespaces=namespaces if isinstance(namespaces, dict) else None,
            source=f"{describe(subscription_id, node)} (learned)",
        )
        subscription_type: SubscriptionType = "periodic"
        level = type_level(subscription_type, False) if self.file.topic_policy.type_level else None
        entry = CatalogEntry(
            id=subscription_id,
            node_pattern=node,
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
        self._learned[learn_key] = entry
        return entry

    def known(self, node: str | None) -> str:
        """The ids the file has a subscription for ``node`` for: an "unknown subscription"
        error says them."""
        index = self._index
        ids = sorted(i for i in index.ids() if isinstance(index.pick(i, node), CatalogEntry))
        listed = ", ".join(map(str, ids[:KNOWN_SHOWN])) or "none"
        if len(ids) > KNOWN_SHOWN:
            listed += f", ... ({len(ids)} in all)"
        return f"the catalog has {listed}{for_node(node)}"

    def _check_limit(self, subscription_id: int, node: str | None, source: str) -> None:
        limit = self.file.limits.max_learned_subscriptions
        if len(self._learned) >= limit:
            # Refused rather than evicted: evicting would let a stream of made-up
            # subscriptions make the producer compile (and create topics) without end.
            raise NotificationError(
                f"unknown subscription id {subscription_id}{for_node(node)}: the limit of "
                f"{limit} learned subscriptions is reached (limits.max_learned_subscriptions)",
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
            compiled = self._compiled[compile_key] = compile_filter(
                filter_text, self.schema(), subtree=subtree, namespaces=namespaces, source=source
            )
        return compiled

    def _from_shared(
        self, subscription_id: int, node: str | None, source: str
    ) -> CatalogEntry | None:
        """The newest generation of the subscription ``node`` uses for an id this catalog
        lacks, as another process learned it (or a file declared it), recompiled from its
        XPath; its topics are the ones its writer named, so that every producer routes it
        where ingest expects it. Records written before subscriptions were per node carry no
        node: fleet-wide, they apply to every node without one of its own."""
        assert self._shared
        index: FleetIndex[SharedSubscription] = FleetIndex()
        records = self._shared[0].find(subscription_id)
        # Newest generation first: the index keeps the first record of each identity.
        for record in sorted(records, key=lambda r: r.generation, reverse=True):
            index.add(record.id, record.node_pattern, record)
        found = index.pick(subscription_id, node)
        if found is None:
            return None
        pairs = found.namespaces
        compile_key = (found.filter, found.content_id, repr(list(pairs)) if pairs else "")
        learn_key: _LearnKey = (found.node_pattern, subscription_id, *compile_key)
        entry = self._learned.get(learn_key)
        if entry is not None and entry.generation == found.generation:
            return entry
        self._check_limit(subscription_id, node, source)
        compiled = self._compile(
            (found.xpath, found.content_id, compile_key[2]),
            found.xpath,
            subtree=False,
            namespaces=dict(pairs) or None,
            source=f"{describe(subscription_id, found.node_pattern)} (shared catalog)",
        )
        topics = found.topics
        if len(topics) != len(compiled.branches):
            level = (
                type_level(found.subscription_type, found.compaction)
                if self.file.topic_policy.type_level
                else None
            )
            topics = tuple(self.namer.name(b, level=level) for b in compiled.branches)
        entry = CatalogEntry.of_shared(found, compiled, topics)
        self._learned[learn_key] = entry
        return entry


def build_catalog(
    file: SubscriptionsFile,
    *,
    yang_dirs: tuple[str, ...] = (),
    base_dir: Path | None = None,
    strict: bool = False,
) -> Catalog:
    """Compile every subscription of ``file``. One that does not compile is skipped
    (:attr:`Catalog.skipped`), or with ``strict`` raised, naming the subscription; when none
    compiles, the first one's error is raised. A topic name collision, or two subscriptions
    sharing a topic with different types, fail the whole catalog
    (:func:`~yangkey.catalog_topics.catalog_topics`)."""
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
    skipped: list[SkippedSubscription] = []
    first_failure: YangkeyError | None = None
    for subscription in file.subscriptions:
        line = file.line_of(subscription)
        source = subscription.label + (f" (line {line})" if line else "")
        dirs = (*yang_dirs, *resolve(subscription.yang_dirs), *resolve(defaults.yang_dirs))
        try:
            schema = SchemaContext.cached(dirs, file.features)
            compiled = compile_filter(
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
            if strict:
                raise exc.within(source) from None
            skipped.append(_skipped(subscription, exc, file.source, line))
            first_failure = first_failure or exc.within(source)
            continue
        entries.append(CatalogEntry.of_file(subscription, compiled, names))

    if first_failure is not None and not entries:
        raise first_failure  # none compiles: nothing would run, so fail as strict does
    return Catalog(
        file=file,
        entries=tuple(entries),
        topics=catalog_topics(file, entries),
        namer=namer,
        yang_dirs=(*yang_dirs, *resolve(defaults.yang_dirs)),
        skipped=tuple(skipped),
    )


def _skipped(
    subscription: Subscription, exc: YangkeyError, file: str, line: int | None
) -> SkippedSubscription:
    why = f"{exc.source}: {exc.reason}" if exc.source else exc.reason
    return SkippedSubscription(subscription.id, subscription.node, why, file, line)


def load_catalog(
    path: str | Path, *, yang_dirs: tuple[str, ...] = (), strict: bool = False
) -> Catalog:
    """Read and compile a subscriptions file; relative ``yang_dirs`` are relative to it."""
    path = Path(path)
    try:
        return build_catalog(
            load_subscriptions_file(path),
            yang_dirs=yang_dirs,
            base_dir=path.parent.resolve(),
            strict=strict,
        )
    except YangkeyError as exc:
        raise exc.within(str(path)) from None
