"""Issue 33: the native key pass and yang-patch (push-change-update, RFC 8641 section 3.10
carrying RFC 8072 edits), JSON and XML.

``Decoder.keys`` keys a JSON yang-patch itself (native/src/patchwalk.rs; its differential tests
are test_native_patch_native.py), and with the instance feed on writes its feed too, as
``Decoder.instances`` does (native/src/feed.rs; test_native_patch_feed.py). The XML pass
(``Decoder.keys_xml``) keys an XML yang-patch in the framings its fast reader takes, the
telemetry message and Huawei's and IOS-XE's leaves among them (native/src/xmlpatch.rs;
test_native_patch_xml.py); it picks the yang-patch path before the parse
(native/src/patchscan.rs: the first start tag so named, then the fast reader's framing).
Inputs: the differential tests' JSON and XML generators, hypothesis-generated
push-change-updates over the example subscriptions (operations x targets x values x the JSON
framings), the ``yangkey sample``'s JSON yang-patches through MessageBuilder, XML yang-patches
in each XML framing, and push-updates whose data or envelope spell the other body name. Where
a pass answers its answer is the reference's byte for byte (test_native_keys.py's ``same``,
test_native_xml_keys.py's for XML, native_helpers' ``feed_same`` for the feed);
MessageBuilder's records and rejections are equal with the pass and without.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from native_helpers import builder_outputs, builders, feed_same
from test_core_differential import envelope_documents, xml_wrapped
from test_native_feed import Feeds
from test_native_keys import same, wrapped
from test_native_xml_keys import NS_YP
from test_native_xml_keys import framed as xml_framed
from test_native_xml_keys import same as xml_same

from yangkey import native
from yangkey.demo.sample import generate
from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
IF = "/ietf-interfaces:interfaces/interface"
NAMES = ["eth0", "ge-0/0/1", "e'1", "Gi0/0/0.100", "x,y", "ü1", ""]


def never(*_: Any) -> Any:
    raise AssertionError("a yang-patch must not be routed by the native pass")


def framed(wrapper: str, body: dict[str, Any], node: str | None = "pe1") -> bytes:
    """A notification body (``{"ietf-yang-push:push-change-update": ...}``) in one of the JSON
    framings yangkey reads (SPEC 2.4)."""
    if wrapper == "envelope":
        envelope: dict[str, Any] = {"event-time": "2026-11-20T10:00:00Z", "sequence-number": 3}
        if node is not None:
            envelope["hostname"] = node
        envelope["contents"] = body
        return orjson.dumps({"ietf-yp-notification:envelope": envelope})
    if wrapper == "bare":
        return orjson.dumps(body)
    if wrapper == "restconf":
        notification: dict[str, Any] = {"eventTime": "2026-11-20T10:00:00Z", **body}
        if node is not None:
            notification["sysName"] = node
        return orjson.dumps({"ietf-restconf:notification": notification})
    assert wrapper == "telemetry"
    message: dict[str, Any] = {
        "telemetry-message-metadata": {
            "node-export-timestamp": "2026-11-20T10:00:01Z",
            "yang-push-subscription": {"id": 1042, "xpath-filter": IF},
        },
        "payload": {"ietf-yp-notification:envelope": {"contents": body}},
    }
    if node is not None:
        message["network-node-manifest"] = {"name": node}
    return orjson.dumps({"ietf-telemetry-message:message": message})


def patch(subscription_id: Any, edits: Any, qualified: bool = False) -> dict[str, Any]:
    name = "ietf-yang-patch:yang-patch" if qualified else "yang-patch"
    changes = {name: {"patch-id": "p", "edit": edits}}
    return {
        "ietf-yang-push:push-change-update": {
            "id": subscription_id,
            "datastore-changes": changes,
        }
    }


@functools.cache
def _if_feeds() -> Feeds:
    schema = SchemaContext.cached()
    return Feeds(compile_subscription(IF, schema), schema)


def fed(decoder: Any, raw: bytes, ns: dict[str, str]) -> str:
    """The instance feed's passes (``Decoder.keys`` with instances, ``Decoder.instances``)
    answer ``raw`` with the reference's headers, or None (test_native_patch_feed.py)."""
    return feed_same(decoder, _if_feeds(), raw, ns)


def json_patches(records: list[bytes]) -> list[bytes]:
    return [raw for raw in records if raw[:1] == b"{" and b'push-change-update"' in raw]


# -------------------------------------------------------------------------- the sample


def test_native_patch_coverage_and_builder_records() -> None:
    """The coverage check: MessageBuilder (the module's shared decoder) keys every JSON
    yang-patch of the sample natively (one parse each), and its records and rejections are
    the same with the native pass as without, for every record of the sample, most of its
    JSON records keyed natively (the feature removed, none would be)."""
    records = generate(nodes=3, interfaces=4, rounds=2, seed=3).records
    patches = json_patches(records)
    decoder = native._load()[0]
    assert decoder is not None and patches
    builder, reference = builders()
    parsed = 0
    for number, raw in enumerate(patches):
        before = decoder.documents
        assert builder.build(raw, f"p:{number}") == reference.build(raw, f"p:{number}")
        parsed += decoder.documents != before
    assert parsed == len(patches), f"{parsed} of {len(patches)} yang-patches parsed natively"
    assert builder.native_keyed == len(patches)
    with_native, answered, _ = builder_outputs(records, None, True)
    without, none, _ = builder_outputs(records, None, False)
    assert none == 0
    assert with_native == without
    json_records = [raw for raw in records if raw[:1] == b"{"]
    assert answered >= 0.8 * len(json_records), (answered, len(json_records))


# ------------------------------------------------------------- the differential envelopes


def test_native_patch_differential_envelopes(decoder: Any, fx_schema: SchemaContext) -> None:
    """The differential tests' envelope generator (missing and odd fields, qualified and bare
    body names, yang-patch and push-update): the feed's passes answer a push-change-update
    with the reference's headers or None; the key pass's answer, for both, is the
    reference's where it answers."""
    ns = fx_schema.index.by_namespace
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    seen = {"patch": 0, "update": 0}

    @settings(max_examples=150, deadline=None)
    @given(document=envelope_documents())
    def check(document: Any) -> None:
        raw = orjson.dumps(document)
        if b'push-change-update"' in raw:
            seen["patch"] += 1
            fed(decoder, raw, ns)
            same(decoder, deriver, raw, ns, None)
            return
        seen["update"] += 1
        same(decoder, deriver, raw, ns, None)

    check()
    assert seen["patch"] and seen["update"]


# ------------------------------------------------------------------------ hypothesis


@st.composite
def edits(draw: st.DrawFn) -> dict[str, Any]:
    """One yang-patch edit against the example subscriptions' data: any operation, a target
    at the subscription's list, deeper, shallower or beside it, a value or none."""
    name = draw(st.sampled_from(NAMES))
    target = draw(
        st.sampled_from(
            [
                f"{IF}={quote(name, safe='')}",
                f"{IF}={quote(name, safe='')}/oper-status",
                f"{IF}={quote(name, safe='')}/statistics",
                f"{IF}={quote(name, safe='')}/ietf-ip:ipv4/address=10.0.0.1",
                IF,
                "/ietf-interfaces:interfaces",
                "/ietf-system:system/dns-resolver/search=example.com",
                "not a path",
            ]
        )
    )
    operation = draw(
        st.sampled_from(["create", "delete", "insert", "merge", "move", "replace", "remove", "x"])
    )
    edit: dict[str, Any] = {"edit-id": draw(st.sampled_from(["1", "e"])), "operation": operation}
    if draw(st.integers(0, 9)):
        edit["target"] = target
    if operation not in ("delete", "remove") or not draw(st.integers(0, 5)):
        entry = {"name": name, "oper-status": draw(st.sampled_from(["up", "down", 3]))}
        edit["value"] = draw(
            st.sampled_from(
                [
                    {"ietf-interfaces:interface": [entry]},
                    {"ietf-interfaces:oper-status": entry["oper-status"]},
                    {"ietf-interfaces:interface": entry},
                    {},
                ]
            )
        )
    return edit


@SETTINGS
@given(
    subscription_id=st.sampled_from([1042, 1043, 1100, 2002, 9999]),
    edit_list=st.lists(edits(), min_size=1, max_size=4),
    wrapper=st.sampled_from(["envelope", "bare", "restconf", "telemetry"]),
    qualified=st.booleans(),
)
def test_native_patch_generated(
    decoder: Any,
    fx_schema: SchemaContext,
    subscription_id: int,
    edit_list: list[dict[str, Any]],
    wrapper: str,
    qualified: bool,
) -> None:
    """Subscriptions x edit operations x targets x framings: the feed's passes answer the
    reference's headers or None, and MessageBuilder's record (or rejection) is the same with
    the key pass as without."""
    raw = framed(wrapper, patch(subscription_id, edit_list, qualified))
    fed(decoder, raw, fx_schema.index.by_namespace)
    builder, reference = builders()
    assert builder.build(raw, "g") == reference.build(raw, "g")


# ---------------------------------------------------------- the other body name spelled


@pytest.mark.parametrize("wrapper", ["envelope", "bare", "restconf", "telemetry"])
def test_native_patch_name_inside_a_push_update(
    decoder: Any, fx_schema: SchemaContext, wrapper: str
) -> None:
    """A push-update whose data spells ``push-change-update"`` (a name, a value) is still
    keyed natively, the reference's answer: the body's own name, first in the bytes,
    decides."""
    ns = fx_schema.index.by_namespace
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    for name in ('push-change-update"', "push-change-update", "ietf-yang-push:push-update"):
        data = {"ietf-interfaces:interfaces": {"interface": [{"name": name, "description": name}]}}
        raw = wrapped(wrapper, data, "pe1", 1042)
        before = decoder.documents
        assert same(decoder, deriver, raw, ns, "d") == "native", raw
        assert decoder.documents != before


def test_native_patch_name_before_the_body(decoder: Any, fx_schema: SchemaContext) -> None:
    """A push-change-update whose envelope spells ``push-update"`` before the body (a
    hostname ending so): the feed's pass writes the reference's header; the key pass keys
    it, the reference's answer; the records are the same both ways."""
    ns = fx_schema.index.by_namespace
    edit = {"edit-id": "1", "operation": "delete", "target": f"{IF}=eth0"}
    raw = framed("envelope", patch(1042, [edit]), node="ietf-yang-push:push-update")
    assert raw.index(b'push-update"') < raw.index(b'push-change-update"')
    assert fed(decoder, raw, ns) == "native"
    deriver = KeyDeriver(compile_subscription(IF, SchemaContext.cached()))
    assert same(decoder, deriver, raw, ns, None) == "native"
    builder, reference = builders()
    assert builder.build(raw, "n") == reference.build(raw, "n")


# ----------------------------------------------------------------------------------- XML

XML_EDIT = (
    "<edit><edit-id>1</edit-id><operation>{operation}</operation>"
    "<target>/ietf-interfaces:interfaces/interface={name}</target>{value}</edit>"
)


def xml_patch(operations: list[str], framing: str = "netconf", prefix: str = "") -> bytes:
    """A push-change-update in XML (one edit per operation), in the framing of
    test_native_xml_keys.py's ``framed``; ``prefix``: the push elements prefixed."""
    edits = "".join(
        XML_EDIT.format(
            operation=operation,
            name=f"eth{index}",
            value=""
            if operation in ("delete", "remove")
            else f'<value><interface xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">'
            f"<name>eth{index}</name><oper-status>up</oper-status></interface></value>",
        )
        for index, operation in enumerate(operations)
    )
    q = f"{prefix}:" if prefix else ""
    space = f"xmlns:{prefix}" if prefix else "xmlns"
    body = (
        f'<{q}push-change-update {space}="{NS_YP}"><{q}id>1042</{q}id><{q}datastore-changes>'
        '<yang-patch xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-patch">'
        f"<patch-id>p</patch-id>{edits}</yang-patch></{q}datastore-changes>"
        f"</{q}push-change-update>"
    )
    update = xml_framed(framing, "", "pe1", 1042).decode()
    push = (
        f'<push-update xmlns="{NS_YP}"><id>1042</id>'
        "<datastore-contents></datastore-contents></push-update>"
    )
    assert push in update, update
    return update.replace(push, body).encode()


@pytest.mark.parametrize("framing", ["netconf", "envelope", "telemetry", "huawei", "pretty"])
@pytest.mark.parametrize("prefix", ["", "yp"])
def test_native_patch_xml_framings(
    decoder: Any, fx_schema: SchemaContext, framing: str, prefix: str
) -> None:
    """An XML push-change-update (merge, replace, create, delete, remove edits) in the
    framings the reference reads: ``keys_xml`` keys it natively with the reference's answer
    in each (xmlpatch.rs; the telemetry message and Huawei's leaves read by xmlfast.rs's
    header); MessageBuilder's record (or rejection) is the same with the pass as without."""
    ns = fx_schema.index.by_namespace
    raw = xml_patch(["merge", "replace", "create", "delete", "remove"], framing, prefix)
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    assert xml_same(decoder, deriver, raw, ns, "d") == "native", raw
    builder, reference = builders()
    built = builder.build(raw, "x")
    assert built == reference.build(raw, "x")
    assert builder.native_keyed
    if framing == "netconf" and not prefix:
        assert isinstance(built, list) and built, built  # a real yang-patch


def test_native_patch_xml_differential(decoder: Any, fx_schema: SchemaContext) -> None:
    """The differential tests' XML generator (push-updates and a few push-change-updates,
    fields missing, twice, out of order): where the pass answers (a push-change-update or a
    push-update), the reference's answer."""
    ns = fx_schema.index.by_namespace
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    seen = {"patch": 0, "update": 0}

    @settings(max_examples=200, deadline=None)
    @given(document=xml_wrapped())
    def check(document: str) -> None:
        raw = document.encode()
        seen["patch" if b"<push-change-update " in raw else "update"] += 1
        xml_same(decoder, deriver, raw, ns, "d")

    check()
    assert seen["patch"] and seen["update"]


@pytest.mark.parametrize("framing", ["netconf", "envelope", "telemetry", "bare"])
def test_native_patch_xml_name_inside_a_push_update(
    decoder: Any, fx_schema: SchemaContext, framing: str
) -> None:
    """An XML push-update whose data spells the other body name as a tag name would (in a
    text) is still keyed natively, the reference's answer: the body's own tag comes first."""
    ns = fx_schema.index.by_namespace
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    for text in ("x:push-change-update&gt;", "a:push-change-update b", "y:push-change-update/"):
        inside = f"<description>{text}</description>"
        contents = (
            '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">'
            f"<interface><name>eth0</name>{inside}</interface></interfaces>"
        )
        raw = xml_framed(framing, contents, "pe1", 1042)
        before = decoder.documents
        assert xml_same(decoder, deriver, raw, ns, "d") == "native", raw
        assert decoder.documents != before


# ------------------------------------------------------- target delimiters at every offset


def test_native_patch_target_delimiters_at_every_offset(
    decoder: Any, fx_schema: SchemaContext
) -> None:
    """Targets whose delimiters (``/ = : , %``) fall at every offset of an 8-byte word and
    past it (patchtarget.rs scans a word at a time, the tail a byte at a time), after
    targets that share a prefix with them: the native pass answers, with the reference's
    keys."""
    ns = fx_schema.index.by_namespace
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    names = [f"{'a' * k}/{'b' * (19 - k)}" for k in range(20)]
    names += [f"{'c' * k}:d,{'e' * k}%" for k in range(12)] + ["x" * 40, "é" * 9 + "/"]
    edit_list = [
        {
            "edit-id": str(i),
            "operation": "merge",
            "target": f"{IF}={quote(name, safe='')}",
            "value": {"ietf-interfaces:interface": [{"name": name, "enabled": True}]},
        }
        for i, name in enumerate(names)
    ]
    for edits in (edit_list, edit_list[::-1], edit_list[5:6]):
        raw = framed("envelope", patch(1042, edits))
        assert same(decoder, deriver, raw, ns, None) == "native"
