"""Raw notification bytes -> keyed messages for Kafka, or a rejection.

See docs/design.md#producer-contract and docs/design.md#bad-input.

This is the producer's per-record function, shared by the Spark job, the demo and the CLI.
It never raises for bad input: every failure becomes a :class:`Rejection` naming the source
position and the reason, so the caller can route it to the dead-letter topic and keep going.

The draft's producer knobs are :class:`~yangkey.knobs.ProducerKnobs` (imported from here too).
"""

from __future__ import annotations

import logging
import os
import traceback
from typing import Any

from yangkey.catalog import Catalog
from yangkey.entries import CatalogEntry, SkippedSubscription
from yangkey.errors import InputError, NotificationError, YangkeyError
from yangkey.fleet import for_node
from yangkey.instances import InstanceFeed, catalog_modules, derive_leaves
from yangkey.knobs import ProducerKnobs
from yangkey.messages import (
    EMPTY_UPDATE,
    Headers,
    KeyedMessage,
    Rejection,
    header_bytes,
    instances_headers,
    notification_headers,
    subscription_headers,
)
from yangkey.native import keys_xml as native_keys_xml
from yangkey.native_messages import (
    BuilderRoute,
    FixedHeaders,
    NativeMessages,
    RouteKey,
)
from yangkey.notifications import Notification, Wanted, decode
from yangkey.schema import SchemaContext

STRICT_ENV = "YANGKEY_STRICT"
"""Set to 1 (the test suites do) to make :meth:`MessageBuilder.build` raise bugs."""
__all__ = ["MAX_ROUTES", "STRICT_ENV", "MessageBuilder", "ProducerKnobs"]

_log = logging.getLogger("yangkey")
MAX_ROUTES = 100_000
"""(subscription, node, content type) routes a builder remembers before starting afresh."""
_new = tuple.__new__
"""KeyedMessage(...) through its generated __new__ cost 0.5 us more per message."""


class MessageBuilder(NativeMessages):
    """Turns raw notifications into keyed messages using a compiled catalog."""

    def __init__(
        self,
        catalog: Catalog,
        knobs: ProducerKnobs | None = None,
        *,
        default_node: str | None = None,
        yang_dirs: tuple[str, ...] = (),
        strict: bool | None = None,
    ) -> None:
        self.catalog = catalog
        self.knobs = knobs or ProducerKnobs.from_catalog(catalog)
        self.default_node = default_node
        self.yang_dirs = tuple(dict.fromkeys((*yang_dirs, *catalog.yang_dirs)))
        self.schema = SchemaContext.cached(self.yang_dirs)
        self.ns_modules = self.schema.index.by_namespace
        self.max_bytes = catalog.file.limits.max_notification_bytes
        self._fixed_headers: dict[tuple[int, str, str], FixedHeaders] = {}
        self.header_bytes = 0
        """At least the header bytes (names and values) of any message built so far: lets
        the producer see that a message is far below the size limit without a loop over its
        headers (yangkey.spark.transform.outgoing)."""
        self.strict = os.environ.get(STRICT_ENV) == "1" if strict is None else strict
        """Let exceptions that are not a YangkeyError (bugs) propagate instead of rejecting."""
        self.bugs: dict[tuple[Any, ...], int] = {}
        """Bugs seen, by (exception type, file, line) where raised."""
        self._feeds: dict[str, InstanceFeed] = {}
        self.feed_failures = 0
        """Messages sent without the instance header: a leaf value the feed could not read."""
        self._routes: dict[RouteKey, BuilderRoute] = {}
        self._with_feed = self.knobs.instances and self.knobs.per_branch
        """Whether a message carries the instance feed header."""
        self._init_native()

    def _feed(self, entry: CatalogEntry, index: int) -> InstanceFeed:
        topic = entry.topics[index]
        feed = self._feeds.get(topic)
        if feed is None:
            branch = entry.compiled.branches[index]
            modules = sorted({*catalog_modules(self.catalog), *entry.compiled.modules})
            feed = self._feeds[topic] = InstanceFeed(
                branch, derive_leaves(branch, self.schema, modules)
            )
        return feed

    def entry(self, subscription_id: int, node: str | None) -> CatalogEntry | None:
        """:meth:`Catalog.entry`: the file's subscription ``node`` uses for the id."""
        return self.catalog.entry(subscription_id, node)

    def _route(self, route_key: RouteKey) -> BuilderRoute:
        """The catalog entry of (subscription id, node, content type) and its fixed headers,
        remembered: a notification then costs one dict lookup for both, not a node pattern
        match and a second lookup. None for an id the file lacks for that node (learning
        decides, each time: its metadata can differ between notifications)."""
        subscription_id, node, content_type = route_key
        entry = self.catalog.resolve(subscription_id, node)
        fixed = self._fixed(entry, content_type) if isinstance(entry, CatalogEntry) else ((), 0)
        route: BuilderRoute = (entry, fixed)
        if len(self._routes) >= MAX_ROUTES:
            self._routes.clear()  # node names come from the input: keep the memory bounded
            self._native_routes.clear()
            self._native_routes_xml.clear()
        self._routes[route_key] = route
        return route

    def _fixed(self, entry: CatalogEntry, content_type: str) -> FixedHeaders:
        """:meth:`fixed_headers` and their size in bytes, remembered."""
        # What the headers say, not the subscription: (node, id) pairs are many, these few;
        # a learned id can start a new generation (shared catalog).
        fixed_key = (entry.generation, entry.subscription_type, content_type)
        found = self._fixed_headers.get(fixed_key)
        if found is None:
            fixed = self.fixed_headers(entry, content_type)
            found = self._fixed_headers[fixed_key] = (fixed, header_bytes(fixed))
        return found

    def _wanted(self, note: Notification) -> Wanted | None:
        """What the key derivation of ``note``'s subscription reads (for XML decoding)."""
        if note.subscription_id is None or self.knobs.instances:
            # the instance feed reads every leaf, not only what the keys need
            return None
        entry = self.entry(note.subscription_id, note.node or self.default_node)
        return None if entry is None else entry.deriver.wanted

    def fixed_headers(self, entry: CatalogEntry, content_type: str) -> Headers:
        """The headers that depend only on the subscription and the encoding."""
        return subscription_headers(content_type, entry.generation, entry.subscription_type)

    def counts_only(self, rejection: Rejection) -> bool:
        """Whether ``rejection`` is an empty update this run counts without dead-lettering."""
        return rejection.kind == EMPTY_UPDATE and self.knobs.empty_updates == "count"

    def build(self, raw: bytes, source: str, native: bool = True) -> list[KeyedMessage] | Rejection:
        """The keyed messages of one notification, or why it has none (an empty update is a
        rejection of kind ``empty-update`` here: :meth:`counts_only` says what to do with
        it). ``native`` False: the native pass has answered None for ``raw`` already
        (:func:`yangkey.spark.lines.outgoing_lines`), not asked again."""
        try:
            return self._build(raw, source, native)
        except YangkeyError as exc:
            return Rejection(source=source, kind=exc.kind, reason=exc.reason, raw=raw)
        except Exception as exc:
            # Bad input raises YangkeyError, always: anything else is a bug of ours. Tests run
            # strict and see it raised; a pipeline keeps going and makes it loud instead.
            if self.strict:
                raise
            return self._bug(exc, raw, source)

    def _bug(self, exc: Exception, raw: bytes, source: str) -> Rejection:
        """Kind ``bug`` (never an input kind) in the dead-letter topic / errors table, with the
        raw bytes to replay once fixed; the first occurrence at each code site is logged with
        its traceback (generated walker lines included), later ones counted in ``bugs``."""
        frames = traceback.extract_tb(exc.__traceback__)
        site = (type(exc).__name__, *((frames[-1].filename, frames[-1].lineno) if frames else ()))
        self.bugs[site] = self.bugs.get(site, 0) + 1
        if self.bugs[site] == 1:
            _log.error(
                "yangkey bug (%s) building %s: rejected with kind 'bug'; later ones at the same "
                "place are only counted",
                " at ".join(map(str, site)),
                source,
                exc_info=exc,
            )
        reason = f"internal error, a yangkey bug (please report): {type(exc).__name__}: {exc}"
        return Rejection(source, "bug", reason, raw)

    def _build(self, raw: bytes, source: str, ask_native: bool = True) -> list[KeyedMessage]:
        if len(raw) > self.max_bytes:
            raise InputError(
                f"notification of {len(raw)} bytes is over the limit of {self.max_bytes} "
                "(limits.max_notification_bytes)",
                source=source,
            )
        native = self._native_keys
        if native is not None and self.native and ask_native and type(raw) is bytes:
            # A push-update keyed without its data tree in Python; None: the Python path.
            if raw.startswith(b"<"):
                found = native_keys_xml(
                    raw,
                    source,
                    self.ns_modules,
                    self._native_route_xml,
                    False,
                    self._native_routes_xml,
                    self._with_feed,
                )
            else:
                found = native(
                    raw,
                    source,
                    self.ns_modules,
                    self._native_route,
                    False,
                    self._native_routes,
                    self._with_feed,
                    True,
                )
            if found is not None:
                self.native_keyed += 1
                return self._native_messages(raw, found)
        # The entry _wanted picks for an XML push-update is the one looked up below: node and
        # subscription id are final by then (wrappers are read outside in).
        note = decode(raw, source, self.ns_modules, self._wanted)
        subscription_id = note.subscription_id
        if subscription_id is None:
            raise NotificationError("the notification carries no subscription id", source=source)
        content_type = note.content_type
        route_key = (subscription_id, note.node or self.default_node, content_type)
        route = self._routes.get(route_key)
        if route is None:
            route = self._route(route_key)
        entry, (fixed, size) = route
        if not isinstance(entry, CatalogEntry):
            entry = self._unrouted(entry, note, route_key[1], source)
            fixed, size = self._fixed(entry, content_type)
        derived = entry.deriver.derive(note, default_node=self.default_node)
        own = notification_headers(note.sequence_number, note.event_time)
        headers = fixed + own
        self.header_bytes = max(self.header_bytes, size + header_bytes(own))
        knobs = self.knobs
        if not knobs.per_branch:
            key = derived.key if knobs.keys else None
            return [_new(KeyedMessage, (knobs.single_topic, key, raw, headers))]
        messages: list[KeyedMessage] = []
        topics = entry.topics
        keys = knobs.keys
        for index, xpaths in enumerate(derived.branch_xpaths):
            if not xpaths:
                continue
            key = derived.branch_key(index) if keys else None
            if knobs.instances:
                messages.append(
                    KeyedMessage(
                        topics[index],
                        key,
                        raw,
                        self._with_instances(headers, entry, index, note, source),
                    )
                )
            else:
                messages.append(_new(KeyedMessage, (topics[index], key, raw, headers)))
        return messages

    def _unrouted(
        self,
        found: SkippedSubscription | CatalogEntry | None,
        note: Notification,
        node: str | None,
        source: str,
    ) -> CatalogEntry:
        """The entry of a notification the file has no compiled subscription for: learned,
        or a rejection naming why."""
        if isinstance(found, SkippedSubscription):
            raise found.rejection(source)
        subscription_id = note.subscription_id
        assert subscription_id is not None
        if not self.knobs.learn:
            raise NotificationError(
                f"unknown subscription id {subscription_id}{for_node(node)} "
                f"({self.catalog.known(node)}); learning is off for this run",
                source=source,
            )
        return self.catalog.learn(subscription_id, note.subscription, source, node)

    def _with_instances(
        self,
        headers: Headers,
        entry: CatalogEntry,
        index: int,
        note: Notification,
        source: str,
    ) -> Headers:
        try:
            value = self._feed(entry, index).header(note)
        except YangkeyError as exc:
            # the message is still good for its key and the message-level tables
            self.feed_failures += 1
            _log.warning("%s: no instance rows: %s", source, exc)
            return headers
        extended = headers + instances_headers(value)
        self.header_bytes = max(self.header_bytes, header_bytes(extended))
        return extended
