"""The instance feed of every typed topic, for ``yangkey ingest`` (embedded mode), which adds
the ``yangkey-instances`` header to a record that lacks it (the feed: :mod:`yangkey.instances`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from yangkey.clickhouse.columns import TypedTopic, shared_branches, typed_branches
from yangkey.errors import YangkeyError
from yangkey.instances import InstanceFeed, catalog_modules
from yangkey.notifications import decode

if TYPE_CHECKING:
    from yangkey.catalog import Catalog
    from yangkey.shared_catalog import SharedSubscription
    from yangkey.templates import Branch


class CatalogFeeds:
    """The instance feed of every derived topic of a catalog."""

    def __init__(self, catalog: Catalog) -> None:
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
            self.feeds[topic] = InstanceFeed(branch, typed.columns)

    def learn(self, records: Iterable[SharedSubscription]) -> list[str]:
        """Typed columns and a feed for each topic of shared-catalog ``records`` that this
        lacks (:func:`yangkey.clickhouse.columns.shared_branches`); one warning line per topic
        whose schema is not here (it keeps the message-level tables), said once."""
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
