"""A reference Phase 3: slow, interpreted, schema-driven, written from SPEC section 2.4 alone.

It shares no code with the generated walkers of :mod:`yangkey.keys` beyond the value
canonicalizers (:mod:`yangkey.values`, checked on their own by the vectors) and ``quote``. What
it takes from Phase 2 is only each branch's steps (module and name) and the literals the
subscription pinned or filtered on; node kinds, key names, key order and key types come from
the YANG schema (yangson), member names are resolved to modules per RFC 7951 section 4 for
every member of every object, and concrete XPaths are written from scratch.

The rules, as the differential tests hold the generated walkers to them:

* a data node is a member of a JSON object; its module is the member's qualifier, else its
  parent's; a null member is absent. A list's value is an array of entries (one object counts
  as one entry: XML decoding yields that); entries that are not objects are no data nodes.
* a node is an instance of a branch when its schema path (module and name at every level)
  equals the branch's. Each list entry along that path must carry every key leaf with a valid
  value, else the notification is rejected, whether or not anything below it matches; an entry
  whose key contradicts a pinned value, or whose non-key leaves contradict a filter (checked
  in order; a leaf the entry lacks contradicts nothing), is not followed further. An invalid
  filter value rejects, unless an earlier filter or a pinned key already ruled the entry out.
* yang-patch: an edit describes the nodes along its target (key values from the target; the
  target node's own data from the edit's value) and the nodes inside its value. Deleting or
  removing a node deletes the branch instances below it that the branch pins completely.
* no instance in any branch: an update without data (a push-update with empty contents, a
  yang-patch without edits) is an empty update; else a single branch without open
  placeholders that targets a container yields its template; anything else is rejected
  (:class:`NoMatchError`, whose subclasses the tests do not tell apart here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yangson.schemanode import (
    ContainerNode,
    InternalNode,
    LeafListNode,
    ListNode,
    SchemaNode,
    TerminalNode,
)

from yangkey.canon_types import canon_for
from yangkey.compiled import Branch, CompiledSubscription
from yangkey.errors import EmptyUpdate, NoMatchError, NotificationError
from yangkey.notifications import Edit, Notification
from yangkey.values import Canon
from yangkey.xpath import quote

Prefixes = Mapping[str, str] | None


@dataclass(frozen=True)
class _Key:
    name: str
    module: str
    canon: Canon
    pinned: str | None


@dataclass(frozen=True)
class _Level:
    """One step of a branch, as the schema describes it."""

    module: str
    name: str
    node: SchemaNode
    written: str
    """The step as written in an XPath: module name on the first step and where it changes."""
    keys: tuple[_Key, ...]
    """List keys in ``key`` statement order; empty for a keyless (positional) list."""
    leaf_list: _Key | None
    filters: tuple[tuple[str, str, Canon, str], ...]
    """Non-key predicates: (leaf module, leaf name, canonicalizer, required canonical value)."""

    @property
    def is_list(self) -> bool:
        return isinstance(self.node, ListNode)


def _levels(branch: Branch, root: SchemaNode, prefixes: Prefixes) -> list[_Level]:
    levels: list[_Level] = []
    node = root
    parent_module: str | None = None
    for step in branch.steps:
        assert isinstance(node, InternalNode)
        child = node.get_data_child(step.name, step.module)
        assert child is not None, f"{step.module}:{step.name} is not in the schema"
        node = child
        written = step.name if step.module == parent_module else f"{step.module}:{step.name}"
        pinned = {slot.member: slot.pinned for slot in step.keys}
        keys: list[_Key] = []
        if isinstance(node, ListNode):
            for key_name, key_module in node.keys:
                leaf = node.get_data_child(key_name, key_module)
                assert isinstance(leaf, TerminalNode)
                member = key_name if key_module == step.module else f"{key_module}:{key_name}"
                canon = canon_for(leaf.type, key_module, prefixes)
                keys.append(_Key(key_name, key_module, canon, pinned[member]))
        leaf_list = None
        if isinstance(node, LeafListNode):
            canon = canon_for(node.type, step.module, prefixes)
            leaf_list = _Key("", step.module, canon, pinned[""])
        filters = []
        for data_filter in step.filters:
            module, _, name = data_filter.qualified_member.partition(":")
            assert isinstance(node, InternalNode)
            leaf = node.get_data_child(name, module)
            assert isinstance(leaf, TerminalNode)
            canon = canon_for(leaf.type, module, prefixes)
            filters.append((module, name, canon, data_filter.value))
        levels.append(
            _Level(step.module, step.name, node, written, tuple(keys), leaf_list, tuple(filters))
        )
        parent_module = step.module
    return levels


def _members(obj: dict[str, Any], parent_module: str | None) -> list[tuple[str, str, Any]]:
    """(module, name, value) of every non-null member of a data object, RFC 7951 section 4."""
    found = []
    for member, value in obj.items():
        if value is None or not isinstance(member, str):
            continue
        qualifier, colon, name = member.partition(":")
        if colon:
            found.append((qualifier, name, value))
        elif parent_module is not None:
            found.append((parent_module, member, value))
    return found


def _child(obj: dict[str, Any], module: str, parent_module: str | None, name: str) -> list[Any]:
    return [value for m, n, value in _members(obj, parent_module) if (m, n) == (module, name)]


class ReferenceWalker:
    """Phase 3 of one compiled branch, interpreted."""

    def __init__(self, branch: Branch, root: SchemaNode, prefixes: Prefixes = None) -> None:
        self.branch = branch
        self.levels = _levels(branch, root, prefixes)

    # ------------------------------------------------------------------ one list entry
    def entry_predicates(self, level: _Level, entry: dict[str, Any], position: int) -> str | None:
        """The predicates this entry adds to an XPath; None when it does not match."""
        if not level.keys:
            return f"[{position}]"
        values = []
        for key in level.keys:
            found = _child(entry, key.module, level.module, key.name)
            if not found:
                raise NotificationError(
                    f"an entry of list {level.module}:{level.name} has no key leaf {key.name}"
                )
            values.append(key.canon(found[0]))
        for key, value in zip(level.keys, values, strict=True):
            if key.pinned is not None and value != key.pinned:
                return None
        if not self.filters_pass(level, entry):
            return None
        return "".join(
            f"[{key.name if key.module == level.module else f'{key.module}:{key.name}'}"
            f"={quote(value)}]"
            for key, value in zip(level.keys, values, strict=True)
        )

    @staticmethod
    def filters_pass(level: _Level, obj: Any) -> bool:
        for module, name, canon, required in level.filters:
            if not isinstance(obj, dict):
                return False
            found = _child(obj, module, level.module, name)
            if found and canon(found[0]) != required:
                return False
        return True

    # ------------------------------------------------------------------ a data tree
    def walk(
        self, obj: dict[str, Any], depth: int, parent_module: str | None, prefix: str, out: set[str]
    ) -> None:
        """Instances under ``obj``, an object standing at branch level ``depth``."""
        level = self.levels[depth]
        last = depth == len(self.levels) - 1
        for value in _child(obj, level.module, parent_module, level.name):
            path = prefix + "/" + level.written
            if level.is_list:
                entries = value if isinstance(value, list) else [value]
                for position, entry in enumerate(entries, 1):
                    if not isinstance(entry, dict):
                        continue
                    predicates = self.entry_predicates(level, entry, position)
                    if predicates is None:
                        continue
                    if last:
                        out.add(path + predicates)
                    else:
                        self.walk(entry, depth + 1, level.module, path + predicates, out)
            elif level.leaf_list is not None:
                key = level.leaf_list
                for item in value if isinstance(value, list) else [value]:
                    text = key.canon(item)
                    if key.pinned is None or text == key.pinned:
                        out.add(f"{path}[.={quote(text)}]")
            elif not self.filters_pass(level, value):
                continue
            elif last:
                out.add(path)
            elif isinstance(value, dict):
                self.walk(value, depth + 1, level.module, path, out)

    def one_entry(self, edit: Edit) -> None:
        """RFC 8072: an edit whose target names a list entry carries that one entry; checked
        before any entry is matched, whatever the branch pins."""
        final = len(edit.target) - 1
        if edit.value is None or final >= len(self.levels):
            return
        level, tstep = self.levels[final], edit.target[final]
        if not level.is_list or tstep.keys is None:
            return
        parent_module = self.levels[final - 1].module if final else None
        for content in _child(edit.value, level.module, parent_module, level.name):
            items = content if isinstance(content, list) else [content]
            entries = sum(isinstance(item, dict) for item in items)
            if entries > 1:
                raise NotificationError(
                    f"yang-patch value holds {entries} entries of list "
                    f"{level.module}:{level.name}, but its target names one entry"
                )

    # ------------------------------------------------------------------ a yang-patch edit
    def edit(self, edit: Edit, out: set[str]) -> None:
        target = edit.target
        for level, tstep in zip(self.levels, target, strict=False):
            if (level.module, level.name) != (tstep.module, tstep.name):
                return
        self.one_entry(edit)
        path = ""
        parent_module: str | None = None
        for depth, (level, tstep) in enumerate(zip(self.levels, target, strict=False)):
            at_target = depth == len(target) - 1
            last = depth == len(self.levels) - 1
            # The edit's value holds the target node itself (RFC 8072).
            value = edit.value if at_target else None
            contents = (
                [] if value is None else _child(value, level.module, parent_module, level.name)
            )
            if level.leaf_list is not None:
                key = level.leaf_list
                items: list[Any] = list(tstep.keys or ())
                if not items:
                    for content in contents:
                        items.extend(content if isinstance(content, list) else [content])
                for item in items:
                    text = key.canon(item)
                    if key.pinned is None or text == key.pinned:
                        out.add(f"{path}/{level.written}[.={quote(text)}]")
                return
            if level.is_list and tstep.keys is None and value is not None:
                self.walk(value, depth, parent_module, path, out)  # the whole list's entries
                return
            data: Any = {}
            path += "/" + level.written
            if level.is_list:
                if len(tstep.keys or ()) != len(level.keys):
                    raise NotificationError(
                        f"yang-patch target names {len(tstep.keys or ())} key value(s) for list "
                        f"{level.module}:{level.name}, which has {len(level.keys)}"
                    )
                for key, text in zip(level.keys, tstep.keys or (), strict=True):
                    data[key.name if key.module == level.module else f"{key.module}:{key.name}"] = (
                        text
                    )
                for content in contents:
                    for item in content if isinstance(content, list) else [content]:
                        if isinstance(item, dict):
                            data.update(item)
                predicates = self.entry_predicates(level, data, 1)
                if predicates is None:
                    return
                path += predicates
            elif contents:
                data = contents[0]
            if not level.is_list and level.filters and not self.filters_pass(level, data):
                return
            if last:
                out.add(path)
                return
            if at_target:
                if value is None:
                    self.deleted_below(depth + 1, path, out)
                elif isinstance(data, dict):
                    self.walk(data, depth + 1, level.module, path, out)
                return
            parent_module = level.module

    def deleted_below(self, depth: int, path: str, out: set[str]) -> None:
        """A deleted node deletes the branch instance below it only if the branch pins it."""
        for level in self.levels[depth:]:
            if level.is_list and (not level.keys or any(k.pinned is None for k in level.keys)):
                return
            if level.leaf_list is not None and level.leaf_list.pinned is None:
                return
        for level in self.levels[depth:]:
            path += "/" + level.written
            if level.is_list:
                path += "".join(
                    f"[{k.name if k.module == level.module else f'{k.module}:{k.name}'}"
                    f"={quote(k.pinned or '')}]"
                    for k in level.keys
                )
            elif level.leaf_list is not None:
                path += f"[.={quote(level.leaf_list.pinned or '')}]"
        out.add(path)

    def instances(self, notification: Notification) -> set[str]:
        out: set[str] = set()
        if notification.kind == "push-update":
            self.walk(notification.data, 0, None, "", out)
        else:
            for edit in notification.edits:
                self.edit(edit, out)
        return out


def reference_xpaths(
    compiled: CompiledSubscription,
    root: SchemaNode,
    notification: Notification,
    prefixes: Prefixes = None,
) -> tuple[tuple[str, ...], ...]:
    """Per branch, its concrete XPaths sorted by code point; the no-match rule applied.
    ``prefixes``: the search path's unique YANG prefixes, as Phase 2 gives them."""
    walkers = [ReferenceWalker(branch, root, prefixes) for branch in compiled.branches]
    per_branch = [tuple(sorted(walker.instances(notification))) for walker in walkers]
    if not any(per_branch):
        if (notification.kind == "push-update" and not notification.data) or (
            notification.kind == "push-change-update" and not notification.edits
        ):
            raise EmptyUpdate("empty update")
        only = walkers[0]
        if (
            len(walkers) == 1
            and isinstance(only.levels[-1].node, ContainerNode)
            and not any(
                level.is_list and (not level.keys or any(k.pinned is None for k in level.keys))
                for level in only.levels
            )
        ):
            return ((only.branch.template,),)
        raise NoMatchError("no matching instances")
    return tuple(per_branch)
