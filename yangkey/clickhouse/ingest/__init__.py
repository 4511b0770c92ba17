"""Embedded bridge: Kafka -> chdb queue tables (the job a Kafka engine table does on a server).

One confluent-kafka consumer (``enable.auto.commit`` off, ``isolation.level=read_committed``)
subscribes to every catalog topic that exists, plus the dead-letter topic (its records land in
the ``errors`` table with the producer's reason). Each polled batch becomes one Arrow
INSERT per topic into ``<topic>__queue``; the materialized views parse and route the rows; only
then are the offsets committed. A crash between the INSERT and the commit replays the batch:
that is at-least-once, and the current-state tables (ReplacingMergeTree on the message key,
read with FINAL) hide the duplicates; history queries skip them with ``LIMIT 1 BY``.

With a shared catalog (``_yangkey_catalog``, seed 001), ingest also reads the topics of every
subscription in it, those learned by a producer included: before subscribing to a topic it
creates that topic's tables (:mod:`yangkey.clickhouse.shared_topics`), so no message of a new
subscription reaches the errors table for want of DDL. The catalog is re-read every second
(and before a run without ``follow`` stops).

Modules, each importing only those above it:

* :mod:`~yangkey.clickhouse.ingest.rows` — a Kafka message as a queue row, the instance feed
  header added;
* :mod:`~yangkey.clickhouse.ingest.arrow` — queue rows as one Arrow INSERT;
* :mod:`~yangkey.clickhouse.ingest.offsets` — the database identity the committed offsets
  carry, the static member id;
* :mod:`~yangkey.clickhouse.ingest.inserter` — one batch stored while the next is polled;
* :mod:`~yangkey.clickhouse.ingest.events` — :class:`IngestResult` and the events a command
  renders (:mod:`yangkey.clickhouse.progress`);
* :mod:`~yangkey.clickhouse.ingest.loop` — :class:`IngestLoop`, the consumer;
* here, :func:`ingest`: the tables created, then the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yangkey.clickhouse.apply import apply
from yangkey.clickhouse.connection import ChdbConnection, open_embedded
from yangkey.clickhouse.ddl import DdlOptions, render_ddl
from yangkey.clickhouse.ingest.events import IngestEvents, IngestResult, Silent
from yangkey.clickhouse.ingest.loop import DEFAULT_BATCH_SIZE, DEFAULT_GROUP, IngestLoop
from yangkey.clickhouse.query_socket import serve_queries

if TYPE_CHECKING:
    from yangkey.catalog import Catalog
    from yangkey.clickhouse.shared_topics import SharedReader


def ingest(
    catalog: Catalog,
    bootstrap: str,
    embedded_path: str | Path,
    *,
    follow: bool = False,
    group: str = DEFAULT_GROUP,
    batch_size: int = DEFAULT_BATCH_SIZE,
    database: str = "yangkey",
    dead_letter: bool = True,
    kafka_config: Mapping[str, Any] | None = None,
    connection: ChdbConnection | None = None,
    events: IngestEvents | None = None,
    shared: SharedReader | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> IngestResult:
    """Create the embedded tables (idempotent) at ``embedded_path`` and consume into them.

    ``connection`` reuses an open chdb connection (chdb allows one data path per process).
    ``shared`` (a :class:`yangkey.kafka.catalog_topic.CatalogTopic`) adds the topics of the
    shared catalog, as they appear. ``events`` hears what the run does (default: nothing).
    """
    from yangkey.catalog import Catalog  # noqa: PLC0415
    from yangkey.clickhouse.instances import CatalogFeeds  # noqa: PLC0415 - needs yangson
    from yangkey.clickhouse.shared_topics import SharedTopics  # noqa: PLC0415

    heard = events or Silent()
    options = DdlOptions(
        database=database,
        mode="embedded",
        dead_letter_topic=catalog.dead_letter_topic if dead_letter else None,
    )
    # only a compiled catalog knows its topics' schemas (a stand-in with topics only does not);
    # a topic known only from the shared catalog gets its typed columns from the local schema
    feeds = CatalogFeeds(catalog) if isinstance(catalog, Catalog) else None
    typed = feeds.typed if feeds is not None else None
    followed = (
        SharedTopics(shared, catalog.topics, feeds, warn=heard.warning)
        if shared is not None
        else None
    )
    specs = followed.merge() if followed is not None else list(catalog.topics)
    statements = render_ddl(specs, options, typed)
    topics = [spec.name for spec in specs]
    if dead_letter:
        topics.append(catalog.dead_letter_topic)
    conn = connection if connection is not None else open_embedded(embedded_path)
    created = set(topics)

    def refresh() -> list[str]:
        """Tables first, then the topic: what the loop subscribes to next."""
        assert followed is not None
        new = [spec for spec in followed.new() if spec.name not in created]
        if new:
            apply(conn, render_ddl(new, replace(options, dead_letter_topic=None), typed), database)
            created.update(spec.name for spec in new)
            heard.note("tables created for " + ", ".join(spec.name for spec in new))
        return sorted(created)

    try:
        apply(conn, statements, database)
        # the directory is ours until we return: the other commands query through us
        with serve_queries(conn, embedded_path, heard.warning) as served:
            if served is not None and follow:
                heard.note(f"answering `yangkey state|history|sql --embedded {embedded_path}`")
            return IngestLoop(
                conn,
                topics,
                bootstrap,
                database=database,
                follow=follow,
                group=group,
                batch_size=batch_size,
                kafka_config=kafka_config,
                events=heard,
                should_stop=should_stop,
                feeds=feeds,
                refresh=refresh if followed is not None else None,
            ).run()
    finally:
        if feeds is not None and feeds.failures:
            heard.note(
                f"{feeds.failures} message(s) gave no instance rows (message-level rows "
                f"stored): {feeds.first_failure}"
            )
        if connection is None:
            conn.close()
