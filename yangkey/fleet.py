"""Which subscription a node uses: a subscription's identity is (node, id).

RFC 8639 section 2.4: a subscription id is unique per publisher, not across a fleet (three
devices may all send subscription id 1, each with its own filter). A subscriptions file
entry is therefore declared for a node, a node pattern or the whole fleet, and one
notification's (node, subscription id) picks one entry, most specific first:

1. the entry declared for exactly that node (``node: pe1.nyc``);
2. an entry whose node pattern matches it (``node: "pe*"``, shell-style, case sensitive,
   :func:`fnmatch.fnmatchcase`); when several patterns match, the one declared first;
3. the fleet-wide entry (no ``node``).

A notification whose node is not known (no hostname, no ``--node``) uses the fleet-wide
entry, else the first declared: its key cannot be made without a node anyway, and that
error says so.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")

PATTERN_CHARS = frozenset("*?[")
"""A ``node`` with one of these is a pattern (:mod:`fnmatch`), else a node name."""

Identity = tuple[str | None, int]
"""(node name, node pattern or None for fleet-wide; subscription id)."""


def is_pattern(node: str) -> bool:
    return not PATTERN_CHARS.isdisjoint(node)


def describe(subscription_id: int, node: str | None) -> str:
    """``subscription 1 for node pe1``, ``… for nodes pe*``, or ``subscription 1`` for a
    fleet-wide one: how errors and warnings name a subscription."""
    if node is None:
        return f"subscription {subscription_id}"
    return f"subscription {subscription_id} for node{'s' if is_pattern(node) else ''} {node}"


def for_node(node: str | None) -> str:
    """`` for node pe1`` to append to a message about a notification's subscription."""
    return "" if node is None else f" for node {node}"


@dataclass
class _Candidates(Generic[T]):
    """The entries of one subscription id."""

    exact: dict[str, T] = field(default_factory=dict)
    patterns: list[tuple[str, T]] = field(default_factory=list)
    fleet: list[T] = field(default_factory=list)
    declared: list[T] = field(default_factory=list)

    def pick(self, node: str | None) -> T | None:
        if node is None:
            if self.fleet:
                return self.fleet[0]
            return self.declared[0] if self.declared else None
        found = self.exact.get(node)
        if found is not None:
            return found
        for pattern, item in self.patterns:
            if fnmatch.fnmatchcase(node, pattern):
                return item
        return self.fleet[0] if self.fleet else None

    def fleet_wide(self) -> frozenset[str] | None:
        """:meth:`FleetIndex.fleet_wide` of these entries."""
        if self.patterns or not self.fleet:
            return None
        return frozenset(self.exact)


class FleetIndex(Generic[T]):
    """Items by (node or pattern or fleet-wide, subscription id), looked up with the
    precedence of this module. The first item added for an identity wins."""

    def __init__(self) -> None:
        self._by_id: dict[int, _Candidates[T]] = {}

    def add(self, subscription_id: int, node: str | None, item: T) -> None:
        candidates = self._by_id.setdefault(subscription_id, _Candidates())
        candidates.declared.append(item)
        if node is None:
            candidates.fleet.append(item)
        elif is_pattern(node):
            candidates.patterns.append((node, item))
        else:
            candidates.exact.setdefault(node, item)

    def pick(self, subscription_id: int, node: str | None) -> T | None:
        """The item ``node`` uses for ``subscription_id``, or None."""
        candidates = self._by_id.get(subscription_id)
        return None if candidates is None else candidates.pick(node)

    def fleet_wide(self, subscription_id: int) -> frozenset[str] | None:
        """The node names that do not :meth:`pick` the fleet-wide item of ``subscription_id``
        when every other node name does (the id has a fleet-wide item and no node pattern):
        the names it is declared for exactly, often none. None when no item is picked by
        every other node (a pattern decides, or there is no fleet-wide item)."""
        candidates = self._by_id.get(subscription_id)
        return None if candidates is None else candidates.fleet_wide()

    def ids(self) -> Iterator[int]:
        return iter(self._by_id)


def used_by(
    identities: Iterable[Identity], node: str | None, subscription_id: int | None = None
) -> set[Identity]:
    """The identities among ``identities`` (in declaration order) that ``node`` uses, by the
    precedence above; every one without ``node``; only ``subscription_id``'s when given."""
    wanted = [i for i in dict.fromkeys(identities) if subscription_id in (None, i[1])]
    if node is None:
        return set(wanted)
    index: FleetIndex[Identity] = FleetIndex()
    for identity in wanted:
        index.add(identity[1], identity[0], identity)
    return {picked for i in index.ids() if (picked := index.pick(i, node)) is not None}
