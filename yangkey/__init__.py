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
    yangkey.parse_key(derived.key)  # ParsedKey(node, subscription_id, xpaths)

    # Every subscription of a file: the records produce sends, the ClickHouse DDL
    catalog = yangkey.load_catalog("subscriptions.yaml")
    messages = yangkey.MessageBuilder(catalog).build(raw, "notification.json")
    ddl = yangkey.to_script(yangkey.render_catalog(catalog, yangkey.DdlOptions()))

Bad input raises :class:`YangkeyError` (``MessageBuilder.build`` returns a ``Rejection``
instead). Each name is imported on first use (PEP 562), so ``import yangkey`` loads no YANG
library, Kafka client or ClickHouse engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> the module defining it.
_API: dict[str, str] = {
    "Catalog": "yangkey.catalog",
    "CompiledSubscription": "yangkey.templates",
    "DdlOptions": "yangkey.clickhouse.ddl",
    "DerivedKey": "yangkey.keys",
    "KeyDeriver": "yangkey.keys",
    "KeyedMessage": "yangkey.messages",
    "MessageBuilder": "yangkey.records",
    "ParsedKey": "yangkey.keys",
    "Rejection": "yangkey.messages",
    "SchemaContext": "yangkey.schema",
    "YangkeyError": "yangkey.errors",
    "compile_subscription": "yangkey.templates",
    "decode": "yangkey.notifications",
    "load_catalog": "yangkey.catalog",
    "parse_key": "yangkey.keys",
    "render_catalog": "yangkey.clickhouse.ddl",
    "to_script": "yangkey.clickhouse.ddl",
}

__all__ = [
    "Catalog",
    "CompiledSubscription",
    "DdlOptions",
    "DerivedKey",
    "KeyDeriver",
    "KeyedMessage",
    "MessageBuilder",
    "ParsedKey",
    "Rejection",
    "SchemaContext",
    "YangkeyError",
    "__version__",
    "compile_subscription",
    "decode",
    "load_catalog",
    "parse_key",
    "render_catalog",
    "to_script",
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
    from yangkey.clickhouse.ddl import DdlOptions, render_catalog, to_script
    from yangkey.errors import YangkeyError
    from yangkey.keys import DerivedKey, KeyDeriver, ParsedKey, parse_key
    from yangkey.messages import KeyedMessage, Rejection
    from yangkey.notifications import decode
    from yangkey.records import MessageBuilder
    from yangkey.schema import SchemaContext
    from yangkey.templates import CompiledSubscription, compile_subscription

    __version__: str
