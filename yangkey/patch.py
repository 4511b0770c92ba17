"""Phase 3 for yang-patch notifications (RFC 8072, push-change-update): each edit's target
resolved against a compiled branch (:class:`EditPlan`), and the data tree an edit stands for
(:func:`edit_tree`) handed to the branch's walker (:mod:`yangkey.walker`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from yangkey.compiled import Branch, CompiledStep, KeySlot
from yangkey.errors import NotificationError
from yangkey.notifications import Edit, TargetStep
from yangkey.walker import DELETED, Walker, lookup


class EditPlan(NamedTuple):
    """What :func:`edit_tree` needs of a branch, worked out once per branch."""

    steps: tuple[CompiledStep, ...]
    path: tuple[tuple[str, str], ...]
    """(module, name) of each step: an edit's target must follow it."""
    named: tuple[tuple[KeySlot, ...], ...]
    """Per step, the key slots a target names (the non-positional ones)."""
    members: tuple[tuple[str, ...], ...]
    """Per step, the member names of ``named``."""
    key_leaf: tuple[bool, ...]
    """Per step, whether it is a key leaf of the list step before it."""
    cacheable: bool
    """The branch ends in a list and filters on no data: an edit whose target names that
    list's entry (keys given) yields XPaths that depend on the target alone, since the value
    can only repeat the keys (checked) or add members no walker reads."""
    found: dict[tuple[TargetStep, ...], tuple[str, ...] | None]
    """Cacheable targets -> their XPaths; None for a target the branch does not follow."""


_FOUND_MAX = 65536


def edit_plan(branch: Branch) -> EditPlan:
    steps = branch.steps
    named = tuple(tuple(slot for slot in step.keys if not slot.positional) for step in steps)
    return EditPlan(
        steps,
        tuple((step.module, step.name) for step in steps),
        named,
        tuple(tuple(slot.member for slot in slots) for slots in named),
        tuple(
            bool(index and any(slot.member == step.member for slot in steps[index - 1].keys))
            for index, step in enumerate(steps)
        ),
        bool(steps) and steps[-1].kind == "list" and not any(step.filters for step in steps),
        {},
    )


def edits_xpaths(plan: EditPlan, walk: Walker, edits: tuple[Edit, ...], found: list[str]) -> None:
    """Append the XPaths of a notification's edits. A target seen before takes them from the
    plan's cache, its value's keys still checked against the target's as :func:`edit_tree`
    does: inline, as this loop is the whole cost of a warm yang-patch."""
    if not plan.cacheable:
        for edit in edits:
            _edit_xpaths(plan, walk, edit, found)
        return
    cache = plan.found
    last = len(plan.steps) - 1
    step = plan.steps[last]
    member, qualified = step.member, step.qualified_member
    members = plan.members[last]
    for edit in edits:
        target = edit.target
        xpaths = cache.get(target, _MISS)
        if xpaths is _MISS:
            _edit_xpaths(plan, walk, edit, found)
            continue
        if xpaths is None:
            continue
        value = edit.value
        if value is not None and len(target) == last + 1:
            content = value.get(member)
            if content is None and member != qualified:
                content = value.get(qualified)
            keys = target[last].keys
            assert keys is not None  # cached targets name the entry
            if type(content) is list and len(content) > 1:
                _one_entry(step, content)
            for item in content if type(content) is list else (content,):
                if type(item) is dict:
                    for name, key in zip(members, keys, strict=True):
                        given = item.get(name)
                        if given is not None and given != key:
                            _check_value_keys(step, plan.named[last], keys, item)
        found.extend(xpaths)


_MISS: tuple[str, ...] = ("not cached",)  # told apart by identity


def _edit_xpaths(plan: EditPlan, walk: Walker, edit: Edit, found: list[str]) -> None:
    """Append the XPaths of one edit not in the plan's cache; cache them when the target
    allows it."""
    target = edit.target
    last = len(plan.steps) - 1
    keys = target[last].keys if plan.cacheable and len(target) > last else None
    if keys is None:
        tree = edit_tree(plan, edit)
        if tree is not None:
            walk(tree, found)
        return
    cache = plan.found
    tree = edit_tree(plan, edit)
    start = len(found)
    if tree is not None:
        walk(tree, found)  # raises before anything is cached if the target is bad
    if len(cache) >= _FOUND_MAX:
        cache.clear()
    cache[target] = None if tree is None else tuple(found[start:])


def edit_tree(plan: EditPlan, edit: Edit) -> dict[Any, Any] | None:
    """The data an edit describes, as a tree the walker can read; None if it cannot match."""
    steps = plan.steps
    target = edit.target
    depth = min(len(target), len(steps))
    path = plan.path
    for index in range(depth):
        if target[index][:2] != path[index]:
            return None
    root: dict[Any, Any] = {}
    cursor: dict[Any, Any] = root
    value = edit.value if len(target) <= len(steps) else None
    final_index = depth - 1
    for index in range(depth):
        step, tstep = steps[index], target[index]
        final = index == final_index
        kind = step.kind
        if kind == "list":
            named = plan.named[index]
            if tstep.keys is not None:
                if len(tstep.keys) != len(named):
                    raise NotificationError(
                        f"yang-patch target names {len(tstep.keys)} key value(s) for list "
                        f"{step.module}:{step.name}, which has {len(named)}"
                    )
                entry: dict[Any, Any] = dict(zip(plan.members[index], tstep.keys, strict=True))
            else:
                entry = {}
            if final and value is not None:
                content = lookup(value, step)
                if tstep.keys is None:
                    cursor[step.member] = content
                    break
                # A single list entry in XML decodes to a dict, not a one-element list.
                if type(content) is list and len(content) > 1:
                    _one_entry(step, content)
                for item in content if isinstance(content, list) else (content,):
                    if isinstance(item, dict):
                        _check_value_keys(step, named, tstep.keys, item)
                        entry.update(item)
            elif final:
                entry[DELETED] = True
            cursor[step.member] = [entry]
            cursor = entry
        elif kind == "container":
            if final and value is not None:
                content = lookup(value, step)
                cursor[step.member] = content if isinstance(content, dict) else {}
                break
            container: dict[Any, Any] = {DELETED: True} if final else {}
            cursor[step.member] = container
            cursor = container
        elif kind == "leaf-list":
            if tstep.keys:
                cursor[step.member] = list(tstep.keys)
            elif value is not None:
                cursor[step.member] = lookup(value, step)
            else:
                break  # deleting a whole leaf-list names no value (its entries are still checked)
        elif not plan.key_leaf[index]:
            # A key leaf is there exactly when the target names the entry's keys: the edit's
            # value never stands in for them.
            content = lookup(value, step) if value is not None else None
            cursor[step.member] = content if content is not None else ""
    return root


def _one_entry(step: CompiledStep, content: list[Any]) -> None:
    """RFC 8072 section 2.5: the value of an edit whose target names a list entry is that one
    entry. Several entries would be merged into one, a member given in each (or spelled with
    and without its module) decided by whichever came last: refuse them."""
    entries = sum(type(item) is dict for item in content)
    if entries > 1:
        raise NotificationError(
            f"yang-patch value holds {entries} entries of list {step.module}:{step.name}, "
            "but its target names one entry"
        )


def _check_value_keys(
    step: CompiledStep,
    named: tuple[KeySlot, ...],
    target_keys: tuple[str, ...],
    item: dict[str, Any],
) -> None:
    """An edit whose value names another list entry than its target (target ``eth0``, value
    ``eth9``) is contradictory: refuse it rather than let either one pick the key."""
    for slot, wanted in zip(named, target_keys, strict=True):
        given = item.get(slot.member)
        # Equal text canonicalizes equally: the canonicalizers run only on a difference.
        if given is not None and given != wanted and slot.canon(given) != slot.canon(wanted):
            raise NotificationError(
                f"yang-patch value names {slot.member} {given!r} but the target names "
                f"{wanted!r} (list {step.module}:{step.name})"
            )
