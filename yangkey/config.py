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
    ValidationError,
    field_validator,
    model_validator,
)

from yangkey.errors import ConfigError, Position

SubscriptionType = Literal["periodic", "on-change", "on-change-sync"]

_DURATION = re.compile(r"^\s*(\d+)\s*(s|m|h|d|w)?\s*$")
_DURATION_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, None: 1}


def parse_duration(text: str | int) -> int:
    """``7d`` / ``12h`` / ``90m`` / ``3600`` (seconds) -> seconds."""
    if isinstance(text, int):
        return text
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"invalid duration {text!r}: use a number with s, m, h, d or w")
    return int(match.group(1)) * _DURATION_SECONDS[match.group(2)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TopicPolicy(_Strict):
    """How topic names are built (docs/design.md#topic-names)."""

    type_level: bool = False
    """Add the subscription-type level (stats / state-change / state / current-state)."""
    type_level_position: Literal["first", "after-prefix", "last"] = "after-prefix"
    separator: str = "-"
    max_length: int = Field(default=249, ge=20, le=10_000)
    per_branch: bool = True
    """Off: every message goes to ``single_topic``."""
    single_topic: str = "yang-push"
    keys: bool = True
    """Off: messages carry no key and are spread round robin."""

    @field_validator("separator")
    @classmethod
    def _separator_is_topic_safe(cls, value: str) -> str:
        if not value or not re.fullmatch(r"[a-zA-Z0-9._-]+", value):
            raise ValueError("separator must be one or more of a-z A-Z 0-9 . _ -")
        return value


class Defaults(_Strict):
    partitions: int = Field(default=6, ge=1, le=10_000)
    replication_factor: int = Field(default=1, ge=1, le=32)
    retention: str | int = "7d"
    yang_dirs: tuple[str, ...] = ()

    @field_validator("retention")
    @classmethod
    def _retention_parses(cls, value: str | int) -> str | int:
        parse_duration(value)
        return value


class Subscription(_Strict):
    id: int = Field(ge=0, le=2**32 - 1)
    xpath: str | None = None
    subtree: str | None = None
    node: str | None = None
    """A node name or an fnmatch pattern (``pe*``); None means any node."""
    type: SubscriptionType = "periodic"
    compaction: bool = False
    retention: str | int | None = None
    partitions: int | None = Field(default=None, ge=1, le=10_000)
    yang_dirs: tuple[str, ...] = ()
    generation: int = Field(default=1, ge=1)
    """Bump when the filter of an existing id changes; queries read the newest generation."""

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

    @field_validator("retention")
    @classmethod
    def _retention_parses(cls, value: str | int | None) -> str | int | None:
        if value is not None:
            parse_duration(value)
        return value

    @property
    def filter_text(self) -> str:
        return self.xpath if self.xpath is not None else (self.subtree or "")


class SubscriptionsFile(_Strict):
    organisation_prefix: str | None = None
    topic_policy: TopicPolicy = TopicPolicy()
    defaults: Defaults = Defaults()
    dead_letter_topic: str = "yangkey-dead-letter"
    subscriptions: tuple[Subscription, ...] = ()
    _lines: dict[int, int] = PrivateAttr(default_factory=dict)
    """Subscription id -> line of its entry in the file, for error messages."""

    def line_of(self, subscription_id: int) -> int | None:
        return self._lines.get(subscription_id)


class _LineLoader(yaml.SafeLoader):
    """A safe loader that remembers where each mapping started, for error messages."""


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
    first_line: dict[int, int | None] = {}
    for index, subscription in enumerate(model.subscriptions):
        line = _line_of(document, ("subscriptions", index))
        if subscription.id in first_line:
            earlier = first_line[subscription.id]
            raise ConfigError(
                f"subscriptions.{index}.id: subscription id {subscription.id} is declared twice"
                + (f" (first at line {earlier})" if earlier else ""),
                source=source,
                position=Position(0, line, 1) if line else None,
            )
        first_line[subscription.id] = line
        if line:
            model._lines[subscription.id] = line
    return model


def load_subscriptions_file(path: str | Path) -> SubscriptionsFile:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        reason = f"cannot read subscriptions file: {exc.strerror}"
        raise ConfigError(reason, source=str(path)) from None
    return parse_subscriptions(text, source=str(path))
