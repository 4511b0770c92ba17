"""The instance feed of every typed topic, for ``yangkey ingest`` (embedded mode), which adds
the ``yangkey-instances`` header to a record that lacks it (the feed: :mod:`yangkey.instances`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from yangkey.clickhouse.columns import TypedTopic, shared_branches, typed_branches
from yangkey.errors import YangkeyError
from yangkey.instances import InstanceFeed, catalog_modules
from yangkey.native import instances as native_instances
from yangkey.native_feed import feed_walker
from yangkey.notifications import decode
from yangkey.schema import SchemaContext

if TYPE_CHECKING:
    from yangkey.catalog import Catalog
    from yangkey.compiled import Branch
    from yangkey.shared_catalog import SharedSubscription


class CatalogFeeds:
    """The typed columns and the instance feed of every derived topic of a catalog (none:
    of the shared catalog's topics only, against the schema of ``yang_dirs``). A topic's feed
    is built when its first record asks for it: DDL needs the columns only."""

    def __init__(self, catalog: Catalog | None = None, *, yang_dirs: Sequence[str] = ()) -> None:
        if catalog is None:
            self.schema = SchemaContext.cached(tuple(yang_dirs))
            self.modules: tuple[str, ...] = ()
        else:
            self.schema, self.modules = catalog.schema(), catalog_modules(catalog)
        self.typed: dict[str, TypedTopic] = {}
        self.branches: dict[str, Branch] = {}
        self.feeds: dict[str, InstanceFeed] = {}
        """The feeds built so far."""
        self.walkers: dict[str, Any] = {}
        """Per topic its feed's native walker (:func:`yangkey.native_feed.feed_walker`), or None."""
        self.native_fed = 0
        """Headers the native pass wrote (a JSON push-update it mirrors exactly)."""
        if catalog is not None:
            self._add(typed_branches(catalog))
        self.untyped: dict[str, str] = {}
        """Shared-catalog topics without typed columns here, and why."""
        self.ns_modules = self.schema.index.by_namespace
        self.failures = 0
        self.first_failure = ""

    def _add(self, branches: dict[str, tuple[TypedTopic, Branch]]) -> None:
        for topic, (typed, branch) in branches.items():
            self.typed[topic] = typed
            self.branches[topic] = branch

    def learn(self, records: Iterable[SharedSubscription]) -> list[str]:
        """Typed columns and a feed for each topic of shared-catalog ``records`` that this
        lacks (:func:`yangkey.clickhouse.columns.shared_branches`); one warning line per topic
        whose schema is not here (it keeps the message-level tables), said once."""
        branches, untyped = shared_branches(
            records, self.schema, self.modules, known=(*self.typed, *self.untyped)
        )
        self._add(branches)
        self.untyped.update(untyped)
        return [
            f"{topic}: no typed instance tables (message-level tables only): {why}"
            for topic, why in untyped.items()
        ]

    def feed(self, topic: str) -> InstanceFeed | None:
        """The instance feed of ``topic`` (None: no typed columns here)."""
        feed = self.feeds.get(topic)
        if feed is None and topic in self.branches:
            feed = self.feeds[topic] = InstanceFeed(self.branches[topic], self.typed[topic].columns)
        return feed

    def header(self, topic: str, value: bytes, source: str) -> bytes | None:
        """The feed of one record of ``topic``; None for a topic without one, or for a value
        that does not decode (counted in :attr:`failures`: the views then store no instance)."""
        feed = self.feed(topic)
        if feed is None:
            return None
        if topic in self.walkers:
            walker = self.walkers[topic]
        else:
            walker = self.walkers[topic] = feed_walker((feed.branch,), (feed,))
        if walker is not None:
            found = native_instances(value, source, walker, self.ns_modules)
            if found is not None and found[0] is not None:
                self.native_fed += 1
                return found[0]
        try:
            return feed.header(decode(value, source, self.ns_modules))
        except YangkeyError as exc:
            self.failures += 1
            self.first_failure = self.first_failure or str(exc)
            return None
