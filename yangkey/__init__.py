"""yangkey: YANG Message Keys for Message Broker Integration.

Implements draft-ietf-nmop-yang-message-broker-message-key: a YANG-Push notification (RFC 8641,
RFC 8639) gets a deterministic message key (node, subscription id, concrete XPaths) and the
topics of its subscription's branches. The command line (``yangkey --help``) is built on this
package; the names below are its Python API, the same code the CLI and the Spark job run::

    import yangkey

    # A subscription, compiled against the YANG modules (Phases 1 and 2)
    schema = yangkey.SchemaContext.cached()
    compiled = yangkey.compile_subscription("/ietf-interfaces:interfaces/interface", schema)

    # The key of one notification (Phase 3), and the key read back
    note = yangkey.decode(raw, "notification.json", schema.index.by_namespace)
    derived = yangkey.KeyDeriver(compiled).derive(note)
    yangkey.MessageKey.parse(derived.key)  # MessageKey(node, subscription_id, xpaths)

    # Every subscription of a file: the records produce sends
    catalog = yangkey.load_catalog("subscriptions.yaml")
    messages = yangkey.MessageBuilder(catalog).build(raw, "notification.json")

    # Its ClickHouse DDL: the ClickHouse edge's (it needs only the core install)
    from yangkey.clickhouse.ddl import DdlOptions, render_catalog, to_script
    ddl = to_script(render_catalog(catalog, DdlOptions()))

Bad input raises :class:`YangkeyError` (``MessageBuilder.build`` returns a ``Rejection``
instead). Each name is imported on first use (PEP 562), so ``import yangkey`` loads no YANG
library, Kafka client or ClickHouse engine.

The modules at the top level are the core: no Kafka, Spark or ClickHouse client, no CLI. In
reading order, each importing only modules listed above it (tests/unit/test_import_graph.py
holds this map to the code):

Foundations
    :mod:`yangkey.errors` (the one exception root, the error kinds),
    :mod:`yangkey.dirs` (the cache and state roots), :mod:`yangkey.fleet` (a subscription's
    identity: node and id), :mod:`yangkey.inputs` (bounded reads of untrusted files),
    :mod:`yangkey.xmlsafe` (the hardened XML parser), :mod:`yangkey.xpath` (the subscription
    XPath subset), :mod:`yangkey.values` (canonical key values), :mod:`yangkey.features`
    (``if-feature`` expressions).
YANG schema
    :mod:`yangkey.modules` (module headers, the search path, the module index),
    :mod:`yangkey.schema_cache` (the on-disk cache), :mod:`yangkey.schema_data` (module files
    parsed, yangson's schema data), :mod:`yangkey.schema_build` (a yangson data model from
    vendor modules), :mod:`yangkey.library` (the YANG library),
    :mod:`yangkey.missing` (why a node is not in the schema), :mod:`yangkey.schema` (the
    schema context), :mod:`yangkey.canon_types` (a key leaf's canonical form).
The wire contract
    :mod:`yangkey.messages` (the message key, the headers, the ClickHouse column sets).
Notifications
    :mod:`yangkey.notification_model` (a decoded notification),
    :mod:`yangkey.xmltree` (XML elements to the RFC 7951 tree), :mod:`yangkey.xmlnotifications`
    (XML), :mod:`yangkey.notifications` (JSON, and the
    decoding entry point).
Phases 1 and 2: a subscription compiled
    :mod:`yangkey.subtree` (subtree filter to XPath), :mod:`yangkey.compiled` (what a
    compiled subscription is), :mod:`yangkey.templates` (XPath and schema to branches and key
    templates), :mod:`yangkey.compiler` (the one entry point, through the caches),
    :mod:`yangkey.topics` (topic names), :mod:`yangkey.diagnosis` (why a notification has no
    instance).
Phase 3: a notification keyed
    :mod:`yangkey.walker` (a generated walker per branch), :mod:`yangkey.patch` (yang-patch
    edits), :mod:`yangkey.native` (the optional compiled decoder and key pass),
    :mod:`yangkey.keys` (the key derivation).
The catalog
    :mod:`yangkey.config` (the subscriptions file), :mod:`yangkey.shared_catalog` (the
    records of the shared catalog topic), :mod:`yangkey.entries` (a catalog entry),
    :mod:`yangkey.catalog_topics` (a catalog's topics, merged from the branches routed to
    them), :mod:`yangkey.catalog` (subscriptions file to compiled catalog, learning).
The producer
    :mod:`yangkey.instances` (the instance feed), :mod:`yangkey.native_feed` (its tables for
    the native pass), :mod:`yangkey.knobs` (the producer knobs), :mod:`yangkey.native_messages`
    (the producer's native side: the native pass's routes and messages),
    :mod:`yangkey.producer` (raw bytes to keyed messages or a rejection).
For the edges
    :mod:`yangkey.jvm` (the JDK, JVM processes), :mod:`yangkey.summary` (a stored message in
    one line).

The packages sit above the core: the edges :mod:`yangkey.kafka`, :mod:`yangkey.registry`,
:mod:`yangkey.spark`, :mod:`yangkey.clickhouse`, :mod:`yangkey.dashboards` and
:mod:`yangkey.report`, :mod:`yangkey.inspection` (doctor, topics, tail); above them the
drivers, :mod:`yangkey.cli` (its support modules ship with the core) and :mod:`yangkey.demo`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> the module defining it.
_API: dict[str, str] = {
    "Catalog": "yangkey.catalog",
    "CompiledSubscription": "yangkey.compiled",
    "DerivedKey": "yangkey.keys",
    "KeyDeriver": "yangkey.keys",
    "KeyedMessage": "yangkey.messages",
    "MessageKey": "yangkey.messages",
    "MessageBuilder": "yangkey.producer",
    "Rejection": "yangkey.messages",
    "SchemaContext": "yangkey.schema",
    "YangkeyError": "yangkey.errors",
    "compile_subscription": "yangkey.templates",
    "decode": "yangkey.notifications",
    "load_catalog": "yangkey.catalog",
}

__all__ = [
    "Catalog",
    "CompiledSubscription",
    "DerivedKey",
    "KeyDeriver",
    "KeyedMessage",
    "MessageBuilder",
    "MessageKey",
    "Rejection",
    "SchemaContext",
    "YangkeyError",
    "__version__",
    "compile_subscription",
    "decode",
    "load_catalog",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import version  # noqa: PLC0415

        return version("yangkey")
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'yangkey' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from yangkey.catalog import Catalog, load_catalog
    from yangkey.compiled import CompiledSubscription
    from yangkey.errors import YangkeyError
    from yangkey.keys import DerivedKey, KeyDeriver
    from yangkey.messages import KeyedMessage, MessageKey, Rejection
    from yangkey.notifications import decode
    from yangkey.producer import MessageBuilder
    from yangkey.schema import SchemaContext
    from yangkey.templates import compile_subscription

    __version__: str
