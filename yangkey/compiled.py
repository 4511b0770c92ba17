"""What Phase 2 makes of a subscription (draft section 3.1.2.2): a :class:`CompiledSubscription`
of one :class:`Branch` per union member, each a key template with its steps, key slots and data
filters. Plain frozen values: pickled into the on-disk cache, shipped to Spark executors, read
by Phase 3 (:mod:`yangkey.walker`, :mod:`yangkey.keys`) with no schema at hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from yangkey.schema_build import LeftOut
from yangkey.values import Canon

TargetKind = Literal["container", "list", "leaf-list", "leaf"]
StepKind = Literal["container", "list", "leaf-list", "leaf"]
KeylessPolicy = Literal["reject", "position"]


@dataclass(frozen=True, slots=True)
class KeySlot:
    """One key predicate of a list step (or the value of a leaf-list target)."""

    member: str
    """The key leaf's JSON member name inside the list entry ("" for a leaf-list value)."""
    canon: Canon
    pinned: str | None
    """Canonical pinned value, or None for an open placeholder."""
    positional: bool = False


@dataclass(frozen=True, slots=True)
class DataFilter:
    """A non-key predicate kept for Phase 3: the instance must carry this value."""

    member: str
    qualified_member: str
    canon: Canon
    value: str


@dataclass(frozen=True, slots=True)
class CompiledStep:
    module: str
    name: str
    kind: StepKind
    member: str
    """JSON member name: qualified on the first step and where the module changes."""
    qualified_member: str
    keys: tuple[KeySlot, ...] = ()
    filters: tuple[DataFilter, ...] = ()


@dataclass(frozen=True)
class Branch:
    """One union member, compiled: template, extraction specs, target kind, Phase 3 plan."""

    xpath: str
    template: str
    extractions: tuple[str, ...]
    target: TargetKind
    schema_path: str
    """The template without predicates, module names as in the template."""
    topic_base: str
    """Topic name before organisation prefix, type level and truncation
    (docs/design.md#topic-names)."""
    steps: tuple[CompiledStep, ...] = field(repr=False)
    pieces: tuple[str, ...] = field(repr=False)
    """Literal template text around the open placeholders (len = open slots + 1)."""
    positional: tuple[bool, ...] = field(repr=False)
    """Per open placeholder: a position (written bare, ``[3]``) rather than a quoted value."""
    open_after: tuple[bool, ...] = field(repr=False)
    """open_after[i]: some step at index >= i has an open placeholder."""

    @property
    def open_slots(self) -> int:
        return len(self.pieces) - 1


@dataclass(frozen=True)
class CompiledSubscription:
    xpath: str
    """The subscription as an XPath union (after Phase 1 for subtree filters)."""
    branches: tuple[Branch, ...]
    warnings: tuple[str, ...]
    modules: tuple[str, ...]
    left_out: tuple[LeftOut, ...] = ()
    """Statements of the modules that the schema build kept out (yangkey.schema_build)."""
