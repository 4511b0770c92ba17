"""SPEC 2.6 and 7 — producer.MessageBuilder: raw bytes -> keyed messages or a Rejection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yangkey.catalog import build_catalog
from yangkey.config import parse_subscriptions
from yangkey.messages import (
    CONTENT_TYPE_JSON,
    CONTENT_TYPE_XML,
    HEADER_CONTENT_TYPE,
    HEADER_ERROR,
    HEADER_ERROR_KIND,
    HEADER_EVENT_TIME,
    HEADER_GENERATION,
    HEADER_SCHEMA_ID,
    HEADER_SEQUENCE_NUMBER,
    HEADER_SOURCE,
    KeyedMessage,
    MessageKey,
    Rejection,
)
from yangkey.producer import MessageBuilder, ProducerKnobs

IF = "/ietf-interfaces:interfaces/interface"
NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"

SUBSCRIPTIONS = f"""
organisation_prefix: netops
topic_policy:
  type_level: true
  single_topic: all-yang
subscriptions:
  - id: 1042
    xpath: "{IF}[name='eth0']/oper-status | /ietf-hardware:hardware/component/serial-num"
    type: on-change-sync
    compaction: true
    generation: 3
  - id: 2001
    xpath: /ietf-system:system/clock
    type: periodic
  - id: 3000
    xpath: {IF}
    type: on-change
"""

FIG10_DATA = {
    "ietf-interfaces:interfaces": {"interface": [
        {"name": "eth0", "oper-status": "up"}, {"name": "eth1", "oper-status": "down"}]},
    "ietf-hardware:hardware": {"component": [
        {"name": "chassis", "serial-num": "SN-1"}, {"name": "fan-1", "serial-num": "SN-2"}]},
}


@pytest.fixture(scope="module")
def catalog():
    return build_catalog(parse_subscriptions(SUBSCRIPTIONS, "subs.yaml"))


@pytest.fixture
def learning_catalog():
    """The same subscriptions with learning on; a fresh catalog (and learned cache) per test."""
    return build_catalog(parse_subscriptions("learn: true\n" + SUBSCRIPTIONS, "subs.yaml"))


@pytest.fixture(scope="module")
def builder(catalog):
    return MessageBuilder(catalog)


def built(result: list[KeyedMessage] | Rejection) -> list[KeyedMessage]:
    assert not isinstance(result, Rejection), result
    return result


def test_core_records_message_per_branch(builder, notif) -> None:
    raw = notif.envelope(FIG10_DATA, hostname="pe-1", sequence=55).encode()
    messages = built(builder.build(raw, "raw@0:17"))
    assert [m.topic for m in messages] == [
        "netops-current-state-if-interfaces-interface-oper-status",
        "netops-current-state-hw-hardware-component-serial-num",
    ]
    assert messages[0].key == f"pe-1\n1042\n{IF}[name='eth0']/oper-status".encode()
    assert messages[1].key == (
        b"pe-1\n1042\n/ietf-hardware:hardware/component[name='chassis']/serial-num"
        b" | /ietf-hardware:hardware/component[name='fan-1']/serial-num"
    )
    for message in messages:
        assert message.value == raw  # the notification bytes exactly as received
        assert message.header(HEADER_CONTENT_TYPE) == CONTENT_TYPE_JSON
        assert message.header(HEADER_EVENT_TIME) == "2026-11-20T10:00:00.000Z"
        assert message.header(HEADER_SEQUENCE_NUMBER) == "55"
        assert message.header(HEADER_GENERATION) == "3"
        assert message.header(HEADER_SCHEMA_ID) is None


def test_core_records_only_matching_branches_produce(builder, notif) -> None:
    data = {"ietf-hardware:hardware": FIG10_DATA["ietf-hardware:hardware"]}
    messages = built(builder.build(notif.envelope(data).encode(), "s"))
    assert [m.topic for m in messages] == ["netops-current-state-hw-hardware-component-serial-num"]


def test_core_records_xml_content_type(builder, notif) -> None:
    raw = notif.envelope_xml(
        f'<interfaces xmlns="{NS_IF}"><interface><name>b</name></interface></interfaces>',
        sub_id=3000, hostname="pe-9").encode()
    (message,) = built(builder.build(raw, "x"))
    assert message.header(HEADER_CONTENT_TYPE) == CONTENT_TYPE_XML
    assert message.topic == "netops-state-change-if-interfaces-interface"
    assert message.key == f"pe-9\n3000\n{IF}[name='b']".encode()
    assert message.header(HEADER_GENERATION) == "1"


def test_core_records_json_and_xml_same_key(builder, notif) -> None:
    js = notif.envelope(notif.interfaces_json(["a b", "c|d"]), sub_id=3000, hostname="n")
    xml = notif.envelope_xml(notif.interfaces_xml(["c|d", "a b"]), sub_id=3000, hostname="n")
    (from_json,) = built(builder.build(js.encode(), "j"))
    (from_xml,) = built(builder.build(xml.encode(), "x"))
    assert from_json.key == from_xml.key
    assert from_json.topic == from_xml.topic


def test_core_records_missing_sequence_number_is_zero(builder, notif) -> None:
    raw = notif.envelope({"ietf-system:system": {"clock": {}}}, sub_id=2001, sequence=None)
    (message,) = built(builder.build(raw.encode(), "s"))
    assert message.header(HEADER_SEQUENCE_NUMBER) == "0"
    assert message.topic == "netops-stats-sys-system-clock"
    assert message.key == b"router-1\n2001\n/ietf-system:system/clock"


def test_core_records_default_node_for_netconf(catalog, notif) -> None:
    raw = notif.netconf_xml(notif.interfaces_xml(["e"]), sub_id=3000).encode()
    with_default = MessageBuilder(catalog, default_node="cfg-node")
    (message,) = built(with_default.build(raw, "s"))
    assert MessageKey.parse(message.key).node == "cfg-node"  # type: ignore[arg-type]
    without = MessageBuilder(catalog).build(raw, "s")
    assert isinstance(without, Rejection)
    assert "node" in without.reason


# --------------------------------------------------------------------------- rejections


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b"{not json", "input"),
        (b"<notification><oops></notification>", "input"),
        (b"", "input"),
        (b"\x00\x01\x02", "input"),
        (b'<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>', "input"),
    ],
)
def test_core_records_bad_bytes_rejected_not_raised(builder, raw: bytes, kind: str) -> None:
    result = builder.build(raw, "kafka://raw@2:99")
    assert isinstance(result, Rejection)
    assert result.kind == kind
    assert result.source == "kafka://raw@2:99"
    assert result.raw == raw
    assert result.reason


def test_core_records_no_match_rejection(builder, notif) -> None:
    raw = notif.envelope({"ietf-system:system": {"contact": "x"}}, sub_id=3000).encode()
    result = builder.build(raw, "s")
    assert isinstance(result, Rejection)
    assert result.kind == "no-match"
    assert "no data on the subscribed path" in result.reason


def test_core_records_missing_key_leaf_rejection(builder, notif) -> None:
    raw = notif.envelope({"ietf-interfaces:interfaces": {"interface": [{"enabled": True}]}},
                         sub_id=3000).encode()
    result = builder.build(raw, "s")
    assert isinstance(result, Rejection)
    assert result.kind == "notification"
    assert "name" in result.reason


def test_core_records_unknown_subscription_rejected(builder, notif) -> None:
    result = builder.build(notif.envelope(FIG10_DATA, sub_id=999).encode(), "s")
    assert isinstance(result, Rejection)
    assert "999" in result.reason


def test_core_records_dead_letter_record(builder) -> None:
    result = builder.build(b"{oops", "file.jsonl:7")
    assert isinstance(result, Rejection)
    dead = result.dead_letter("netops-dlq")
    assert dead.topic == "netops-dlq"
    assert dead.key is None
    assert dead.value == b"{oops"
    assert dead.header(HEADER_SOURCE) == "file.jsonl:7"
    assert dead.header(HEADER_ERROR_KIND) == "input"
    assert dead.header(HEADER_ERROR) == result.reason


@pytest.mark.parametrize("hostname", [5, True, ["r"]])
def test_core_records_odd_hostname_is_rejection(builder, notif, hostname) -> None:
    result = builder.build(notif.envelope(FIG10_DATA, hostname=hostname).encode(), "s")
    assert isinstance(result, Rejection)


scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=6)
shapes = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["name", "interface", "ietf-interfaces:interfaces", "oper-status",
                         "ietf-hardware:hardware", "component", "serial-num", "x"]),
        inner, max_size=4),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=shapes, hostname=scalars, sub_id=st.sampled_from([1042, 2001, 3000, 5]))
def test_core_records_never_raise_on_odd_shapes(builder, notif, data, hostname, sub_id) -> None:
    raw = json.dumps({"ietf-yp-notification:envelope": {"hostname": hostname, "contents": {
        "ietf-yang-push:push-update": {"id": sub_id, "datastore-contents": data}}}}).encode()
    result = builder.build(raw, "fuzz")
    assert isinstance(result, list | Rejection)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(raw=st.binary(max_size=200))
def test_core_records_never_raise_on_random_bytes(builder, raw: bytes) -> None:
    result = builder.build(raw, "fuzz")
    assert isinstance(result, Rejection)


# ------------------------------------------------------------------------------- knobs


def test_core_records_keys_off(catalog, notif) -> None:
    knobbed = MessageBuilder(catalog, ProducerKnobs(keys=False))
    messages = built(knobbed.build(notif.envelope(FIG10_DATA).encode(), "s"))
    assert len(messages) == 2
    assert all(m.key is None for m in messages)
    assert messages[0].topic.endswith("if-interfaces-interface-oper-status")


def test_core_records_per_branch_off_single_topic(catalog, notif) -> None:
    knobbed = MessageBuilder(catalog, ProducerKnobs(per_branch=False, single_topic="yang-all"))
    (message,) = built(knobbed.build(notif.envelope(FIG10_DATA, hostname="h").encode(), "s"))
    assert message.topic == "yang-all"
    assert message.key is not None
    assert MessageKey.parse(message.key).xpaths == (
        "/ietf-hardware:hardware/component[name='chassis']/serial-num",
        "/ietf-hardware:hardware/component[name='fan-1']/serial-num",
        f"{IF}[name='eth0']/oper-status",
    )


def test_core_records_both_knobs_off(catalog, notif) -> None:
    knobbed = MessageBuilder(catalog, ProducerKnobs(keys=False, per_branch=False))
    (message,) = built(knobbed.build(notif.envelope(FIG10_DATA).encode(), "s"))
    assert message.key is None
    assert message.topic == "yang-push"


def test_core_records_knobs_from_catalog_policy(catalog) -> None:
    knobs = ProducerKnobs.from_catalog(catalog)
    assert knobs.single_topic == "all-yang"
    assert knobs.keys is True and knobs.per_branch is True
    assert ProducerKnobs.from_catalog(catalog, keys=False).keys is False


# ----------------------------------------------------------------------------- learning


def test_core_records_learns_subscription_from_telemetry_metadata(learning_catalog,
                                                                  notif) -> None:
    learner = MessageBuilder(learning_catalog)
    raw = notif.telemetry_json(
        {"ietf-system:system": {"dns-resolver": {"search": ["a.example", "b.example"]}}},
        sub_id=777, node="tm-1", xpath_filter="/ietf-system:system/dns-resolver/search",
    ).encode()
    (message,) = built(learner.build(raw, "s"))
    assert message.topic == "netops-stats-sys-system-dns-resolver-search"
    assert message.key == (
        b"tm-1\n777\n/ietf-system:system/dns-resolver/search[.='a.example']"
        b" | /ietf-system:system/dns-resolver/search[.='b.example']"
    )
    # Learned once: a second notification of the same subscription gives the same topic.
    again = built(learner.build(raw, "s2"))
    assert again[0].topic == message.topic


def test_core_records_learning_off_rejects(learning_catalog, notif) -> None:
    learner = MessageBuilder(learning_catalog, ProducerKnobs(learn=False))
    raw = notif.telemetry_json({"ietf-system:system": {"clock": {}}}, sub_id=778,
                               xpath_filter="/ietf-system:system/clock").encode()
    result = learner.build(raw, "s")
    assert isinstance(result, Rejection)
    assert "778" in result.reason


def test_core_records_learning_bad_filter_is_rejection(learning_catalog, notif) -> None:
    learner = MessageBuilder(learning_catalog)
    raw = notif.telemetry_json({"ietf-system:system": {"clock": {}}}, sub_id=779,
                               xpath_filter="/ietf-system:system/nonexistent").encode()
    result = learner.build(raw, "s")
    assert isinstance(result, Rejection)
    assert "nonexistent" in result.reason


def test_core_records_catalog_wins_over_metadata(catalog, notif) -> None:
    raw = notif.telemetry_json(notif.interfaces_json(["x"]), sub_id=3000, node="tm-2",
                               xpath_filter="/ietf-system:system/clock").encode()
    (message,) = built(MessageBuilder(catalog).build(raw, "s"))
    assert message.topic == "netops-state-change-if-interfaces-interface"
    assert message.key == f"tm-2\n3000\n{IF}[name='x']".encode()


TELEMETRY_XML = (Path(__file__).resolve().parents[1] / "fixtures" / "notifications"
                 / "telemetry-interfaces.xml")


def test_core_records_learns_from_xml_telemetry_metadata() -> None:
    empty = build_catalog(parse_subscriptions("learn: true\nsubscriptions: []\n"))
    (message,) = built(MessageBuilder(empty).build(TELEMETRY_XML.read_bytes(), "t"))
    assert message.topic == "if-interfaces-interface"
    assert message.key == (
        f"router-nyc-01\n1042\n{IF}[name='eth0'] | {IF}[name='eth1'] | {IF}[name='lo']"
    ).encode()
    assert message.header(HEADER_CONTENT_TYPE) == CONTENT_TYPE_XML


def test_core_records_learns_xml_prefixed_xpath_filter() -> None:
    """In XML, an xpath-filter (yang:xpath1.0) uses the namespace prefixes declared in scope:
    the prefix->namespace map of the subscription is known, so it must compile (SPEC 2.3)."""
    xml = TELEMETRY_XML.read_text().replace(
        "<xpath-filter>/ietf-interfaces:interfaces/interface</xpath-filter>",
        f'<xpath-filter xmlns:a="{NS_IF}">/a:interfaces/a:interface</xpath-filter>',
    )
    assert "/a:interfaces" in xml
    empty = build_catalog(parse_subscriptions("learn: true\nsubscriptions: []\n"))
    (message,) = built(MessageBuilder(empty).build(xml.encode(), "t"))
    assert message.topic == "if-interfaces-interface"
    assert message.key == (
        f"router-nyc-01\n1042\n{IF}[name='eth0'] | {IF}[name='eth1'] | {IF}[name='lo']"
    ).encode()


def test_core_records_entry_index_agrees_with_catalog_scan() -> None:
    """MessageBuilder looks entries up by a dict (the cost stays flat with the catalog's size,
    benchmarks/bench_curves.py): it answers what Catalog.entry's scan answers, node patterns
    included."""
    text = (
        "subscriptions:\n"
        f"  - id: 1\n    xpath: {IF}\n    node: 'pe*'\n"
        "  - id: 2\n    xpath: /ietf-system:system/clock\n"
        f"  - id: 3\n    xpath: \"{IF}[name='x']\"\n    node: 'core-?'\n"
    )
    catalog = build_catalog(parse_subscriptions(text))
    builder = MessageBuilder(catalog)
    for subscription_id in (0, 1, 2, 3, 4):
        for node in (None, "pe-7", "core-1", "core-12", "x"):
            assert builder.entry(subscription_id, node) is catalog.entry(subscription_id, node)
    assert builder.entry(1, "core-1") is None  # the node pattern is applied, not just the id
