"""The shared subscription catalog: records of a compacted topic and their replay (seed 001).

Pure: no Kafka here (:mod:`yangkey.kafka.catalog_topic` is the edge). Every compiled
subscription, from a subscriptions file or learned from telemetry metadata, is one record of a
single-partition compacted topic (``_yangkey_catalog``); every process keeps the replayed
:class:`CatalogState` as its local cache and writes through the topic, with the sequencing of
the schema registry's store (seed 003, :mod:`yangkey.registry.store`):

* the key carries ``seq``, the offset the writer expected its record to land at; a record whose
  ``seq`` is not its offset lost a race and every reader ignores it: the first writer wins;
* the key carries the writer's ``node``, so compaction cannot keep a loser's record in place of
  the winner's (their keys differ);
* the key carries the record's ``digest`` (what the subscription *is*: id, node, filter, YANG
  library content id, topics...), so a second writer of the same subscription finds it and
  writes nothing, and a learned subscription whose (node, id) is known with another filter gets
  the next generation, allocated from the local state and re-allocated when the write loses;
* the key carries the subscription's identity, ``id`` and (when it has one) ``for-node``, the
  node or node pattern it is for (RFC 8639 ids are per publisher). Keys written before
  subscriptions had a node have no ``for-node``: their records are fleet-wide and still read.

Every valid record has a unique key, so compaction removes only tombstoned records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, get_args

import orjson

from yangkey.config import SubscriptionType
from yangkey.errors import YangkeyError
from yangkey.fleet import describe
from yangkey.topics import BROKER_DEFAULT, TopicSpec

KEYTYPE = "SUBSCRIPTION"
Origin = Literal["file", "learned"]
_TYPES: tuple[str, ...] = get_args(SubscriptionType)


@dataclass(frozen=True, slots=True)
class SharedBranch:
    topic: str
    template: str
    schema_path: str
    target: str
    extractions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SharedSubscription:
    """One compiled subscription as the catalog topic carries it: enough to route (``xpath``
    recompiles it), to show it and to render its DDL without compiling anything."""

    id: int
    origin: Origin
    filter: str
    """The filter as given (file) or as the metadata said (learned)."""
    subtree: bool
    xpath: str
    """The compiled XPath union (Phase 1 applied): what a reader recompiles."""
    content_id: str
    """The YANG library content id the subscription was compiled for ("" from a file)."""
    generation: int
    subscription_type: SubscriptionType
    compaction: bool
    branches: tuple[SharedBranch, ...]
    node_pattern: str | None = None
    """The node or node pattern the subscription is for; None: every node. A learned one is
    its device's: (node, id) is the identity."""
    namespaces: tuple[tuple[str, str], ...] = ()
    partitions: int = 1
    replication_factor: int = BROKER_DEFAULT
    min_insync_replicas: int | None = None
    retention_seconds: int = 0
    warnings: tuple[str, ...] = ()
    writer: str = ""
    """The node id that wrote the winning record (filled in by the replay)."""

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(b.topic for b in self.branches)

    @property
    def definition(self) -> tuple[object, ...]:
        """What the device said the subscription is: a new one is a new generation."""
        return (self.filter, self.subtree, self.content_id, self.namespaces)

    @property
    def digest(self) -> str:
        """What the subscription is. A learned one's generation is not part of it: the writer
        allocates that; a file's is (the file declares it)."""
        identity = {
            "id": self.id,
            "origin": self.origin,
            "filter": self.filter,
            "subtree": self.subtree,
            "content_id": self.content_id,
            "namespaces": self.namespaces,
            "node": self.node_pattern,
            "type": self.subscription_type,
            "compaction": self.compaction,
            "topics": self.topics,
            "generation": self.generation if self.origin == "file" else None,
        }
        return hashlib.sha256(orjson.dumps(identity)).hexdigest()[:32]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "origin": self.origin,
            "filter": self.filter,
            "subtree": self.subtree,
            "xpath": self.xpath,
            "yang-library-content-id": self.content_id,
            "generation": self.generation,
            "type": self.subscription_type,
            "compaction": self.compaction,
            "node": self.node_pattern,
            "namespaces": dict(self.namespaces),
            "partitions": self.partitions,
            "replication_factor": self.replication_factor,
            "min_insync_replicas": self.min_insync_replicas,
            "retention_seconds": self.retention_seconds,
            "branches": [
                {
                    "topic": b.topic,
                    "template": b.template,
                    "schema_path": b.schema_path,
                    "target": b.target,
                    "extractions": list(b.extractions),
                }
                for b in self.branches
            ],
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], writer: str = "") -> SharedSubscription:
        """Raises KeyError, TypeError or ValueError for a value that is not a record."""
        origin = data["origin"]
        kind = data["type"]
        if origin not in ("file", "learned") or kind not in _TYPES:
            raise ValueError(f"origin {origin!r}, type {kind!r}")
        node = data.get("node")
        return cls(
            id=int(data["id"]),
            origin=origin,
            filter=str(data["filter"]),
            subtree=bool(data["subtree"]),
            xpath=str(data["xpath"]),
            content_id=str(data.get("yang-library-content-id") or ""),
            generation=int(data["generation"]),
            subscription_type=kind,
            compaction=bool(data["compaction"]),
            node_pattern=None if node is None else str(node),
            namespaces=tuple(sorted((str(k), str(v)) for k, v in data["namespaces"].items())),
            partitions=int(data["partitions"]),
            replication_factor=int(data["replication_factor"]),
            min_insync_replicas=_optional_int(data.get("min_insync_replicas")),
            retention_seconds=int(data["retention_seconds"]),
            branches=tuple(
                SharedBranch(
                    str(b["topic"]),
                    str(b["template"]),
                    str(b["schema_path"]),
                    str(b["target"]),
                    tuple(str(x) for x in b["extractions"]),
                )
                for b in data["branches"]
            ),
            warnings=tuple(str(w) for w in data.get("warnings") or ()),
            writer=writer,
        )

    def encode(self) -> bytes:
        return orjson.dumps(self.to_json())


@dataclass(frozen=True, slots=True)
class RecordKey:
    digest: str
    id: int
    seq: int
    node: str
    """The writer's node id (host, process), not the subscription's node."""
    for_node: str | None = None
    """The node or node pattern the subscription is for (None: fleet-wide)."""

    def encode(self) -> bytes:
        key: dict[str, object] = {
            "keytype": KEYTYPE,
            "id": self.id,
            "digest": self.digest,
            "seq": self.seq,
            "node": self.node,
        }
        if self.for_node is not None:
            key["for-node"] = self.for_node
        return orjson.dumps(key)

    @classmethod
    def decode(cls, raw: bytes | None) -> RecordKey | None:
        """The key, or None for bytes that are not one of ours."""
        if not raw:
            return None
        try:
            data = orjson.loads(raw)
            if data["keytype"] != KEYTYPE:
                return None
            digest, subscription, seq, node = data["digest"], data["id"], data["seq"], data["node"]
            for_node = data.get("for-node")
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            return None
        if not (
            isinstance(digest, str)
            and isinstance(subscription, int)
            and isinstance(seq, int)
            and isinstance(node, str)
            and (for_node is None or isinstance(for_node, str))
        ):
            return None
        return cls(digest, subscription, seq, node, for_node)


class CatalogState:
    """The catalog as the topic says up to ``end``: fed every record in offset order."""

    def __init__(self) -> None:
        self.records: dict[str, SharedSubscription] = {}
        """By digest, in the order they were written."""
        self.origins: dict[str, RecordKey] = {}
        self.end = 0
        """The next offset to read: every record before it has been applied."""
        self.ignored = 0
        """Records that lost a race (seq != offset), repeated a known subscription, or are not
        records at all."""

    def apply(self, offset: int, raw_key: bytes | None, raw_value: bytes | None) -> None:
        self.end = max(self.end, offset + 1)
        key = RecordKey.decode(raw_key)
        if key is None:
            self.ignored += 1
            return
        if raw_value is None:
            # A tombstone recreates the key of an earlier write: no sequence check (seed 003).
            origin = self.origins.get(key.digest)
            if origin is not None and (origin.seq, origin.node) == (key.seq, key.node):
                del self.records[key.digest]
                del self.origins[key.digest]
            return
        if key.seq != offset or key.digest in self.records:
            self.ignored += 1
            return
        try:
            record = SharedSubscription.from_json(orjson.loads(raw_value), writer=key.node)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
            self.ignored += 1
            return
        if (
            record.digest != key.digest
            or record.id != key.id
            # a key written before keys named the node has no for-node
            or (key.for_node is not None and record.node_pattern != key.for_node)
        ):
            self.ignored += 1
            return
        self.records[key.digest] = record
        self.origins[key.digest] = key

    def advance(self, end: int) -> None:
        """Records up to ``end`` were compacted away: the next write goes at ``end``."""
        self.end = max(self.end, end)

    def find(self, subscription_id: int) -> list[SharedSubscription]:
        """The records of a subscription id, every node's, oldest generation first."""
        found = [r for r in self.records.values() if r.id == subscription_id]
        return sorted(found, key=lambda r: r.generation)

    def known(self, record: SharedSubscription) -> SharedSubscription | None:
        return self.records.get(record.digest)

    def decide(self, record: SharedSubscription, node: str) -> tuple[RecordKey, bytes] | None:
        """The record to append at ``end`` for ``record``, or None when the topic has it.
        A learned subscription whose id the catalog knows with another definition starts the
        next generation (docs/design.md#message-identity-and-generations)."""
        if record.digest in self.records:
            return None
        if record.origin == "learned":
            # Generations count per identity: another node's subscription with this id is
            # another subscription, not a change of this one.
            known = [r for r in self.find(record.id) if r.node_pattern == record.node_pattern]
            # The same filter (topics named by another file): the same generation.
            same = [r.generation for r in known if r.definition == record.definition]
            generation = same[0] if same else max((r.generation for r in known), default=0) + 1
            record = replace(record, generation=generation)
        key = RecordKey(record.digest, record.id, self.end, node, record.node_pattern)
        return key, record.encode()


class Log(Protocol):
    """The single-partition topic (:class:`yangkey.kafka.log.KafkaLog`)."""

    def read(self, store: CatalogState) -> None:
        """Apply to ``store`` every record from ``store.end`` to the current end of the log."""

    def append(self, key: bytes, value: bytes | None) -> int:
        """Write one record and return the offset it landed at."""


class SharedCatalog:
    """Write-through to the log, reads from the local :class:`CatalogState` that follows it.

    Writes are optimistic (seed 003): read to the end, decide, append with ``seq`` = the end
    seen, and compare the offset it landed at; a lost race reads again and decides again
    (finding the subscription written, or allocating the next generation)."""

    def __init__(self, log: Log, node: str, *, max_attempts: int = 50) -> None:
        self.log = log
        self.node = node
        self.max_attempts = max_attempts
        self.state = CatalogState()
        self.conflicts = 0
        """Writes that lost a race and were retried."""

    def sync(self) -> None:
        self.log.read(self.state)

    def records(self) -> list[SharedSubscription]:
        """Every subscription in the catalog, read up to the end of the log."""
        self.sync()
        return list(self.state.records.values())

    def find(self, subscription_id: int) -> list[SharedSubscription]:
        self.sync()
        return self.state.find(subscription_id)

    def publish(self, record: SharedSubscription) -> SharedSubscription:
        """Write ``record`` unless the catalog has it; the record that won (with its
        generation)."""
        for _ in range(self.max_attempts):
            self.sync()
            decided = self.state.decide(record, self.node)
            if decided is not None:
                key, value = decided
                if self.log.append(key.encode(), value) != key.seq:
                    self.conflicts += 1
                    continue
                self.sync()
            winner = self.state.known(record)
            if winner is not None:
                return winner
        raise YangkeyError(
            f"{describe(record.id, record.node_pattern)}: gave up after {self.max_attempts} "
            "conflicting writes",
            source="shared catalog",
        )


def _optional_int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


def topic_specs(records: Iterable[SharedSubscription]) -> list[TopicSpec]:
    """The topics of ``records``, merged by name as :func:`yangkey.catalog.build_catalog`
    merges a file's (the largest retention, partition count and replication, every
    template)."""
    merged: dict[str, TopicSpec] = {}
    for record in records:
        for branch in record.branches:
            spec = merged.get(branch.topic)
            if spec is None:
                merged[branch.topic] = TopicSpec(
                    name=branch.topic,
                    partitions=record.partitions,
                    replication_factor=record.replication_factor,
                    min_insync_replicas=record.min_insync_replicas,
                    compaction=record.compaction,
                    retention_seconds=record.retention_seconds,
                    schema_path=branch.schema_path,
                    subscription_ids=(record.id,),
                    subscription_type=record.subscription_type,
                    templates=(branch.template,),
                )
                continue
            merged[branch.topic] = replace(
                spec,
                partitions=max(spec.partitions, record.partitions),
                replication_factor=max(spec.replication_factor, record.replication_factor),
                min_insync_replicas=max(
                    (m for m in (spec.min_insync_replicas, record.min_insync_replicas) if m),
                    default=None,
                ),
                retention_seconds=max(spec.retention_seconds, record.retention_seconds),
                subscription_ids=tuple(sorted({*spec.subscription_ids, record.id})),
                templates=tuple(sorted({*spec.templates, branch.template})),
            )
    return sorted(merged.values(), key=lambda spec: spec.name)


def merge_topics(first: Sequence[TopicSpec], more: Iterable[TopicSpec]) -> list[TopicSpec]:
    """``first`` (a file's topics, kept as they are) and the topics of ``more`` it lacks."""
    names = {spec.name for spec in first}
    return [*first, *(spec for spec in more if spec.name not in names)]
