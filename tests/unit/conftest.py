"""Shared fixtures of the core test suite (tests/unit/test_core_*.py).

Schema contexts are expensive (yangson builds a data model per module set), so they are
session scoped: one over the IETF modules that pyang ships, one that adds the fixture modules
in tests/fixtures/yang. ``notif`` builds notifications in every accepted wrapper so that the
tests read as data, not as string plumbing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from lxml import etree

from yangkey.compiled import CompiledSubscription
from yangkey.keys import DerivedKey, KeyDeriver
from yangkey.notifications import decode
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

if TYPE_CHECKING:
    from yangkey.clickhouse.connection import ChdbConnection

TESTS_DIR = Path(__file__).resolve().parents[1]
REPO_DIR = TESTS_DIR.parent
FIXTURE_YANG = TESTS_DIR / "fixtures" / "yang"
FIXTURE_NOTIFICATIONS = TESTS_DIR / "fixtures" / "notifications"

NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_IP = "urn:ietf:params:xml:ns:yang:ietf-ip"
NS_IANAIFT = "urn:ietf:params:xml:ns:yang:iana-if-type"
NS_SYS = "urn:ietf:params:xml:ns:yang:ietf-system"
NS_HW = "urn:ietf:params:xml:ns:yang:ietf-hardware"
NS_YKT = "urn:example:yangkey:yk-test"
NS_YKA = "urn:example:yangkey:yk-aug"
NS_YP = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
NS_NC = "urn:ietf:params:xml:ns:netconf:notification:1.0"
NS_ENV = "urn:ietf:params:xml:ns:yang:ietf-yp-notification"
NS_TM = "urn:ietf:params:xml:ns:yang:ietf-telemetry-message"


@pytest.fixture(scope="session")
def ietf_schema() -> SchemaContext:
    """The IETF/IANA modules shipped with pyang, found without any --yang-dir."""
    return SchemaContext.cached()


@pytest.fixture(scope="session")
def fx_dir() -> str:
    return str(FIXTURE_YANG)


@pytest.fixture(scope="session")
def fx_schema(fx_dir: str) -> SchemaContext:
    """The fixture modules (yk-test, yk-aug, yk-long) plus the IETF modules."""
    return SchemaContext.cached((fx_dir,))


class Notif:
    """Builders for YANG-Push notifications in every wrapper the SPEC accepts (2.4)."""

    # ------------------------------------------------------------------ JSON (RFC 7951)
    @staticmethod
    def envelope(
        data: Mapping[str, Any],
        *,
        sub_id: Any = 1042,
        hostname: Any = "router-1",
        event_time: str = "2026-11-20T10:00:00.000Z",
        sequence: int | None = 7,
    ) -> str:
        body: dict[str, Any] = {"event-time": event_time}
        if hostname is not None:
            body["hostname"] = hostname
        if sequence is not None:
            body["sequence-number"] = sequence
        body["contents"] = {
            "ietf-yang-push:push-update": {"id": sub_id, "datastore-contents": dict(data)}
        }
        return json.dumps({"ietf-yp-notification:envelope": body})

    @staticmethod
    def change_envelope(
        edits: list[dict[str, Any]],
        *,
        sub_id: int = 1042,
        hostname: str = "router-1",
        qualified_patch: bool = False,
    ) -> str:
        patch_member = "ietf-yang-patch:yang-patch" if qualified_patch else "yang-patch"
        return json.dumps(
            {
                "ietf-yp-notification:envelope": {
                    "event-time": "2026-11-20T10:00:00.000Z",
                    "hostname": hostname,
                    "contents": {
                        "ietf-yang-push:push-change-update": {
                            "id": sub_id,
                            "datastore-changes": {
                                patch_member: {"patch-id": "p-1", "edit": edits}
                            },
                        }
                    },
                }
            }
        )

    @staticmethod
    def restconf(data: Mapping[str, Any], *, sub_id: int = 1042) -> str:
        return json.dumps(
            {
                "ietf-restconf:notification": {
                    "eventTime": "2026-11-20T10:00:00Z",
                    "ietf-yang-push:push-update": {"id": sub_id, "datastore-contents": dict(data)},
                }
            }
        )

    @staticmethod
    def telemetry_json(
        data: Mapping[str, Any],
        *,
        sub_id: int = 1042,
        node: str | None = "tm-node-1",
        xpath_filter: str | None = None,
        inner_hostname: str | None = None,
    ) -> str:
        metadata: dict[str, Any] = {"node-export-timestamp": "2026-11-20T10:00:01Z"}
        subscription: dict[str, Any] = {"id": sub_id}
        if xpath_filter is not None:
            subscription["xpath-filter"] = xpath_filter
        metadata["yang-push-subscription"] = subscription
        message: dict[str, Any] = {"telemetry-message-metadata": metadata}
        if node is not None:
            message["network-node-manifest"] = {"name": node}
        inner: dict[str, Any] = {
            "event-time": "2026-11-20T10:00:00Z",
            "contents": {
                "ietf-yang-push:push-update": {"id": sub_id, "datastore-contents": dict(data)}
            },
        }
        if inner_hostname is not None:
            inner["hostname"] = inner_hostname
        message["payload"] = {"ietf-yp-notification:envelope": inner}
        return json.dumps({"ietf-telemetry-message:message": message})

    # ------------------------------------------------------------------ XML
    @staticmethod
    def netconf_xml(data_xml: str, *, sub_id: int = 1042) -> str:
        return (
            f'<notification xmlns="{NS_NC}"><eventTime>2026-11-20T10:00:00Z</eventTime>'
            f'<push-update xmlns="{NS_YP}"><id>{sub_id}</id>'
            f"<datastore-contents>{data_xml}</datastore-contents></push-update></notification>"
        )

    @staticmethod
    def envelope_xml(data_xml: str, *, sub_id: int = 1042, hostname: str = "router-1") -> str:
        return (
            f'<envelope xmlns="{NS_ENV}"><event-time>2026-11-20T10:00:00Z</event-time>'
            f"<hostname>{hostname}</hostname><sequence-number>7</sequence-number><contents>"
            f'<push-update xmlns="{NS_YP}"><id>{sub_id}</id>'
            f"<datastore-contents>{data_xml}</datastore-contents></push-update>"
            "</contents></envelope>"
        )

    @staticmethod
    def telemetry_xml(data_xml: str, *, sub_id: int = 1042, node: str = "tm-node-1") -> str:
        return (
            f'<message xmlns="{NS_TM}"><network-node-manifest><name>{node}</name>'
            "</network-node-manifest><telemetry-message-metadata>"
            "<node-export-timestamp>2026-11-20T10:00:01Z</node-export-timestamp>"
            f"<yang-push-subscription><id>{sub_id}</id></yang-push-subscription>"
            "</telemetry-message-metadata><payload>"
            f"{Notif.netconf_xml(data_xml, sub_id=sub_id)}</payload></message>"
        )

    @staticmethod
    def change_xml(edits_xml: str, *, sub_id: int = 1042) -> str:
        return (
            f'<notification xmlns="{NS_NC}"><eventTime>2026-11-20T10:00:00Z</eventTime>'
            f'<push-change-update xmlns="{NS_YP}"><id>{sub_id}</id><datastore-changes>'
            f"<yang-patch><patch-id>p-1</patch-id>{edits_xml}</yang-patch>"
            "</datastore-changes></push-change-update></notification>"
        )

    @staticmethod
    def interfaces_json(names: list[str]) -> dict[str, Any]:
        return {"ietf-interfaces:interfaces": {"interface": [{"name": n} for n in names]}}

    @staticmethod
    def interfaces_xml(names: list[str]) -> str:
        """Properly escaped XML (names may hold <, &, quotes)."""
        root = etree.Element(f"{{{NS_IF}}}interfaces", nsmap={None: NS_IF})
        for name in names:
            entry = etree.SubElement(root, f"{{{NS_IF}}}interface")
            etree.SubElement(entry, f"{{{NS_IF}}}name").text = name
        return etree.tostring(root, encoding="unicode")


@pytest.fixture(scope="session")
def notif() -> type[Notif]:
    return Notif


class KeyHelper:
    """compile + decode + derive in one call, with compiled subscriptions cached."""

    def __init__(self, schema: SchemaContext) -> None:
        self.schema = schema
        self._compiled: dict[tuple[str, bool, str], CompiledSubscription] = {}

    def compile(self, text: str, *, subtree: bool = False, keyless: str = "reject",
                namespaces: Mapping[str, str] | None = None) -> CompiledSubscription:
        if namespaces is not None:
            return compile_subscription(
                text, self.schema, subtree=subtree, keyless=keyless,  # type: ignore[arg-type]
                namespaces=namespaces,
            )
        cache_key = (text, subtree, keyless)
        if cache_key not in self._compiled:
            self._compiled[cache_key] = compile_subscription(
                text, self.schema, subtree=subtree, keyless=keyless  # type: ignore[arg-type]
            )
        return self._compiled[cache_key]

    def derive(self, text: str, raw: str | bytes, *, source: str = "n.json",
               subtree: bool = False, keyless: str = "reject",
               namespaces: Mapping[str, str] | None = None, **kwargs: Any) -> DerivedKey:
        compiled = self.compile(text, subtree=subtree, keyless=keyless, namespaces=namespaces)
        note = decode(raw, source, self.schema.index.by_namespace)
        return KeyDeriver(compiled).derive(note, **kwargs)

    def key(self, text: str, raw: str | bytes, **kwargs: Any) -> bytes:
        return self.derive(text, raw, **kwargs).key

    def xpaths(self, text: str, raw: str | bytes, **kwargs: Any) -> list[str]:
        return list(self.derive(text, raw, **kwargs).xpaths)


@pytest.fixture(scope="session")
def ietf(ietf_schema: SchemaContext) -> KeyHelper:
    return KeyHelper(ietf_schema)


@pytest.fixture(scope="session")
def fx(fx_schema: SchemaContext) -> KeyHelper:
    return KeyHelper(fx_schema)


@pytest.fixture(scope="module")
def conn(chdb_conn: ChdbConnection) -> ChdbConnection:
    """The module's chdb connection (``chdb_conn``, tests/conftest.py) under the short name the
    chdb unit tests use."""
    return chdb_conn


# ------------------------------------------------------------------ the native fast path


@pytest.fixture(scope="module")
def decoder() -> Any:
    """A ``yangkey_native.Decoder`` (the native test files skip themselves without the
    module)."""
    import yangkey_native  # noqa: PLC0415 (optional: only the native tests ask for it)

    from yangkey import native  # noqa: PLC0415

    return yangkey_native.Decoder(native.model())


@pytest.fixture(scope="module")
def derivers(fx_schema: SchemaContext) -> dict[str, tuple[KeyDeriver, Any]]:
    """Every subscription of the differential tests: its deriver and its schema root."""
    from native_helpers import derivers_of  # noqa: PLC0415 (imports the core tests' modules)

    return derivers_of(fx_schema)
