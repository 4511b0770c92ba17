"""How a typed column is charted, from its YANG type.

RFC 6991 section 3 defines ``counter32`` and ``counter64`` (``zero-based-counter*`` derive from
them): monotonically increasing values that wrap at 2^32 / 2^64 and whose absolute value means
nothing, so a dashboard shows their per-second rate. ``gauge32`` and ``gauge64`` go up and down:
shown as they are. A type derived from one of these (a module's own ``typedef my-octets {
type yang:counter64; }``) is charted like its base, so the derivation chain of every typedef
of the schema is walked once (yangson keeps only the first typedef name of a leaf's type).
OpenConfig's ``oc-yang:counter64`` is a typedef of the same name: it counts too.

``decimal64`` leaves (temperatures, utilisations, optical power) are gauges as well; other
integers (an MTU, a prefix length, an ifIndex) are configuration-like and stay in the
current-state table. Enumerations are states over time. Key leaves are never charted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from yangkey.clickhouse.columns import Column, TypedTopic

__all__ = ["Chart", "Charted", "chart_topic", "derivation_chains"]

Chart = Literal["counter", "gauge", "state"]

COUNTERS = frozenset({"counter32", "counter64"})
GAUGES = frozenset({"gauge32", "gauge64"})
#: The leaf a counter's discontinuities are announced by (ietf-interfaces statistics,
#: RFC 8343; the same name is used by many IETF modules next to their counters).
DISCONTINUITY = "discontinuity-time"


@dataclass(frozen=True)
class Charted:
    """A column and how it is charted."""

    column: Column
    chart: Chart
    wrap: int = 0
    """A counter's modulus (2^32 or 2^64, from its storage width)."""
    discontinuity: str | None = None
    """The column announcing the counter's discontinuities, when the target has one."""


def _typedefs(statement: Any) -> Iterator[Any]:
    for sub in statement.substatements:
        if sub.keyword == "typedef":
            yield sub
        yield from _typedefs(sub)


def derivation_chains(schema_data: Any) -> dict[str, frozenset[str]]:
    """Per typedef name of every module in ``schema_data`` (a yangson ``SchemaData``), the
    names of the typedefs it derives from, itself included. A name defined in several modules
    gets the union of their chains."""
    from yangson.datatype import DataType  # noqa: PLC0415
    from yangson.exceptions import YangsonException  # noqa: PLC0415
    from yangson.schemadata import SchemaContext  # noqa: PLC0415

    chains: dict[str, set[str]] = {}
    for mid, module in schema_data.modules.items():
        context = SchemaContext(schema_data, module.main_module[0], mid)
        for typedef in _typedefs(module.statement):
            names = {typedef.argument}
            statement, scope = typedef.find1("type"), context
            try:
                while statement is not None and statement.argument not in DataType.dtypes:
                    definition, scope = schema_data.get_definition(statement, scope)
                    names.add(definition.argument)
                    statement = definition.find1("type")
            except (YangsonException, KeyError, ValueError):
                pass  # a broken typedef elsewhere in a module: chart by name only
            chains.setdefault(typedef.argument, set()).update(names)
    return {name: frozenset(found) for name, found in chains.items()}


def _chart(column: Column, chains: Mapping[str, frozenset[str]]) -> Charted | None:
    from yangson import datatype as dt  # noqa: PLC0415

    if column.kind != "leaf" or column.datatype is None:
        return None
    datatype = column.datatype
    name = datatype.name or ""
    lineage = chains.get(name, frozenset({name}))
    width = {"UInt32": 2**32, "UInt64": 2**64}.get(column.storage.clickhouse, 0)
    if lineage & COUNTERS and width:
        return Charted(column, "counter", wrap=width)
    if lineage & GAUGES or isinstance(datatype, dt.Decimal64Type):
        return Charted(column, "gauge")
    if isinstance(datatype, dt.EnumerationType):
        return Charted(column, "state")
    return None


def _sibling(name: str, leaf: str) -> str:
    parent, dot, _ = name.rpartition(".")
    return f"{parent}{dot}{leaf}"


def chart_topic(typed: TypedTopic, chains: Mapping[str, frozenset[str]]) -> list[Charted]:
    """The charted columns of ``typed``, in column order; each counter with the
    ``discontinuity-time`` of its container, if there is one."""
    names = {column.name: column for column in typed.columns}
    charted: list[Charted] = []
    for column in typed.columns:
        found = _chart(column, chains)
        if found is None:
            continue
        if found.chart == "counter":
            marker = names.get(_sibling(column.name, DISCONTINUITY))
            if marker is not None and marker.kind == "leaf":
                found = Charted(column, "counter", found.wrap, marker.name)
        charted.append(found)
    return charted


def by_chart(charted: Iterable[Charted], chart: Chart) -> list[Charted]:
    return [c for c in charted if c.chart == chart]
