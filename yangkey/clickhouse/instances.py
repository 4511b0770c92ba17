"""The instance feed: one notification -> one flat JSON object per target instance.

ClickHouse cannot read XML, and reading nested RFC 7951 JSON per column needs the schema in SQL.
So the decoded notification (JSON or XML, same tree: :mod:`yangkey.notifications`) is turned
into a JSON array, once, in Python, where the tree is already parsed; the materialized views
only ``ARRAY JOIN`` it and read each column by name (docs/design.md#instance-feed).

Each object has ``@path`` (the instance's concrete XPath, as in the message key), ``@op``
(``replace`` for a push-update, the yang-patch operation of an edit), ``@under`` for an edit
below the instance (the column prefix of its target), and one member per leaf the message
carries, named like the column (:mod:`yangkey.clickhouse.columns`), with the canonical text of
the value (leaf-list: array of texts; nested list: JSON text). What a replace, create, delete or
remove does not carry (under ``@under``) is gone; what a merge does not carry stays as it was.

Not covered: a delete or remove *above* the target (``interface=eth0`` on a topic whose target
is ``interface/statistics``) names no instance of the target, so it has no row here; the
message-level tables still have it.

It travels in the ``yangkey-instances`` header of the keyed message, so the same views serve
the Kafka engine (server mode) and ``yangkey ingest`` (embedded), which adds the header itself
when the producer did not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from yangkey.clickhouse.columns import HEADER_INSTANCES, Column, TypedTopic
from yangkey.errors import NotificationError, YangkeyError
from yangkey.keys import _edit_plan, _edit_tree, _lookup, _passes_filters
from yangkey.notifications import decode
from yangkey.values import canon_integer
from yangkey.xpath import quote

if TYPE_CHECKING:
    from yangkey.catalog import Catalog
    from yangkey.notifications import Edit, Notification
    from yangkey.shared_catalog import SharedSubscription
    from yangkey.templates import Branch, CompiledStep

__all__ = ["HEADER_INSTANCES", "InstanceFeed"]

#: Edits that end the instance (or, below the target, the leaves under their target).
REMOVING = frozenset({"delete", "remove"})


def _entries(value: Any) -> list[Any]:
    # A single list entry in XML decodes to a dict, not a one-element list.
    return value if isinstance(value, list) else [value]


@dataclass(frozen=True)
class _Found:
    path: str
    keys: dict[str, str]
    value: Any


class InstanceFeed:
    """Builds the feed of one topic (one compiled branch and its typed columns)."""

    def __init__(self, branch: Branch, typed: TypedTopic) -> None:
        self.branch = branch
        self._edit_plan = _edit_plan(branch)
        self.typed = typed
        self.keys = tuple(c for c in typed.columns if c.kind == "key")
        self.leaf_target = branch.target in ("leaf", "leaf-list")
        self.tree = _plan(c for c in typed.columns if c.kind != "key")

    # -- finding instances ---------------------------------------------------------------

    def _walk(
        self, node: Any, index: int, pieces: list[str], keys: dict[str, str]
    ) -> Iterator[_Found]:
        steps = self.branch.steps
        step = steps[index]
        value = _lookup(node, step) if isinstance(node, dict) else None
        if value is None:
            return
        last = index == len(steps) - 1
        if step.kind == "list":
            for entry in _entries(value):
                if not isinstance(entry, dict) or not _passes_filters(entry, step):
                    continue
                found = self._list_entry(entry, step, pieces, keys)
                if found is None:
                    continue
                entry_pieces, entry_keys = found
                if last:
                    yield _Found("".join(entry_pieces), entry_keys, entry)
                else:
                    yield from self._walk(entry, index + 1, entry_pieces, entry_keys)
        elif step.kind == "leaf-list":
            slot = step.keys[0]
            for item in _entries(value):
                text = slot.canon(item)
                if slot.pinned is None:
                    path = "".join(pieces) + quote(text) + self.branch.pieces[len(pieces)]
                elif text == slot.pinned:
                    path = self._template(pieces)
                else:
                    continue
                yield _Found(path, keys, item)
        elif last:
            yield _Found(self._template(pieces), keys, value)
        elif step.kind == "container" and isinstance(value, dict):
            yield from self._walk(value, index + 1, pieces, keys)

    def _template(self, pieces: list[str]) -> str:
        # the rest of the template after the last open slot filled so far
        done = len(pieces) - 1
        return "".join(pieces) + "".join(self.branch.pieces[done + 1 :])

    def _list_entry(
        self, entry: dict[str, Any], step: CompiledStep, pieces: list[str], keys: dict[str, str]
    ) -> tuple[list[str], dict[str, str]] | None:
        new_pieces = list(pieces)
        new_keys = dict(keys)
        for slot in step.keys:
            if slot.positional:
                return None
            raw = entry.get(slot.member)
            if raw is None:
                raise NotificationError(
                    f"an entry of list {step.module}:{step.name} has no key leaf {slot.member}"
                )
            text = slot.canon(raw)
            if slot.pinned is not None:
                if text != slot.pinned:
                    return None
            else:
                slot_index = len(new_pieces)
                new_pieces[-1] += quote(text)
                new_pieces.append(self.branch.pieces[slot_index])
            new_keys[f"{step.member}.{slot.member}"] = text
        return new_pieces, new_keys

    def instances(self, data: Any) -> list[_Found]:
        return list(self._walk(data, 0, [self.branch.pieces[0]], {}))

    # -- building the objects ------------------------------------------------------------

    def _object(
        self, found: _Found, op: str, carried: dict[str, Any], under: str = ""
    ) -> dict[str, Any]:
        obj: dict[str, Any] = {"@path": found.path, "@op": op}
        if under:
            obj["@under"] = under
        for column in self.keys:
            list_member, key_member = column.path
            value = found.keys.get(f"{list_member}.{key_member}")
            # a pinned key is in the template, not in the data walked
            obj[column.name] = value if value is not None else _pinned_key(self.branch, column)
        obj.update(carried)
        return obj

    def _carried(self, value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.leaf_target:
            leaf = self.tree[""]
            assert isinstance(leaf, _Leaf)
            out[leaf.name] = leaf.value(value)
        elif isinstance(value, dict):
            _flatten(self.tree, value, out)
        return out

    def push_update(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            self._object(found, "replace", self._carried(found.value))
            for found in self.instances(data)
        ]

    def edit(self, edit: Edit) -> list[dict[str, Any]]:
        tree = _edit_tree(self._edit_plan, edit)
        if tree is None:
            return []
        steps = self.branch.steps
        op = edit.operation
        removing = op in REMOVING
        if len(edit.target) <= len(steps):
            return [
                self._object(found, op, {} if removing else self._carried(found.value))
                for found in self.instances(tree)
            ]
        # An edit below the target: it changes the leaves under its own target only; "@under"
        # names them for a replace or delete (a merge carries its leaves).
        members: list[str] = []
        module = steps[-1].module
        for tstep in edit.target[len(steps) :]:
            members.append(tstep.name if tstep.module == module else f"{tstep.module}:{tstep.name}")
            module = tstep.module
            if tstep.keys is not None:
                break  # inside a nested list: its column holds the list as a whole
        under = ".".join(members)
        wrapped: dict[str, Any] = {}
        content = None if removing else edit.value
        if isinstance(content, dict) and len(content) == 1:
            cursor = wrapped
            for member in members[:-1]:
                cursor = cursor.setdefault(member, {})
            cursor[members[-1]] = next(iter(content.values()))
        carried = {
            name: value
            for name, value in self._carried(wrapped).items()
            if name == under or name.startswith(under + ".")
        }
        return [self._object(found, op, carried, under) for found in self.instances(tree)]

    def feed(self, notification: Notification) -> list[dict[str, Any]]:
        """Every instance object of ``notification`` for this topic's branch, in data order."""
        if notification.kind == "push-update":
            return self.push_update(notification.data)
        objects: list[dict[str, Any]] = []
        for edit in notification.edits:
            objects.extend(self.edit(edit))
        return objects

    def header(self, notification: Notification) -> bytes:
        try:
            return orjson.dumps(self.feed(notification))
        except YangkeyError as exc:
            raise exc.with_source(notification.source) from None


def _pinned_key(branch: Branch, column: Column) -> str:
    list_member, key_member = column.path
    for step in branch.steps:
        if step.member == list_member:
            for slot in step.keys:
                if slot.member == key_member and slot.pinned is not None:
                    return slot.pinned
    return ""


class _Leaf:
    """One column in the plan, with the function giving its feed value (chosen once)."""

    __slots__ = ("column", "name", "value")

    def __init__(self, column: Column) -> None:
        self.column = column
        self.name = column.name
        self.value: Callable[[Any], Any] = _converter(column)


_Plan = dict[str, "_Leaf | _Plan"]


def _plan(columns: Iterator[Column] | Sequence[Column]) -> _Plan:
    """Member path -> column, as a tree mirroring the instance data."""
    root: _Plan = {}
    for column in columns:
        if not column.path:
            root[""] = _Leaf(column)
            continue
        cursor = root
        for member in column.path[:-1]:
            child = cursor.setdefault(member, {})
            assert isinstance(child, dict)
            cursor = child
        cursor[column.path[-1]] = _Leaf(column)
    return root


def _flatten(plan: _Plan, data: dict[str, Any], out: dict[str, Any]) -> None:
    for member, value in data.items():
        target = plan.get(member)
        if target is None:
            if type(member) is not str or ":" not in member:
                continue  # the _DELETED marker of an edit tree, or not in this schema
            # a qualified member where the module does not change is still valid RFC 7951
            target = plan.get(member.rpartition(":")[2])
            if target is None:
                continue  # not in the schema of this topic: ignored, like the key walk does
        if type(target) is _Leaf:
            out[target.name] = target.value(value)
        elif type(value) is dict:
            _flatten(target, value, out)  # type: ignore[arg-type]
        # an empty container in XML decodes to "": it carries nothing


def _integer_text(value: Any) -> str:
    """An integer leaf as text for ClickHouse's toIntN: a JSON number, or the text (XML, or a
    64-bit value in JSON) with surrounding whitespace dropped. Leading zeros and a ``+`` parse
    the same; text that is no integer becomes NULL in its column rather than a rejection."""
    if type(value) is int:
        return str(value)
    if type(value) is str:
        return value.strip()
    return canon_integer(value)


def _converter(column: Column) -> Callable[[Any], Any]:
    if column.kind == "list":
        return lambda value: orjson.dumps(_canonical_tree(_entries(value))).decode()
    canon = _integer_text if column.canon is canon_integer else column.canon
    if column.kind == "leaf-list":
        return lambda value: [canon(item) for item in _entries(value)]
    if column.storage.yang == "bits":
        return lambda value: " ".join(str(value).split())
    if column.storage.yang == "empty":
        return lambda _value: "true"
    return canon


def _canonical_tree(value: Any) -> Any:
    """Nested list content with every scalar as text: JSON and XML give the same text (an XML
    decode has no types; integers and booleans become their RFC 7950 canonical text)."""
    if isinstance(value, dict):
        return {
            member: _canonical_tree(item)
            for member, item in sorted(value.items())
            if isinstance(member, str)
        }
    if isinstance(value, list):
        if len(value) == 1 and value[0] is None:
            return ""
        return [_canonical_tree(item) for item in value]
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


class CatalogFeeds:
    """The instance feed of every derived topic of a catalog, for ``yangkey ingest`` (embedded
    mode), which adds the header to a record that lacks it."""

    def __init__(self, catalog: Catalog) -> None:
        from yangkey.clickhouse.columns import catalog_modules, typed_branches  # noqa: PLC0415

        self.schema = catalog.schema()
        self.modules = catalog_modules(catalog)
        self.typed: dict[str, TypedTopic] = {}
        self.feeds: dict[str, InstanceFeed] = {}
        self._add(typed_branches(catalog))
        self.untyped: dict[str, str] = {}
        """Shared-catalog topics without typed columns here, and why."""
        self.ns_modules = self.schema.index.by_namespace
        self.failures = 0
        self.first_failure = ""

    def _add(self, branches: dict[str, tuple[TypedTopic, Branch]]) -> None:
        for topic, (typed, branch) in branches.items():
            self.typed[topic] = typed
            self.feeds[topic] = InstanceFeed(branch, typed)

    def learn(self, records: Iterable[SharedSubscription]) -> list[str]:
        """Typed columns and a feed for each topic of shared-catalog ``records`` that this
        lacks (:func:`yangkey.clickhouse.columns.shared_branches`); one warning line per topic
        whose schema is not here (it keeps the message-level tables), said once."""
        from yangkey.clickhouse.columns import shared_branches  # noqa: PLC0415

        branches, untyped = shared_branches(
            records, self.schema, self.modules, known=(*self.feeds, *self.untyped)
        )
        self._add(branches)
        self.untyped.update(untyped)
        return [
            f"{topic}: no typed instance tables (message-level tables only): {why}"
            for topic, why in untyped.items()
        ]

    def header(self, topic: str, value: bytes, source: str) -> bytes | None:
        """The feed of one record of ``topic``; None for a topic without one, or for a value
        that does not decode (counted in :attr:`failures`: the views then store no instance)."""
        feed = self.feeds.get(topic)
        if feed is None:
            return None
        try:
            return feed.header(decode(value, source, self.ns_modules))
        except YangkeyError as exc:
            self.failures += 1
            self.first_failure = self.first_failure or str(exc)
            return None
