"""SPEC 2.4 — Phase 3: notification -> key, in every wrapper, in JSON and XML."""

from __future__ import annotations

import json
import time

import pytest

from yangkey.errors import (
    FilteredOutError,
    InputError,
    NoMatchError,
    NotificationError,
    YangkeyError,
)
from yangkey.keys import KeyDeriver
from yangkey.messages import CONTENT_TYPE_JSON, CONTENT_TYPE_XML
from yangkey.notifications import decode
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

IF = "/ietf-interfaces:interfaces/interface"
NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_IP = "urn:ietf:params:xml:ns:yang:ietf-ip"
NS_IANAIFT = "urn:ietf:params:xml:ns:yang:iana-if-type"
NS_SYS = "urn:ietf:params:xml:ns:yang:ietf-system"
NS_YKT = "urn:example:yangkey:yk-test"
NS_YKA = "urn:example:yangkey:yk-aug"

IFACES = {"ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}, {"name": "eth1"}]}}
IFACES_XML = (
    f'<interfaces xmlns="{NS_IF}"><interface><name>eth1</name></interface>'
    "<interface><name>eth0</name></interface></interfaces>"
)
EXPECTED = f"{IF}[name='eth0'] | {IF}[name='eth1']"


def key_text(node: str, sub_id: int, xpaths: str) -> bytes:
    return f"{node}\n{sub_id}\n{xpaths}".encode()


# ------------------------------------------------------------------------ wrappers / node


def test_core_p3_envelope_json_node_from_hostname(ietf, notif) -> None:
    raw = notif.envelope(IFACES, hostname="pe-1", sub_id=77)
    assert ietf.key(IF, raw) == key_text("pe-1", 77, EXPECTED)


def test_core_p3_envelope_xml_node_from_hostname(ietf, notif) -> None:
    raw = notif.envelope_xml(IFACES_XML, hostname="pe-2", sub_id=78)
    assert ietf.key(IF, raw) == key_text("pe-2", 78, EXPECTED)


def test_core_p3_netconf_xml_needs_override(ietf, notif) -> None:
    raw = notif.netconf_xml(IFACES_XML, sub_id=5)
    with pytest.raises(NotificationError, match="node"):
        ietf.key(IF, raw)
    assert ietf.key(IF, raw, default_node="cfg-node") == key_text("cfg-node", 5, EXPECTED)


def test_core_p3_restconf_json(ietf, notif) -> None:
    raw = notif.restconf(IFACES, sub_id=6)
    assert ietf.key(IF, raw, default_node="cfg-node") == key_text("cfg-node", 6, EXPECTED)
    note = decode(raw, "r.json", {})
    assert note.event_time == "2026-11-20T10:00:00Z"


def test_core_p3_telemetry_json_node_from_manifest(ietf, notif) -> None:
    raw = notif.telemetry_json(IFACES, node="tm-7", sub_id=8)
    assert ietf.key(IF, raw, default_node="cfg-node") == key_text("tm-7", 8, EXPECTED)


def test_core_p3_telemetry_json_hostname_beats_manifest(ietf, notif) -> None:
    raw = notif.telemetry_json(IFACES, node="tm-7", sub_id=8, inner_hostname="host-9")
    assert ietf.key(IF, raw) == key_text("host-9", 8, EXPECTED)


def test_core_p3_telemetry_json_without_manifest_uses_override(ietf, notif) -> None:
    raw = notif.telemetry_json(IFACES, node=None, sub_id=8)
    assert ietf.key(IF, raw, default_node="cfg-node") == key_text("cfg-node", 8, EXPECTED)


def test_core_p3_telemetry_xml_node_from_manifest(ietf, notif) -> None:
    raw = notif.telemetry_xml(IFACES_XML, node="tm-x", sub_id=9)
    assert ietf.key(IF, raw, default_node="cfg-node") == key_text("tm-x", 9, EXPECTED)


def test_core_p3_all_wrappers_same_key(ietf, notif) -> None:
    keys = {
        ietf.key(IF, notif.envelope(IFACES, hostname="n", sub_id=1)),
        ietf.key(IF, notif.envelope_xml(IFACES_XML, hostname="n", sub_id=1)),
        ietf.key(IF, notif.netconf_xml(IFACES_XML, sub_id=1), default_node="n"),
        ietf.key(IF, notif.restconf(IFACES, sub_id=1), default_node="n"),
        ietf.key(IF, notif.telemetry_json(IFACES, node="n", sub_id=1)),
        ietf.key(IF, notif.telemetry_xml(IFACES_XML, node="n", sub_id=1)),
    }
    assert keys == {key_text("n", 1, EXPECTED)}


def test_core_p3_node_override_and_default(ietf, notif) -> None:
    raw = notif.envelope(IFACES, hostname="carried")
    assert ietf.derive(IF, raw, node="forced").node == "forced"
    assert ietf.derive(IF, raw, default_node="fallback").node == "carried"


def test_core_p3_subscription_id_from_notification_and_override(ietf, notif) -> None:
    raw = notif.envelope(IFACES, sub_id=4242)
    assert ietf.derive(IF, raw).subscription_id == 4242
    assert ietf.derive(IF, raw, subscription_id=9).subscription_id == 9


def test_core_p3_missing_subscription_id_rejected(ietf) -> None:
    raw = json.dumps({"ietf-yp-notification:envelope": {"hostname": "n", "contents": {
        "ietf-yang-push:push-update": {"datastore-contents": IFACES}}}})
    with pytest.raises(NotificationError, match="subscription id"):
        ietf.key(IF, raw)


@pytest.mark.parametrize("hostname", [5, 1.5, True, ["r1"], {"name": "r1"}])
def test_core_p3_non_string_hostname_is_clean_error(ietf, notif, hostname) -> None:
    """A hostname that is not a string is bad input: a YangkeyError, never a TypeError (the CLI
    would print a traceback) and never a key whose node field is ``['r1']``."""
    raw = notif.envelope(IFACES, hostname=hostname)
    with pytest.raises(YangkeyError):
        ietf.key(IF, raw)


@pytest.mark.parametrize("sub_id", [-1, True, "12abc", 1.5, 2**32])
def test_core_p3_invalid_subscription_id_rejected(ietf, notif, sub_id) -> None:
    """Subscription ids are uint32 (RFC 8639); a boolean, negative, fractional or oversized
    id is not a decimal subscription id."""
    raw = notif.envelope(IFACES, sub_id=sub_id)
    with pytest.raises(YangkeyError):
        ietf.key(IF, raw)


def test_core_p3_lf_in_hostname_rejected(ietf, notif) -> None:
    with pytest.raises(NotificationError):
        ietf.key(IF, notif.envelope(IFACES, hostname="a\nb"))


def test_core_p3_content_type_and_metadata(ietf_schema, notif) -> None:
    ns = ietf_schema.index.by_namespace
    js = decode(notif.envelope(IFACES, sequence=33), "a", ns)
    assert js.content_type == CONTENT_TYPE_JSON
    assert js.sequence_number == 33
    assert js.event_time == "2026-11-20T10:00:00.000Z"
    xml = decode(notif.envelope_xml(IFACES_XML), "b", ns)
    assert xml.content_type == CONTENT_TYPE_XML
    assert xml.sequence_number == 7


# ------------------------------------------------------------------------------ data walk


def test_core_p3_pinned_key_filters_instances(ietf, notif) -> None:
    raw = notif.envelope(IFACES)
    assert ietf.xpaths(f"{IF}[name='eth1']", raw) == [f"{IF}[name='eth1']"]


def test_core_p3_pinned_key_no_match_rejected(ietf, notif) -> None:
    with pytest.raises(FilteredOutError) as info:
        ietf.key(f"{IF}[name='eth9']", notif.envelope(IFACES), source="in.json")
    assert info.value.kind == "filtered-out"
    assert info.value.reason == (
        "every instance was filtered out by the subscription: 2 entries of "
        f"{IF} contradict [name='eth9'] (first: 'eth0')"
    )


def test_core_p3_no_matching_instances_names_source(ietf, notif) -> None:
    raw = notif.envelope({"ietf-system:system": {"contact": "x"}})
    with pytest.raises(NoMatchError) as info:
        ietf.key(IF, raw, source="batch-07.json")
    assert type(info.value) is NoMatchError and info.value.kind == "no-match"
    assert info.value.reason == (
        f"no data on the subscribed path {IF} (the notification carries ietf-system:system)"
    )
    assert "batch-07.json" in str(info.value)


def test_core_p3_container_target_without_data_uses_template(ietf, notif) -> None:
    raw = notif.envelope({"ietf-interfaces:interfaces": {}})
    assert ietf.xpaths("/ietf-system:system/clock", raw) == ["/ietf-system:system/clock"]


def test_core_p3_leaf_target_without_data_rejected(ietf, notif) -> None:
    raw = notif.envelope({"ietf-system:system": {"clock": {"timezone-utc-offset": 60}}})
    with pytest.raises(NoMatchError):
        ietf.key("/ietf-system:system/clock/timezone-name", raw)


def test_core_p3_leaf_in_choice_case(ietf, notif) -> None:
    raw = notif.envelope({"ietf-system:system": {"clock": {"timezone-name": "Europe/Paris"}}})
    assert ietf.xpaths("/ietf-system:system/clock/timezone-name", raw) == [
        "/ietf-system:system/clock/timezone-name"
    ]


def test_core_p3_missing_key_leaf_rejected(ietf, notif) -> None:
    raw = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "eth0"}, {"oper-status": "up"}]}})
    with pytest.raises(NotificationError) as info:
        ietf.key(IF, raw, source="missing.json")
    assert "name" in info.value.reason
    assert "missing.json" in str(info.value)


def test_core_p3_missing_composite_key_leaf_rejected(fx, notif) -> None:
    raw = notif.envelope({"yk-test:top": {"flow": [{"proto": "yk-test:tcp", "port": 80}]}})
    with pytest.raises(NotificationError, match="enabled"):
        fx.key("/yk-test:top/flow", raw)


def test_core_p3_leaf_target_only_where_present(ietf, notif) -> None:
    raw = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "eth0", "oper-status": "up"}, {"name": "eth1"}]}})
    assert ietf.xpaths(f"{IF}/oper-status", raw) == [f"{IF}[name='eth0']/oper-status"]


def test_core_p3_duplicate_instances_deduplicated(ietf, notif) -> None:
    raw = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "eth0"}, {"name": "eth0"}]}})
    assert ietf.key(IF, raw) == key_text("router-1", 1042, f"{IF}[name='eth0']")


def test_core_p3_overlapping_branches_deduplicated(ietf, notif) -> None:
    derived = ietf.derive(f"{IF} | {IF}[name='eth0']", notif.envelope(IFACES))
    assert list(derived.xpaths) == [f"{IF}[name='eth0']", f"{IF}[name='eth1']"]
    assert derived.branch_xpaths == (
        (f"{IF}[name='eth0']", f"{IF}[name='eth1']"),
        (f"{IF}[name='eth0']",),
    )


def test_core_p3_sorted_by_code_point(ietf, notif) -> None:
    names = ["eth1", "Eth0", "éth", "eth0", "ETH9"]
    raw = notif.envelope(notif.interfaces_json(names))
    xpaths = ietf.xpaths(IF, raw)
    assert [x.split("'")[1] for x in xpaths] == ["ETH9", "Eth0", "eth0", "eth1", "éth"]


def test_core_p3_values_quoted(ietf, notif) -> None:
    raw = notif.envelope(notif.interfaces_json(["it's", 'a"b', "x'y\"z"]))
    assert sorted(ietf.xpaths(IF, raw)) == sorted([
        f"{IF}[name=\"it's\"]",
        f"{IF}[name='a\"b']",
        f"{IF}[name=concat('x',\"'\",'y\"z')]",
    ])


def test_core_p3_non_key_filter_json_and_xml(ietf, notif) -> None:
    """A value that contradicts the filter rules the entry out; an entry without the filtered
    leaf does not contradict it (SPEC 2.4) and is kept."""
    sub = f"{IF}[enabled='true']"
    js = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "up1", "enabled": True}, {"name": "down1", "enabled": False},
        {"name": "unknown1"}]}})
    xml = notif.envelope_xml(
        f'<interfaces xmlns="{NS_IF}"><interface><name>up1</name><enabled>true</enabled>'
        "</interface><interface><name>down1</name><enabled>false</enabled></interface>"
        "<interface><name>unknown1</name></interface></interfaces>"
    )
    assert ietf.xpaths(sub, js) == [f"{IF}[name='unknown1']", f"{IF}[name='up1']"]
    assert ietf.key(sub, js) == ietf.key(sub, xml)


def test_core_p3_identityref_filter_xml_prefix_vs_json_module(ietf, notif) -> None:
    sub = f"{IF}[type='iana-if-type:ethernetCsmacd']"
    js = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "eth0", "type": "iana-if-type:ethernetCsmacd"},
        {"name": "lo", "type": "iana-if-type:softwareLoopback"}]}})
    xml = notif.envelope_xml(
        f'<interfaces xmlns="{NS_IF}" xmlns:if="{NS_IANAIFT}">'
        "<interface><name>eth0</name><type>if:ethernetCsmacd</type></interface>"
        "<interface><name>lo</name><type>if:softwareLoopback</type></interface></interfaces>"
    )
    assert ietf.xpaths(sub, js) == [f"{IF}[name='eth0']"]
    assert ietf.key(sub, xml) == ietf.key(sub, js)


def test_core_p3_augment_ipv4_address(ietf, notif) -> None:
    sub = f"{IF}/ietf-ip:ipv4/address"
    raw = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "eth0", "ietf-ip:ipv4": {"address": [
            {"ip": "10.0.0.1", "prefix-length": 24}, {"ip": "10.0.0.2", "prefix-length": 24}]}},
        {"name": "eth1"}]}})
    assert ietf.xpaths(sub, raw) == [
        f"{IF}[name='eth0']/ietf-ip:ipv4/address[ip='10.0.0.1']",
        f"{IF}[name='eth0']/ietf-ip:ipv4/address[ip='10.0.0.2']",
    ]


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
        ("2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1"),  # first longest run
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),  # one 0 field is not "::"
        ("2001:db8:0:0:1:0:0:0", "2001:db8:0:0:1::"),  # longest run wins
        ("0:0:0:0:0:0:0:1", "::1"),
    ],
)
def test_core_p3_ipv6_key_rfc5952_json_and_xml(ietf, notif, written: str, canonical: str) -> None:
    sub = f"{IF}/ietf-ip:ipv6/address"
    js = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "eth0", "ietf-ip:ipv6": {"address": [{"ip": written, "prefix-length": 64}]}}]}})
    xml = notif.envelope_xml(
        f'<interfaces xmlns="{NS_IF}"><interface><name>eth0</name><ipv6 xmlns="{NS_IP}">'
        f"<address><ip>{written.upper()}</ip><prefix-length>64</prefix-length></address>"
        "</ipv6></interface></interfaces>"
    )
    expected = [f"{IF}[name='eth0']/ietf-ip:ipv6/address[ip='{canonical}']"]
    assert ietf.xpaths(sub, js) == expected
    assert ietf.xpaths(sub, xml) == expected


def test_core_p3_pinned_ipv6_matches_any_spelling(ietf, notif) -> None:
    sub = f"{IF}[name='eth0']/ietf-ip:ipv6/address[ip='2001:db8::1']"
    raw = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "eth0", "ietf-ip:ipv6": {"address": [
            {"ip": "2001:DB8::0:1"}, {"ip": "2001:db8::2"}]}}]}})
    assert ietf.xpaths(sub, raw) == [sub]


def test_core_p3_leaf_list_values(ietf, notif) -> None:
    sub = "/ietf-system:system/dns-resolver/search"
    raw = notif.envelope({"ietf-system:system": {"dns-resolver": {
        "search": ["b.example", "a.example", "it's.example"]}}})
    assert ietf.xpaths(sub, raw) == [
        "/ietf-system:system/dns-resolver/search[.=\"it's.example\"]",
        "/ietf-system:system/dns-resolver/search[.='a.example']",
        "/ietf-system:system/dns-resolver/search[.='b.example']",
    ]


def test_core_p3_leaf_list_pinned(ietf, notif) -> None:
    sub = "/ietf-system:system/dns-resolver/search[.='a.example']"
    raw = notif.envelope({"ietf-system:system": {"dns-resolver": {
        "search": ["b.example", "a.example"]}}})
    assert ietf.xpaths(sub, raw) == [sub]
    other = notif.envelope({"ietf-system:system": {"dns-resolver": {"search": ["c.example"]}}})
    with pytest.raises(NoMatchError):
        ietf.key(sub, other)


def test_core_p3_multi_branch_fig10_shape(ietf, notif) -> None:
    sub = f"{IF}[name='eth0']/oper-status | /ietf-hardware:hardware/component/serial-num"
    raw = notif.envelope({
        "ietf-interfaces:interfaces": {"interface": [
            {"name": "eth0", "oper-status": "up"}, {"name": "eth1", "oper-status": "up"}]},
        "ietf-hardware:hardware": {"component": [{"name": "fan", "serial-num": "S1"},
                                                 {"name": "psu"}]},
    })
    derived = ietf.derive(sub, raw)
    assert derived.branch_xpaths == (
        (f"{IF}[name='eth0']/oper-status",),
        ("/ietf-hardware:hardware/component[name='fan']/serial-num",),
    )


# ------------------------------------------------------------------- fixture modules, parity


def flows_xml(entries: list[tuple[str, str, str]], extra_ns: str = "") -> str:
    body = "".join(
        f"<flow><proto>{p}</proto><port>{n}</port><enabled>{e}</enabled></flow>"
        for p, n, e in entries
    )
    return f'<top xmlns="{NS_YKT}" xmlns:t="{NS_YKT}" xmlns:a="{NS_YKA}"{extra_ns}>{body}</top>'


def test_core_p3_composite_key_identityref_uint32_boolean_parity(fx, notif) -> None:
    sub = "/yk-test:top/flow"
    js = notif.envelope({"yk-test:top": {"flow": [
        {"proto": "yk-test:tcp", "port": 80, "enabled": True},
        {"proto": "yk-aug:sctp", "port": 4294967295, "enabled": False},
        {"proto": "udp", "port": 53, "enabled": True},
    ]}})
    xml = notif.envelope_xml(flows_xml([
        ("t:tcp", "0080", "true"),
        ("a:sctp", "4294967295", "false"),
        ("udp", "53", "true"),  # unprefixed identity: the default namespace (yk-test)
    ]))
    expected = [
        "/yk-test:top/flow[proto='yk-aug:sctp'][port='4294967295'][enabled='false']",
        "/yk-test:top/flow[proto='yk-test:tcp'][port='80'][enabled='true']",
        "/yk-test:top/flow[proto='yk-test:udp'][port='53'][enabled='true']",
    ]
    assert fx.xpaths(sub, js) == expected
    assert fx.key(sub, xml) == fx.key(sub, js)


def test_core_p3_composite_key_partly_pinned_filters(fx, notif) -> None:
    sub = "/yk-test:top/flow[port='80']"
    js = notif.envelope({"yk-test:top": {"flow": [
        {"proto": "yk-test:tcp", "port": 80, "enabled": True},
        {"proto": "yk-test:udp", "port": 80, "enabled": False},
        {"proto": "yk-test:tcp", "port": 8080, "enabled": True},
    ]}})
    assert fx.xpaths(sub, js) == [
        "/yk-test:top/flow[proto='yk-test:tcp'][port='80'][enabled='true']",
        "/yk-test:top/flow[proto='yk-test:udp'][port='80'][enabled='false']",
    ]


def test_core_p3_pinned_identityref_matches_xml_prefixed_data(fx, notif) -> None:
    sub = "/yk-test:top/flow[proto='yk-test:tcp']"
    xml = notif.envelope_xml(flows_xml([("t:tcp", "1", "true"), ("t:udp", "2", "true")]))
    assert fx.xpaths(sub, xml) == [
        "/yk-test:top/flow[proto='yk-test:tcp'][port='1'][enabled='true']"
    ]


def test_core_p3_nested_lists_int64_string_leading_zeros(fx, notif) -> None:
    sub = "/yk-test:top/site/rack"
    js = notif.envelope({"yk-test:top": {"site": [
        {"name": "paris", "rack": [{"id": "0042"}, {"id": "-7"}]},
        {"name": "oslo", "rack": [{"id": "9223372036854775807"}]},
        {"name": "empty"},
    ]}})
    xml = notif.envelope_xml(
        f'<top xmlns="{NS_YKT}"><site><name>paris</name><rack><id>42</id></rack>'
        "<rack><id>-0007</id></rack></site><site><name>oslo</name><rack>"
        "<id>9223372036854775807</id></rack></site><site><name>empty</name></site></top>"
    )
    expected = [
        "/yk-test:top/site[name='oslo']/rack[id='9223372036854775807']",
        "/yk-test:top/site[name='paris']/rack[id='-7']",
        "/yk-test:top/site[name='paris']/rack[id='42']",
    ]
    assert fx.xpaths(sub, js) == expected
    assert fx.xpaths(sub, xml) == expected


def test_core_p3_nested_list_outer_pinned(fx, notif) -> None:
    sub = "/yk-test:top/site[name='oslo']/rack"
    js = notif.envelope({"yk-test:top": {"site": [
        {"name": "paris", "rack": [{"id": 1}]}, {"name": "oslo", "rack": [{"id": 2}]}]}})
    assert fx.xpaths(sub, js) == ["/yk-test:top/site[name='oslo']/rack[id='2']"]


def test_core_p3_list_inside_choice_case(fx, notif) -> None:
    sub = "/yk-test:top/item"
    js = notif.envelope({"yk-test:top": {"item": [{"n": 3, "v": "x"}, {"n": "007"}]}})
    xml = notif.envelope_xml(
        f'<top xmlns="{NS_YKT}"><item><n>3</n></item><item><n>7</n></item></top>')
    expected = ["/yk-test:top/item[n='3']", "/yk-test:top/item[n='7']"]
    assert fx.xpaths(sub, js) == expected
    assert fx.xpaths(sub, xml) == expected


def test_core_p3_augment_list_from_second_module_parity(fx, notif) -> None:
    sub = "/yk-test:top/site/yk-aug:ports/port"
    js = notif.envelope({"yk-test:top": {"site": [
        {"name": "paris", "yk-aug:ports": {"port": [{"num": 80}, {"num": 443}]}}]}})
    xml = notif.envelope_xml(
        f'<top xmlns="{NS_YKT}"><site><name>paris</name><ports xmlns="{NS_YKA}">'
        "<port><num>443</num></port><port><num>0080</num></port></ports></site></top>"
    )
    expected = [
        "/yk-test:top/site[name='paris']/yk-aug:ports/port[num='443']",
        "/yk-test:top/site[name='paris']/yk-aug:ports/port[num='80']",
    ]
    assert fx.xpaths(sub, js) == expected
    assert fx.xpaths(sub, xml) == expected


def test_core_p3_list_entry_matched_by_module_and_name(fx, notif) -> None:
    """``ports`` from another module (same local name) must not be taken for yk-aug:ports."""
    sub = "/yk-test:top/site/yk-aug:ports/port"
    js = notif.envelope({"yk-test:top": {"site": [
        {"name": "paris", "other-mod:ports": {"port": [{"num": 1}]}}]}})
    with pytest.raises(NoMatchError):
        fx.key(sub, js)


def test_core_p3_leaf_list_of_integers_parity(fx, notif) -> None:
    sub = "/yk-test:top/codes"
    js = notif.envelope({"yk-test:top": {"codes": [7, -3, 10]}})
    xml = notif.envelope_xml(
        f'<top xmlns="{NS_YKT}"><codes>007</codes><codes>-3</codes><codes>+10</codes></top>')
    expected = [
        "/yk-test:top/codes[.='-3']", "/yk-test:top/codes[.='10']", "/yk-test:top/codes[.='7']",
    ]
    assert fx.xpaths(sub, js) == expected
    assert fx.xpaths(sub, xml) == expected


def test_core_p3_single_leaf_list_value_in_xml(fx, notif) -> None:
    xml = notif.envelope_xml(f'<top xmlns="{NS_YKT}"><codes>5</codes></top>')
    assert fx.xpaths("/yk-test:top/codes", xml) == ["/yk-test:top/codes[.='5']"]


def test_core_p3_decimal64_leaf_list_parity(fx, notif) -> None:
    sub = "/yk-test:top/ratios"
    js = notif.envelope({"yk-test:top": {"ratios": ["1.50", "2.00", "-0.25"]}})
    xml = notif.envelope_xml(
        f'<top xmlns="{NS_YKT}"><ratios>1.5</ratios><ratios>2</ratios><ratios>-.25</ratios></top>')
    expected = [
        "/yk-test:top/ratios[.='-0.25']", "/yk-test:top/ratios[.='1.5']",
        "/yk-test:top/ratios[.='2.0']",
    ]
    assert fx.xpaths(sub, js) == expected
    assert fx.xpaths(sub, xml) == expected


def test_core_p3_ipv6_list_key_in_fixture(fx, notif) -> None:
    js = notif.envelope({"yk-test:top": {"peer": [{"addr": "FE80:0:0:0:0:0:0:AB"}]}})
    assert fx.xpaths("/yk-test:top/peer", js) == ["/yk-test:top/peer[addr='fe80::ab']"]


def test_core_p3_keyless_list_position_policy(fx, notif) -> None:
    js = notif.envelope({"yk-test:top": {"sample": [{"reading": "a"}, {"reading": "b"}]}})
    assert fx.xpaths("/yk-test:top/sample", js, keyless="position") == [
        "/yk-test:top/sample[1]", "/yk-test:top/sample[2]",
    ]


def test_core_p3_pretty_printed_xml_equals_compact(fx, notif) -> None:
    pretty = notif.envelope_xml(
        f'\n  <top xmlns="{NS_YKT}">\n    <site>\n      <name>paris</name>\n'
        "      <rack>\n        <id> 42 </id>\n      </rack>\n    </site>\n  </top>\n"
    )
    js = notif.envelope({"yk-test:top": {"site": [{"name": "paris", "rack": [{"id": 42}]}]}})
    assert fx.key("/yk-test:top/site/rack", pretty) == fx.key("/yk-test:top/site/rack", js)


# ----------------------------------------------------------------------------- yang-patch


def edit(op: str, target: str, value: object = None) -> dict[str, object]:
    item: dict[str, object] = {"edit-id": f"e-{op}", "operation": op, "target": target}
    if value is not None:
        item["value"] = value
    return item


@pytest.mark.parametrize("op", ["create", "merge", "replace"])
def test_core_p3_patch_with_value(ietf, notif, op: str) -> None:
    raw = notif.change_envelope([edit(op, "/ietf-interfaces:interfaces/interface=eth3",
                                      {"ietf-interfaces:interface": [{"name": "eth3",
                                                                      "enabled": True}]})])
    assert ietf.xpaths(IF, raw) == [f"{IF}[name='eth3']"]


@pytest.mark.parametrize("op", ["delete", "remove"])
def test_core_p3_patch_delete_remove_without_value_yield_instance(ietf, notif, op: str) -> None:
    raw = notif.change_envelope([edit(op, "/ietf-interfaces:interfaces/interface=eth3")])
    assert ietf.xpaths(IF, raw) == [f"{IF}[name='eth3']"]


def test_core_p3_patch_percent_encoded_target(ietf, notif) -> None:
    raw = notif.change_envelope([
        edit("delete", "/ietf-interfaces:interfaces/interface=eth0%2F1"),
        edit("delete", "/ietf-interfaces:interfaces/interface=a%2Cb"),
        edit("delete", "/ietf-interfaces:interfaces/interface=sp%20ace%27q"),
    ])
    # '"' (0x22) sorts before "'" (0x27)
    assert ietf.xpaths(IF, raw) == [
        f"{IF}[name=\"sp ace'q\"]", f"{IF}[name='a,b']", f"{IF}[name='eth0/1']",
    ]


def test_core_p3_patch_composite_key_target(fx, notif) -> None:
    raw = notif.change_envelope([
        edit("delete", "/yk-test:top/flow=yk-test%3Atcp,0080,true"),
        edit("merge", "/yk-test:top/flow=yk-aug:sctp,9,false",
             {"yk-test:flow": [{"proto": "yk-aug:sctp", "port": 9, "enabled": False,
                                "label": "x"}]}),
    ])
    assert fx.xpaths("/yk-test:top/flow", raw) == [
        "/yk-test:top/flow[proto='yk-aug:sctp'][port='9'][enabled='false']",
        "/yk-test:top/flow[proto='yk-test:tcp'][port='80'][enabled='true']",
    ]


def test_core_p3_patch_composite_key_wrong_count_rejected(fx, notif) -> None:
    raw = notif.change_envelope([edit("delete", "/yk-test:top/flow=yk-test%3Atcp,80")])
    with pytest.raises(NotificationError):
        fx.key("/yk-test:top/flow", raw)


def test_core_p3_patch_nested_list_target(fx, notif) -> None:
    raw = notif.change_envelope([edit("remove", "/yk-test:top/site=paris/rack=0042")])
    assert fx.xpaths("/yk-test:top/site/rack", raw) == [
        "/yk-test:top/site[name='paris']/rack[id='42']"
    ]


def test_core_p3_patch_pinned_keys_filter_edits(ietf, notif) -> None:
    raw = notif.change_envelope([
        edit("delete", "/ietf-interfaces:interfaces/interface=eth1"),
        edit("delete", "/ietf-interfaces:interfaces/interface=eth0"),
    ])
    assert ietf.xpaths(f"{IF}[name='eth0']", raw) == [f"{IF}[name='eth0']"]
    only_other = notif.change_envelope(
        [edit("delete", "/ietf-interfaces:interfaces/interface=eth1")])
    with pytest.raises(NoMatchError):
        ietf.key(f"{IF}[name='eth0']", only_other)


def test_core_p3_patch_target_above_subscription_with_value(ietf, notif) -> None:
    raw = notif.change_envelope([edit("create", "/ietf-interfaces:interfaces",
                                      {"ietf-interfaces:interfaces": {"interface": [
                                          {"name": "x"}, {"name": "y"}]}})])
    assert ietf.xpaths(IF, raw) == [f"{IF}[name='x']", f"{IF}[name='y']"]


def test_core_p3_patch_target_below_subscription(ietf, notif) -> None:
    raw = notif.change_envelope([
        edit("replace", "/ietf-interfaces:interfaces/interface=eth0/description",
             {"ietf-interfaces:description": "uplink"}),
    ])
    assert ietf.xpaths(IF, raw) == [f"{IF}[name='eth0']"]


def test_core_p3_patch_leaf_target(ietf, notif) -> None:
    raw = notif.change_envelope([
        edit("replace", "/ietf-interfaces:interfaces/interface=eth0/oper-status",
             {"ietf-interfaces:oper-status": "down"}),
        edit("remove", "/ietf-interfaces:interfaces/interface=eth1/oper-status"),
    ])
    assert ietf.xpaths(f"{IF}/oper-status", raw) == [
        f"{IF}[name='eth0']/oper-status", f"{IF}[name='eth1']/oper-status",
    ]


def test_core_p3_patch_augment_and_ipv6_target(ietf, notif) -> None:
    target = "/ietf-interfaces:interfaces/interface=eth0/ietf-ip:ipv6/address=2001%3ADB8%3A%3A0001"
    raw = notif.change_envelope([edit("delete", target)])
    assert ietf.xpaths(f"{IF}/ietf-ip:ipv6/address", raw) == [
        f"{IF}[name='eth0']/ietf-ip:ipv6/address[ip='2001:db8::1']"
    ]


def test_core_p3_patch_leaf_list_entry(ietf, notif) -> None:
    raw = notif.change_envelope(
        [edit("delete", "/ietf-system:system/dns-resolver/search=a.example")])
    assert ietf.xpaths("/ietf-system:system/dns-resolver/search", raw) == [
        "/ietf-system:system/dns-resolver/search[.='a.example']"
    ]


def test_core_p3_patch_other_subtree_no_match(ietf, notif) -> None:
    raw = notif.change_envelope([edit("delete", "/ietf-system:system/ntp/server=s1")])
    with pytest.raises(NoMatchError):
        ietf.key(IF, raw)


def test_core_p3_patch_qualified_yang_patch_member(ietf, notif) -> None:
    raw = notif.change_envelope([edit("delete", "/ietf-interfaces:interfaces/interface=e")],
                                qualified_patch=True)
    assert ietf.xpaths(IF, raw) == [f"{IF}[name='e']"]


def test_core_p3_patch_xml_parity(ietf, notif) -> None:
    xml = notif.change_xml(
        "<edit><edit-id>1</edit-id><operation>merge</operation>"
        "<target>/ietf-interfaces:interfaces/interface=eth0%2F1</target>"
        f'<value><interface xmlns="{NS_IF}"><name>eth0/1</name><enabled>true</enabled>'
        "</interface></value></edit>"
        "<edit><edit-id>2</edit-id><operation>delete</operation>"
        "<target>/ietf-interfaces:interfaces/interface=eth9</target></edit>"
    )
    js = notif.change_envelope([
        edit("merge", "/ietf-interfaces:interfaces/interface=eth0%2F1",
             {"ietf-interfaces:interface": [{"name": "eth0/1", "enabled": True}]}),
        edit("delete", "/ietf-interfaces:interfaces/interface=eth9"),
    ], hostname="n")
    assert ietf.key(IF, xml, default_node="n") == ietf.key(IF, js)
    assert ietf.xpaths(IF, js) == [f"{IF}[name='eth0/1']", f"{IF}[name='eth9']"]


def test_core_p3_patch_container_target(ietf, notif) -> None:
    raw = notif.change_envelope([edit("merge", "/ietf-system:system/clock",
                                      {"ietf-system:clock": {"timezone-utc-offset": 5}})])
    assert ietf.xpaths("/ietf-system:system/clock", raw) == ["/ietf-system:system/clock"]


@pytest.mark.parametrize("target", ["ietf-interfaces:interfaces", "/interfaces/interface=x"])
def test_core_p3_patch_bad_target_rejected(ietf, notif, target: str) -> None:
    with pytest.raises(NotificationError):
        ietf.key(IF, notif.change_envelope([edit("delete", target)]))


# -------------------------------------------------------------------------- malformed input


@pytest.mark.parametrize(
    "raw",
    [
        b"{bad json",
        b'{"a": }',
        b"\xff\xfe{}",
        b"<notification><unclosed></notification>",
        b"<a>&undefined;</a>",
        b"",
        b"   \n",
        b"plain text",
        b'{"x": 1}\x00',
    ],
)
def test_core_p3_malformed_input_is_input_error(ietf_schema, raw: bytes) -> None:
    with pytest.raises(InputError) as info:
        decode(raw, "bad-input.bin", ietf_schema.index.by_namespace)
    assert "bad-input.bin" in str(info.value)


def test_core_p3_dtd_notification_rejected(ietf_schema, notif) -> None:
    raw = '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>' + notif.netconf_xml(
        f'<interfaces xmlns="{NS_IF}"><interface><name>&e;</name></interface></interfaces>')
    with pytest.raises(InputError, match="DTD"):
        decode(raw, "dtd.xml", ietf_schema.index.by_namespace)


@pytest.mark.parametrize(
    "raw",
    [
        "[1, 2]",
        '{"something-else": {}}',
        '{"ietf-yp-notification:envelope": {"hostname": "n"}}',
        '{"ietf-yang-push:push-change-update": {"id": 1}}',
        f'<other xmlns="{NS_SYS}"/>',
    ],
)
def test_core_p3_well_formed_but_not_push_rejected(ietf_schema, raw: str) -> None:
    with pytest.raises(YangkeyError):
        decode(raw, "x", ietf_schema.index.by_namespace)


def test_core_p3_deriver_is_reusable_and_pure(ietf, ietf_schema, notif) -> None:
    compiled = ietf.compile(IF)
    deriver = KeyDeriver(compiled)
    ns = ietf_schema.index.by_namespace
    first = deriver.derive(decode(notif.envelope(IFACES), "a", ns)).key
    deriver.derive(decode(notif.envelope(notif.interfaces_json(["zz"])), "b", ns))
    assert deriver.derive(decode(notif.envelope(IFACES), "c", ns)).key == first


def test_core_p3_xml_with_utf8_bom_accepted(ietf, notif) -> None:
    """A UTF-8 byte order mark before '<' is well-formed XML (XML 1.0 section 4.3.3)."""
    raw = b"\xef\xbb\xbf" + notif.envelope_xml(IFACES_XML, hostname="n", sub_id=1).encode()
    assert ietf.key(IF, raw) == key_text("n", 1, EXPECTED)


def test_core_p3_xml_latin1_declared_encoding_parity(ietf, notif) -> None:
    xml = notif.envelope_xml(notif.interfaces_xml(["caf\xe9"]), hostname="n", sub_id=1)
    raw = ('<?xml version="1.0" encoding="ISO-8859-1"?>' + xml).encode("latin-1")
    js = notif.envelope(notif.interfaces_json(["café"]), hostname="n", sub_id=1)
    assert ietf.key(IF, raw) == ietf.key(IF, js) == key_text("n", 1, f"{IF}[name='café']")


def test_core_p3_union_branches_differing_only_in_filters_keep_both(ietf, notif) -> None:
    """Two branches with the same template but different non-key filters select different
    instances; merging them must not drop the second filter's instances."""
    sub = f"{IF}[enabled='true'] | {IF}[enabled='false']"
    raw = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "a", "enabled": True}, {"name": "b", "enabled": False}]}})
    assert ietf.xpaths(sub, raw) == [f"{IF}[name='a']", f"{IF}[name='b']"]


def test_core_p3_identical_branches_merged(ietf, notif) -> None:
    sub = f"{IF} | /ietf-interfaces:interfaces/ietf-interfaces:interface"
    derived = ietf.derive(sub, notif.envelope(IFACES))
    assert list(derived.xpaths) == [f"{IF}[name='eth0']", f"{IF}[name='eth1']"]
    assert len(ietf.compile(sub).branches) == 1


def test_core_p3_redundantly_qualified_list_member_accepted(ietf, notif) -> None:
    raw = notif.envelope({"ietf-interfaces:interfaces": {"ietf-interfaces:interface": [
        {"name": "q"}]}})
    assert ietf.xpaths(IF, raw) == [f"{IF}[name='q']"]


def test_core_p3_unqualified_top_level_member_not_matched(ietf, notif) -> None:
    # RFC 7951 section 4: top-level members are always module-qualified.
    raw = notif.envelope({"interfaces": {"interface": [{"name": "q"}]}})
    with pytest.raises(NoMatchError):
        ietf.key(IF, raw)


def test_core_p3_no_schema_lookups_per_notification(ietf_schema, notif, monkeypatch) -> None:
    """Phase 3 runs on the compiled branches only (SPEC 2.4): with every schema entry point
    disabled after compiling, keys are still derived."""
    compiled = compile_subscription(f"{IF}/ietf-ip:ipv6/address", ietf_schema)
    ns = dict(ietf_schema.index.by_namespace)

    def forbidden(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("schema lookup during Phase 3")

    for name in ("data_model", "schema_root", "module_prefix"):
        monkeypatch.setattr(SchemaContext, name, forbidden)
    raw = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "e", "ietf-ip:ipv6": {"address": [{"ip": "::1"}]}}]}})
    derived = KeyDeriver(compiled).derive(decode(raw, "n", ns))
    assert derived.xpaths == (f"{IF}[name='e']/ietf-ip:ipv6/address[ip='::1']",)


def test_core_p3_large_notification_linear(ietf, notif) -> None:
    names = [f"eth{i}" for i in range(20_000)]
    raw = notif.envelope(notif.interfaces_json(names))
    ietf.compile(IF)
    start = time.perf_counter()
    derived = ietf.derive(IF, raw)
    elapsed = time.perf_counter() - start
    assert len(derived.xpaths) == 20_000
    assert elapsed < 5.0, elapsed


@pytest.mark.parametrize("junk", ["eth9", 5, None, True, ["eth0"], [{"name": "eth0"}]])
def test_core_p3_non_object_list_entries_are_skipped(junk: object) -> None:
    """A list entry that is not an object matches nothing; the other entries still do."""
    import orjson  # noqa: PLC0415

    from yangkey.keys import KeyDeriver  # noqa: PLC0415
    from yangkey.notifications import decode  # noqa: PLC0415
    from yangkey.schema import SchemaContext  # noqa: PLC0415
    from yangkey.templates import compile_subscription  # noqa: PLC0415

    schema = SchemaContext.cached()
    xpath = "/ietf-interfaces:interfaces/interface"
    document = {"ietf-yp-notification:envelope": {
        "hostname": "r1", "sequence-number": 1, "contents": {"ietf-yang-push:push-update": {
            "id": 7, "datastore-contents": {"ietf-interfaces:interfaces": {
                "interface": [junk, {"name": "eth1"}]}}}}}}
    note = decode(orjson.dumps(document), "t", schema.index.by_namespace)
    derived = KeyDeriver(compile_subscription(xpath, schema)).derive(note)
    assert derived.xpaths == (f"{xpath}[name='eth1']",)


# ------------------------------------------------------- found by the differential tests


def test_core_p3_member_named_like_the_deleted_marker_is_plain_data(fx, notif) -> None:
    """JSON may carry any member name, "\\u0000deleted" included: it must not read as the
    walkers' marker of a deleted node (which yielded /yk-test:top/simple from no data)."""
    raw = notif.envelope({"yk-test:top": {"\x00deleted": True}})
    with pytest.raises(NoMatchError):
        fx.key("/yk-test:top/simple", raw)
    pinned = "/yk-test:top/site[name='s']/rack[id='7']"
    raw = notif.envelope({"yk-test:top": {"site": [{"name": "s", "\x00deleted": True}]}})
    with pytest.raises(NoMatchError):
        fx.key(pinned, raw)


def test_core_p3_every_key_checked_before_pinned_values(fx, notif) -> None:
    """An entry missing a key leaf rejects the notification even when another key of it
    already contradicts a pinned value."""
    raw = notif.envelope({"yk-test:top": {"flow": [{"proto": "yk-test:tcp", "port": 0}]}})
    with pytest.raises(NotificationError, match="no key leaf enabled"):
        fx.key("/yk-test:top/flow[port='80'][enabled='true']", raw)
    raw = notif.envelope({"yk-test:top": {"flow": [
        {"proto": "yk-test:tcp", "port": 0, "enabled": "maybe"}]}})
    with pytest.raises(NotificationError, match="invalid boolean"):
        fx.key("/yk-test:top/flow[port='80']", raw)


def test_core_p3_redundantly_qualified_key_leaf_accepted(ietf, notif) -> None:
    raw = notif.envelope({"ietf-interfaces:interfaces": {"interface": [
        {"ietf-interfaces:name": "q"}]}})
    assert ietf.xpaths(IF, raw) == [f"{IF}[name='q']"]


@pytest.mark.parametrize("value", [None, {"ietf-interfaces:name": "eth0"}])
def test_core_p3_patch_key_leaf_target_needs_the_entry_keys(ietf, notif, value) -> None:
    """/interfaces/interface/name names no interface: neither the edit's value nor the
    placeholder of a deleted leaf stands in for the list key (it yielded [name=''])."""
    edit_doc = {"edit-id": "1", "operation": "merge" if value else "delete",
                "target": "/ietf-interfaces:interfaces/interface/name"}
    if value:
        edit_doc["value"] = value
    raw = notif.change_envelope([edit_doc])
    with pytest.raises(NotificationError, match="no key leaf name"):
        ietf.key(f"{IF}/name", raw)
    keyed = notif.change_envelope([{**edit_doc, "target": f"{IF}=eth0/name"}])
    assert ietf.xpaths(f"{IF}/name", keyed) == [f"{IF}[name='eth0']/name"]


# ------------------------------------------------------------------ generated source


def test_core_p3_walker_traceback_shows_generated_line(ietf_schema) -> None:
    """The walker's source is registered with linecache: a traceback through it quotes the
    generated line, under a pseudo-filename that is the same for the same branch."""
    import traceback  # noqa: PLC0415

    from yangkey.walker import compile_walker, walker_filename, walker_source  # noqa: PLC0415

    (branch,) = compile_subscription(IF, ietf_schema).branches
    walk = compile_walker(branch)
    try:
        walk({"ietf-interfaces:interfaces": {"interface": [{"name": object()}]}}, [])
    except NotificationError as exc:
        frames = traceback.extract_tb(exc.__traceback__)
    walker_frame = next(f for f in frames if f.filename.startswith("<yangkey-walker"))
    assert walker_frame.filename == walker_filename(branch, walker_source(branch))
    assert walker_frame.filename == compile_walker(branch).__code__.co_filename
    assert walker_frame.line == "v1_0 = canon_string(v1_0)"
    assert walker_source(branch).splitlines()[walker_frame.lineno - 1].strip() == (
        walker_frame.line
    )


def test_core_p3_patch_whole_leaf_list_delete_still_checks_list_keys(ietf, notif) -> None:
    """Deleting a whole leaf-list names no value, but the list entry above it must still be
    named: without its key the edit is rejected, as for any other target."""
    sub = f"{IF}/higher-layer-if"
    unnamed = notif.change_envelope([edit("delete", f"{IF}/higher-layer-if")])
    with pytest.raises(NotificationError, match="no key leaf name"):
        ietf.key(sub, unnamed)
    named = notif.change_envelope([edit("delete", f"{IF}=eth0/higher-layer-if")])
    with pytest.raises(NoMatchError):
        ietf.key(sub, named)
