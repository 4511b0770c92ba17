"""Issue 30 item 5: the canonical form of a key value comes from its resolved type.

``vx-bgp`` paraphrases SR Linux: ``peer-address`` is ``ip-address-with-zone``, a vendor union of
vendor string typedefs that never reach ietf-inet-types; the name-based choice did not know the
name and kept ``FE80::0001`` as sent. Every case is checked against the canonical forms of
RFC 7950 section 9, RFC 6991/RFC 9911 (ietf-inet-types, ietf-yang-types) and RFC 5952, through
JSON and XML notifications: the keys must be byte-identical and canonical.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import orjson
import pytest

from yangkey.canon_types import UnionCanon
from yangkey.errors import NotificationError
from yangkey.keys import KeyDeriver
from yangkey.modules import default_search_path
from yangkey.notifications import decode
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription
from yangkey.values import canon_decimal, canon_integer, canon_ip, canon_prefix

NS = "urn:example:vx-bgp"

VX_BGP = r"""
module vx-bgp {
  yang-version 1.1;
  namespace "urn:example:vx-bgp";
  prefix vxb;
  import ietf-inet-types { prefix inet; }
  import ietf-yang-types { prefix yang; }
  identity afi;
  identity ipv4-unicast { base afi; }
  typedef ipv4-address-with-zone {
    type string {
      pattern '(([0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])\.){3}'
            + '([0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])(%.+)?';
    }
  }
  typedef ipv6-address-with-zone {
    type string {
      pattern '((:|[0-9a-fA-F]{0,4}):)([0-9a-fA-F]{0,4}:){0,5}'
            + '((([0-9a-fA-F]{0,4}:)?(:|[0-9a-fA-F]{0,4}))|'
            + '(((25[0-5]|2[0-4][0-9]|[01]?[0-9]?[0-9])\.){3}'
            + '(25[0-5]|2[0-4][0-9]|[01]?[0-9]?[0-9])))(%.+)?';
    }
  }
  typedef ip-address-with-zone {
    type union { type ipv4-address-with-zone; type ipv6-address-with-zone; }
  }
  typedef peer-address { type ip-address-with-zone; }
  typedef route-prefix { type inet:ip-prefix; }
  typedef ipv4-prefix { type string; }
  container bgp {
    list neighbor { key peer-address; leaf peer-address { type peer-address; } }
    list route { key prefix; leaf prefix { type route-prefix; } }
    list vendor-route { key prefix; leaf prefix { type ipv4-prefix; } }
    list interface-address { key address; leaf address { type inet:ipv6-address-no-zone; } }
    list mac { key address; leaf address { type yang:mac-address; } }
    list host { key name; leaf name { type inet:host; } }
    list tag {
      key value;
      leaf value { type union { type uint8; type enumeration { enum any; } type string; } }
    }
    list mixed {
      key id;
      leaf id { type union { type string { pattern '[a-z]+'; } type inet:ip-address; } }
    }
    list flags {
      key set;
      leaf set { type bits { bit b { position 2; } bit a { position 0; } } }
    }
    list weight { key value; leaf value { type decimal64 { fraction-digits 3; } } }
    list family { key afi; leaf afi { type identityref { base afi; } } }
    list ref { key peer; leaf peer { type leafref { path "../../neighbor/peer-address"; } } }
  }
}
"""


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    directory: Path = tmp_path_factory.mktemp("canon-yang")
    (directory / "vx-bgp.yang").write_text(VX_BGP, encoding="utf-8")
    return SchemaContext(default_search_path([str(directory)]))


def keys(schema: SchemaContext, xpath: str, leaf: str, value: str) -> tuple[bytes, bytes]:
    """The key of one list entry whose key leaf is ``value``, from JSON and from XML."""
    compiled = compile_subscription(xpath, schema)
    name = xpath.rsplit("/", 1)[1]
    as_json = {
        "ietf-yp-notification:envelope": {
            "event-time": "2026-11-20T10:00:00Z",
            "hostname": "r1",
            "contents": {
                "ietf-yang-push:push-update": {
                    "id": 1,
                    "datastore-contents": {"vx-bgp:bgp": {name: [{leaf: value}]}},
                }
            },
        }
    }
    text = value.replace("&", "&amp;").replace("<", "&lt;")
    nsdecl = ' xmlns:x="urn:example:vx-bgp"' if value.startswith("x:") else ""
    as_xml = (
        '<notification xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0">'
        "<eventTime>2026-11-20T10:00:00Z</eventTime>"
        '<push-update xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-push"><id>1</id>'
        f'<datastore-contents><bgp xmlns="{NS}"><{name}><{leaf}{nsdecl}>{text}</{leaf}>'
        f"</{name}></bgp></datastore-contents></push-update></notification>"
    )
    results = []
    for raw, source in [(orjson.dumps(as_json), "n.json"), (as_xml.encode(), "n.xml")]:
        note = decode(raw, source, schema.index.by_namespace)
        results.append(KeyDeriver(compiled).derive(note, default_node="r1").key)
    return results[0], results[1]


BGP = "/vx-bgp:bgp"


@pytest.mark.parametrize(
    ("list_name", "leaf", "sent", "canonical"),
    [
        # SR Linux peer-address: vendor -with-zone typedefs (issue 30 item 5)
        ("neighbor", "peer-address", "FE80::0001%ethernet-1/1.1", "fe80::1%ethernet-1/1.1"),
        ("neighbor", "peer-address", "2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("neighbor", "peer-address", "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
        ("neighbor", "peer-address", "2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),
        ("neighbor", "peer-address", "2001:db8:0:0:1:0:0:0", "2001:db8:0:0:1::"),  # longest run
        ("neighbor", "peer-address", "::FFFF:C000:0201", "::ffff:192.0.2.1"),
        ("neighbor", "peer-address", "192.0.2.1", "192.0.2.1"),
        # ietf-inet-types prefixes clear the host bits; a vendor ipv4-prefix keeps them
        ("route", "prefix", "192.0.2.1/24", "192.0.2.0/24"),
        ("route", "prefix", "2001:DB8::1/32", "2001:db8::/32"),
        ("vendor-route", "prefix", "192.0.2.1/24", "192.0.2.1/24"),
        ("interface-address", "address", "2001:0DB8::0001", "2001:db8::1"),
        ("mac", "address", "00:1A:2B:3C:4D:5E", "00:1a:2b:3c:4d:5e"),
        # inet:host = union { ip-address, domain-name }: the first member that fits
        ("host", "name", "2001:DB8::1", "2001:db8::1"),
        ("host", "name", "Router.Example.COM", "router.example.com"),
        # unions take the first member the text is valid for (RFC 7950 section 9.12)
        ("tag", "value", "007", "7"),
        ("tag", "value", "300", "300"),
        ("tag", "value", "any", "any"),
        ("mixed", "id", "abc", "abc"),
        ("mixed", "id", "FE80::1", "fe80::1"),
        ("flags", "set", "b a", "a b"),
        ("weight", "value", "01.500", "1.5"),
        ("weight", "value", "-0.000", "0.0"),
        ("family", "afi", "ipv4-unicast", "vx-bgp:ipv4-unicast"),
        ("family", "afi", "x:ipv4-unicast", "vx-bgp:ipv4-unicast"),
        ("ref", "peer", "FE80::0001", "fe80::1"),
    ],
)
def test_json_and_xml_keys_are_identical_and_canonical(
    schema: SchemaContext, list_name: str, leaf: str, sent: str, canonical: str
) -> None:
    from_json, from_xml = keys(schema, f"{BGP}/{list_name}", leaf, sent)
    if list_name == "family" and sent.startswith("x:"):
        # JSON names the module (RFC 7951 section 6.8); only XML uses a prefix
        from_json = keys(schema, f"{BGP}/{list_name}", leaf, "vx-bgp:ipv4-unicast")[0]
    assert from_json == from_xml
    assert from_json.endswith(f"/vx-bgp:bgp/{list_name}[{leaf}='{canonical}']".encode())


def test_the_same_peer_never_gets_two_keys(schema: SchemaContext) -> None:
    spellings = ["FE80::1", "fe80::1", "FE80:0:0:0:0:0:0:0001", "fe80:0000::0:1"]
    derived = {k for s in spellings for k in keys(schema, f"{BGP}/neighbor", "peer-address", s)}
    assert len(derived) == 1


def test_a_pinned_key_is_canonical_too(schema: SchemaContext) -> None:
    compiled = compile_subscription(f"{BGP}/neighbor[peer-address='FE80::0001%mgmt0.0']", schema)
    assert compiled.branches[0].template == f"{BGP}/neighbor[peer-address='fe80::1%mgmt0.0']"


def test_union_canonicalizers_pickle(schema: SchemaContext) -> None:
    """Compiled subscriptions are cached on disk: every canonicalizer must pickle."""
    compiled = compile_subscription(f"{BGP}/mixed | {BGP}/flags | {BGP}/family", schema)
    canons = [step.keys[0].canon for b in compiled.branches for step in b.steps if step.keys]
    assert any(isinstance(c, UnionCanon) for c in canons)
    for canon in canons:
        assert pickle.loads(pickle.dumps(canon))("a") == canon("a")


# --------------------------------------------------------------------------- the functions


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        ("2001:db8::0:1", "2001:db8::1"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),  # first of two equal runs
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),  # one zero group is not "::"
        ("::", "::"),
        ("::1", "::1"),
        ("::ffff:192.0.2.1", "::ffff:192.0.2.1"),  # IPv4-mapped: mixed notation
        ("::ffff:0:c000:201", "::ffff:0:192.0.2.1"),  # IPv4-translated
        ("64:ff9b::c000:201", "64:ff9b::c000:201"),
        ("fe80::1%Eth0", "fe80::1%Eth0"),  # zone kept as written
        ("2001:DB8::/032", "2001:db8::/32"),  # address-and-prefix: bits kept
        ("192.0.2.1", "192.0.2.1"),
        (" 2001:db8::1 ", "2001:db8::1"),
    ],
)
def test_ip_addresses_per_rfc_5952(text: str, canonical: str) -> None:
    assert canon_ip(text) == canonical


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("192.0.2.1/24", "192.0.2.0/24"),
        ("10.1.2.3/8", "10.0.0.0/8"),
        ("0.0.0.0/0", "0.0.0.0/0"),
        ("2001:DB8:1::1/48", "2001:db8:1::/48"),
        ("::ffff:192.0.2.1/128", "::ffff:192.0.2.1/128"),
    ],
)
def test_ietf_prefixes_clear_the_host_bits(text: str, canonical: str) -> None:
    assert canon_prefix(text) == canonical


@pytest.mark.parametrize(
    ("function", "value", "canonical"),
    [
        (canon_integer, "+007", "7"),
        (canon_integer, "-0", "0"),
        (canon_integer, 42, "42"),
        (canon_decimal, "1.50", "1.5"),
        (canon_decimal, "10", "10.0"),
        (canon_decimal, "-0.0", "0.0"),
        (canon_decimal, "0.001", "0.001"),
    ],
)
def test_rfc_7950_built_in_forms(function: Any, value: Any, canonical: str) -> None:
    assert function(value) == canonical


@pytest.mark.parametrize("bad", ["2001:db8::g", "1:2:3:4:5:6:7:8:9", "fe80::1::2"])
def test_an_invalid_ipv6_address_is_a_clear_error(bad: str) -> None:
    with pytest.raises(NotificationError, match="invalid IPv6 address"):
        canon_ip(bad)
