"""The catalog's entries: a compiled subscription with its topics, or one that was skipped.

An entry is identified by (node, id) (RFC 8639 section 2.4: subscription ids are per
publisher); :mod:`yangkey.catalog` picks the entry a notification uses.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from yangkey.compiled import CompiledSubscription
from yangkey.config import Subscription, SubscriptionType
from yangkey.errors import BadSubscriptionError, ConfigError, Position
from yangkey.fleet import Identity, describe
from yangkey.keys import KeyDeriver
from yangkey.shared_catalog import Origin, SharedSubscription

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
    """The node, node pattern or None (fleet-wide) it is for; a learned one: its node."""
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

    @classmethod
    def of_file(
        cls, subscription: Subscription, compiled: CompiledSubscription, topics: tuple[str, ...]
    ) -> CatalogEntry:
        """The entry of a subscription of the subscriptions file."""
        return cls(
            id=subscription.id,
            node_pattern=subscription.node,
            subscription_type=subscription.type,
            compaction=subscription.compaction,
            generation=subscription.generation,
            compiled=compiled,
            topics=topics,
            filter_text=subscription.filter_text,
            subtree=subscription.subtree is not None,
        )

    @classmethod
    def of_shared(
        cls, record: SharedSubscription, compiled: CompiledSubscription, topics: tuple[str, ...]
    ) -> CatalogEntry:
        """The entry of a shared catalog record (learned by another process or declared by a
        file), recompiled here; ``topics`` are the ones its writer named where they fit."""
        return cls(
            id=record.id,
            node_pattern=record.node_pattern,
            subscription_type=record.subscription_type,
            compaction=record.compaction,
            generation=record.generation,
            compiled=compiled,
            topics=topics,
            origin="learned",
            filter_text=record.filter,
            subtree=record.subtree,
            content_id=record.content_id,
            namespaces=record.namespaces,
        )

    @functools.cached_property
    def deriver(self) -> KeyDeriver:
        """Phase 3 for this subscription; its walkers are generated on first use."""
        return KeyDeriver(self.compiled)

    @property
    def identity(self) -> Identity:
        return (self.node_pattern, self.id)

    @property
    def label(self) -> str:
        return describe(self.id, self.node_pattern)


@dataclass(frozen=True)
class SkippedSubscription:
    """A file subscription that does not compile: left out of the catalog's entries and
    topics; its notifications are dead-lettered with :meth:`rejection`."""

    id: int
    node_pattern: str | None
    reason: str
    """Why it does not compile (the compile error, naming the filter)."""
    file: str
    line: int | None = None

    @property
    def identity(self) -> Identity:
        return (self.node_pattern, self.id)

    @property
    def label(self) -> str:
        return describe(self.id, self.node_pattern)

    def message(self) -> str:
        """One line: ``FILE at line 31, column 1: subscription 3 for node xr-2 skipped: …``."""
        position = Position(0, self.line, 1) if self.line else None
        reason = f"{self.label} skipped: {self.reason}"
        return ConfigError(reason, source=self.file, position=position).message()

    def rejection(self, source: str) -> BadSubscriptionError:
        """What a notification of this subscription is dead-lettered with."""
        where = self.file + (f" line {self.line}" if self.line else "")
        return BadSubscriptionError(
            f"{self.label} does not compile, the catalog skipped it ({where}): {self.reason}",
            source=source,
        )
