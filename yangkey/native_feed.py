"""The instance feed's tables for the native pass (issue 33, contract 4 of
:mod:`yangkey.native`): an :class:`~yangkey.instances.InstanceFeed` as the plain data
``yangkey_native.Walker`` takes (its leaf plan, each leaf's converter, where each key's value
is), so that the native walk writes the ``yangkey-instances`` header the feed writes, byte for
byte (native/src/feed.rs). The feed itself stays computed in Python: one truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from yangkey.compiled import Branch
from yangkey.instances import InstanceFeed, _pinned_key, _Plan, _Slot
from yangkey.native import _canon, active, branch_table

__all__ = ["feed_table", "feed_walker"]


def _key_sources(branch: Branch) -> dict[str, int | str]:
    """Where the native walk holds each key value :func:`yangkey.walker.key_members` names when
    it finds an instance: the index of its open value (each list step pushes its positions,
    then its unpinned keys, in key order), or the pinned text (equal to the value the
    reference's walker reports, or the entry was skipped); a later name wins, as in
    ``dict(zip(...))``."""
    sources: dict[str, int | str] = {}
    index = 0
    for step in branch.steps:
        if step.kind != "list":
            continue
        index += sum(1 for slot in step.keys if slot.positional)
        for slot in step.keys:
            if slot.positional:
                continue
            name = f"{step.member}.{slot.member}"
            if slot.pinned is None:
                sources[name] = index
                index += 1
            else:
                sources[name] = slot.pinned
    return sources


def _converter(slot: _Slot) -> Any:
    """``yangkey.instances._converter``'s choice for ``slot``, as the feed table names it
    (``integer``: the feed's integer text, :func:`yangkey.instances._integer_text`; any
    converter but these: the reference's callable)."""
    from yangson import datatype as dt  # noqa: PLC0415 - yangson on demand

    leaf = slot.leaf
    if leaf.kind == "list":
        return "list"
    if leaf.kind == "leaf-list":
        return ("leaf-list", _canon(leaf.canon))
    if isinstance(leaf.datatype, dt.BitsType):
        return slot.value
    if isinstance(leaf.datatype, dt.EmptyType):
        return "empty"
    return _canon(leaf.canon)


def _plan_table(plan: _Plan) -> list[Any]:
    return [
        (member, (target.name, _converter(target)))
        if isinstance(target, _Slot)
        else (member, _plan_table(target))
        for member, target in plan.items()
    ]


def feed_table(feed: InstanceFeed) -> tuple[Any, ...]:
    """``yangkey_native.Walker``'s plain data of ``feed`` (contract 4): whether its target is
    a leaf, its keys (name, and the index of the walk's value or the literal text), and its
    leaf plan (:func:`yangkey.instances._plan`'s tree) with each leaf's converter."""
    sources = _key_sources(feed.branch)
    keys: list[tuple[str, int | str]] = []
    for key in feed.keys:
        found = sources.get(".".join(key.path))
        # a key the walk does not report: its pinned text in the template (_pinned_key)
        keys.append((key.name, _pinned_key(feed.branch, key) if found is None else found))
    return (feed.leaf_target, keys, _plan_table(feed.tree))


def feed_walker(branches: Sequence[Branch], feeds: Sequence[InstanceFeed]) -> Any | None:
    """The native walker of ``branches`` with their instance feeds (for :func:`keys`'
    ``with_instances`` and :func:`instances`), or None when the native path is off or does
    not take their shape."""
    if not active():
        return None
    data = [branch_table(branch) for branch in branches]
    if any(table is None for table in data):
        return None
    import yangkey_native  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415

    return yangkey_native.Walker(data, [feed_table(feed) for feed in feeds])
