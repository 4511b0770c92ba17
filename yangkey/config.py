"""The subscriptions file (docs/design.md#the-subscriptions-file): a validated pydantic model.

The file is read only at the edge (:func:`load_subscriptions_file`); everything else takes the
model. Errors name the file, the line and the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from yangkey.errors import ConfigError, Position, YangkeyError
from yangkey.fleet import Identity, describe
from yangkey.inputs import read_bounded
from yangkey.topics import KAFKA_TOPIC_LIMIT, topic_name_problem
from yangkey.values import UINT32_MAX

SubscriptionType = Literal["periodic", "on-change", "on-change-sync"]

_DURATION = re.compile(r"^\s*([0-9]+)\s*(s|m|h|d|w)?\s*$", re.ASCII)
_DURATION_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, None: 1}
MAX_RETENTION_SECONDS = 100 * 366 * 86400
"""A century: Kafka's retention.ms (a long) and ClickHouse's TTL interval both hold it."""

MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64
"""Nesting limit of the subscriptions YAML: far beyond any real file, far below recursion."""


def parse_duration(text: str | int) -> int:
    """``7d`` / ``12h`` / ``90m`` / ``3600`` (seconds) -> seconds, 1 s up to a century."""
    if isinstance(text, bool) or not isinstance(text, str | int):
        raise ValueError(f"invalid duration {text!r}: use a number with s, m, h, d or w")
    if isinstance(text, int):
        seconds = text
    else:
        match = _DURATION.match(text)
        if not match:
            raise ValueError(f"invalid duration {text!r}: use a number with s, m, h, d or w")
        seconds = int(match.group(1)) * _DURATION_SECONDS[match.group(2)]
    if not 1 <= seconds <= MAX_RETENTION_SECONDS:
        raise ValueError(
            f"duration {text!r} is out of range: from 1 second up to {MAX_RETENTION_SECONDS} "
            "seconds (100 years)"
        )
    return seconds


def _topic_name(value: str) -> str:
    problem = topic_name_problem(value)
    if problem is not None:
        raise ValueError(f"{value!r} is not a valid Kafka topic name: {problem}")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TopicPolicy(_Strict):
    """How topic names are built (docs/design.md#topic-names)."""

    type_level: StrictBool = False
    """Add the subscription-type level (stats / state-change / state / current-state)."""
    type_level_position: Literal["first", "after-prefix", "last"] = "after-prefix"
    separator: str = "-"
    max_length: StrictInt = Field(default=KAFKA_TOPIC_LIMIT, ge=20, le=KAFKA_TOPIC_LIMIT)
    per_branch: StrictBool = True
    """Off: every message goes to ``single_topic``."""
    single_topic: str = "yang-push"
    keys: StrictBool = True
    """Off: messages carry no key and are spread round robin."""

    _single_topic_valid = field_validator("single_topic")(_topic_name)

    @field_validator("separator")
    @classmethod
    def _separator_is_topic_safe(cls, value: str) -> str:
        if not value or not re.fullmatch(r"[a-zA-Z0-9._-]+", value):
            raise ValueError("separator must be one or more of a-z A-Z 0-9 . _ -")
        return value


_REPLICAS = Field(default=None, ge=1, le=32)
"""``replication_factor`` / ``min_insync_replicas``: unset (None) is the broker's own
``default.replication.factor`` / ``min.insync.replicas``."""


class Replicated(_Strict):
    """How a topic yangkey creates is replicated; unset fields come from a wider level
    (subscription, then ``defaults``), and in the end from the broker's own settings."""

    replication_factor: StrictInt | None = _REPLICAS
    min_insync_replicas: StrictInt | None = _REPLICAS

    @model_validator(mode="after")
    def _in_sync_fits(self) -> Replicated:
        check_in_sync(self.replication_factor, self.min_insync_replicas)
        return self


def check_in_sync(replication_factor: int | None, min_insync_replicas: int | None) -> None:
    if replication_factor is not None and (min_insync_replicas or 0) > replication_factor:
        raise ValueError(
            f"min_insync_replicas ({min_insync_replicas}) exceeds replication_factor"
            f" ({replication_factor}): every write with acks=all would be refused"
        )


class Defaults(Replicated):
    partitions: StrictInt = Field(default=6, ge=1, le=10_000)
    retention: str | StrictInt = "7d"
    yang_dirs: tuple[str, ...] = ()

    @field_validator("retention", mode="before")
    @classmethod
    def _retention_parses(cls, value: object) -> object:
        parse_duration(value)  # type: ignore[arg-type]
        return value


class Limits(_Strict):
    """Bounds on what untrusted input can make the producer do."""

    max_notification_bytes: StrictInt = Field(default=16 * 1024 * 1024, ge=1, le=2**31 - 1)
    """A larger notification is dead-lettered unread."""
    max_learned_subscriptions: StrictInt = Field(default=1000, ge=1, le=100_000)
    """With ``learn: true``: subscriptions learned beyond this are dead-lettered. Each
    device's subscription counts once: (node, id) is the identity (RFC 8639)."""


class InternalTopics(_Strict):
    """Replication of yangkey's own topics (unset fields: as ``defaults`` says)."""

    dead_letter: Replicated = Replicated()
    catalog: Replicated = Replicated()
    """The shared catalog (``_yangkey_catalog``)."""
    schema_store: Replicated = Replicated()
    """The schema registry's store (``_schemas``)."""


InternalTopic = Literal["dead_letter", "catalog", "schema_store"]


class Subscription(Replicated):
    id: StrictInt = Field(ge=0, le=UINT32_MAX)
    xpath: str | None = None
    subtree: str | None = None
    node: str | None = None
    """The node the subscription is for: a node name, or a shell-style pattern (``pe*``,
    ``xr-[0-9]*``); left out, every node (fleet-wide). RFC 8639 subscription ids are per
    publisher: (node, id) is the identity, see :mod:`yangkey.fleet` for which entry a node
    uses."""
    type: SubscriptionType = "periodic"
    compaction: StrictBool = False
    retention: str | StrictInt | None = None
    partitions: StrictInt | None = Field(default=None, ge=1, le=10_000)
    yang_dirs: tuple[str, ...] = ()
    generation: StrictInt = Field(default=1, ge=1, le=UINT32_MAX)
    """Bump when the filter of an existing id changes; queries read the newest generation.
    A UInt32 in ClickHouse and in the ``yangkey-generation`` header."""

    @model_validator(mode="after")
    def _one_filter(self) -> Subscription:
        if (self.xpath is None) == (self.subtree is None):
            raise ValueError("give exactly one of 'xpath' or 'subtree'")
        if self.compaction and self.type != "on-change-sync":
            raise ValueError(
                "compaction needs type 'on-change-sync' (a current-state topic holds the state "
                "that sync-on-start establishes)"
            )
        return self

    @field_validator("retention", mode="before")
    @classmethod
    def _retention_parses(cls, value: object) -> object:
        if value is not None:
            parse_duration(value)  # type: ignore[arg-type]
        return value

    @field_validator("node")
    @classmethod
    def _node_is_a_name(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or any(c in value for c in "\n\r")):
            raise ValueError(
                "a node name or pattern, on one line (leave 'node' out for every node)"
            )
        return value

    @property
    def identity(self) -> Identity:
        return (self.node, self.id)

    @property
    def label(self) -> str:
        """How messages name it: ``subscription 1 for node pe1``."""
        return describe(self.id, self.node)

    @property
    def filter_text(self) -> str:
        return self.xpath if self.xpath is not None else (self.subtree or "")


class SubscriptionsFile(_Strict):
    organisation_prefix: str | None = None
    topic_policy: TopicPolicy = TopicPolicy()
    defaults: Defaults = Defaults()
    dead_letter_topic: str = "yangkey-dead-letter"
    learn: StrictBool = False
    """Compile subscriptions that telemetry-message metadata describes but this file does not
    (up to ``limits.max_learned_subscriptions``). Off: such messages are dead-lettered."""
    limits: Limits = Limits()
    internal_topics: InternalTopics = InternalTopics()
    subscriptions: tuple[Subscription, ...] = ()
    features: dict[str, tuple[str, ...]] = {}
    """Module -> the YANG features the devices support (``--features``); modules not named
    have every feature on."""

    _dead_letter_topic_valid = field_validator("dead_letter_topic")(_topic_name)
    _lines: dict[Identity, int] = PrivateAttr(default_factory=dict)
    """(node, id) -> line of its entry in the file, for error messages."""
    _source: str = PrivateAttr(default="<subscriptions>")
    _warnings: tuple[str, ...] = PrivateAttr(default=())

    @property
    def source(self) -> str:
        """The file's name as it was given (``<subscriptions>`` for a text)."""
        return self._source

    @property
    def warnings(self) -> tuple[str, ...]:
        """One line each, naming the file and line: repeated identical entries."""
        return self._warnings

    def line_of(self, subscription: Subscription) -> int | None:
        return self._lines.get(subscription.identity)

    @model_validator(mode="after")
    def _replication_fits(self) -> SubscriptionsFile:
        levels: list[tuple[str, Replicated]] = [
            *((f"subscription {s.id}", s) for s in self.subscriptions),
            *((f"internal_topics.{name}", level) for name, level in self.internal_topics),
        ]
        for name, level in levels:
            try:
                check_in_sync(*self.replicated(level))
            except ValueError as exc:
                raise ValueError(f"{name} (unset fields from defaults): {exc}") from None
        return self

    def replicated(self, level: Replicated) -> tuple[int | None, int | None]:
        """(replication factor, min.insync.replicas) of a subscription's or internal topic's
        settings, ``defaults`` filling what it leaves unset (None: the broker's own)."""
        defaults = self.defaults
        factor = level.replication_factor
        in_sync = level.min_insync_replicas
        return (
            defaults.replication_factor if factor is None else factor,
            defaults.min_insync_replicas if in_sync is None else in_sync,
        )

    def internal(self, topic: InternalTopic) -> tuple[int | None, int | None]:
        """:meth:`replicated` of one of yangkey's own topics."""
        level: Replicated = getattr(self.internal_topics, topic)
        return self.replicated(level)


class _LineLoader(yaml.SafeLoader):
    """A safe loader that remembers where each mapping started, for error messages, and
    refuses aliases and deep nesting while composing, before anything is built: an alias bomb
    (``a: &a [*b, *b, ...]``) or 5,000 nested ``[`` never get to cost memory or the stack."""

    _depth = 0

    def fetch_flow_collection_start(self, token_class: Any) -> None:
        # The scanner reads a whole run of '[' / '{' before the composer sees any (each one
        # may open a simple key), in quadratic time: stop it here.
        if self.flow_level >= MAX_DEPTH:
            raise yaml.scanner.ScannerError(
                None, None, f"nested deeper than {MAX_DEPTH} levels", self.get_mark()
            )
        super().fetch_flow_collection_start(token_class)

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not accepted", event.start_mark
            )
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"nested deeper than {MAX_DEPTH} levels",
                self.peek_event().start_mark,  # type: ignore[no-untyped-call]
            )
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> dict[str, Any]:
    mapping: dict[str, Any] = dict(loader.construct_mapping(node, deep=True))  # type: ignore[arg-type]
    mapping["__line__"] = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _strip_lines(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_lines(v) for k, v in value.items() if k != "__line__"}
    if isinstance(value, list):
        return [_strip_lines(v) for v in value]
    return value


def _line_of(document: Any, location: tuple[int | str, ...]) -> int | None:
    line: int | None = document.get("__line__") if isinstance(document, dict) else None
    node = document
    for part in location:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict) and "__line__" in node:
            line = node["__line__"]
    return line


def parse_subscriptions(text: str, source: str = "<subscriptions>") -> SubscriptionsFile:
    try:
        document = yaml.load(text, Loader=_LineLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        position = Position(mark.index, mark.line + 1, mark.column + 1) if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"invalid YAML: {problem}", source=source, position=position) from None
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise ConfigError("the top level must be a mapping", source=source)
    try:
        model = SubscriptionsFile.model_validate(_strip_lines(document))
    except ValidationError as exc:
        first = exc.errors()[0]
        location = tuple(first["loc"])
        field = ".".join(str(part) for part in location) or "(top)"
        line = _line_of(document, location)
        position = Position(0, line, 1) if line else None
        raise ConfigError(f"{field}: {first['msg']}", source=source, position=position) from None
    return _one_per_identity(model, document, source)


def _one_per_identity(model: SubscriptionsFile, document: Any, source: str) -> SubscriptionsFile:
    """One entry per (node, id): an identical repeat is dropped with a warning, a different
    one is an error naming both lines."""
    first: dict[Identity, tuple[Subscription, int | None]] = {}
    lines: dict[Identity, int] = {}
    warnings: list[str] = []
    kept: list[Subscription] = []
    for index, subscription in enumerate(model.subscriptions):
        line = _line_of(document, ("subscriptions", index))
        position = Position(0, line, 1) if line else None
        earlier = first.get(subscription.identity)
        if earlier is not None:
            declared, earlier_line = earlier
            at = f" (first at line {earlier_line})" if earlier_line else ""
            if declared == subscription:
                warnings.append(
                    ConfigError(
                        f"subscriptions.{index}: {subscription.label} repeats an identical "
                        f"entry{at}; the repeat is ignored",
                        source=source,
                        position=position,
                    ).message()
                )
                continue
            hint = (
                "; ids are per device (RFC 8639): give each entry the 'node' it is for"
                if subscription.node is None
                else ""
            )
            raise ConfigError(
                f"subscriptions.{index}.id: {subscription.label} is declared twice{at}, "
                f"differently{hint}",
                source=source,
                position=position,
            )
        first[subscription.identity] = (subscription, line)
        kept.append(subscription)
        if line:
            lines[subscription.identity] = line
    if len(kept) != len(model.subscriptions):
        model = model.model_copy(update={"subscriptions": tuple(kept)})
    model._lines = lines
    model._source = source
    model._warnings = tuple(warnings)
    return model


def read_subscriptions_text(path: str | Path) -> str:
    """The text of a subscriptions file: a regular file, at most MAX_FILE_BYTES, UTF-8."""
    try:
        data = read_bounded(str(path), MAX_FILE_BYTES, "subscriptions file")
    except YangkeyError as exc:
        raise ConfigError(exc.reason, source=str(path)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"subscriptions file is not UTF-8 (byte {exc.start})", source=str(path)
        ) from None


def load_subscriptions_file(path: str | Path) -> SubscriptionsFile:
    return parse_subscriptions(read_subscriptions_text(path), source=str(path))
