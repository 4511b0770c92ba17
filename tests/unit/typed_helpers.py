"""Feeding the typed instance tables on chdb like ``yangkey ingest`` does (issue 11 tests)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from factories import RECENT_DAY

from yangkey.catalog import Catalog
from yangkey.clickhouse.apply import apply
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ddl import DdlOptions, render_catalog
from yangkey.clickhouse.identifiers import qualified
from yangkey.clickhouse.ingest.arrow import insert_rows
from yangkey.clickhouse.ingest.rows import QueueRow, add_instances
from yangkey.clickhouse.instances import CatalogFeeds
from yangkey.clickhouse.tables import topic_tables
from yangkey.messages import HEADER_INSTANCES
from yangkey.producer import MessageBuilder

IF = "/ietf-interfaces:interfaces/interface"
_databases = itertools.count()


@dataclass
class Pipe:
    """One fresh embedded database fed like ``yangkey ingest`` feeds it."""

    conn: ChdbConnection
    catalog: Catalog
    db: str = field(default_factory=lambda: f"yk_typed_{next(_databases)}")
    replays: list[QueueRow] = field(default_factory=list)
    """Every row inserted, to insert again (at-least-once ingest)."""
    offsets: Iterator[int] = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        self.builder = MessageBuilder(self.catalog, strict=True)
        self.feeds = CatalogFeeds(self.catalog)
        options = DdlOptions(database=self.db, mode="embedded")
        apply(self.conn, render_catalog(self.catalog, options), self.db)

    def send(self, raw: str | bytes, *, topic: str | None = None) -> None:
        """Produce ``raw`` and insert its messages (of ``topic`` only, if given)."""
        self.send_all([raw], topic=topic)

    def send_all(self, records: Sequence[str | bytes], *, topic: str | None = None) -> None:
        """:meth:`send` for many records, one insert per topic (as one ingest batch)."""
        batches: dict[str, list[QueueRow]] = {}
        for raw in records:
            data = raw.encode() if isinstance(raw, str) else raw
            messages = self.builder.build(data, "test")
            assert isinstance(messages, list), messages
            for message in messages:
                if topic is not None and message.topic != topic:
                    continue
                row = QueueRow(
                    message.topic, 0, next(self.offsets), message.key, message.value,
                    list(message.headers), 1_790_000_000_000,
                )
                row = add_instances(self.feeds, row)
                assert any(name == HEADER_INSTANCES for name, _ in row.headers)
                batches.setdefault(message.topic, []).append(row)
        for name, rows in batches.items():
            insert_rows(self.conn, self.db, name, rows)
            self.replays += rows
        assert self.feeds.failures == 0, self.feeds.first_failure

    def table(self, topic: str, which: str) -> str:
        return qualified(self.db, getattr(topic_tables(topic, self.db), which))

    def rows(self, sql: str) -> list[dict[str, Any]]:
        return self.conn.query(sql)

    def now(self, topic: str, columns: str) -> dict[str, dict[str, Any]]:
        """The live instances of ``topic``: instance path -> selected columns."""
        rows = self.rows(
            f"SELECT instance_path, {columns} FROM {self.table(topic, 'instances')} "
            "ORDER BY instance_path"
        )
        return {row.pop("instance_path"): row for row in rows}


def envelope(data: dict[str, Any], *, seq: int, time: str = f"{RECENT_DAY}T10:00:00Z",
             sub: int = 1042, host: str = "pe1") -> str:
    return json.dumps({"ietf-yp-notification:envelope": {
        "event-time": time, "hostname": host, "sequence-number": seq,
        "contents": {"ietf-yang-push:push-update": {"id": sub, "datastore-contents": data}},
    }})


def patch(edits: list[dict[str, Any]], *, seq: int, time: str, sub: int = 1042) -> str:
    return json.dumps({"ietf-yp-notification:envelope": {
        "event-time": time, "hostname": "pe1", "sequence-number": seq,
        "contents": {"ietf-yang-push:push-change-update": {
            "id": sub,
            "datastore-changes": {"yang-patch": {"patch-id": "p", "edit": edits}},
        }},
    }})


def edit(op: str, target: str, value: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"edit-id": f"{op}-{target}", "operation": op, "target": target}
    if value is not None:
        out["value"] = value
    return out


def iface_value(name: str, **leaves: Any) -> dict[str, Any]:
    return {"ietf-interfaces:interface": [{"name": name, **leaves}]}


def path(name: str) -> str:
    return f"{IF}[name='{name}']"
