"""Raw notification bytes -> keyed messages for Kafka, or a rejection.

See docs/design.md#producer-contract and docs/design.md#bad-input.

This is the producer's per-record function, shared by the Spark job, the demo and the CLI.
It never raises for bad input: every failure becomes a :class:`Rejection` naming the source
position and the reason, so the caller can route it to the dead-letter topic and keep going.

The draft's three producer knobs are :class:`ProducerKnobs`: message keys on/off, a topic per
subscription branch on/off, and the subscription-type topic level (which is part of the
catalog's topic names).
"""

from __future__ import annotations

import logging
import os
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from yangkey.catalog import Catalog
from yangkey.entries import CatalogEntry, SkippedSubscription
from yangkey.errors import ConfigError, InputError, NotificationError, YangkeyError
from yangkey.fleet import for_node
from yangkey.instances import InstanceFeed, catalog_modules, derive_leaves
from yangkey.messages import (
    CONTENT_TYPE_JSON,
    CONTENT_TYPE_XML,
    EMPTY_UPDATE,
    HEADER_EVENT_TIME,
    HEADER_SEQUENCE_NUMBER,
    EmptyUpdates,
    Headers,
    KeyedMessage,
    Rejection,
    header_bytes,
    instances_headers,
    notification_headers,
    subscription_headers,
)
from yangkey.native import Keys, Route, RouteMemo
from yangkey.native import active as native_active
from yangkey.native import keys_of as native_keys_of
from yangkey.native import keys_xml as native_keys_xml
from yangkey.native import keys_xml_of as native_keys_xml_of
from yangkey.native import routes as native_routes
from yangkey.native_feed import feed_walker
from yangkey.notifications import Notification, Wanted, decode
from yangkey.schema import SchemaContext
from yangkey.topics import topic_name_problem

STRICT_ENV = "YANGKEY_STRICT"
"""Set to 1 (the test suites do) to make :meth:`MessageBuilder.build` raise bugs."""
_log = logging.getLogger("yangkey")
MAX_ROUTES = 100_000
"""(subscription, node, content type) routes a builder remembers before starting afresh."""
_new = tuple.__new__
"""KeyedMessage(...) through its generated __new__ cost 0.5 us more per message."""
_Fixed = tuple[Headers, int]
"""Headers that depend only on the subscription and the encoding, and their bytes."""
_Route = tuple[CatalogEntry | SkippedSubscription | None, _Fixed]
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


@dataclass(frozen=True)
class ProducerKnobs:
    keys: bool = True
    """Off: no key, the producer spreads messages round robin."""
    per_branch: bool = True
    """Off: every message goes to ``single_topic``."""
    single_topic: str = "yang-push"
    learn: bool = True
    """Off: never learn, even when the subscriptions file says ``learn: true`` (the file
    decides whether learning is allowed at all)."""
    instances: bool = False
    """The ``yangkey-instances`` header: the typed instance rows of each message for the
    ClickHouse instance tables (docs/design.md#instance-feed); per-branch topics only. Off by
    default: it costs the producer 2.5-3x on the Python path (benchmarks/bench_typed.py; the
    native pass writes JSON push-updates' headers itself, benchmarks/bench_native.py) and
    ``yangkey ingest`` computes the same rows itself; a server's Kafka engine tables need it
    on."""
    empty_updates: EmptyUpdates = "count"
    """An update without data (a heartbeat) is no error: ``count`` it in the run summary, or
    also send it to the dead-letter topic (``dead-letter``, kind ``empty-update``)."""

    def __post_init__(self) -> None:
        problem = topic_name_problem(self.single_topic)
        if problem is not None:
            raise ConfigError(
                f"{self.single_topic!r} is not a valid Kafka topic name: {problem}",
                source="single topic",
            )

    @classmethod
    def from_catalog(cls, catalog: Catalog, **overrides: Any) -> ProducerKnobs:
        policy = catalog.file.topic_policy
        values: dict[str, Any] = {
            "keys": policy.keys,
            "per_branch": policy.per_branch,
            "single_topic": policy.single_topic,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


class MessageBuilder:
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
        self._fixed_headers: dict[tuple[int, str, str], _Fixed] = {}
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
        self._routes: dict[tuple[int, str | None, str], _Route] = {}
        self.native = native_active()
        """Whether JSON push-updates are keyed by the native pass (:func:`yangkey.native.keys`;
        with the instance feed on, the pass writes its header too)."""
        self._with_feed = self.knobs.instances and self.knobs.per_branch
        """Whether a message carries the instance feed header."""
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

    def _route(self, route_key: tuple[int, str | None, str]) -> _Route:
        """The catalog entry of (subscription id, node, content type) and its fixed headers,
        remembered: a notification then costs one dict lookup for both, not a node pattern
        match and a second lookup. None for an id the file lacks for that node (learning
        decides, each time: its metadata can differ between notifications)."""
        subscription_id, node, content_type = route_key
        entry = self.catalog.resolve(subscription_id, node)
        fixed = self._fixed(entry, content_type) if isinstance(entry, CatalogEntry) else ((), 0)
        route: _Route = (entry, fixed)
        if len(self._routes) >= MAX_ROUTES:
            self._routes.clear()  # node names come from the input: keep the memory bounded
            self._native_routes.clear()
            self._native_routes_xml.clear()
        self._routes[route_key] = route
        return route

    def _fixed(self, entry: CatalogEntry, content_type: str) -> _Fixed:
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
            # A push-update keyed without its data tree in Python; None: the Python path. XML
            # natively only without the instance feed (keys_xml writes no header).
            if raw.startswith(b"<"):
                found = (
                    None
                    if self._with_feed
                    else native_keys_xml(
                        raw,
                        source,
                        self.ns_modules,
                        self._native_route_xml,
                        False,
                        self._native_routes_xml,
                    )
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
        if len(self._feed_walkers) >= MAX_ROUTES:
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
