"""JSON Schema (2020-12) of the RFC 7951 encoding of a derived topic's subtree, from YANG.

A topic carries the data of one subscription branch: the path from the data root to the
branch's target node, and the target's whole subtree. The schema describes exactly that JSON
(what a push-update's ``datastore-contents`` holds for the topic): ancestors are objects with
the one member on the path (ancestor list entries also carry their keys), the target is encoded
in full. Member names follow RFC 7951 (``module:name`` at the top and where the module changes,
which is yangson's ``iname``); 64-bit integers and decimal64 are strings, ``empty`` is
``[null]``.

Objects are closed (``additionalProperties: false``) so that the registry's compatibility check
sees a removed member as a change, except to module-qualified members: augmentations from
modules outside the subscription's module set are valid RFC 7951 but not described here.
Only list keys are ``required``: telemetry sends partial subtrees (on-change deltas, filtered
leaves), so YANG ``mandatory`` is not enforced here.
Choices are flattened into their parent (their cases' members are all optional properties).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from yangson.datatype import (
    BinaryType,
    BitsType,
    BooleanType,
    DataType,
    Decimal64Type,
    EmptyType,
    EnumerationType,
    IdentityrefType,
    InstanceIdentifierType,
    Int64Type,
    IntegralType,
    LeafrefType,
    StringType,
    Uint64Type,
    UnionType,
)
from yangson.schemanode import (
    AnyContentNode,
    InternalNode,
    LeafListNode,
    LeafNode,
    ListNode,
    SchemaNode,
    SequenceNode,
)

from yangkey.compiled import Branch, CompiledStep
from yangkey.errors import SchemaError
from yangkey.schema import SchemaContext

DIALECT = "https://json-schema.org/draft/2020-12/schema"

Json = dict[str, Any]


def type_schema(datatype: DataType) -> Json:
    """The JSON Schema of one RFC 7951 scalar of ``datatype``."""
    if isinstance(datatype, Int64Type | Uint64Type):
        return {"type": "string", "pattern": "^-?[0-9]+$"}
    if isinstance(datatype, IntegralType):
        intervals = datatype.range.intervals if datatype.range else [datatype._range]
        schema: Json = {"type": "integer"}
        low, high = intervals[0][0], intervals[-1][-1]
        if low is not None:
            schema["minimum"] = int(low)
        if high is not None:
            schema["maximum"] = int(high)
        return schema
    if isinstance(datatype, Decimal64Type):
        return {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]+)?$"}
    if isinstance(datatype, BooleanType):
        return {"type": "boolean"}
    if isinstance(datatype, EmptyType):
        return {"type": "array", "items": {"type": "null"}, "minItems": 1, "maxItems": 1}
    if isinstance(datatype, EnumerationType):
        return {"type": "string", "enum": list(datatype.enum)}
    if isinstance(datatype, BinaryType):
        return {"type": "string", "contentEncoding": "base64"}
    if isinstance(datatype, StringType):
        schema = {"type": "string"}
        if datatype.length is not None:
            intervals = datatype.length.intervals
            low, high = intervals[0][0], intervals[-1][-1]
            if isinstance(low, int) and low > 0:
                schema["minLength"] = low
            if isinstance(high, int):
                schema["maxLength"] = high
        return schema
    if isinstance(datatype, UnionType):
        return {"anyOf": [type_schema(member) for member in datatype.types]}
    if isinstance(datatype, LeafrefType):
        target = getattr(datatype, "ref_type", None)
        return type_schema(target) if target is not None else {}
    if isinstance(datatype, BitsType | IdentityrefType | InstanceIdentifierType):
        return {"type": "string"}
    return {}


# Members from modules outside the topic's module set (augmentations the subscription did not
# name) are qualified, so they can be let through without opening the object to typos.
FOREIGN_MEMBER = "^[A-Za-z_][A-Za-z0-9_.-]*:"


def _object(node: InternalNode, members: Json, keys: Sequence[str] = ()) -> Json:
    schema: Json = {
        "type": "object",
        "properties": members,
        "patternProperties": {FOREIGN_MEMBER: True},
        "additionalProperties": False,
    }
    if keys:
        schema["required"] = list(keys)
    return schema


def _key_members(node: ListNode) -> tuple[list[str], Json]:
    names: list[str] = []
    members: Json = {}
    for name, module in node.keys:
        leaf = node.get_data_child(name, module)
        if isinstance(leaf, LeafNode):
            names.append(leaf.iname())
            members[leaf.iname()] = type_schema(leaf.type)
    return names, members


def _array(node: SequenceNode, items: Json) -> Json:
    schema: Json = {"type": "array", "items": items}
    if node.min_elements:
        schema["minItems"] = node.min_elements
    if node.max_elements is not None:
        schema["maxItems"] = node.max_elements
    return schema


def node_schema(node: SchemaNode) -> Json:
    """The JSON Schema of the RFC 7951 value of ``node`` with its whole subtree."""
    if isinstance(node, LeafListNode):
        return _array(node, type_schema(node.type))
    if isinstance(node, LeafNode):
        return type_schema(node.type)
    if isinstance(node, AnyContentNode):
        return {}
    if isinstance(node, ListNode):
        keys, _ = _key_members(node)
        members = {child.iname(): node_schema(child) for child in node.data_children()}
        return _array(node, _object(node, members, keys))
    if isinstance(node, InternalNode):
        return _object(node, {child.iname(): node_schema(child) for child in node.data_children()})
    return {}


def subtree_schema(root: SchemaNode, steps: Sequence[CompiledStep]) -> Json:
    """Schema of the data tree restricted to ``steps``: ancestors hold only the path (and their
    list keys), the last step's node is described in full."""
    nodes: list[SchemaNode] = []
    node = root
    for step in steps:
        child = (
            node.get_data_child(step.name, step.module) if isinstance(node, InternalNode) else None
        )
        if child is None:
            raise SchemaError(f"no schema node {step.module}:{step.name} under {node.data_path()}")
        nodes.append(child)
        node = child
    if not nodes:
        raise SchemaError("an empty path has no subtree")
    inner = node_schema(nodes[-1])
    for ancestor, child in zip(reversed(nodes[:-1]), reversed(nodes[1:]), strict=True):
        if isinstance(ancestor, ListNode):
            keys, members = _key_members(ancestor)
            members[child.iname()] = inner
            inner = _array(ancestor, _object(ancestor, members, keys))
        elif isinstance(ancestor, InternalNode):
            inner = _object(ancestor, {child.iname(): inner})
    return {"type": "object", "properties": {nodes[0].iname(): inner}}


def branch_schema(
    schema: SchemaContext, branch: Branch, modules: Sequence[str], *, title: str | None = None
) -> Json:
    """The JSON Schema document of a topic fed by ``branch`` (compiled against ``modules``)."""
    document: Json = {"$schema": DIALECT}
    if title:
        document["title"] = title
    document["description"] = f"RFC 7951 encoding of {branch.schema_path}"
    document.update(subtree_schema(schema.schema_root(modules), branch.steps))
    return document
