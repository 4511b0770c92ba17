"""The instance feed: one notification -> one flat JSON object per target instance.

The typed instance tables (:mod:`yangkey.clickhouse.columns`) hold one row per instance of a
topic's target, one column per leaf. ClickHouse cannot read XML, and reading nested RFC 7951
JSON per column needs the schema in SQL. So the decoded notification (JSON or XML, same tree:
:mod:`yangkey.notifications`) is turned into a JSON array, once, in Python, where the tree is
already parsed; the materialized views only ``ARRAY JOIN`` it and read each member by name
(docs/design.md#instance-feed). This module is the core half: which leaves a target has and what
they are called (:func:`derive_leaves`), and the feed itself (:class:`InstanceFeed`); the
ClickHouse types and SQL of those leaves are the edge's (:mod:`yangkey.clickhouse.columns`).

Each object has ``@path`` (the instance's concrete XPath, as in the message key), ``@op``
(``replace`` for a push-update, the yang-patch operation of an edit), ``@under`` for an edit
below the instance (the member path prefix of its target), and one member per leaf the message
carries, named by :func:`derive_leaves`, with the canonical text of the value (leaf-list: array
of texts; nested list: JSON text). What a replace, create, delete or remove does not carry
(under ``@under``) is gone; what a merge does not carry stays as it was.

A delete or remove *above* the target ends the instances below it that the rest of the branch
pins completely, as in the message key (``interface=eth0`` on a topic whose target is
``interface/statistics``: a ``delete`` row for ``interface[name='eth0']/statistics``). Not
covered: one above a target with open keys below it (``interface=eth0`` on
``interface/ietf-ip:ipv4/address``) names no instance of the target, so it has no row here;
the message-level tables still have it.

It travels in the ``yangkey-instances`` header of the keyed message, so the same views serve
the Kafka engine (server mode) and ``yangkey ingest`` (embedded), which adds the header itself
when the producer did not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import orjson

from yangkey.canon_types import canon_for
from yangkey.errors import SchemaError, YangkeyError
from yangkey.patch import edit_plan, edit_tree
from yangkey.values import Canon, canon_integer
from yangkey.walker import Instance, compile_entries_walker, key_members

if TYPE_CHECKING:
    from yangson import datatype as dt
    from yangson.schemanode import InternalNode, SchemaNode

    from yangkey.catalog import Catalog
    from yangkey.compiled import Branch
    from yangkey.notifications import Edit, Notification
    from yangkey.schema import SchemaContext

__all__ = ["InstanceFeed", "Leaf", "catalog_modules", "derive_leaves"]

#: Edits that end the instance (or, below the target, the leaves under their target).
REMOVING = frozenset({"delete", "remove"})

#: Names a leaf cannot have, so it is module-qualified: the fields every instance row has
#: besides its leaves, and the message-level ones (the ClickHouse views select from the parsed
#: message table, and an alias equal to one of its columns would shadow that column).
RESERVED_NAMES = frozenset(
    (
        "node",
        "subscription_id",
        "instance_path",
        "operation",
        "leaves",
        "deleted",
        "generation",
        "event_time",
        "sequence_number",
        "kafka_partition",
        "kafka_offset",
        "version",
        "message_key",
        "xpaths",
        "schema_id",
        "content_type",
        "subscription_type",
        "kafka_topic",
        "kafka_timestamp",
        "payload",
        "error",
        "error_kind",
        "kafka_key",
        "raw_message",
        "header_names",
        "header_values",
        "instances",
        "ingested_at",
    )
)

LeafKind = Literal["key", "leaf", "leaf-list", "list"]


@dataclass(frozen=True)
class Leaf:
    """One leaf of a topic's target: a member of each feed object, a column of its tables."""

    name: str
    """The RFC 7951 member path relative to the target (``statistics.in-octets``,
    ``ietf-ip:ipv4.mtu``); a key of a list above the target is ``<list>.<key>``."""
    kind: LeafKind
    path: tuple[str, ...]
    """Member names from the target instance to the leaf (empty for a leaf/leaf-list target;
    for a key: the list member and the key member, the list being the target or above it)."""
    datatype: dt.DataType | None
    """The YANG type (a leafref resolved to its target's); None for a nested list, anydata or
    anyxml, carried as JSON text."""
    canon: Canon
    module: str


# -- which leaves a target has ---------------------------------------------------------------


def _member(module: str, name: str, parent_module: str | None) -> str:
    return name if module == parent_module else f"{module}:{name}"


def _resolved(datatype: dt.DataType) -> dt.DataType:
    from yangson import datatype as dt  # noqa: PLC0415 - yangson on demand

    while isinstance(datatype, dt.LeafrefType):
        datatype = datatype.ref_type
    return datatype


def _no_canon(value: object) -> str:  # pragma: no cover - list leaves are not canonicalised
    raise TypeError("a list leaf has no scalar canonical form")


class _Deriver:
    def __init__(self, prefixes: Mapping[str, str]) -> None:
        self.leaves: list[Leaf] = []
        self.prefixes = prefixes

    def add(self, name: str, kind: LeafKind, path: tuple[str, ...], node: SchemaNode) -> None:
        from yangson.schemanode import InternalNode  # noqa: PLC0415

        if isinstance(node, InternalNode):  # a list below the target
            self.leaves.append(Leaf(name, kind, path, None, _no_canon, node.ns))
            return
        datatype: dt.DataType = node.type
        canon = canon_for(datatype, node.ns, self.prefixes)
        self.leaves.append(Leaf(name, kind, path, _resolved(datatype), canon, node.ns))

    def subtree(self, node: InternalNode, prefix: tuple[str, ...], module: str) -> None:
        from yangson.schemanode import (  # noqa: PLC0415
            InternalNode,
            LeafListNode,
            ListNode,
            TerminalNode,
        )

        for child in node.data_children():
            member = _member(child.ns, child.name, module)
            path = (*prefix, member)
            if isinstance(child, ListNode):
                self.add(".".join(path), "list", path, child)
            elif isinstance(child, LeafListNode):
                self.add(".".join(path), "leaf-list", path, child)
            elif isinstance(child, TerminalNode):
                self.add(".".join(path), "leaf", path, child)
            elif isinstance(child, InternalNode):
                self.subtree(child, path, child.ns)
            else:  # anydata / anyxml: its content as JSON text, like a nested list
                self.leaves.append(Leaf(".".join(path), "list", path, None, _no_canon, child.ns))


def derive_leaves(
    branch: Branch, schema: SchemaContext, modules: Sequence[str]
) -> tuple[Leaf, ...]:
    """The leaves of ``branch``'s target (its compiled steps resolved in ``schema``), keys of
    the lists above it first."""
    from yangson.schemanode import InternalNode, ListNode  # noqa: PLC0415

    node: SchemaNode = schema.schema_root(modules)
    deriver = _Deriver(schema.index.unique_prefixes)
    for index, step in enumerate(branch.steps):
        child = (
            node.get_data_child(step.name, step.module) if isinstance(node, InternalNode) else None
        )
        if child is None:
            raise SchemaError(f"{branch.schema_path}: no schema node {step.module}:{step.name}")
        last = index == len(branch.steps) - 1
        if isinstance(child, ListNode) and not last:
            for slot in step.keys:
                if slot.positional:
                    continue
                key_module, _, key_name = slot.member.rpartition(":")
                key_node = child.get_data_child(key_name, key_module or step.module)
                if key_node is not None:
                    deriver.add(
                        f"{step.member}.{slot.member}", "key", (step.member, slot.member), key_node
                    )
        node = child
    target_step = branch.steps[-1]
    if isinstance(node, InternalNode):
        deriver.subtree(node, (), target_step.module)
        if isinstance(node, ListNode):
            # the target list's own keys: always there, like the keys above
            members = {slot.member for slot in target_step.keys if not slot.positional}
            deriver.leaves = [
                replace(leaf, kind="key", path=(target_step.member, leaf.name))
                if leaf.kind == "leaf" and leaf.name in members
                else leaf
                for leaf in deriver.leaves
            ]
    else:  # a leaf, or a leaf-list whose instances are its values
        deriver.add(target_step.name, "leaf", (), node)
    return tuple(_resolve_clashes(deriver.leaves))


def _resolve_clashes(leaves: list[Leaf]) -> list[Leaf]:
    """A leaf named like a meta field (``version``, ``node``, ...) or like another leaf is
    module-qualified (``ietf-hardware:version``): qualifying a member is always valid RFC 7951."""
    seen: set[str] = set()
    result: list[Leaf] = []
    for leaf in leaves:
        name = leaf.name
        if name in RESERVED_NAMES or name in seen:
            head, dot, last = name.rpartition(".")
            qualified = last if ":" in last else f"{leaf.module}:{last}"
            name = f"{head}{dot}{qualified}"
            while name in RESERVED_NAMES or name in seen:
                name = f"{leaf.module}:{name}"
        seen.add(name)
        result.append(replace(leaf, name=name))
    return result


def catalog_modules(catalog: Catalog) -> tuple[str, ...]:
    """Every module the catalog's subscriptions name: the schema of the leaves, so that
    augments subscribed anywhere in the catalog (ietf-ip under an interface) are leaves."""
    return tuple(sorted({m for entry in catalog.entries for m in entry.compiled.modules}))


# -- the feed --------------------------------------------------------------------------------


def _entries(value: Any) -> list[Any]:
    # A single list entry in XML decodes to a dict, not a one-element list.
    return value if isinstance(value, list) else [value]


@dataclass(frozen=True)
class _Found:
    path: str
    keys: dict[str, str]
    value: Any


class InstanceFeed:
    """Builds the feed of one topic (one compiled branch and the leaves of its target).

    Its instances are those of the message key: Phase 3's generated walker finds them
    (:func:`yangkey.walker.compile_entries_walker`, the variant reporting each instance's value
    and keys), so ``@path`` is one of the key's XPaths by construction."""

    def __init__(self, branch: Branch, leaves: Sequence[Leaf]) -> None:
        self.branch = branch
        self._edit_plan = edit_plan(branch)
        self._walk = compile_entries_walker(branch)
        self._key_members = key_members(branch)
        self.keys = tuple(leaf for leaf in leaves if leaf.kind == "key")
        self.leaf_target = branch.target in ("leaf", "leaf-list")
        self.tree = _plan([leaf for leaf in leaves if leaf.kind != "key"])

    def instances(self, data: dict[str, Any]) -> list[_Found]:
        found: list[Instance] = []
        self._walk(data, found)
        members = self._key_members
        return [
            _Found(path, dict(zip(members, keys, strict=False)), value)
            for path, value, keys in found
        ]

    # -- building the objects ------------------------------------------------------------

    def _object(
        self, found: _Found, op: str, carried: dict[str, Any], under: str = ""
    ) -> dict[str, Any]:
        obj: dict[str, Any] = {"@path": found.path, "@op": op}
        if under:
            obj["@under"] = under
        for key in self.keys:
            list_member, key_member = key.path
            value = found.keys.get(f"{list_member}.{key_member}")
            # a pinned key is in the template, not in the data walked
            obj[key.name] = value if value is not None else _pinned_key(self.branch, key)
        obj.update(carried)
        return obj

    def _carried(self, value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.leaf_target:
            leaf = self.tree[""]
            assert isinstance(leaf, _Slot)
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
        tree = edit_tree(self._edit_plan, edit)
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


def _pinned_key(branch: Branch, key: Leaf) -> str:
    list_member, key_member = key.path
    for step in branch.steps:
        if step.member == list_member:
            for slot in step.keys:
                if slot.member == key_member and slot.pinned is not None:
                    return slot.pinned
    return ""


class _Slot:
    """One leaf in the plan, with the function giving its feed value (chosen once)."""

    __slots__ = ("leaf", "name", "value")

    def __init__(self, leaf: Leaf) -> None:
        self.leaf = leaf
        """What the native feed's table is made of (:func:`yangkey.native_feed.feed_table`)."""
        self.name = leaf.name
        self.value: Callable[[Any], Any] = _converter(leaf)


_Plan = dict[str, "_Slot | _Plan"]


def _plan(leaves: Sequence[Leaf]) -> _Plan:
    """Member path -> leaf, as a tree mirroring the instance data."""
    root: _Plan = {}
    for leaf in leaves:
        if not leaf.path:
            root[""] = _Slot(leaf)
            continue
        cursor = root
        for member in leaf.path[:-1]:
            child = cursor.setdefault(member, {})
            assert isinstance(child, dict)
            cursor = child
        cursor[leaf.path[-1]] = _Slot(leaf)
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
        if type(target) is _Slot:
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


def _converter(leaf: Leaf) -> Callable[[Any], Any]:
    from yangson import datatype as dt  # noqa: PLC0415 - yangson on demand

    if leaf.kind == "list":
        return lambda value: orjson.dumps(_canonical_tree(_entries(value))).decode()
    canon = _integer_text if leaf.canon is canon_integer else leaf.canon
    if leaf.kind == "leaf-list":
        return lambda value: [canon(item) for item in _entries(value)]
    if isinstance(leaf.datatype, dt.BitsType):
        return lambda value: " ".join(str(value).split())
    if isinstance(leaf.datatype, dt.EmptyType):
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
