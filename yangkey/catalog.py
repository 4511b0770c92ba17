"""Subscriptions file -> compiled catalog: subscription -> branches -> templates -> topics.

Compiling runs Phases 1 and 2 once per subscription; the result is cached per
(filter text, YANG library content id) so that learning the same subscription again from
telemetry metadata, or from another node, costs a dict lookup (docs/design.md#subscription-catalog).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from yangkey.config import (
    SubscriptionsFile,
    SubscriptionType,
    load_subscriptions_file,
    parse_duration,
)
from yangkey.errors import TopicError, YangkeyError
from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import CompiledSubscription, compile_subscription
from yangkey.topics import TopicNamer, check_collisions

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
class TopicSpec:
    """One derived Kafka topic and everything the DDL and the producer need to know of it."""

    name: str
    schema_path: str
    """The branch template without predicates (module names), the topic's identity."""
    subscription_ids: tuple[int, ...]
    subscription_type: SubscriptionType
    compaction: bool
    retention_seconds: int
    partitions: int
    replication_factor: int
    templates: tuple[str, ...]


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
    deriver: KeyDeriver = field(repr=False, compare=False)

    def applies_to(self, node: str | None) -> bool:
        if self.node_pattern is None or node is None:
            return True
        return fnmatch.fnmatchcase(node, self.node_pattern)


@dataclass(frozen=True)
class Catalog:
    file: SubscriptionsFile
    entries: tuple[CatalogEntry, ...]
    topics: tuple[TopicSpec, ...]
    namer: TopicNamer

    @property
    def dead_letter_topic(self) -> str:
        return self.file.dead_letter_topic

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
            schema = SchemaContext.cached(dirs)
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
            deriver=KeyDeriver(compiled),
        )
        entries.append(entry)
        for index, name in enumerate(names):
            by_topic.setdefault(name, []).append((entry, index))

    check_collisions(
        (name, entry.compiled.branches[index].schema_path)
        for name, users in by_topic.items()
        for entry, index in users
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
                replication_factor=defaults.replication_factor,
                templates=tuple(
                    sorted({entry.compiled.branches[i].template for entry, i in users})
                ),
            )
        )
    specs.sort(key=lambda spec: spec.name)
    return Catalog(file=file, entries=tuple(entries), topics=tuple(specs), namer=namer)


def load_catalog(path: str | Path, *, yang_dirs: tuple[str, ...] = ()) -> Catalog:
    """Read and compile a subscriptions file; relative ``yang_dirs`` are relative to it."""
    path = Path(path)
    try:
        return build_catalog(
            load_subscriptions_file(path), yang_dirs=yang_dirs, base_dir=path.parent.resolve()
        )
    except YangkeyError as exc:
        raise exc.within(str(path)) from None
