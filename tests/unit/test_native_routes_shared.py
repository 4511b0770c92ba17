"""Issue 33: a fleet-wide subscription's route shared by every node (``Routes.share``).

The native pass used to ask the builder's route once per (subscription id, node): data with
many nodes and few records each (the demo mix: 16) paid a Python call per new node and id.
Now the answer of an id whose fleet-wide entry holds for every node but the ones declared
exactly is set once for the id, and the memo answers any other node with the node's own name.
What must stay apart: a node declared exactly for the id (its own entry), an id with a node
pattern (the pattern decides per node), no node (the default node), a skipped subscription.
Every record is compared with the reference (the Python path), message for message.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from test_native_xml_keys import framed

from yangkey.catalog import build_catalog
from yangkey.config import parse_subscriptions
from yangkey.messages import KeyedMessage, Rejection
from yangkey.producer import MessageBuilder, ProducerKnobs

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IF = "/ietf-interfaces:interfaces/interface"
CLOCK = "/ietf-system:system/clock"

#: id 5: fleet-wide interfaces, but pe1.nyc's and pe2.nyc's are the clock; id 6: fleet-wide
#: interfaces, the clock on nodes matching core-*; id 7: only pe1.nyc has it.
FLEET = f"""
organisation_prefix: t
topic_policy:
  type_level: true
subscriptions:
  - id: 5
    xpath: {IF}
    type: periodic
  - id: 5
    node: pe1.nyc
    xpath: {CLOCK}
    type: on-change
  - id: 5
    node: pe2.nyc
    xpath: {IF}
    type: on-change
  - id: 6
    xpath: {IF}
    type: periodic
  - id: 6
    node: "core-*"
    xpath: {CLOCK}
    type: periodic
  - id: 7
    node: pe1.nyc
    xpath: {IF}
    type: periodic
"""

DATA = {
    "ietf-interfaces:interfaces": {"interface": [{"name": "eth0", "oper-status": "up"}]},
    "ietf-system:system": {"clock": {"timezone-utc-offset": 60}},
}
XML_DATA = (
    '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"><interface>'
    "<name>eth0</name><oper-status>up</oper-status></interface></interfaces>"
    '<system xmlns="urn:ietf:params:xml:ns:yang:ietf-system"><clock>'
    "<timezone-utc-offset>60</timezone-utc-offset></clock></system>"
)


def json_record(node: str | None, sub: int) -> bytes:
    body: dict[str, Any] = {"event-time": "2026-11-20T10:00:00Z", "sequence-number": 3}
    if node is not None:
        body["hostname"] = node
    body["contents"] = {"ietf-yang-push:push-update": {"id": sub, "datastore-contents": DATA}}
    return orjson.dumps({"ietf-yp-notification:envelope": body})


def xml_record(node: str | None, sub: int) -> bytes:
    return framed("netconf", XML_DATA, node, sub)


def builders(knobs: ProducerKnobs | None = None) -> tuple[MessageBuilder, MessageBuilder]:
    """A builder with the native pass over FLEET (default node ``dflt``) and the reference."""
    builder = MessageBuilder(build_catalog(parse_subscriptions(FLEET)), knobs, default_node="dflt")
    reference = MessageBuilder(
        build_catalog(parse_subscriptions(FLEET)), knobs, default_node="dflt"
    )
    reference.native = False
    assert builder.native
    return builder, reference


def compare(
    records: list[bytes], knobs: ProducerKnobs | None = None
) -> tuple[MessageBuilder, list[list[KeyedMessage] | Rejection]]:
    """Every record through both builders, in order; the native builder and its outputs."""
    builder, reference = builders(knobs)
    outputs = []
    for number, raw in enumerate(records):
        got = builder.build(raw, f"r:{number}")
        assert got == reference.build(raw, f"r:{number}"), raw
        outputs.append(got)
    return builder, outputs


def key_of(result: list[KeyedMessage] | Rejection) -> tuple[str, bytes | None]:
    assert isinstance(result, list) and len(result) == 1, result
    return result[0].topic, result[0].key


FLEET_NODES = [f"edge-{n}.par" for n in range(6)]
RECORDS = [json_record, xml_record]


@pytest.mark.parametrize("record", [json_record, xml_record], ids=["json", "xml"])
def test_exact_nodes_keep_their_own_entry_after_the_fleet_answer_is_shared(record: Any) -> None:
    """pe1.nyc and pe2.nyc come after other nodes set id 5's fleet-wide answer: each gets its
    own subscription (the clock; on-change headers), the others the interfaces, with their
    own name in the key; the route is asked once for the fleet, once per exact node."""
    nodes = [*FLEET_NODES[:3], "pe1.nyc", *FLEET_NODES[3:], "pe2.nyc", "pe1.nyc"]
    builder, outputs = compare([record(node, 5) for node in nodes])
    by_node = dict(zip(nodes, outputs, strict=True))
    pe1_topic, pe1_key = key_of(by_node["pe1.nyc"])
    assert pe1_key == b"pe1.nyc\n5\n/ietf-system:system/clock"
    for node in FLEET_NODES:
        topic, key = key_of(by_node[node])
        assert key == f"{node}\n5\n/ietf-interfaces:interfaces/interface[name='eth0']".encode()
        assert topic != pe1_topic
    pe2 = by_node["pe2.nyc"]
    edge = by_node[FLEET_NODES[0]]
    assert isinstance(pe2, list) and isinstance(edge, list)
    assert pe2[0].headers != edge[0].headers  # on-change, not periodic
    assert builder.native_keyed == len(nodes)
    assert len(builder._routes) == 3  # the fleet's answer, pe1.nyc's, pe2.nyc's


@pytest.mark.parametrize("record", [json_record, xml_record], ids=["json", "xml"])
def test_an_id_with_a_node_pattern_is_routed_per_node(record: Any) -> None:
    """id 6 has a node pattern: a node matching it after others is keyed by the pattern's
    entry (the clock), not the fleet-wide one; nothing is shared."""
    nodes = [*FLEET_NODES[:3], "core-1.par", FLEET_NODES[3], "core-2.par"]
    builder, outputs = compare([record(node, 6) for node in nodes])
    keys = [key_of(result)[1] for result in outputs]
    assert keys[3] == b"core-1.par\n6\n/ietf-system:system/clock"
    assert keys[5] == b"core-2.par\n6\n/ietf-system:system/clock"
    assert keys[4] == (
        f"{FLEET_NODES[3]}\n6\n/ietf-interfaces:interfaces/interface[name='eth0']".encode()
    )
    assert len(builder._routes) == len(nodes)


@pytest.mark.parametrize(
    "knobs",
    [ProducerKnobs(instances=True), ProducerKnobs(per_branch=False), ProducerKnobs(keys=False)],
    ids=["instance-feed", "single-topic", "no-keys"],
)
def test_shared_routes_with_the_knobs(knobs: ProducerKnobs) -> None:
    """With the instance feed (its walkers per entry), one topic, no keys: the same records
    as the reference for fleet, exact and pattern nodes of ids 5 and 6."""
    nodes = [*FLEET_NODES[:2], "pe1.nyc", "core-1.par", FLEET_NODES[2], "pe2.nyc"]
    records = [make(node, sub) for node in nodes for sub in (5, 6) for make in RECORDS]
    builder, _ = compare(records, knobs)
    assert builder.native_keyed >= len(nodes) * 2


def test_no_node_an_unknown_id_and_an_id_of_one_node_are_not_shared() -> None:
    """No hostname (the default node), id 7 (pe1.nyc only: unknown elsewhere) and id 5's
    fleet answer in JSON and XML (two memos) interleaved: the same as the reference."""
    records = []
    for node in [*FLEET_NODES, None, "pe1.nyc"]:
        records += [json_record(node, 5), xml_record(node, 5), json_record(node, 7)]
        records += [xml_record(node, 7), json_record(node, 6), json_record(node, 9)]
    _, outputs = compare(records)
    kinds = [type(result).__name__ for result in outputs]
    assert kinds.count("Rejection") >= len(FLEET_NODES) * 3  # ids 7 and 9 unknown for them
    dflt = outputs[len(FLEET_NODES) * 6]
    assert key_of(dflt)[1] == b"dflt\n5\n/ietf-interfaces:interfaces/interface[name='eth0']"


def test_routes_share_answers_every_node_but_the_excluded_ones() -> None:
    """``Routes.share`` itself: the route is not asked for a new node of a shared id, is
    asked for an excluded node, another id, and no node; the key names each node."""
    builder, _ = builders()
    entry = builder.catalog.entry(5, "edge-0.par")
    assert entry is not None and entry.deriver.native is not None
    asked: list[tuple[int, str | None]] = []

    def route(subscription_id: int, node: str | None) -> tuple[Any, str, Any] | None:
        asked.append((subscription_id, node))
        return (entry.deriver.native, node or "dflt", "own")

    memo = yangkey_native.Routes()
    memo.share(5, (entry.deriver.native, "shared"), ["pe1.nyc"])
    assert len(memo) == 1
    keys = builder._native_keys
    assert keys is not None

    def answer(node: str | None, sub: int = 5) -> tuple[Any, bytes]:
        found = keys(json_record(node, sub), "s", {}, route, False, memo)
        assert found is not None
        return found[0], found[4]

    assert answer("edge-0.par") == (
        "shared",
        b"edge-0.par\n5\n/ietf-interfaces:interfaces/interface[name='eth0']",
    )
    assert answer("edge-1.par")[1].startswith(b"edge-1.par\n5\n")
    assert asked == []
    assert answer("pe1.nyc")[0] == "own"
    assert answer("edge-0.par", 6)[0] == "own"
    assert answer(None)[0] == "own"
    assert asked == [(5, "pe1.nyc"), (6, "edge-0.par"), (5, None)]
    memo.clear()
    assert len(memo) == 0
    assert answer("edge-0.par")[0] == "own"
