"""The shared catalog (seed 001) seen from ClickHouse: which topics need tables, and their
typed columns.

A subscriptions file names some topics; the shared catalog (``_yangkey_catalog``) names those
of every subscription any producer wrote or learned. :class:`SharedTopics` is the one follower
of it that ``ddl generate``/``ddl apply`` (``--bootstrap``, ``--follow``) and ``ingest
--shared-catalog`` share:

* :meth:`SharedTopics.merge` gives the file's topics plus those the catalog adds, now;
* :meth:`SharedTopics.new` gives the topics the catalog gained since (each once);
* :meth:`SharedTopics.follow` hands each such batch to a function (which creates its tables)
  until stopped.

A topic known only from the shared catalog gets its typed instance tables when its record's
XPath compiles against the local YANG schema (``CatalogFeeds.learn``,
:mod:`yangkey.clickhouse.instances`); one that does not keeps the message-level tables, with
one warning line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from yangkey.shared_catalog import merge_topics, topic_specs

if TYPE_CHECKING:
    from yangkey.catalog import Catalog
    from yangkey.clickhouse.columns import TypedTopic
    from yangkey.clickhouse.instances import CatalogFeeds
    from yangkey.shared_catalog import SharedSubscription
    from yangkey.topics import TopicSpec


class SharedReader(Protocol):
    """The shared catalog as read here (:class:`yangkey.kafka.catalog_topic.CatalogTopic`)."""

    def records(self) -> list[SharedSubscription]: ...


def _ignore(_line: str) -> None:
    pass


class SharedTopics:
    """The topics of a subscriptions file (``own``) and of the shared catalog ``reader``.

    ``feeds`` (when given) learns the typed columns of each shared topic; ``warn`` hears of
    each topic left without them, once."""

    def __init__(
        self,
        reader: SharedReader,
        own: Sequence[TopicSpec] = (),
        feeds: CatalogFeeds | None = None,
        warn: Callable[[str], None] = _ignore,
    ) -> None:
        self.reader = reader
        self.own = list(own)
        self.feeds = feeds
        self.warn = warn
        self.known: set[str] = {spec.name for spec in own}
        """The file's topics and those :meth:`merge` and :meth:`new` have handed out."""

    @classmethod
    def of(
        cls,
        reader: SharedReader,
        catalog: Catalog | None,
        *,
        yang_dirs: Sequence[str] = (),
        warn: Callable[[str], None] = _ignore,
    ) -> SharedTopics:
        """Following ``reader`` beside a subscriptions file's ``catalog`` (None: the shared
        catalog alone, typed against the schema of ``yang_dirs``)."""
        from yangkey.clickhouse.instances import CatalogFeeds  # noqa: PLC0415 - needs yangson

        own = catalog.topics if catalog is not None else ()
        return cls(reader, own, CatalogFeeds(catalog, yang_dirs=yang_dirs), warn)

    @property
    def typed(self) -> dict[str, TypedTopic]:
        """Typed columns of every topic known here whose schema is here."""
        return self.feeds.typed if self.feeds is not None else {}

    def _learn(self, records: list[SharedSubscription]) -> None:
        if self.feeds is not None:
            for warning in self.feeds.learn(records):
                self.warn(warning)

    def merge(self) -> list[TopicSpec]:
        """The file's topics, then those of the shared catalog the file lacks."""
        records = self.reader.records()
        self._learn(records)
        topics = merge_topics(self.own, topic_specs(records))
        self.known.update(spec.name for spec in topics)
        return topics

    def new(self) -> list[TopicSpec]:
        """The shared catalog's topics not handed out before (none: ``[]``)."""
        records = self.reader.records()
        fresh = [spec for spec in topic_specs(records) if spec.name not in self.known]
        if fresh:
            self._learn(records)
            self.known.update(spec.name for spec in fresh)
        return fresh

    def follow(
        self,
        apply: Callable[[list[TopicSpec]], None],
        *,
        interval: float = 1.0,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> None:
        """``apply`` each batch of new topics (tables first: see the module doc), every
        ``interval`` seconds until ``should_stop`` says so (or Ctrl-C, which propagates)."""
        while not should_stop():
            fresh = self.new()
            if fresh:
                apply(fresh)
            time.sleep(interval)
