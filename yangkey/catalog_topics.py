"""A catalog's topics: one :class:`~yangkey.topics.TopicSpec` per topic name its subscription
branches are routed to, merged from every branch routed there.

Several subscriptions (or branches) may share a topic: it gets the largest retention,
partition count and replication any of them asks for, and every key template. They must agree
on type and compaction, and no topic may collide with the dead-letter topic or another topic
(:func:`~yangkey.topics.check_collisions`); :func:`yangkey.catalog.build_catalog` fails the
whole catalog otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

from yangkey.config import Subscription, SubscriptionsFile, parse_duration
from yangkey.entries import CatalogEntry
from yangkey.errors import TopicError
from yangkey.fleet import Identity
from yangkey.topics import TopicSpec, check_collisions, replicas


def catalog_topics(
    file: SubscriptionsFile, entries: Iterable[CatalogEntry]
) -> tuple[TopicSpec, ...]:
    """The topics of ``entries`` (the file's compiled subscriptions), sorted by name."""
    by_topic: dict[str, list[tuple[CatalogEntry, int]]] = {}
    for entry in entries:
        for index, name in enumerate(entry.topics):
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
    declared = {s.identity: s for s in file.subscriptions}
    specs = [_topic_spec(name, users, declared, file) for name, users in by_topic.items()]
    specs.sort(key=lambda spec: spec.name)
    return tuple(specs)


def _topic_spec(
    name: str,
    users: list[tuple[CatalogEntry, int]],
    declared: dict[Identity, Subscription],
    file: SubscriptionsFile,
) -> TopicSpec:
    """One topic of the catalog, from every subscription branch routed to it: the largest
    retention and partition count, every template."""
    defaults = file.defaults
    subscriptions = [declared[entry.identity] for entry, _ in users]
    kinds = {(s.type, s.compaction) for s in subscriptions}
    if len(kinds) > 1:
        labels = ", ".join(s.label for s in subscriptions)
        raise TopicError(
            f"{labels} share topic {name!r} but differ in type or compaction; "
            "turn on topic_policy.type_level or align them"
        )
    first = subscriptions[0]
    factor, in_sync = _replication(file, name, subscriptions)
    return TopicSpec(
        name=name,
        schema_path=users[0][0].compiled.branches[users[0][1]].schema_path,
        subscription_ids=tuple(sorted({s.id for s in subscriptions})),
        subscription_type=first.type,
        compaction=first.compaction,
        retention_seconds=max(
            parse_duration(s.retention if s.retention is not None else defaults.retention)
            for s in subscriptions
        ),
        partitions=max(s.partitions or defaults.partitions for s in subscriptions),
        replication_factor=factor,
        min_insync_replicas=in_sync,
        templates=tuple(sorted({entry.compiled.branches[i].template for entry, i in users})),
    )


def _replication(
    file: SubscriptionsFile, topic: str, subscriptions: list[Subscription]
) -> tuple[int, int | None]:
    """A shared topic's replication: the most any of its subscriptions asks for."""
    pairs = [file.replicated(s) for s in subscriptions]
    factor = max((f for f, _ in pairs if f is not None), default=None)
    in_sync = max((m for _, m in pairs if m is not None), default=None)
    if factor is not None and in_sync is not None and in_sync > factor:
        labels = ", ".join(s.label for s in subscriptions)
        raise TopicError(
            f"{labels} share topic {topic!r}: min_insync_replicas {in_sync} exceeds"
            f" their largest replication_factor {factor}; align them"
        )
    return replicas(factor), in_sync
