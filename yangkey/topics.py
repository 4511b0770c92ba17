"""Topic names from Phase 2 templates (draft section 3.2, docs/design.md#topic-names).

1. strip predicates; 2. module names -> their YANG ``prefix``; 3. drop the leading ``/`` and
turn ``:`` and ``/`` into ``-`` (steps 1-3 are done at compile time: ``Branch.topic_base``);
4. prepend the organisation prefix (and, optionally, the subscription-type level);
5. over the limit (Kafka: 249): cut at a ``-`` boundary and append ``-`` plus the first 8 hex
digits of the 64-bit FNV-1a hash of the step-1 path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from yangkey.errors import TopicError
from yangkey.templates import Branch

KAFKA_TOPIC_LIMIT = 249
_VALID = re.compile(r"[a-zA-Z0-9._-]+")
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = 0xFFFFFFFFFFFFFFFF
_MIN_SCHEMA_PART = 10

LevelPosition = Literal["first", "after-prefix", "last"]


def fnv1a_64(data: bytes) -> int:
    value = _FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & _MASK
    return value


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
    ``/m:a/b-c``): their messages would share a topic that no consumer can separate."""
    owners: dict[str, str] = {}
    for topic, schema_path in names:
        previous = owners.setdefault(topic, schema_path)
        if previous != schema_path:
            raise TopicError(
                f"topic name collision: {previous} and {schema_path} both map to {topic!r}; "
                "rename with a different organisation prefix or subscribe to distinct paths",
                source="catalog",
            )
