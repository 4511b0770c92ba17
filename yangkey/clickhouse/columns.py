"""Typed columns of a topic's instance tables, derived from the YANG schema of its branch target.

One column per leaf of the target subtree, named by the leaf's RFC 7951 member path relative to
the target (member names joined by ``.``, ``module:name`` only where the module changes); a
leaf target gives one column, its own name. The key leaves of the lists *above* the target are
columns too, named ``<list member>.<key member>`` (``interface.name`` for a target under
``/ietf-interfaces:interfaces/interface``): they say which parent entry an instance belongs to.

Type map (README "Typed instance tables" has the table):

==========================================  ======================================================
YANG                                         ClickHouse (non-key leaves are ``Nullable``)
==========================================  ======================================================
int8 … int64, uint8 … uint64, counters,     Int8 … Int64, UInt8 … UInt64 (the exact width)
gauges (typedefs of those)
decimal64 (fraction-digits f)               Decimal(18, f)
boolean, empty                              Bool (empty: true when present)
enumeration                                 LowCardinality(String)
identityref                                 LowCardinality(String), ``module:identity``
bits                                        Array(LowCardinality(String))
yang:date-and-time                          DateTime64(9, 'UTC')
inet addresses, string, binary, union,      String (canonical text: IPv6 per RFC 5952)
leafref to those, other
leaf-list of T                              Array(T)
list below the target, anydata, anyxml       String: JSON array of its entries (or of the
                                            anydata value), every leaf value as text
==========================================  ======================================================

Enumerations are ``LowCardinality(String)`` rather than ``Enum8``: a device on a newer module
revision may send a value the DDL does not know, and an Enum cast would fail the whole insert.

The values travel as canonical text (:mod:`yangkey.values`) in the instance feed
(:mod:`yangkey.clickhouse.instances`); :attr:`Column.extract` turns that text into the column
type in SQL, so the materialized views need no schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from yangkey.errors import SchemaError, YangkeyError
from yangkey.values import Canon, canon_for

if TYPE_CHECKING:
    from yangson import datatype as dt
    from yangson.schemanode import InternalNode, SchemaNode

    from yangkey.catalog import Catalog
    from yangkey.schema import SchemaContext
    from yangkey.shared_catalog import SharedSubscription
    from yangkey.templates import Branch

ColumnKind = Literal["key", "leaf", "leaf-list", "list"]

#: The Kafka header carrying the instance feed (:mod:`yangkey.clickhouse.instances`).
HEADER_INSTANCES = "yangkey-instances"

#: Columns every instance table has; a YANG column of the same name is module-qualified.
#: The message-level names of the parsed table are reserved too: the views select from it,
#: and an alias equal to one of its columns would shadow that column.
META_COLUMNS = (
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
)
RESERVED_NAMES = frozenset(
    (
        *META_COLUMNS,
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

_INTEGERS = {
    "Int8Type": "Int8",
    "Int16Type": "Int16",
    "Int32Type": "Int32",
    "Int64Type": "Int64",
    "Uint8Type": "UInt8",
    "Uint16Type": "UInt16",
    "Uint32Type": "UInt32",
    "Uint64Type": "UInt64",
}


@dataclass(frozen=True)
class ScalarType:
    """How one YANG type is stored: ClickHouse type and the SQL turning canonical text ``x``
    (a ``Nullable(String)``) into it."""

    yang: str
    clickhouse: str
    convert: str
    """SQL with ``{x}`` for the text; NULL text gives NULL."""
    nullable: bool = True
    """False for types that cannot be Nullable (Array, LowCardinality handled inside)."""

    def column_type(self) -> str:
        if not self.nullable:
            return self.clickhouse
        if self.clickhouse.startswith("LowCardinality("):
            return f"LowCardinality(Nullable({self.clickhouse[15:-1]}))"
        return f"Nullable({self.clickhouse})"


_STRING = ScalarType("string", "String", "{x}")


def scalar_type(datatype: dt.DataType) -> ScalarType:
    """The storage of a leaf of ``datatype`` (see the module docstring's table)."""
    from yangson import datatype as dt  # noqa: PLC0415

    if isinstance(datatype, dt.LeafrefType):
        return scalar_type(datatype.ref_type)
    name = datatype.name or ""
    if name == "date-and-time":
        return ScalarType(
            "yang:date-and-time",
            "DateTime64(9, 'UTC')",
            "parseDateTime64BestEffortOrNull({x}, 9, 'UTC')",
        )
    integral = _INTEGERS.get(type(datatype).__name__)
    if integral is not None:
        yang = name or integral.lower().replace("uint", "uint")
        return ScalarType(yang, integral, f"to{integral}OrNull({{x}})")
    if isinstance(datatype, dt.Decimal64Type):
        digits = int(datatype.fraction_digits)
        return ScalarType(
            f"decimal64 ({digits})", f"Decimal(18, {digits})", f"toDecimal64OrNull({{x}}, {digits})"
        )
    if isinstance(datatype, dt.BooleanType):
        return ScalarType("boolean", "Bool", "CAST({x} = 'true', 'Nullable(Bool)')")
    if isinstance(datatype, dt.EmptyType):
        return ScalarType("empty", "Bool", "CAST({x} IS NOT NULL, 'Nullable(Bool)')")
    if isinstance(datatype, dt.EnumerationType):
        return ScalarType("enumeration", "LowCardinality(String)", "{x}")
    if isinstance(datatype, dt.IdentityrefType):
        return ScalarType("identityref", "LowCardinality(String)", "{x}")
    if isinstance(datatype, dt.BitsType):
        return ScalarType(
            "bits",
            "Array(LowCardinality(String))",
            "arrayFilter(_yk_b -> _yk_b != '', splitByChar(' ', ifNull({x}, '')))",
            nullable=False,
        )
    if isinstance(datatype, dt.UnionType):
        return ScalarType("union", "String", "{x}")
    return ScalarType(name or type(datatype).__name__[:-4].lower(), "String", "{x}")


@dataclass(frozen=True)
class Column:
    """One typed column of a topic's instance tables."""

    name: str
    kind: ColumnKind
    path: tuple[str, ...]
    """Member names from the target instance to the leaf (empty for a leaf/leaf-list target;
    for a key column: the list member and the key member, the list being the target or above
    it)."""
    storage: ScalarType
    canon: Canon
    module: str

    @property
    def type(self) -> str:
        if self.kind == "key":
            return self.storage.clickhouse
        if self.kind == "leaf-list":
            return f"Array({self.storage.clickhouse})"
        if self.kind == "list":
            return "String"
        return self.storage.column_type()

    @property
    def feed_type(self) -> str:
        """How the instance feed carries the value (JSON): text, or an array of texts."""
        return "Array(String)" if self.kind == "leaf-list" else "Nullable(String)"

    def convert(self, text: str) -> str:
        """SQL turning ``text`` (of :attr:`feed_type`) into the column's type."""
        if self.kind == "leaf-list":
            element = self.storage.convert.format(x="_yk_v")
            if self.storage.nullable:
                element = f"assumeNotNull({element})"
            return f"arrayMap(_yk_v -> {element}, {text})"
        if self.kind == "list":
            return f"ifNull({text}, '[]')"
        if self.kind == "key":
            return f"assumeNotNull({self.storage.convert.format(x=text)})"
        return self.storage.convert.format(x=text)


def feed_tuple_type(columns: Sequence[Column]) -> str:
    """The named Tuple that reads a whole instance object of the feed in one JSON parse."""
    from yangkey.clickhouse.identifiers import quote_identifier  # noqa: PLC0415

    members = [
        "`@path` String",
        "`@op` String",
        "`@under` String",
        *(f"{quote_identifier(c.name)} {c.feed_type}" for c in columns),
    ]
    return f"Tuple({', '.join(members)})"


@dataclass(frozen=True)
class TypedTopic:
    """What the DDL needs of one topic to render its instance tables."""

    topic: str
    target: str
    """The branch's schema path (module names, no predicates)."""
    columns: tuple[Column, ...]

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(name)


def _member(module: str, name: str, parent_module: str | None) -> str:
    return name if module == parent_module else f"{module}:{name}"


def _leaf_type(node: SchemaNode) -> dt.DataType:
    datatype: dt.DataType = node.type
    return datatype


class _Deriver:
    def __init__(self) -> None:
        self.columns: list[Column] = []

    def add(self, name: str, kind: ColumnKind, path: tuple[str, ...], node: SchemaNode) -> None:
        from yangson.schemanode import InternalNode  # noqa: PLC0415

        if isinstance(node, InternalNode):  # a list below the target
            self.columns.append(Column(name, kind, path, _STRING, _no_canon, node.ns))
            return
        datatype = _leaf_type(node)
        self.columns.append(
            Column(name, kind, path, scalar_type(datatype), canon_for(datatype, node.ns), node.ns)
        )

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
                self.columns.append(
                    Column(".".join(path), "list", path, _STRING, _no_canon, child.ns)
                )


def _no_canon(value: object) -> str:  # pragma: no cover - list columns are not canonicalised
    raise TypeError("a list column has no scalar canonical form")


def derive_columns(branch: Branch, schema: SchemaContext, modules: Sequence[str]) -> TypedTopic:
    """The typed columns of ``branch``'s target (its compiled steps resolved in ``schema``)."""
    from yangson.schemanode import InternalNode, ListNode  # noqa: PLC0415

    node: SchemaNode = schema.schema_root(modules)
    deriver = _Deriver()
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
            # the target list's own keys: always there, so not Nullable, like the keys above
            members = {slot.member for slot in target_step.keys if not slot.positional}
            deriver.columns = [
                replace(c, kind="key", path=(target_step.member, c.name))
                if c.kind == "leaf" and c.name in members
                else c
                for c in deriver.columns
            ]
    else:  # a leaf, or a leaf-list whose instances are its values
        deriver.add(target_step.name, "leaf", (), node)
    columns = _resolve_clashes(deriver.columns)
    return TypedTopic(topic="", target=branch.schema_path, columns=tuple(columns))


def _resolve_clashes(columns: list[Column]) -> list[Column]:
    """A column named like a meta column (``version``, ``node``, ...) or like another column is
    module-qualified (``ietf-hardware:version``): qualifying a member is always valid RFC 7951."""
    seen: set[str] = set()
    result: list[Column] = []
    for column in columns:
        name = column.name
        if name in RESERVED_NAMES or name in seen:
            head, dot, last = name.rpartition(".")
            qualified = last if ":" in last else f"{column.module}:{last}"
            name = f"{head}{dot}{qualified}"
            while name in RESERVED_NAMES or name in seen:
                name = f"{column.module}:{name}"
        seen.add(name)
        result.append(
            Column(name, column.kind, column.path, column.storage, column.canon, column.module)
        )
    return result


def catalog_modules(catalog: Catalog) -> tuple[str, ...]:
    """Every module the catalog's subscriptions name: the schema of the typed columns, so that
    augments subscribed anywhere in the catalog (ietf-ip under an interface) are columns."""
    return tuple(sorted({m for entry in catalog.entries for m in entry.compiled.modules}))


def typed_branches(catalog: Catalog) -> dict[str, tuple[TypedTopic, Branch]]:
    """Per derived topic of ``catalog``, its typed columns and the branch they come from (the
    first subscription using the topic: every branch of a topic has the same schema path)."""
    schema = catalog.schema()
    modules = catalog_modules(catalog)
    result: dict[str, tuple[TypedTopic, Branch]] = {}
    for entry in catalog.entries:
        for topic, branch in zip(entry.topics, entry.compiled.branches, strict=True):
            if topic in result:
                continue
            typed = derive_columns(branch, schema, modules)
            result[topic] = (replace(typed, topic=topic), branch)
    return result


def typed_topics(catalog: Catalog) -> dict[str, TypedTopic]:
    """:func:`typed_branches` without the branches: what the DDL needs."""
    return {topic: typed for topic, (typed, _) in typed_branches(catalog).items()}


def shared_branches(
    records: Iterable[SharedSubscription],
    schema: SchemaContext,
    modules: Sequence[str] = (),
    known: Iterable[str] = (),
) -> tuple[dict[str, tuple[TypedTopic, Branch]], dict[str, str]]:
    """:func:`typed_branches` for the topics of shared-catalog records (those not in ``known``):
    each record's XPath recompiled against the local ``schema``, as
    :meth:`yangkey.catalog.Catalog.learn` does, its branches matched to the record's topics by
    schema path. The second mapping gives, per topic left without typed columns (its modules
    are not here, or the local schema lacks its target), why."""
    from yangkey.templates import compile_subscription  # noqa: PLC0415

    typed: dict[str, tuple[TypedTopic, Branch]] = {}
    untyped: dict[str, str] = {}
    done = set(known)
    for record in records:
        wanted = [b for b in record.branches if b.topic not in done]
        if not wanted:
            continue
        done.update(b.topic for b in wanted)
        source = f"subscription {record.id} (shared catalog)"
        try:
            compiled = compile_subscription(
                record.xpath, schema, namespaces=dict(record.namespaces) or None, source=source
            )
        except YangkeyError as exc:
            untyped.update((b.topic, str(exc)) for b in wanted)
            continue
        by_path = {branch.schema_path: branch for branch in compiled.branches}
        schema_modules = tuple(sorted({*modules, *compiled.modules}))
        for shared in wanted:
            branch = by_path.get(shared.schema_path)
            if branch is None:
                untyped[shared.topic] = f"{source}: no branch {shared.schema_path} here"
                continue
            try:
                columns = derive_columns(branch, schema, schema_modules)
            except YangkeyError as exc:
                untyped[shared.topic] = str(exc)
                continue
            typed[shared.topic] = (replace(columns, topic=shared.topic), branch)
    return typed, untyped
