"""The optional compiled fast path (``yangkey-native``, module ``yangkey_native``; issue 33).

yangkey stays pure Python; when the separately built ``yangkey_native`` imports and speaks the
interface this module expects (:data:`CONTRACT`), :func:`decode` runs its one-pass decoder,
else the Python reference (:func:`yangkey.notifications.decode`). ``YANGKEY_NATIVE=0`` forces
Python. Which path runs is logged once at debug level, and :func:`status` tells it
(``yangkey --version`` prints it).

The interface (contract 6: contract 3's; contract 4 added the instance feed and learned
subscriptions, contract 5 ``Decoder.keys_xml``, contract 6 the instance feed of XML):

* ``yangkey_native.CONTRACT`` (int) and ``__version__`` (str);
* ``yangkey_native.Decoder(model)``: ``model`` is :func:`model`'s dict, the classes a decode
  builds or raises and the reference's own checks of header fields (the native path calls them
  for any value but a plain well-formed one, so both paths word each refusal alike);
* ``Decoder.decode(raw: bytes, source: str, ns_modules: Mapping[str, str], wanted=None)``
  (``wanted``: the reference's :data:`~yangkey.notification_model.Selector`, called with the
  Notification of an XML push-update once its node and subscription id are known; its answer
  limits the conversion of the data) returns the
  :class:`~yangkey.notification_model.Notification` the reference returns, raises the error it
  raises, or returns None for a document the native parsers leave to the reference (malformed,
  an encoding other than UTF-8, a DTD or entity, nesting or size past the limits): the
  reference then decodes it and words the error (orjson's or libxml2's message);
* ``Decoder.loads(raw: bytes)``: the JSON parser alone (duplicate members refused), the tree
  ``orjson.loads`` builds or None; ``Decoder.check(raw: bytes)``: the parse alone, no Python
  object built, True when the native decoder reads the document; for benchmarks and tests;
* ``yangkey_native.Walker(tables(compiled))``: a compiled subscription's Phase 3 walkers, from
  :func:`tables`'s plain data (the compiled subscription stays computed in Python);
* ``Decoder.keys(raw, source, ns_modules, route, with_xpaths=False, routes=None)`` (phase
  B): the message
  keys of a JSON push-update without building its data tree in Python. The framing is read as
  ``decode`` reads it; ``route(subscription_id, node)`` (node None when the notification
  names none) answers ``(walker, node_name, extra)`` or None (asked only when ``routes``, the
  caller's memo of its earlier answers by ``(subscription_id, node)``: a
  ``yangkey_native.Routes`` or a dict, has none); the
  walker's branches are walked
  over the parsed bytes (:mod:`yangkey.walker`'s rules), the key values canonicalized, the
  templates filled and the keys composed (:func:`yangkey.messages.encode_key`). It returns
  ``(extra, subscription_id, sequence_number, event_time, key, branch_keys, xpaths)`` (per
  branch its key or None; ``xpaths`` every instance's, sorted, with ``with_xpaths``), or None
  for anything it leaves to the reference: XML, yang-patch, a text framing, any error, a key
  value the native canons do not read, a node name that is not plain ASCII, no instance.

* ``Decoder.keys_xml(raw, source, ns_modules, route, with_xpaths=False, routes=None)``
  (contract 5): ``keys`` of an XML push-update, in every framing the reference decodes
  (NETCONF ``<notification>``, the telemetry message, the envelope, a bare push-update,
  Huawei's ``sysName``/``sequenceNumber``, IOS-XE's ``subscription-id`` and
  ``datastore-contents-xml`` holding the elements). The datastore contents are walked as the
  JSON-shaped tree :class:`yangkey.xmltree.XmlConverter` makes of them (namespaces to modules
  through ``ns_modules``; ``prefix:name`` text with a prefix in scope handed to a converter
  as the :class:`~yangkey.values.QNameText` the reference holds). The same answer as
  ``keys``, or None: JSON, contents written as XML text, any error. An XML yang-patch
  (push-change-update) is keyed as ``keys`` keys a JSON one (each edit's target, operation
  and value read as ``xmlnotifications`` reads them; native/src/xmlpatch.rs) in every framing
  but IOS-XE's contents (a NETCONF ``<notification>`` with Huawei's leaves or not, the
  telemetry message, the envelope, bare; IOS-XE's ``subscription-id``); the answer's shape is
  unchanged. The caller routes by content type (its
  ``route`` answers for ``application/yang-data+xml``): see :func:`keys_xml`.

* ``yangkey_native.Routes()``: ``Decoder.keys``' memo of the route's answers, kept where the
  pass reads them by the id and node it has just read (no tuple built and hashed in Python):
  set as a dict is (``routes[(id, node)] = (walker, node_name, extra)``), ``len`` and
  ``clear()``; :func:`routes` makes one. ``share(id, (walker, extra), excluded)`` (a later
  addition, asked only where present) answers ``(walker, node, extra)`` for every node text
  of ``id`` that is not empty, not in ``excluded`` and has no answer of its own: a
  fleet-wide subscription's route, asked once per id instead of once per node.

Contract 4 adds to contract 3 the instance feed (:mod:`yangkey.instances`) of JSON push-updates
and learned subscriptions:

* ``yangkey_native.Walker(tables, feeds)``: ``feeds`` per branch
  :func:`yangkey.native_feed.feed_table`'s plain
  data of its :class:`~yangkey.instances.InstanceFeed` (the leaf table stays computed in
  Python); :func:`yangkey.native_feed.feed_walker` makes one;
* ``Decoder.keys(..., with_instances=True)`` with such a walker: an eighth item, per branch the
  ``yangkey-instances`` header's bytes (``InstanceFeed.header``'s, byte for byte) or None (no
  instance there), from the same walk as the keys; the whole answer is None (the reference
  answers) when a feed meets what it does not mirror (a value its converters do not read, a
  float in a nested list, a converter that raises);
* ``Decoder.instances(raw, source, walker)``: those headers alone (``yangkey ingest``), or
  None as ``keys`` would be; :func:`instances` calls it.
* Both answer a JSON yang-patch too (issue 33's patchfeed; no new argument, so the contract
  number stays): each edit's objects as :meth:`~yangkey.instances.InstanceFeed.edit` builds
  them (``@op``, ``@under`` below the target, the value's leaves), from the key pass's edit
  walk; None where the reference's objects are not mirrored (a key-leaf or keyless-list
  subscription, a leaf target given no value or an edit below it, a list entry whose key
  member is also a carried leaf). A module from before answers None there (Python builds it).
* ``Decoder.keys(..., learning=False)``: with ``learning``, ``route`` is asked
  ``route(subscription_id, node, subscription)``, ``subscription`` being the
  telemetry-message's ``yang-push-subscription`` metadata as the reference decodes it (or
  None), so that it can answer for a subscription the catalog learns from it (or takes from
  the shared catalog); without, as in contract 3;
* :func:`keys_of`: ``Decoder.keys`` itself, for a caller that calls it once per record
  (:func:`keys_xml_of`: ``Decoder.keys_xml``).

Contract 6 adds the instance feed of XML push-updates and yang-patches (native/src/xmlfeed.rs)
and the Spark job's native Kafka producer. The feed:

* ``Decoder.keys_xml(..., with_instances=False)``: with ``with_instances`` (a walker built
  with feeds), the eighth item ``keys`` gives, per branch the ``yangkey-instances`` header's
  bytes or None, byte for byte :meth:`~yangkey.instances.InstanceFeed.header`'s of the
  notification the reference decodes (every leaf as the text lxml gives;
  ``prefix:name`` text whose prefix the document binds, in scope, to a namespace of
  ``ns_modules`` handed to the converter as the :class:`~yangkey.values.QNameText` the
  reference holds, so an identityref's is ``module:name``, RFC 7951 section 6.8, whatever
  prefix the document chose, RFC 7950 section 9.10.3). The whole answer is None where the
  feed is not mirrored (an integer leaf holding such text, a converter given an element with
  children, any value the converters refuse). An XML yang-patch's feed is each edit's objects
  as for a JSON one (its values' leaves read as the reference reads them, the same cases left
  to Python);
* ``Decoder.instances(raw, source, walker, ns_modules=None)``: with ``ns_modules``, an XML
  push-update's or yang-patch's headers too (a framing the fast reader takes); without, XML
  is None as before.

A contract-5 module is not used at all (:data:`CONTRACT` must match), so no caller asks one
for ``with_instances`` on XML.

The producer (native/src/rdkafka.rs, sink.rs; its adapter is
:mod:`yangkey.spark.delivery.native_producer`):

* ``yangkey_native.rdkafka_version(path)``: ``(rd_kafka_version(), rd_kafka_version_str())``
  of the librdkafka at ``path`` (opened with ``dlopen`` at run time, nothing linked at build
  time), OSError when it cannot be opened or lacks a function the producer calls;
* ``yangkey_native.RdProducer(path, config)``: a producer over that library, ``config``
  librdkafka's string settings; ``produce(messages, headers_for)`` sends a list of ``(topic,
  key, value, headers)`` through ``rd_kafka_produceva`` in one call (``headers_for(topic)``,
  asked once per topic, adds that topic's headers); ``poll``, ``flush`` (-> messages left),
  ``delivery_failure()`` (count, first topic, words), ``drain_logs()``, the transactional
  calls (``init_transactions``, ``begin_transaction``, ``send_offsets_to_transaction(topic,
  partition, offset, metadata, group_id, timeout)``, ``commit_transaction``,
  ``abort_transaction``), ``purge`` and ``close``; every wait releases the GIL;
* ``yangkey_native.RdKafkaError``: what they raise, args ``(code, name, string, retriable,
  fatal, txn_requires_abort)`` (``produce`` adds the refused message's index).

The Python implementation stays the reference: tests/unit/test_native_decode.py,
test_native_keys.py, test_native_feed.py and test_native_xml_feed.py check that both paths
agree.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Protocol

from yangkey.compiled import Branch, CompiledSubscription
from yangkey.errors import FramingError, InputError, NotificationError, ShapeError
from yangkey.messages import CONTENT_TYPE_JSON, CONTENT_TYPE_XML
from yangkey.notification_model import (
    NS_TELEMETRY,
    OPERATIONS,
    PUSH_HEADER,
    Edit,
    Notification,
    Selector,
    _node_name,
    _operation,
    _sequence_number,
    _subscription_id,
    parse_target,
)
from yangkey.notifications import decode as python_decode
from yangkey.values import Canon, QNameText, canon_integer, canon_string

CONTRACT = 6
"""The ``yangkey_native.CONTRACT`` this module speaks."""
ENV_NATIVE = "YANGKEY_NATIVE"

log = logging.getLogger(__name__)


class _Decoder(Protocol):
    def decode(
        self,
        raw: bytes,
        source: str,
        ns_modules: Mapping[str, str],
        wanted: Selector | None = None,
    ) -> Notification | None: ...

    def check(self, raw: bytes) -> bool: ...

    def loads(self, raw: bytes) -> Any: ...

    def keys(
        self,
        raw: bytes,
        source: str,
        ns_modules: Mapping[str, str],
        route: Route,
        with_xpaths: bool = False,
        routes: Any = None,  # a RouteMemo: yangkey_native.Routes or a dict
        with_instances: bool = False,
        learning: bool = False,
    ) -> Keys | None: ...

    def keys_xml(
        self,
        raw: bytes,
        source: str,
        ns_modules: Mapping[str, str],
        route: Route,
        with_xpaths: bool = False,
        routes: Any = None,
        with_instances: bool = False,
    ) -> Keys | None: ...

    def instances(
        self,
        raw: bytes,
        source: str,
        walker: Any,
        ns_modules: Mapping[str, str] | None = None,
    ) -> tuple[bytes | None, ...] | None: ...


Route = Callable[[int, str | None], "tuple[Any, str, Any] | None"]
"""``Decoder.keys``'s question: (subscription id, node) -> (walker, node name, extra) or None."""
Routes = dict[tuple[int, str | None], tuple[Any, str, Any]]
"""Earlier answers of a ``Route``, by its question: asked again only when missing."""


class RouteMemo(Protocol):
    """Earlier answers of a ``Route`` by its question (a :data:`Routes` dict, or the faster
    ``yangkey_native.Routes`` :func:`routes` makes): asked again only when missing."""

    def __setitem__(self, asked: tuple[int, str | None], answer: tuple[Any, str, Any]) -> None:
        """Remember ``answer`` of ``asked``: (subscription id, node)."""

    def __len__(self) -> int:
        """How many answers it holds."""

    def clear(self) -> None:
        """Forget them all."""


Keys = tuple[Any, ...]
"""``Decoder.keys``'s answer: extra, subscription id, sequence number, event time, the key of
every instance, per branch its key or None, every instance's XPath (or None); with
``with_instances`` also per branch its instance feed header (or None)."""


def model() -> dict[str, Any]:
    """What ``yangkey_native.Decoder`` is built with: the notification model's classes, the
    errors it raises, and the reference's checks and constants."""
    return {
        "Notification": Notification,
        "Edit": Edit,
        "QNameText": QNameText,
        "InputError": InputError,
        "FramingError": FramingError,
        "ShapeError": ShapeError,
        "NotificationError": NotificationError,
        "parse_target": parse_target,
        "node_name": _node_name,
        "subscription_id": _subscription_id,
        "sequence_number": _sequence_number,
        "operation": _operation,
        "CONTENT_TYPE_JSON": CONTENT_TYPE_JSON,
        "CONTENT_TYPE_XML": CONTENT_TYPE_XML,
        "OPERATIONS": sorted(OPERATIONS),
        "PUSH_HEADER": sorted(PUSH_HEADER),
        "NS_TELEMETRY": NS_TELEMETRY,
    }


@cache
def _load() -> tuple[_Decoder | None, str]:
    """The native decoder, or None; and one line saying which path runs and why (logged
    once, at debug level)."""
    decoder, line = _import()
    log.debug("yangkey decode path: %s", line)
    return decoder, line


def _import() -> tuple[_Decoder | None, str]:
    if os.environ.get(ENV_NATIVE, "").strip() == "0":
        return None, f"python ({ENV_NATIVE}=0)"
    try:
        import yangkey_native  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
    except ImportError:
        return None, "python (yangkey-native not installed)"
    version = getattr(yangkey_native, "__version__", "?")
    contract = getattr(yangkey_native, "CONTRACT", None)
    if contract != CONTRACT:
        return None, (
            f"python (yangkey-native {version} speaks contract {contract}, this yangkey "
            f"expects {CONTRACT}: rebuild it with `make native`)"
        )
    decoder: _Decoder = yangkey_native.Decoder(model())
    return decoder, f"native (yangkey-native {version})"


def _decoder() -> _Decoder | None:
    decoder, _ = _load()
    return decoder


def status() -> str:
    """``native (yangkey-native 0.1.0)`` or ``python (why)``."""
    return _load()[1]


def active() -> bool:
    """Whether :func:`decode` runs the native decoder."""
    return _decoder() is not None


def decode(
    raw: bytes | str,
    source: str,
    ns_modules: Mapping[str, str],
    wanted: Selector | None = None,
) -> Notification:
    """:func:`yangkey.notifications.decode`, natively where it can: same arguments, same
    Notification, same errors."""
    decoder = _load()[0]
    if decoder is None:
        return python_decode(raw, source, ns_modules, wanted)
    data = raw.encode("utf-8") if type(raw) is str else raw
    note = decoder.decode(data, source, ns_modules, wanted)  # type: ignore[arg-type]
    if note is None:
        return python_decode(data, source, ns_modules, wanted)
    return note


def _canon(canon: Canon) -> Any:
    """A converter as the walker tables name it: the two the native walk does itself by name,
    any other as the reference's callable (the native walk calls it on the value)."""
    if canon is canon_string:
        return "string"
    if canon is canon_integer:
        return "integer"
    return canon


def tables(compiled: CompiledSubscription) -> list[Any] | None:
    """``yangkey_native.Walker``'s plain data of ``compiled``'s branches
    (:mod:`yangkey.compiled`'s fields, as :mod:`yangkey.walker` reads them), or None for a
    shape the generated walkers take in a way the native one does not mirror (a leaf or
    leaf-list step before the last)."""
    branches: list[Any] = []
    for branch in compiled.branches:
        table = branch_table(branch)
        if table is None:
            return None
        branches.append(table)
    return branches


def branch_table(branch: Branch) -> tuple[Any, ...] | None:
    """One branch of :func:`tables` (None: a shape the native walker does not mirror)."""
    steps = branch.steps
    if any(step.kind in ("leaf", "leaf-list") for step in steps[:-1]):
        return None
    return (
        list(branch.pieces),
        list(branch.positional),
        [
            (
                step.kind,
                step.module,
                step.member,
                step.qualified_member,
                [
                    (slot.member, _canon(slot.canon), slot.pinned, slot.positional)
                    for slot in step.keys
                ],
                [(f.member, f.qualified_member, _canon(f.canon), f.value) for f in step.filters],
            )
            for step in steps
        ],
    )


def walker(compiled: CompiledSubscription) -> Any | None:
    """The native walker of ``compiled`` (for :func:`keys`' ``route``), or None when the
    native path is off or does not take its shape."""
    if _decoder() is None:
        return None
    data = tables(compiled)
    if data is None:
        return None
    import yangkey_native  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415

    return yangkey_native.Walker(data)


def instances(
    raw: bytes, source: str, walker: Any, ns_modules: Mapping[str, str] | None = None
) -> tuple[bytes | None, ...] | None:
    """``Decoder.instances``: per branch of ``walker``
    (:func:`yangkey.native_feed.feed_walker`'s) its instance
    feed header, or None when the native path is off or leaves ``raw`` to the reference.
    ``ns_modules``: an XML push-update's too (contract 6)."""
    decoder = _load()[0]
    if decoder is None or type(raw) is not bytes:
        return None
    return decoder.instances(raw, source, walker, ns_modules)


def routes() -> RouteMemo:
    """A memo of a ``Route``'s answers for :func:`keys`: ``yangkey_native.Routes`` when the
    native path runs, else a dict."""
    if _decoder() is None:
        return {}
    import yangkey_native  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415

    memo: RouteMemo = yangkey_native.Routes()
    return memo


def keys(
    raw: bytes,
    source: str,
    ns_modules: Mapping[str, str],
    route: Route,
    with_xpaths: bool = False,
    routes: RouteMemo | None = None,
    with_instances: bool = False,
    learning: bool = False,
) -> Keys | None:
    """``Decoder.keys`` (see the module doc), or None when the native path is off."""
    decoder = _load()[0]  # not _decoder(): one call less per notification
    if decoder is None or type(raw) is not bytes:
        return None
    return decoder.keys(
        raw, source, ns_modules, route, with_xpaths, routes, with_instances, learning
    )


def keys_of() -> Callable[..., Keys | None] | None:
    """``Decoder.keys`` itself, for a caller that makes it once per record (the bytes
    ``raw`` must be exactly ``bytes``: :func:`keys` checks that), or None when the native
    path is off."""
    decoder = _load()[0]
    return None if decoder is None else decoder.keys


def keys_xml_of() -> Callable[..., Keys | None] | None:
    """``Decoder.keys_xml`` itself, as :func:`keys_of` gives ``Decoder.keys``."""
    decoder = _load()[0]
    return None if decoder is None else decoder.keys_xml


def keys_xml(
    raw: bytes,
    source: str,
    ns_modules: Mapping[str, str],
    route: Route,
    with_xpaths: bool = False,
    routes: RouteMemo | None = None,
    with_instances: bool = False,
) -> Keys | None:
    """``Decoder.keys_xml``: :func:`keys` of an XML push-update (``route`` answers for the XML
    content type), or None when the native path is off or leaves it to the reference;
    ``with_instances``: with the feed headers (contract 6)."""
    decoder = _load()[0]
    if decoder is None or type(raw) is not bytes:
        return None
    return decoder.keys_xml(raw, source, ns_modules, route, with_xpaths, routes, with_instances)


def native_decoder() -> _Decoder | None:
    """The native decoder itself (tests and benchmarks compare it with the reference)."""
    return _decoder()
