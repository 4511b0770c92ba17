"""Phase 3 and the message key format (draft sections 3.1.1 and 3.1.2.3).

A key is UTF-8: ``node LF subscription-id LF xpath1 | xpath2 …`` with the concrete XPaths
de-duplicated and sorted by code point, and no trailing LF.

:class:`KeyDeriver` walks a decoded data tree with the compiled branches. Descending along the
branch, each list step reads its key leaves from the entry it is in, which is the draft's upward
``ancestor-or-self`` walk done on the way down: O(nodes x depth), no schema lookup, no XPath
evaluation per notification.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from yangkey.errors import NoMatchError, NotificationError, YangkeyError
from yangkey.notifications import Edit, Notification
from yangkey.templates import Branch, CompiledStep, CompiledSubscription
from yangkey.xpath import quote, split_outside_quotes

XPATH_SEPARATOR = " | "
_DELETED = "\x00deleted"
"""Marks the node a delete/remove edit names: it exists, but carries no data below it."""


def compose_key(node: str, subscription_id: int, xpaths: Iterable[str]) -> bytes:
    if not node or "\n" in node:
        raise NotificationError(f"node name {node!r} is empty or contains a line feed")
    unique = sorted(set(xpaths))
    if not unique:
        raise NoMatchError("no matching instances")
    return f"{node}\n{subscription_id}\n{XPATH_SEPARATOR.join(unique)}".encode()


@dataclass(frozen=True, slots=True)
class ParsedKey:
    node: str
    subscription_id: int
    xpaths: tuple[str, ...]


def parse_key(key: bytes | str) -> ParsedKey:
    """Split on the first two LFs; split line 3 on ``" | "`` outside quotes."""
    text = key.decode("utf-8") if isinstance(key, bytes) else key
    parts = text.split("\n", 2)
    if len(parts) != 3:
        raise YangkeyError("a message key has three LF-separated fields", source="key")
    node, subscription, xpaths = parts
    try:
        subscription_id = int(subscription)
    except ValueError:
        raise YangkeyError(f"subscription id {subscription!r} is not decimal", source="key") from None
    return ParsedKey(node, subscription_id, tuple(split_outside_quotes(xpaths, XPATH_SEPARATOR)))


def _entries(value: Any) -> list[Any]:
    # A single list entry in XML decodes to a dict, not a one-element list.
    return value if isinstance(value, list) else [value]


def _lookup(node: dict[str, Any], step: CompiledStep) -> Any:
    value = node.get(step.member)
    if value is None and step.member != step.qualified_member:
        value = node.get(step.qualified_member)
    return value


def _passes_filters(entry: dict[str, Any], step: CompiledStep) -> bool:
    for data_filter in step.filters:
        value = entry.get(data_filter.member)
        if value is None:
            value = entry.get(data_filter.qualified_member)
        if value is None or data_filter.canon(value) != data_filter.value:
            return False
    return True


def _walk(
    branch: Branch, node: dict[str, Any], index: int, values: list[str], out: list[str]
) -> None:
    steps = branch.steps
    step = steps[index]
    child = _lookup(node, step)
    if child is None:
        return
    last = index == len(steps) - 1
    kind = step.kind
    if kind == "list":
        for position, entry in enumerate(_entries(child), start=1):
            if not isinstance(entry, dict):
                continue
            filled = values
            matched = True
            for slot in step.keys:
                if slot.positional:
                    filled = [*filled, str(position)]
                    continue
                raw = entry.get(slot.member)
                if raw is None:
                    raise NotificationError(
                        f"an entry of list {step.module}:{step.name} has no key leaf {slot.member}"
                    )
                value = slot.canon(raw)
                if slot.pinned is None:
                    filled = [*filled, quote(value)]
                elif value != slot.pinned:
                    matched = False
                    break
            if not matched or (step.filters and not _passes_filters(entry, step)):
                continue
            _descend(branch, entry, index, filled, out, last)
    elif kind == "leaf-list":
        slot = step.keys[0]
        for item in _entries(child):
            value = slot.canon(item)
            if slot.pinned is None:
                out.append(branch.render([*values, quote(value)]))
            elif value == slot.pinned:
                out.append(branch.render(values))
    elif kind == "container":
        if step.filters and not (isinstance(child, dict) and _passes_filters(child, step)):
            return
        _descend(branch, child, index, values, out, last)
    elif last:
        out.append(branch.render(values))


def _descend(
    branch: Branch, node: Any, index: int, values: list[str], out: list[str], last: bool
) -> None:
    if last:
        out.append(branch.render(values))
    elif isinstance(node, dict):
        if _DELETED in node and not branch.open_after[index + 1]:
            out.append(branch.render(values))
        else:
            _walk(branch, node, index + 1, values, out)


def _edit_tree(branch: Branch, edit: Edit) -> dict[str, Any] | None:
    """The data an edit describes, as a tree the walker can read; None if it cannot match."""
    steps = branch.steps
    target = edit.target
    depth = min(len(target), len(steps))
    for step, tstep in zip(steps, target[:depth], strict=False):
        if step.module != tstep.module or step.name != tstep.name:
            return None
    root: dict[str, Any] = {}
    cursor: dict[str, Any] = root
    value = edit.value if len(target) <= len(steps) else None
    for index in range(depth):
        step, tstep = steps[index], target[index]
        final = index == depth - 1
        if step.kind == "list":
            entry: dict[str, Any] = {}
            if tstep.keys is not None:
                named = [slot for slot in step.keys if not slot.positional]
                if len(tstep.keys) != len(named):
                    raise NotificationError(
                        f"yang-patch target names {len(tstep.keys)} key value(s) for list "
                        f"{step.module}:{step.name}, which has {len(named)}"
                    )
                entry.update(zip((slot.member for slot in named), tstep.keys, strict=True))
            if final and value is not None:
                content = _lookup(value, step)
                if tstep.keys is None:
                    cursor[step.member] = content
                    break
                for item in _entries(content):
                    if isinstance(item, dict):
                        entry.update(item)
            elif final:
                entry[_DELETED] = True
            cursor[step.member] = [entry]
            cursor = entry
        elif step.kind == "container":
            if final and value is not None:
                content = _lookup(value, step)
                cursor[step.member] = content if isinstance(content, dict) else {}
                break
            container: dict[str, Any] = {_DELETED: True} if final else {}
            cursor[step.member] = container
            cursor = container
        elif step.kind == "leaf-list":
            if tstep.keys:
                cursor[step.member] = list(tstep.keys)
            elif value is not None:
                cursor[step.member] = _lookup(value, step)
            else:
                return None  # deleting a whole leaf-list names no value
        else:
            content = _lookup(value, step) if value is not None else None
            cursor[step.member] = content if content is not None else ""
    return root


@dataclass(frozen=True, slots=True)
class DerivedKey:
    node: str
    subscription_id: int
    xpaths: tuple[str, ...]
    """All concrete XPaths, sorted and de-duplicated."""
    branch_xpaths: tuple[tuple[str, ...], ...]
    """Per compiled branch (same order), its concrete XPaths; empty for unmatched branches."""

    @property
    def key(self) -> bytes:
        return compose_key(self.node, self.subscription_id, self.xpaths)

    def branch_key(self, index: int) -> bytes:
        return compose_key(self.node, self.subscription_id, self.branch_xpaths[index])


class KeyDeriver:
    """Phase 3 for one compiled subscription."""

    __slots__ = ("branches", "compiled")

    def __init__(self, compiled: CompiledSubscription) -> None:
        self.compiled = compiled
        self.branches = compiled.branches

    def instances(self, notification: Notification) -> list[list[str]]:
        """Concrete XPaths per branch (unsorted, may repeat)."""
        per_branch: list[list[str]] = []
        for branch in self.branches:
            found: list[str] = []
            if notification.kind == "push-update":
                _walk(branch, notification.data, 0, [], found)
            else:
                for edit in notification.edits:
                    tree = _edit_tree(branch, edit)
                    if tree is not None:
                        _walk(branch, tree, 0, [], found)
            per_branch.append(found)
        return per_branch

    def derive(
        self,
        notification: Notification,
        *,
        node: str | None = None,
        default_node: str | None = None,
        subscription_id: int | None = None,
    ) -> DerivedKey:
        """The key of one notification. ``node``/``subscription_id`` override what it carries;
        ``default_node`` is used only when it carries no node name."""
        source = notification.source
        node_name = node or notification.node or default_node
        if not node_name:
            raise NotificationError(
                "no node name: the notification has no hostname or network-node-manifest name; "
                "give one with --node",
                source=source,
            )
        sub_id = subscription_id if subscription_id is not None else notification.subscription_id
        if sub_id is None:
            raise NotificationError("no subscription id in the notification; give --subscription-id",
                                    source=source)
        try:
            per_branch = self.instances(notification)
        except YangkeyError as exc:
            raise exc.with_source(source) from None
        if not any(per_branch):
            only = self.branches[0] if len(self.branches) == 1 else None
            if only is not None and only.open_slots == 0 and only.target == "container":
                per_branch = [[only.template]]
            else:
                raise NoMatchError("no matching instances", source=source)
        branch_xpaths = tuple(tuple(sorted(set(found))) for found in per_branch)
        every = tuple(sorted({x for found in branch_xpaths for x in found}))
        if "\n" in node_name:
            raise NotificationError(f"node name {node_name!r} contains a line feed", source=source)
        return DerivedKey(node_name, sub_id, every, branch_xpaths)
