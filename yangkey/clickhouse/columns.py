"""Typed columns of a topic's instance tables: the ClickHouse type and SQL of each leaf.

Which leaves a target has and their names are the core's (:func:`yangkey.instances.derive_leaves`):
one column per leaf of the target subtree, named by the leaf's RFC 7951 member path relative to
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
(:mod:`yangkey.instances`); :meth:`Column.convert` turns that text into the column
type in SQL, so the materialized views need no schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from yangkey.errors import YangkeyError
from yangkey.instances import Leaf, catalog_modules, derive_leaves

if TYPE_CHECKING:
    from yangson import datatype as dt

    from yangkey.catalog import Catalog
    from yangkey.compiled import Branch
    from yangkey.schema import SchemaContext
    from yangkey.shared_catalog import SharedSubscription

__all__ = ["Column", "TypedTopic", "derive_columns", "typed_topics"]

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
class Column(Leaf):
    """One typed column of a topic's instance tables: a leaf and how it is stored."""

    storage: ScalarType

    @classmethod
    def of(cls, leaf: Leaf) -> Column:
        storage = _STRING if leaf.datatype is None else scalar_type(leaf.datatype)
        return cls(leaf.name, leaf.kind, leaf.path, leaf.datatype, leaf.canon, leaf.module, storage)

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

    def carried(self, value: str) -> str:
        """SQL saying whether the feed object carries this leaf (``value`` of :attr:`feed_type`:
        a missing member reads as NULL, a missing leaf-list as [])."""
        return f"notEmpty({value})" if self.kind == "leaf-list" else f"isNotNull({value})"

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
    """The Array of named Tuples that reads a whole instance feed in one JSON parse."""
    from yangkey.clickhouse.identifiers import quote_identifier  # noqa: PLC0415

    members = [
        "`@path` String",
        "`@op` String",
        "`@under` String",
        *(f"{quote_identifier(c.name)} {c.feed_type}" for c in columns),
    ]
    return f"Array(Tuple({', '.join(members)}))"


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


def derive_columns(branch: Branch, schema: SchemaContext, modules: Sequence[str]) -> TypedTopic:
    """The typed columns of ``branch``'s target (its compiled steps resolved in ``schema``)."""
    columns = tuple(Column.of(leaf) for leaf in derive_leaves(branch, schema, modules))
    return TypedTopic(topic="", target=branch.schema_path, columns=columns)


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
    from yangkey.compiler import compile_filter  # noqa: PLC0415

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
            compiled = compile_filter(
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
