"""Issue 29, real fleets: notifications as real devices and collectors send them.

The notifications in ``tests/fixtures/notifications/devices`` are written after public captures
and examples (Huawei VRP and MA5800 legacy framing with ``ietf-notification-sequencing``,
IOS-XE ``datastore-contents-xml`` printed by ncclient, a 6WIND heartbeat through NetGauze, a
collector that turns every element into an array, an RFC 8639 ``subscription-started``) over
the IETF modules pyang ships. Each test here failed before its fix.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import get_args

import pytest
from cli_helpers import run, write
from conftest import FIXTURE_NOTIFICATIONS, NS_YKT

from yangkey import errors, messages
from yangkey.catalog import build_catalog
from yangkey.config import parse_subscriptions
from yangkey.errors import (
    ERROR_KINDS,
    EmptyUpdate,
    ErrorKind,
    FilteredOutError,
    FramingError,
    NoMatchError,
    NotificationError,
    SchemaError,
    ShapeError,
    YangkeyError,
)
from yangkey.inputs import join_declarations
from yangkey.keys import KeyDeriver
from yangkey.messages import (
    HEADER_ERROR_KIND,
    HEADER_SEQUENCE_NUMBER,
    INGEST_KINDS,
    REJECTION_KINDS,
    MessageKey,
    Rejection,
)
from yangkey.notifications import decode
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.schema import SchemaContext
from yangkey.spark.source.splitting import plan_ranges, read_range, split_records
from yangkey.spark.transform import Tally, outgoing
from yangkey.templates import compile_subscription

DEVICES = FIXTURE_NOTIFICATIONS / "devices"
IF = "/ietf-interfaces:interfaces/interface"
IF_STATE = "/ietf-interfaces:interfaces-state/interface"


def device(name: str) -> bytes:
    return (DEVICES / name).read_bytes()


def key(schema: SchemaContext, xpath: str, raw: bytes, **overrides: object) -> bytes:
    compiled = compile_subscription(xpath, schema)
    note = decode(raw, "capture", schema.index.by_namespace)
    return KeyDeriver(compiled).derive(note, **overrides).key  # type: ignore[arg-type]


# ------------------------------------------------------------ 1. non-key filters, identityrefs


def test_filter_keeps_instances_without_the_filtered_leaf(ietf_schema) -> None:
    """Huawei MA5800's own subscription: the OLT applied the type filter and sends
    ``statistics`` without ``type``. Absence contradicts no filter (SPEC 2.4)."""
    xpath = f"{IF}[type='iana-if-type:ethernetCsmacd']/statistics"
    assert key(ietf_schema, xpath, device("huawei-olt-statistics.json")) == (
        b"MA5800-X7-OLT1\n1\n"
        b"/ietf-interfaces:interfaces/interface[name='0/3/0']/statistics | "
        b"/ietf-interfaces:interfaces/interface[name='0/3/1']/statistics"
    )


def test_filter_still_drops_instances_that_contradict_it(ietf_schema) -> None:
    raw = device("huawei-ne8000-sysname.json")
    xpath = f"{IF}[type='iana-if-type:softwareLoopback']"
    assert MessageKey.parse(key(ietf_schema, xpath, raw)).xpaths == (f"{IF}[name='LoopBack0']",)


def test_identityref_written_with_a_yang_prefix_is_resolved(ietf_schema) -> None:
    """``ianaift:gpon`` (iana-if-type's prefix) where RFC 7951 wants ``iana-if-type:gpon``."""
    raw = device("huawei-olt-gpon.json")
    assert MessageKey.parse(key(ietf_schema, f"{IF}[type='iana-if-type:gpon']", raw)).xpaths == (
        f"{IF}[name='0/1/0']",
        f"{IF}[name='0/1/1']",
    )
    ethernet = key(ietf_schema, f"{IF}[type='ianaift:ethernetCsmacd']", raw)
    assert MessageKey.parse(ethernet).xpaths == (
        f"{IF}[name='0/9/0']",
    )


def test_identityref_key_with_a_yang_prefix_keys_as_json_and_xml(fx_schema) -> None:
    """A key value ``ykt:tcp`` (yk-test's YANG prefix) is written ``yk-test:tcp`` in the key,
    as the module-qualified JSON and the XML with a declared namespace prefix are."""
    xpath = "/yk-test:top/flow"

    def flows(proto: str) -> bytes:
        return (
            '{"ietf-yp-notification:envelope":{"hostname":"r1","contents":{"ietf-yang-push:'
            'push-update":{"id":5,"datastore-contents":{"yk-test:top":{"flow":[{"proto":"'
            + proto
            + '","port":80,"enabled":true}]}}}}}}'
        ).encode()

    xml = (
        "<push-update xmlns='urn:ietf:params:xml:ns:yang:ietf-yang-push'><id>5</id>"
        f"<datastore-contents><top xmlns='{NS_YKT}' xmlns:t='{NS_YKT}'><flow><proto>t:tcp"
        "</proto><port>80</port><enabled>true</enabled></flow></top></datastore-contents>"
        "</push-update>"
    ).encode()
    expected = key(fx_schema, xpath, flows("yk-test:tcp"))
    assert b"[proto='yk-test:tcp']" in expected
    assert key(fx_schema, xpath, flows("ykt:tcp")) == expected
    assert key(fx_schema, xpath, xml, node="r1") == expected


def test_malformed_identityref_is_rejected_as_malformed(ietf_schema) -> None:
    raw = device("huawei-olt-gpon.json").replace(b'"ianaift:gpon"', b'"ianaift:gpon:1"', 1)
    with pytest.raises(NotificationError) as info:
        key(ietf_schema, f"{IF}[type='iana-if-type:gpon']", raw)
    assert not isinstance(info.value, NoMatchError)
    assert "invalid identityref value 'ianaift:gpon:1'" in info.value.reason


# ------------------------------------------------------------ 5. legacy framings


def test_huawei_sysname_is_the_node_name_json_and_xml(ietf_schema) -> None:
    json_key = key(ietf_schema, IF, device("huawei-ne8000-sysname.json"))
    assert json_key.split(b"\n")[:2] == [b"NE8000-PE1", b"211"]
    assert key(ietf_schema, IF, device("huawei-ne8000-sysname.xml")) == json_key
    note = decode(device("huawei-ne8000-sysname.xml"), "x", ietf_schema.index.by_namespace)
    assert (note.node, note.sequence_number) == ("NE8000-PE1", 1412)


FLEET = f"""
subscriptions:
  - id: 1
    xpath: "{IF}[type='iana-if-type:ethernetCsmacd']/statistics"
  - id: 2
    xpath: "{IF}[type='iana-if-type:gpon']"
  - id: 211
    xpath: {IF}
  - id: 2147483650
    xpath: {IF_STATE}/statistics
  - id: 7
    xpath: {IF}
"""


@pytest.fixture(scope="module")
def fleet():
    return build_catalog(parse_subscriptions(FLEET, "fleet.yaml"))


def test_produce_takes_the_node_name_from_the_data_over_the_default(fleet) -> None:
    """``produce --default-node`` must not stamp a device that names itself."""
    builder = MessageBuilder(fleet, default_node="collector-1")
    for name in ("huawei-ne8000-sysname.json", "huawei-ne8000-sysname.xml"):
        (message,) = builder.build(device(name), name)  # type: ignore[misc]
        assert message.key.startswith(b"NE8000-PE1\n211\n"), name
        assert message.header(HEADER_SEQUENCE_NUMBER) == "1412"
    # IOS-XE names no node: the default is what it has.
    (message,) = builder.build(device("iosxe-datastore-contents-xml.json"), "xe")  # type: ignore[misc]
    assert message.key.startswith(b"collector-1\n2147483650\n")


def test_iosxe_datastore_contents_xml_in_xml_and_json(ietf_schema) -> None:
    """IOS-XE: ``subscription-id`` and ``datastore-contents-xml`` (the elements in NETCONF, XML
    text inside JSON), with and without the ``<?xml?>`` line ncclient prints."""
    xpath = f"{IF_STATE}/statistics"
    xml = device("iosxe-datastore-contents-xml.xml")
    expected = (
        b"xe-1\n2147483650\n"
        b"/ietf-interfaces:interfaces-state/interface[name='GigabitEthernet1']/statistics | "
        b"/ietf-interfaces:interfaces-state/interface[name='GigabitEthernet2']/statistics"
    )
    assert key(ietf_schema, xpath, xml, node="xe-1") == expected
    assert key(ietf_schema, xpath, device("iosxe-datastore-contents-xml.json"), node="xe-1") == (
        expected
    )
    # The contents as escaped text inside <datastore-contents-xml>, as some stacks write it.
    start, end = xml.index(b"<interfaces-state"), xml.index(b"</datastore-contents-xml>")
    inner = xml[start:end]
    escaped = xml[:start] + inner.replace(b"&", b"&amp;").replace(b"<", b"&lt;") + xml[end:]
    assert key(ietf_schema, xpath, escaped, node="xe-1") == expected


def test_iosxe_xml_contents_are_parsed_without_entities(ietf_schema) -> None:
    doctype = b'<!DOCTYPE x [<!ENTITY e SYSTEM \\"file:///etc/passwd\\">]>'
    raw = device("iosxe-datastore-contents-xml.json").replace(
        b'"<interfaces-state', b'"' + doctype + b"<interfaces-state", 1
    )
    with pytest.raises(YangkeyError) as info:
        key(ietf_schema, f"{IF_STATE}/statistics", raw, node="xe-1")
    assert "DTD" in info.value.reason or "entit" in info.value.reason


# ------------------------------------------------------------ 6. the <?xml?> line


def test_declaration_line_and_its_document_are_one_record(tmp_path: Path) -> None:
    capture = device("iosxe-datastore-contents-xml.xml")
    data = capture + b"\n" + capture + device("huawei-ne8000-sysname.json")
    records = list(split_records(data, "ncclient.log"))
    assert [source for _, source in records] == [
        "ncclient.log:1", "ncclient.log:4", "ncclient.log:6"]
    assert records[0][0] == capture.rstrip(b"\n")
    # Files cut into ranges never part a declaration from its document.
    path = tmp_path / "big.xml"
    path.write_bytes(capture * 40)
    with path.open("rb") as stream:
        ranges = plan_ranges(stream, str(path), path.stat().st_size, 700)
        assert len(ranges) > 5
        cut = [record for r in ranges for record in read_range(stream, r)]
    assert cut == list(split_records(capture * 40, str(path)))
    assert len(cut) == 40 and all(raw.startswith(b"<?xml") for raw, _ in cut)


def test_declaration_alone_stays_a_record() -> None:
    lines = [(1, b'<?xml version="1.0"?>'), (2, b'<?xml version="1.0"?>'), (3, b"<n/>")]
    assert list(join_declarations(lines)) == [
        (1, b'<?xml version="1.0"?>'),
        (2, b'<?xml version="1.0"?>\n<n/>'),
    ]


def test_keys_reads_ncclient_output(tmp_path: Path) -> None:
    capture = device("iosxe-datastore-contents-xml.xml")
    path = write(tmp_path, "xe.xml", capture + capture)
    result = run("keys", "--xpath", f"{IF_STATE}/statistics", "--override-node", "xe-1", path)
    assert result.exit_code == 0, result.stderr
    assert len(result.stdout.splitlines()) == 2 and '"error"' not in result.stdout


# ------------------------------------------------------------ 7. kinds an operator can act on


CASES = [
    ("huawei-olt-gpon.json", f"{IF}[type='iana-if-type:softwareLoopback']", FilteredOutError,
     "every instance was filtered out by the subscription: 3 entries of "
     f"{IF} contradict [type='iana-if-type:softwareLoopback'] (first: 'iana-if-type:gpon')"),
    ("6wind-heartbeat-netgauze.json", IF, EmptyUpdate,
     "empty update: the push-update carries no data (a heartbeat?)"),
    ("collector-container-as-array.json", IF, ShapeError,
     "data in a shape RFC 7951 does not allow: /ietf-interfaces:interfaces is an array; "
     "RFC 7951 encodes a container as an object"),
    ("subscription-started.json", IF, FramingError,
     "no push-update or push-change-update found (top-level members: "
     "ietf-subscribed-notifications:subscription-started)"),
    ("huawei-ne8000-sysname.json", "/ietf-system:system/dns-resolver/server", NoMatchError,
     "no data on the subscribed path /ietf-system:system/dns-resolver/server (the "
     "notification carries ietf-interfaces:interfaces)"),
]


@pytest.mark.parametrize(("name", "xpath", "error", "reason"), CASES)
def test_no_key_has_a_kind_and_a_reason(ietf_schema, name, xpath, error, reason) -> None:
    with pytest.raises(NotificationError) as info:
        key(ietf_schema, xpath, device(name), node="n", subscription_id=1)
    assert type(info.value) is error
    assert info.value.reason == reason


def test_unread_contents_member_is_framing(ietf_schema) -> None:
    raw = (
        b'{"ietf-notification:notification":{"eventTime":"2025-06-12T08:15:04Z",'
        b'"ietf-yang-push:push-update":{"id":9,"datastore-contents-gpb":"CgR0ZXN0"}}}'
    )
    with pytest.raises(FramingError, match="no datastore-contents but datastore-contents-gpb"):
        key(ietf_schema, IF, raw, node="n")
    # RFC 8641 metadata of augmenting modules is no data: an update of it alone is empty.
    heartbeat = raw.replace(
        b'"datastore-contents-gpb":"CgR0ZXN0"', b'"ietf-distributed-notif:message-publisher-id":1'
    )
    with pytest.raises(EmptyUpdate):
        key(ietf_schema, IF, heartbeat, node="n")


def test_member_not_qualified_where_the_module_changes_is_a_shape_error(ietf_schema) -> None:
    raw = (
        b'{"ietf-yp-notification:envelope":{"hostname":"r1","contents":{"ietf-yang-push:'
        b'push-update":{"id":1,"datastore-contents":{"interfaces":{"interface":[{"name":"e"}]}}}}}}'
    )
    with pytest.raises(ShapeError, match="member 'interfaces' under / should be 'ietf-interfaces:"):
        key(ietf_schema, IF, raw)


def test_produce_counts_each_kind_and_does_not_dead_letter_empty_updates(fleet) -> None:
    """A mixed-fleet batch through the Spark task's per-record function: every notification
    with data keyed, each rejection with its own kind, the heartbeat counted only."""
    names = sorted(path.name for path in DEVICES.iterdir())
    records = [(device(name), name) for name in names]
    tally = Tally()
    builder = MessageBuilder(fleet, default_node="collector-1")
    sent = list(outgoing(records, builder, "dead", tally))
    dead = Counter(m.header(HEADER_ERROR_KIND) for m in sent if m.topic == "dead")
    assert dead == Counter({"shape": 1, "framing": 1})
    assert tally.rejected == Counter({"shape": 1, "framing": 1})
    assert tally.empty == 1
    keyed = sorted(MessageKey.parse(m.key).node for m in sent if m.topic != "dead")  # type: ignore[arg-type]
    assert keyed == ["MA5800-X7-OLT1", "MA5800-X7-OLT1", "NE8000-PE1", "NE8000-PE1",
                     "collector-1", "collector-1"]
    assert tally.records == len(names) == tally.messages + tally.rejections + tally.empty
    assert Tally.from_json(tally.to_json()) == tally

    dead_letter = MessageBuilder(fleet, ProducerKnobs(empty_updates="dead-letter"))
    sent = list(outgoing([(device("6wind-heartbeat-netgauze.json"), "h")], dead_letter, "dead",
                         again := Tally()))
    assert [m.header(HEADER_ERROR_KIND) for m in sent] == ["empty-update"]
    assert again.rejected == Counter({"empty-update": 1}) and again.empty == 0


def test_keys_counts_rejections_by_kind_and_skips_empty_updates(tmp_path: Path) -> None:
    lines = b"".join(device(name).rstrip(b"\n") + b"\n" for name in (
        "6wind-heartbeat-netgauze.json", "collector-container-as-array.json",
        "huawei-olt-gpon.json", "huawei-olt-statistics.json", "subscription-started.json"))
    path = write(tmp_path, "fleet.jsonl", lines)
    result = run("keys", "--xpath", f"{IF}[type='iana-if-type:softwareLoopback']", path)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"note: 1 empty update(s) in {path}: nothing to key",
        f"error: 3 line(s) of {path} rejected (filtered-out 1, framing 1, shape 1)",
    ]
    assert '"skipped":"empty-update"' in result.stdout.splitlines()[0]


def test_error_kinds_are_one_vocabulary() -> None:
    """Every kind yangkey writes is in errors.ERROR_KINDS, each with its meaning: the
    exceptions' kinds, the dead-letter kinds, and the kinds the ClickHouse views write."""
    import yangkey.clickhouse  # noqa: PLC0415 - every YangkeyError subclass
    import yangkey.registry.errors  # noqa: F401, PLC0415
    from yangkey.clickhouse.ddl import DdlOptions, render_ddl  # noqa: PLC0415

    assert set(get_args(ErrorKind)) == set(ERROR_KINDS)
    assert all(ERROR_KINDS.values())
    pending: list[type[YangkeyError]] = [errors.YangkeyError]
    seen: set[str] = set()
    while pending:
        cls = pending.pop()
        assert cls.kind in ERROR_KINDS, cls
        seen.add(cls.kind)
        pending.extend(cls.__subclasses__())
    assert {"framing", "shape", "no-match", "filtered-out", "empty-update"} <= seen
    assert set(REJECTION_KINDS) <= set(ERROR_KINDS) and set(INGEST_KINDS) <= set(ERROR_KINDS)
    assert not set(REJECTION_KINDS) & set(INGEST_KINDS)
    catalog = build_catalog(parse_subscriptions(FLEET, "f"))
    options = DdlOptions(dead_letter_topic="dead")
    ddl = "\n".join(s.sql for s in render_ddl(list(catalog.topics), options))
    for kind in (*INGEST_KINDS, messages.REJECTED_PREFIX, messages.UNKNOWN_REJECTION):
        assert f"'{kind}'" in ddl, kind


def test_rejection_kind_is_typed() -> None:
    rejection = Rejection("s", "shape", "r", b"")
    assert rejection.dead_letter("dead").header(HEADER_ERROR_KIND) == "shape"


# ------------------------------------------------------------ 9. a notification is no data node


def test_subscribing_to_a_notification_names_the_data_node(ietf_schema) -> None:
    with pytest.raises(SchemaError) as info:
        compile_subscription("/ietf-alarms:alarm-notification", ietf_schema)
    assert info.value.reason.endswith(
        "ietf-alarms:alarm-notification under the schema root: it is a notification, not a data "
        "node; subscribe to /ietf-alarms:alarms/alarm-list/alarm instead"
    )


def test_subscribing_to_a_notification_without_a_twin_names_the_top_nodes(tmp_path) -> None:
    (tmp_path / "yk-vendor-events.yang").write_text(
        """module yk-vendor-events {
  yang-version 1.1;
  namespace "urn:example:yangkey:yk-vendor-events";
  prefix yve;
  container events { list event { key seq; leaf seq { type uint32; } leaf text { type string; } } }
  container counters { leaf drops { type uint64; } }
  notification link-flap { leaf ifname { type string; } leaf count { type uint32; } }
  rpc clear-events { }
}
""",
        encoding="utf-8",
    )
    schema = SchemaContext((str(tmp_path), *SchemaContext.cached().search_path))
    with pytest.raises(SchemaError, match="subscribe to /yk-vendor-events:events or "
                       "/yk-vendor-events:counters instead"):
        compile_subscription("/yk-vendor-events:link-flap", schema)
    with pytest.raises(SchemaError, match="it is an RPC or action, not a data node"):
        compile_subscription("/yk-vendor-events:clear-events", schema)


def test_yang_patch_without_instances_has_a_kind_too(ietf_schema) -> None:
    def change(*edits: str) -> bytes:
        return (
            '{"ietf-yp-notification:envelope":{"hostname":"r1","contents":{"ietf-yang-push:'
            'push-change-update":{"id":4,"datastore-changes":{"ietf-yang-patch:yang-patch":'
            '{"patch-id":"p","edit":[' + ",".join(edits) + "]}}}}}}"
        ).encode()

    eth1 = (
        '{"edit-id":"1","operation":"merge","target":"/ietf-interfaces:interfaces/interface=eth1",'
        '"value":{"ietf-interfaces:interface":[{"name":"eth1","enabled":false}]}}'
    )
    clock = '{"edit-id":"2","operation":"delete","target":"/ietf-system:system/clock"}'
    with pytest.raises(FilteredOutError, match=r"contradict \[name='eth0'\] \(first: 'eth1'\)"):
        key(ietf_schema, f"{IF}[name='eth0']", change(eth1))
    with pytest.raises(NoMatchError) as info:
        key(ietf_schema, IF, change(clock))
    assert type(info.value) is NoMatchError
    assert info.value.reason.endswith("(the notification carries target /ietf-system:system/"
                                      "ietf-system:clock)")
    with pytest.raises(EmptyUpdate, match="the yang-patch has no edit"):
        key(ietf_schema, IF, change())


def test_xml_data_off_the_path_is_no_empty_update(fleet) -> None:
    """The XML decoder converts only what the key derivation reads: data off the subscribed
    path leaves nothing, and that is no heartbeat."""
    raw = (
        b"<notification xmlns='urn:ietf:params:xml:ns:netconf:notification:1.0'><eventTime>"
        b"2025-06-12T08:15:00Z</eventTime><hostname>pe2</hostname><push-update xmlns="
        b"'urn:ietf:params:xml:ns:yang:ietf-yang-push'><id>211</id><datastore-contents>"
        b"<system xmlns='urn:ietf:params:xml:ns:yang:ietf-system'><contact>noc</contact>"
        b"</system></datastore-contents></push-update></notification>"
    )
    rejection = MessageBuilder(fleet).build(raw, "pe2.xml")
    assert isinstance(rejection, Rejection)
    assert rejection.kind == "no-match"
    assert rejection.reason == f"no data on the subscribed path {IF}"
    heartbeat = raw.replace(b"<system xmlns='urn:ietf:params:xml:ns:yang:ietf-system'>"
                            b"<contact>noc</contact></system>", b"")
    rejection = MessageBuilder(fleet).build(heartbeat, "pe2.xml")
    assert isinstance(rejection, Rejection) and rejection.kind == "empty-update"
