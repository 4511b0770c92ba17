"""Topic names from Phase 2 templates (draft section 3.2, docs/design.md#topic-names).

1. strip predicates; 2. module names -> their YANG ``prefix``; 3. drop the leading ``/`` and
turn ``:`` and ``/`` into ``-`` (steps 1-3 are done at compile time: ``Branch.topic_base``);
4. prepend the organisation prefix (and, optionally, the subscription-type level);
5. over the limit (Kafka: 249): cut at a ``-`` boundary and append ``-`` plus the first 8 hex
digits of the 64-bit FNV-1a hash of the step-1 path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from yangkey.errors import TopicError

if TYPE_CHECKING:
    from yangkey.compiled import Branch

KAFKA_TOPIC_LIMIT = 249
_VALID = re.compile(r"[a-zA-Z0-9._-]+")
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = 0xFFFFFFFFFFFFFFFF
_MIN_SCHEMA_PART = 10

LevelPosition = Literal["first", "after-prefix", "last"]

BROKER_DEFAULT = -1
"""A replication factor that asks the broker for its own ``default.replication.factor``
(what Kafka's CreateTopics takes as -1, KIP-464)."""


def replicas(factor: int | None) -> int:
    """A subscriptions file's replication factor (None: unset) as a TopicSpec's."""
    return BROKER_DEFAULT if factor is None else factor


def fnv1a_64(data: bytes) -> int:
    value = _FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & _MASK
    return value


@dataclass(frozen=True)
class TopicSpec:
    """One Kafka topic and what the producer, topic creation and the DDL need to know of it.

    The catalog fills every field for a derived topic; other callers (the dead-letter topic,
    the registry, tests) give the name and what they know.
    """

    name: str
    partitions: int = 1
    replication_factor: int = BROKER_DEFAULT
    """Replicas of each partition; :data:`BROKER_DEFAULT`: the broker's
    ``default.replication.factor``."""
    min_insync_replicas: int | None = None
    """The topic's ``min.insync.replicas``; None: the broker's."""
    compaction: bool = False
    retention_seconds: int = 0
    """0: not set (the broker's default, no ClickHouse TTL); negative: keep forever."""
    schema_path: str = ""
    """A derived topic's identity: the branch template without predicates (module names)."""
    subscription_ids: tuple[int, ...] = ()
    subscription_type: str = "periodic"
    templates: tuple[str, ...] = ()
    configs: Mapping[str, str] = field(default_factory=dict)
    """Further topic-level configs, as strings (what the admin API takes)."""


def topic_name_problem(name: str) -> str | None:
    """Why Kafka would refuse ``name`` as a topic name, or None (Kafka's ``Topic.validate``)."""
    if not name:
        return "it is empty"
    if name in (".", ".."):
        return "'.' and '..' are reserved"
    if len(name) > KAFKA_TOPIC_LIMIT:
        return f"it is {len(name)} characters long, over Kafka's limit of {KAFKA_TOPIC_LIMIT}"
    if not _VALID.fullmatch(name):
        return "use only a-z A-Z 0-9 '.', '_' and '-'"
    return None


def kafka_identity(name: str) -> str:
    """Kafka refuses a topic whose name differs from an existing one only in '.' vs '_'
    (both become '_' in metric names): names equal under this fold collide."""
    return name.replace(".", "_")


def validate_prefix(prefix: str) -> str:
    if not _VALID.fullmatch(prefix):
        raise TopicError(
            f"invalid topic prefix {prefix!r}: use only a-z A-Z 0-9 '.', '_' and '-'",
            source="topic prefix",
        )
    return prefix


@dataclass(frozen=True)
class TopicNamer:
    prefix: str | None = None
    max_length: int = KAFKA_TOPIC_LIMIT
    separator: str = "-"
    type_level_position: LevelPosition = "after-prefix"

    def __post_init__(self) -> None:
        if self.prefix is not None:
            validate_prefix(self.prefix)
        validate_prefix(self.separator)

    def name(self, branch: Branch, level: str | None = None) -> str:
        return self.name_for(branch.topic_base, branch.schema_path, level)

    def name_for(self, base: str, schema_path: str, level: str | None = None) -> str:
        head: list[str] = []
        tail: list[str] = []
        if level is not None and self.type_level_position == "first":
            head.append(level)
        if self.prefix:
            head.append(self.prefix)
        if level is not None and self.type_level_position == "after-prefix":
            head.append(level)
        if level is not None and self.type_level_position == "last":
            tail.append(level)
        lead = "".join(part + self.separator for part in head)
        trail = "".join(self.separator + part for part in tail)
        full = lead + base + trail
        if len(full) <= self.max_length:
            return full
        suffix = f"-{fnv1a_64(schema_path.encode('utf-8')):016x}"[:9]
        room = self.max_length - len(lead) - len(trail) - len(suffix)
        if room < _MIN_SCHEMA_PART:
            raise TopicError(
                f"topic prefix {lead + trail!r} leaves {max(room, 0)} characters of the "
                f"{self.max_length}-character limit for the schema path {schema_path}; "
                f"at least {_MIN_SCHEMA_PART} are needed",
                source="topic prefix",
            )
        cut = base[:room]
        if len(base) > room and base[room] != "-":
            boundary = cut.rfind("-")
            if boundary > 0:
                cut = cut[:boundary]
        return lead + cut.rstrip("-") + suffix + trail


def check_collisions(names: Iterable[tuple[str, str]]) -> None:
    """Fail when two different schema paths flatten to the same topic name (``/m:a-b/c`` vs
    ``/m:a/b-c``): their messages would share a topic that no consumer can separate. Names
    that differ only in '.' vs '_' collide too: Kafka cannot hold both."""
    owners: dict[str, tuple[str, str]] = {}
    for topic, schema_path in names:
        previous_topic, previous = owners.setdefault(kafka_identity(topic), (topic, schema_path))
        if previous != schema_path or previous_topic != topic:
            same = previous_topic == topic
            raise TopicError(
                f"topic name collision: {previous} and {schema_path} both map to "
                + (
                    f"{topic!r}"
                    if same
                    else f"{previous_topic!r} and {topic!r}, which Kafka "
                    "treats as one name ('.' and '_' are alike)"
                )
                + "; rename with a different organisation prefix or subscribe to distinct paths",
                source="catalog",
            )
