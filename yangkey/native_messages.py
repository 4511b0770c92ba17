"""The native key pass's side of :class:`yangkey.producer.MessageBuilder` (issue 33): the
routes the pass asks the builder for (:func:`yangkey.native.keys`' ``route`` callbacks, whose
answers it remembers in a memo it reads itself), the instance-feed walkers, and the messages
built from the pass's answers, byte for byte what ``MessageBuilder._build`` builds from the
decoded notification (the reference: tests/unit/test_native_keys.py compares them).

:class:`NativeMessages` is a mixin of ``MessageBuilder`` rather than an object it holds: the
pass's callbacks and a Spark task's loop (:func:`yangkey.spark.lines.outgoing_lines`) reach
the builder's routes and header bound with one attribute lookup, as before the split.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from yangkey.catalog import Catalog
from yangkey.entries import CatalogEntry, SkippedSubscription
from yangkey.errors import YangkeyError
from yangkey.instances import InstanceFeed
from yangkey.knobs import ProducerKnobs
from yangkey.messages import (
    CONTENT_TYPE_JSON,
    CONTENT_TYPE_XML,
    HEADER_EVENT_TIME,
    HEADER_SEQUENCE_NUMBER,
    Headers,
    KeyedMessage,
    header_bytes,
    instances_headers,
    notification_headers,
)
from yangkey.native import Keys, Route, RouteMemo
from yangkey.native import active as native_active
from yangkey.native import keys_of as native_keys_of
from yangkey.native import keys_xml_of as native_keys_xml_of
from yangkey.native import routes as native_routes
from yangkey.native_feed import feed_walker

__all__ = [
    "MAX_FEED_WALKERS",
    "BuilderRoute",
    "FixedHeaders",
    "NativeMessages",
    "NativePass",
    "RouteKey",
]

FixedHeaders = tuple[Headers, int]
"""Headers that depend only on the subscription and the encoding, and their bytes."""
BuilderRoute = tuple[CatalogEntry | SkippedSubscription | None, FixedHeaders]
"""A (subscription id, node, content type)'s catalog entry and its fixed headers."""
RouteKey = tuple[int, str | None, str]
"""(subscription id, node, content type)."""
MAX_FEED_WALKERS = 100_000
"""Entries' feed walkers a builder remembers before starting afresh."""
_new = tuple.__new__
"""KeyedMessage(...) through its generated __new__ cost 0.5 us more per message."""
_SEQUENCE_SIZE = len(HEADER_SEQUENCE_NUMBER)
_OWN_SIZES = _SEQUENCE_SIZE + len(HEADER_EVENT_TIME)


class NativePass(NamedTuple):
    """:meth:`MessageBuilder.native_pass`: the native key pass as ``_build`` calls it, for a
    loop that calls it itself, record after record (:func:`yangkey.spark.lines.outgoing_lines`):
    ``json(raw, source, ns_modules, route, False, routes, False, True)`` keys a JSON
    notification, ``xml(raw, source, ns_modules, route_xml, False, routes_xml)`` an XML one;
    an answer's messages are ``message(raw, answer)``'s, or where that is None (several
    topics) ``messages(raw, answer)``'s, exactly as ``build``'s."""

    json: Callable[..., Keys | None]
    xml: Callable[..., Keys | None]
    ns_modules: Mapping[str, str]
    route: Route
    routes: RouteMemo
    route_xml: Route
    routes_xml: RouteMemo
    message: Callable[[bytes, Keys], KeyedMessage | None]
    messages: Callable[[bytes, Keys], list[KeyedMessage]]


class NativeMessages:
    """The native pass's routes and messages, mixed into ``MessageBuilder``, whose
    ``__init__`` calls :meth:`_init_native` and whose attributes below it reads."""

    catalog: Catalog
    knobs: ProducerKnobs
    default_node: str | None
    ns_modules: Mapping[str, str]
    header_bytes: int
    _with_feed: bool
    _routes: dict[RouteKey, BuilderRoute]
    _route: Callable[[RouteKey], BuilderRoute]
    _fixed: Callable[[CatalogEntry, str], FixedHeaders]
    _feed: Callable[[CatalogEntry, int], InstanceFeed]

    def _init_native(self) -> None:
        self.native = native_active()
        """Whether JSON push-updates are keyed by the native pass (:func:`yangkey.native.keys`;
        with the instance feed on, the pass writes its header too)."""
        self._feed_walkers: dict[int, tuple[CatalogEntry, Any]] = {}
        """Per entry (by identity, the entry kept alive) its native walker with feeds."""
        self._native_keys = native_keys_of() if self.native else None
        """``Decoder.keys`` itself (:func:`yangkey.native.keys` without its own call)."""
        self.native_keyed = 0
        """Notifications keyed by the native pass so far (the run summary tells them)."""
        self._native_routes = native_routes()
        """:meth:`_native_route`'s answers by its question, which the native pass looks up
        itself (no Python call); emptied with ``_routes``, whose entries they hold."""
        self._native_routes_xml = native_routes()
        """The same for XML push-updates (:meth:`_native_route_xml`)."""
        self._one_topic = None if self.knobs.per_branch else self.knobs.single_topic
        """Every message's topic when there is one for all (:meth:`native_message`)."""
        self._one_branch = 0 if self._with_feed else 1
        """The branches of a subscription :meth:`native_message` builds the message of: one
        (none with the instance feed, whose header it does not write)."""
        self._keys_on = self.knobs.keys

    def _native_route(
        self, subscription_id: int, node: str | None, subscription: Any = None
    ) -> tuple[Any, str, Any] | None:
        """:func:`yangkey.native.keys`' question: the native walker of the entry ``_build``
        routes a JSON notification of (id, node) to, the node name its key carries, and the
        route; None leaves the notification to the Python path (a skipped subscription, no
        node name, no native walker, learning refused). ``subscription``: the notification's
        ``yang-push-subscription`` metadata, which a learned subscription is learned from."""
        return self._native_answer(
            subscription_id, node, CONTENT_TYPE_JSON, self._native_routes, subscription
        )

    def _native_route_xml(
        self, subscription_id: int, node: str | None
    ) -> tuple[Any, str, Any] | None:
        """:meth:`_native_route` of an XML push-update (:func:`yangkey.native.keys_xml`):
        its route's fixed headers name the XML content type; a subscription to learn is left
        to the Python path (``keys_xml`` reads no metadata)."""
        return self._native_answer(
            subscription_id, node, CONTENT_TYPE_XML, self._native_routes_xml, None, learn=False
        )

    def _native_answer(
        self,
        subscription_id: int,
        node: str | None,
        content_type: str,
        memo: RouteMemo,
        subscription: Any,
        *,
        learn: bool = True,
    ) -> tuple[Any, str, Any] | None:
        name = node or self.default_node
        route_key = (subscription_id, name, content_type)
        route = self._routes.get(route_key)
        if route is None:
            route = self._route(route_key)
        entry = route[0]
        if learn and entry is None and name and self.knobs.learn and self.catalog.file.learn:
            return self._learned_route(subscription_id, name, subscription)
        if not isinstance(entry, CatalogEntry) or not name or entry.deriver.native is None:
            return None
        walker = self._feed_walker(entry) if self._with_feed else entry.deriver.native
        if walker is None:
            return None
        answer = (walker, name, route)
        share = getattr(memo, "share", None)  # yangkey_native.Routes, not a dict
        excluded = self.catalog.fleet_wide(subscription_id) if share and node else None
        if share and excluded is not None and node not in excluded:
            # the fleet-wide entry: every node it holds for gets this answer but for its own
            # name, which the memo puts in (the demo mix asked 7 routes per new node)
            share(subscription_id, (walker, route), sorted(excluded))
        else:
            memo[(subscription_id, node)] = answer
        return answer

    def _feed_walker(self, entry: CatalogEntry) -> Any | None:
        """The native walker of ``entry`` with the instance feed of each of its topics, or
        None (a feed that cannot be built: the Python path words it)."""
        known = self._feed_walkers.get(id(entry))
        if known is not None and known[0] is entry:
            return known[1]
        branches = entry.compiled.branches
        try:
            feeds = [self._feed(entry, index) for index in range(len(branches))]
        except YangkeyError:
            walker = None
        else:
            walker = feed_walker(branches, feeds)
        if len(self._feed_walkers) >= MAX_FEED_WALKERS:
            self._feed_walkers.clear()
        self._feed_walkers[id(entry)] = (entry, walker)
        return walker

    def _learned_route(
        self, subscription_id: int, node: str, subscription: Any
    ) -> tuple[Any, str, Any] | None:
        """:meth:`_native_route` for an id the file lacks: the entry :meth:`_unrouted` learns
        (or takes from the shared catalog) for this notification. Never remembered by (id,
        node): the notification's own metadata decides each time, as on the Python path. A
        refusal (no metadata, the limit, a filter that does not compile) is left to the
        Python path, which learns again and words it with the notification's position."""
        try:
            entry = self.catalog.learn(subscription_id, subscription, "", node)
        except YangkeyError:
            return None
        walker = self._feed_walker(entry) if self._with_feed else entry.deriver.native
        if walker is None:
            return None
        return (walker, node, (entry, self._fixed(entry, CONTENT_TYPE_JSON)))

    def native_pass(self) -> NativePass | None:
        """The native key pass as ``build`` calls it (:class:`NativePass`), or None when
        ``build`` does not ask it (the native path off) or its messages take more than its
        answer (the instance feed, :meth:`_native_feed_messages`)."""
        json = self._native_keys
        xml = native_keys_xml_of()
        if json is None or xml is None or not self.native or self._with_feed:
            return None
        return NativePass(
            json,
            xml,
            self.ns_modules,
            self._native_route,
            self._native_routes,
            self._native_route_xml,
            self._native_routes_xml,
            self.native_message,
            self._native_messages,
        )

    def native_message(self, raw: bytes, found: Keys) -> KeyedMessage | None:
        """The one message of ``raw`` from the native pass's answer ``found``
        (:meth:`_native_messages`' when it makes one: every message to one topic, or a
        subscription of one branch), its header bytes counted into :attr:`header_bytes`; None
        when the subscription has several topics, or with the instance feed."""
        (entry, (fixed, size)), _, sequence_number, event_time, key = found[:5]
        topic = self._one_topic
        if topic is None:
            topics = entry.topics
            if len(topics) != self._one_branch:
                return None
            topic = topics[0]  # one branch: the pass answers only when it has an instance
        # notification_headers and header_bytes spelled out: their calls cost 0.4 us of a
        # record's ~5 in a Spark task's loop; max() cost 0.5 more than the if, unpacking
        # fixed into the headers 0.1 more than a concatenation (docs/design.md)
        sequence = b"%d" % (sequence_number or 0)
        if event_time:
            stamp = str(event_time).encode()
            own = ((HEADER_SEQUENCE_NUMBER, sequence), (HEADER_EVENT_TIME, stamp))
            headers = fixed + own
            size += _OWN_SIZES + len(sequence) + len(stamp)
        else:
            headers = fixed + ((HEADER_SEQUENCE_NUMBER, sequence),)  # noqa: RUF005
            size += _SEQUENCE_SIZE + len(sequence)
        if size > self.header_bytes:  # noqa: PLR1730
            self.header_bytes = size
        return _new(KeyedMessage, (topic, key if self._keys_on else None, raw, headers))

    def _native_messages(self, raw: bytes, found: Keys) -> list[KeyedMessage]:
        """``_build``'s messages from the keys :func:`yangkey.native.keys` composed."""
        one = self.native_message(raw, found)
        if one is not None:
            return [one]
        (entry, (fixed, size)), _, sequence_number, event_time, _, branch_keys = found[:6]
        own = notification_headers(sequence_number, event_time)
        headers = fixed + own
        # header_bytes(own) spelled out: its loop cost 0.2 us of a record's ~3 on this path
        size += len(own[0][0]) + len(own[0][1])
        if len(own) > 1:
            size += len(own[1][0]) + len(own[1][1])
        self.header_bytes = max(self.header_bytes, size)
        if self._with_feed:
            return self._native_feed_messages(raw, entry, headers, branch_keys, found[7])
        keys = self.knobs.keys
        topics = entry.topics
        return [
            _new(KeyedMessage, (topics[index], branch_key if keys else None, raw, headers))
            for index, branch_key in enumerate(branch_keys)
            if branch_key is not None
        ]

    def _native_feed_messages(
        self,
        raw: bytes,
        entry: CatalogEntry,
        headers: Headers,
        branch_keys: tuple[bytes | None, ...],
        feeds: tuple[bytes | None, ...],
    ) -> list[KeyedMessage]:
        """``_native_messages`` with each message's instance feed header (the native pass's,
        byte for byte ``_with_instances``')."""
        keys = self.knobs.keys
        topics = entry.topics
        messages: list[KeyedMessage] = []
        for index, branch_key in enumerate(branch_keys):
            if branch_key is None:
                continue
            value = feeds[index]
            assert value is not None  # a branch with an instance has its feed
            extended = headers + instances_headers(value)
            self.header_bytes = max(self.header_bytes, header_bytes(extended))
            messages.append(
                KeyedMessage(topics[index], branch_key if keys else None, raw, extended)
            )
        return messages
