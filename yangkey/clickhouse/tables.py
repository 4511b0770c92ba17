"""The names of a topic's ClickHouse objects, and of the database-wide tables.

Every table name is a topic's table base (:func:`yangkey.clickhouse.identifiers.table_base`)
plus a suffix; readers (queries, dashboards, the report), ingest and the DDL all name them
here.
"""

from __future__ import annotations

from dataclasses import dataclass

from yangkey.clickhouse.identifiers import table_base

ERRORS_TABLE = "errors"
HISTORY_MERGE_TABLE = "history"
CURRENT_MERGE_TABLE = "current_state"


@dataclass(frozen=True)
class TopicTables:
    """The names of every object of one topic (unquoted)."""

    topic: str
    queue: str
    parsed: str
    history: str
    """What readers and views use: the distributed table in cluster mode."""
    history_local: str
    current: str
    current_local: str
    mv_parse: str
    mv_history: str
    mv_current: str
    mv_errors: str
    ihist: str
    """Instance history (typed, one row per instance per message)."""
    ihist_local: str
    istate: str
    """Instance state (per-leaf yang-patch merge; read through ``instances``)."""
    istate_local: str
    instances: str
    """View: the live instances now."""
    iparsed: str
    """Null table: the instance feed read, one row per instance."""
    mv_iparse: str
    mv_ihist: str
    mv_istate: str


def topic_tables(topic: str, database: str, *, cluster: bool = False) -> TopicTables:
    """The tables of ``topic`` in ``database`` (whose name bounds theirs: :func:`table_base`)."""
    base = table_base(topic, database)
    local = "_local" if cluster else ""
    return TopicTables(
        topic=topic,
        queue=f"{base}__queue",
        parsed=f"{base}__parsed",
        history=f"{base}__history",
        history_local=f"{base}__history{local}",
        current=f"{base}__current",
        current_local=f"{base}__current{local}",
        mv_parse=f"{base}__mv_parse",
        mv_history=f"{base}__mv_history",
        mv_current=f"{base}__mv_current",
        mv_errors=f"{base}__mv_errors",
        ihist=f"{base}__ihist",
        ihist_local=f"{base}__ihist{local}",
        istate=f"{base}__istate",
        istate_local=f"{base}__istate{local}",
        instances=f"{base}__instances",
        iparsed=f"{base}__iparsed",
        mv_iparse=f"{base}__mv_iparse",
        mv_ihist=f"{base}__mv_ihist",
        mv_istate=f"{base}__mv_istate",
    )
