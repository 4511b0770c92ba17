"""Typed instance tables (issue 11): columns from the YANG schema, one row per instance, JSON and
XML giving the same rows, and yang-patch semantics in the instance state, run on chdb.

Rows go into the embedded queue tables as ``yangkey ingest`` writes them: the producer's
keyed messages (MessageBuilder) with the instance feed header that ingest adds
(``add_instances``), so the same views as in server mode turn them into instance rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from factories import RECENT_DAY
from typed_helpers import IF, Pipe, edit, envelope, iface_value, patch, path

from yangkey.catalog import Catalog, load_catalog
from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.apply import validate
from yangkey.clickhouse.columns import derive_columns, typed_topics
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ddl import DdlOptions, render_catalog
from yangkey.clickhouse.ingest.rows import QueueRow, add_instances
from yangkey.clickhouse.instances import CatalogFeeds
from yangkey.clickhouse.tables import topic_tables
from yangkey.messages import HEADER_INSTANCES
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

ROOT = Path(__file__).resolve().parents[2]
TYPED_YANG = ROOT / "tests" / "fixtures" / "yang-typed"
NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_IP = "urn:ietf:params:xml:ns:yang:ietf-ip"
NS_ENV = "urn:ietf:params:xml:ns:yang:ietf-yp-notification"
NS_YP = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
NS_TY = "urn:example:yangkey:yk-typed"
IF_TOPIC = "netops-current-state-if-interfaces-interface"
STATS_TOPIC = "netops-stats-if-interfaces-interface-statistics"


def columns_of(xpath: str, schema: SchemaContext, *extra: str) -> dict[str, str]:
    compiled = compile_subscription(xpath, schema)
    modules = sorted({*compiled.modules, *extra})
    typed = derive_columns(compiled.branches[0], schema, modules)
    return {c.name: c.type for c in typed.columns}


# -- column derivation ---------------------------------------------------------------------


def test_interface_target_columns_follow_rfc7951_member_paths(ietf_schema: SchemaContext) -> None:
    columns = columns_of(IF, ietf_schema, "ietf-ip")
    assert columns["name"] == "String"  # the target list's key: never NULL
    assert columns["oper-status"] == "LowCardinality(Nullable(String))"  # enumeration
    assert columns["type"] == "LowCardinality(Nullable(String))"  # identityref
    assert columns["enabled"] == "Nullable(Bool)"
    assert columns["if-index"] == "Nullable(Int32)"
    assert columns["speed"] == "Nullable(UInt64)"  # yang:gauge64
    assert columns["last-change"] == "Nullable(DateTime64(9, 'UTC'))"  # yang:date-and-time
    assert columns["statistics.in-octets"] == "Nullable(UInt64)"  # counter64
    assert columns["statistics.in-errors"] == "Nullable(UInt32)"  # counter32
    assert columns["higher-layer-if"] == "Array(String)"  # leaf-list of leafref to string
    # the augment from ietf-ip: qualified where the module changes, not below
    assert columns["ietf-ip:ipv4.mtu"] == "Nullable(UInt16)"
    assert columns["ietf-ip:ipv4.enabled"] == "Nullable(Bool)"
    assert "ietf-ip:ipv4.address" in columns  # a nested list: one JSON column
    assert columns["ietf-ip:ipv4.address"] == "String"


def test_statistics_target_has_the_parent_key_and_bare_leaf_names(
    ietf_schema: SchemaContext,
) -> None:
    columns = columns_of(f"{IF}/statistics", ietf_schema)
    assert list(columns)[:3] == ["interface.name", "discontinuity-time", "in-octets"]
    assert columns["interface.name"] == "String"
    assert columns["in-octets"] == "Nullable(UInt64)"


def test_leaf_and_leaf_list_targets_give_their_own_name(ietf_schema: SchemaContext) -> None:
    assert columns_of(f"{IF}/oper-status", ietf_schema) == {
        "interface.name": "String",
        "oper-status": "LowCardinality(Nullable(String))",
    }
    assert columns_of("/ietf-system:system/dns-resolver/search", ietf_schema) == {
        "search": "Nullable(String)"  # one instance per value
    }


def test_tricky_types() -> None:
    schema = SchemaContext.cached((str(TYPED_YANG),))
    columns = columns_of("/yk-typed:things/thing", schema)
    assert columns == {
        "id": "UInt16",
        "ratio": "Nullable(Decimal(18, 3))",
        "state": "LowCardinality(Nullable(String))",
        "colour": "LowCardinality(Nullable(String))",
        "flags": "Array(LowCardinality(String))",
        "mixed": "Nullable(String)",
        "seen": "Nullable(DateTime64(9, 'UTC'))",
        "addr": "Nullable(String)",
        "marker": "Nullable(Bool)",
        "big": "Nullable(Int64)",
        # a leaf named like a meta column is module-qualified (still a valid member name)
        "yk-typed:version": "Nullable(String)",
        "weights": "Array(Decimal(18, 1))",
        "deep.small": "Nullable(Int8)",
        "part": "String",
    }


# -- chdb pipeline ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_catalog() -> Catalog:
    return load_catalog(ROOT / "examples" / "subscriptions.yaml")


@pytest.fixture(scope="module")
def typed_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    path = tmp_path_factory.mktemp("typed") / "subscriptions.yaml"
    path.write_text(
        f"defaults: {{yang_dirs: [{json.dumps(str(TYPED_YANG))}]}}\n"
        "subscriptions:\n"
        "  - id: 7\n"
        "    xpath: /yk-typed:things/thing\n"
        "    type: on-change-sync\n"
    )
    return load_catalog(path)


INTERFACES_JSON = {"ietf-interfaces:interfaces": {"interface": [
    {"name": "eth0", "type": "iana-if-type:ethernetCsmacd", "enabled": True,
     "oper-status": "up", "if-index": 3, "speed": "10000000000",
     "last-change": f"{RECENT_DAY}T09:59:00.5+01:00",
     "statistics": {"in-octets": "18446744073709551615", "in-errors": 7},
     "ietf-ip:ipv4": {"mtu": 1500, "address": [{"ip": "192.0.2.1", "prefix-length": 24}]}},
    {"name": "eth1", "oper-status": "down", "higher-layer-if": ["eth0", "lo"]},
]}}
INTERFACES_XML = (
    f'<envelope xmlns="{NS_ENV}"><event-time>{RECENT_DAY}T10:00:00Z</event-time>'
    "<hostname>pe1</hostname><sequence-number>1</sequence-number><contents>"
    f'<push-update xmlns="{NS_YP}"><id>1042</id><datastore-contents>'
    f'<interfaces xmlns="{NS_IF}" xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">'
    "<interface><name>eth0</name><type>ianaift:ethernetCsmacd</type><enabled>true</enabled>"
    "<oper-status>up</oper-status><if-index>03</if-index><speed>10000000000</speed>"
    f"<last-change>{RECENT_DAY}T09:59:00.5+01:00</last-change>"
    "<statistics><in-octets>18446744073709551615</in-octets><in-errors>7</in-errors>"
    f'</statistics><ipv4 xmlns="{NS_IP}"><mtu>1500</mtu>'
    "<address><ip>192.0.2.1</ip><prefix-length>24</prefix-length></address></ipv4>"
    "</interface><interface><name>eth1</name><oper-status>down</oper-status>"
    "<higher-layer-if>eth0</higher-layer-if><higher-layer-if>lo</higher-layer-if></interface>"
    "</interfaces></datastore-contents></push-update></contents></envelope>"
)
IF_COLUMNS = (
    "name, type, enabled, `oper-status`, `if-index`, speed, toString(`last-change`) AS lc, "
    "`statistics.in-octets`, `statistics.in-errors`, `ietf-ip:ipv4.mtu`, "
    "`ietf-ip:ipv4.address`, `higher-layer-if`, `description`"
)


def test_json_and_xml_give_identical_instance_rows(
    conn: ChdbConnection, example_catalog: Catalog
) -> None:
    json_pipe = Pipe(conn, example_catalog)
    xml_pipe = Pipe(conn, example_catalog)
    json_pipe.send(envelope(INTERFACES_JSON, seq=1))
    xml_pipe.send(INTERFACES_XML)
    query = f"SELECT node, instance_path, operation, leaves, {IF_COLUMNS} FROM {{}} ORDER BY 2"
    from_json = json_pipe.rows(query.format(json_pipe.table(IF_TOPIC, "ihist")))
    from_xml = xml_pipe.rows(query.format(xml_pipe.table(IF_TOPIC, "ihist")))
    assert from_json == from_xml
    eth0, eth1 = from_json
    assert eth0["instance_path"] == path("eth0")
    assert eth0["type"] == "iana-if-type:ethernetCsmacd"  # identityref as module:identity
    assert eth0["if-index"] == 3 and eth0["enabled"] is True
    assert eth0["statistics.in-octets"] == 2**64 - 1  # the full uint64 range
    assert eth0["lc"] == f"{RECENT_DAY} 08:59:00.500000000"  # UTC
    assert json.loads(eth0["ietf-ip:ipv4.address"]) == [{"ip": "192.0.2.1", "prefix-length": "24"}]
    assert eth0["description"] is None and "description" not in eth0["leaves"]
    assert eth1["higher-layer-if"] == ["eth0", "lo"]
    assert eth1["oper-status"] == "down"
    # the current state shows the same values
    now_json = json_pipe.now(IF_TOPIC, IF_COLUMNS)
    assert now_json == xml_pipe.now(IF_TOPIC, IF_COLUMNS)
    assert now_json[path("eth0")]["statistics.in-octets"] == 2**64 - 1


def test_tricky_types_reach_their_columns(conn: ChdbConnection, typed_catalog: Catalog) -> None:
    pipe = Pipe(conn, typed_catalog)
    topic = typed_catalog.topics[0].name
    thing = {"id": 4, "ratio": "1.500", "state": "off", "colour": "yk-typed:red",
             "flags": "c a", "mixed": -3, "seen": f"{RECENT_DAY}T10:00:00.123456789Z",
             "addr": "2001:DB8:0:0:0:0:0:1", "marker": [None], "big": "-9000000000000000000",
             "version": "v2", "weights": ["0.5", "12"], "deep": {"small": -8},
             "part": [{"n": 1, "label": "x"}]}
    xml = (
        f'<envelope xmlns="{NS_ENV}"><event-time>{RECENT_DAY}T10:00:00Z</event-time>'
        "<hostname>pe1</hostname><contents>"
        f'<push-update xmlns="{NS_YP}"><id>7</id><datastore-contents>'
        f'<things xmlns="{NS_TY}" xmlns:t="{NS_TY}"><thing><id>5</id><ratio>1.5</ratio>'
        "<state>off</state><colour>t:red</colour><flags>c a</flags><mixed>-3</mixed>"
        f"<seen>{RECENT_DAY}T10:00:00.123456789Z</seen><addr>2001:DB8::1</addr><marker/>"
        "<big>-9000000000000000000</big><version>v2</version><weights>0.5</weights>"
        "<weights>12</weights><deep><small>-8</small></deep>"
        "<part><n>1</n><label>x</label></part></thing></things>"
        "</datastore-contents></push-update></contents></envelope>"
    )
    pipe.send(envelope({"yk-typed:things": {"thing": [thing]}}, seq=1, sub=7))
    pipe.send(xml)
    rows = pipe.rows(
        "SELECT id, ratio, state, colour, flags, mixed, toString(seen) AS seen, addr, marker, "
        f"big, `yk-typed:version`, weights, `deep.small`, part FROM {pipe.table(topic, 'ihist')} "
        "ORDER BY id"
    )
    assert len(rows) == 2
    from_json, from_xml = rows
    assert from_json.pop("id") == 4 and from_xml.pop("id") == 5
    assert from_json == from_xml
    assert str(from_json["ratio"]) == "1.5"
    assert from_json["colour"] == "yk-typed:red"
    assert from_json["flags"] == ["c", "a"]
    assert from_json["seen"] == f"{RECENT_DAY} 10:00:00.123456789"
    assert from_json["addr"] == "2001:db8::1"  # RFC 5952
    assert from_json["marker"] is True
    assert from_json["big"] == -9_000_000_000_000_000_000
    assert from_json["yk-typed:version"] == "v2"
    assert [str(w) for w in from_json["weights"]] == ["0.5", "12"]
    assert from_json["deep.small"] == -8
    assert json.loads(from_json["part"]) == [{"label": "x", "n": "1"}]


# -- yang-patch semantics ----------------------------------------------------------------------

T1, T2, T3, T4 = (f"{RECENT_DAY}T10:00:0{i}Z" for i in range(1, 5))
STATE = "`oper-status`, description, enabled, `statistics.in-octets`"


@pytest.fixture
def pipe(conn: ChdbConnection, example_catalog: Catalog) -> Pipe:
    return Pipe(conn, example_catalog)


def send_patch(pipe: Pipe, *edits: dict[str, Any], seq: int, time: str) -> None:
    pipe.send(patch(list(edits), seq=seq, time=time), topic=IF_TOPIC)


def test_merge_updates_only_the_leaves_it_carries(pipe: Pipe) -> None:
    pipe.send(envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "eth0", "oper-status": "up", "description": "uplink", "enabled": True}
    ]}}, seq=1, time=T1), topic=IF_TOPIC)
    send_patch(pipe, edit("merge", f"{IF}=eth0", iface_value("eth0", **{"oper-status": "down"})),
               seq=2, time=T2)
    assert pipe.now(IF_TOPIC, STATE) == {path("eth0"): {
        "oper-status": "down", "description": "uplink", "enabled": True,
        "statistics.in-octets": None,
    }}
    # a merge of one leaf below the target: the edit's target is the leaf's container
    send_patch(pipe, edit("merge", f"{IF}=eth0/statistics",
                          {"ietf-interfaces:statistics": {"in-octets": "5"}}), seq=3, time=T3)
    assert pipe.now(IF_TOPIC, STATE)[path("eth0")] == {
        "oper-status": "down", "description": "uplink", "enabled": True,
        "statistics.in-octets": 5,
    }
    history = pipe.rows(f"SELECT operation, leaves FROM {pipe.table(IF_TOPIC, 'ihist')} "
                        "ORDER BY event_time")
    assert history == [
        # in column order (the schema's), whatever the order of the members in the message
        {"operation": "replace", "leaves": ["name", "description", "enabled", "oper-status"]},
        {"operation": "merge", "leaves": ["name", "oper-status"]},
        {"operation": "merge", "leaves": ["name", "statistics.in-octets"]},
    ]


def test_replace_after_merge_drops_the_leaves_it_does_not_carry(pipe: Pipe) -> None:
    send_patch(pipe, edit("merge", f"{IF}=eth0",
                          iface_value("eth0", description="uplink", enabled=True)),
               seq=1, time=T1)
    send_patch(pipe, edit("merge", f"{IF}=eth0", iface_value("eth0", **{"oper-status": "up"})),
               seq=2, time=T2)
    send_patch(pipe, edit("replace", f"{IF}=eth0", iface_value("eth0", enabled=False)),
               seq=3, time=T3)
    assert pipe.now(IF_TOPIC, STATE) == {path("eth0"): {
        "oper-status": None, "description": None, "enabled": False,
        "statistics.in-octets": None,
    }}


def test_delete_then_recreate(pipe: Pipe) -> None:
    send_patch(pipe, edit("merge", f"{IF}=eth0", iface_value("eth0", description="old")),
               edit("merge", f"{IF}=eth1", iface_value("eth1", description="stays")),
               seq=1, time=T1)
    send_patch(pipe, edit("delete", f"{IF}=eth0"), seq=2, time=T2)
    assert list(pipe.now(IF_TOPIC, STATE)) == [path("eth1")]
    # re-created by a merge: nothing of the deleted instance comes back
    send_patch(pipe, edit("merge", f"{IF}=eth0", iface_value("eth0", enabled=True)),
               seq=3, time=T3)
    assert pipe.now(IF_TOPIC, STATE)[path("eth0")] == {
        "oper-status": None, "description": None, "enabled": True,
        "statistics.in-octets": None,
    }
    # remove works like delete; the history keeps every step
    send_patch(pipe, edit("remove", f"{IF}=eth1"), seq=4, time=T4)
    assert list(pipe.now(IF_TOPIC, STATE)) == [path("eth0")]
    ops = pipe.rows(f"SELECT instance_path, groupArray(operation) AS ops FROM "
                    f"(SELECT * FROM {pipe.table(IF_TOPIC, 'ihist')} ORDER BY event_time) "
                    "GROUP BY instance_path ORDER BY instance_path")
    assert ops == [{"instance_path": path("eth0"), "ops": ["merge", "delete", "merge"]},
                   {"instance_path": path("eth1"), "ops": ["merge", "remove"]}]


def test_delete_of_a_leaf_below_the_target_clears_only_that_leaf(pipe: Pipe) -> None:
    send_patch(pipe, edit("merge", f"{IF}=eth0",
                          iface_value("eth0", description="x", enabled=True)), seq=1, time=T1)
    send_patch(pipe, edit("delete", f"{IF}=eth0/description"), seq=2, time=T2)
    assert pipe.now(IF_TOPIC, STATE)[path("eth0")] == {
        "oper-status": None, "description": None, "enabled": True,
        "statistics.in-octets": None,
    }


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0), (2, 0, 1)])
def test_an_older_replay_never_wins(pipe: Pipe, order: Sequence[int]) -> None:
    steps = [
        (1, T1, edit("replace", f"{IF}=eth0",
                     iface_value("eth0", description="first", enabled=True))),
        (2, T2, edit("merge", f"{IF}=eth0", iface_value("eth0", description="second"))),
        (3, T3, edit("delete", f"{IF}=eth0")),
    ]
    for index in order:
        seq, time, change = steps[index]
        send_patch(pipe, change, seq=seq, time=time)
    assert pipe.now(IF_TOPIC, STATE) == {}  # the delete is the newest, in any arrival order
    # replaying an older version again after a newer re-create changes nothing
    send_patch(pipe, edit("merge", f"{IF}=eth0", iface_value("eth0", enabled=False)),
               seq=4, time=T4)
    for seq, time, change in steps:
        send_patch(pipe, change, seq=seq, time=time)
    assert pipe.now(IF_TOPIC, STATE) == {path("eth0"): {
        "oper-status": None, "description": None, "enabled": False,
        "statistics.in-octets": None,
    }}


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (3, 2, 1, 0), (2, 3, 0, 1)])
def test_one_batch_applies_its_patches_by_version_in_any_order(
    pipe: Pipe, order: Sequence[int]
) -> None:
    # one insert block (an ingest batch): the versions must decide within a block too (the
    # table merges a block's rows on insert), a replace clearing leaves, a newer delete hiding eth1
    steps = [
        patch([edit("merge", f"{IF}=eth0", iface_value("eth0", description="a", enabled=True)),
               edit("merge", f"{IF}=eth1", iface_value("eth1", description="b"))],
              seq=1, time=T1),
        patch([edit("merge", f"{IF}=eth0", iface_value("eth0", **{"oper-status": "up"}))],
              seq=2, time=T2),
        patch([edit("replace", f"{IF}=eth0", iface_value("eth0", description="c"))],
              seq=3, time=T3),
        patch([edit("delete", f"{IF}=eth1")], seq=4, time=T4),
    ]
    pipe.send_all([steps[i] for i in order], topic=IF_TOPIC)
    expected = {path("eth0"): {
        "oper-status": None, "description": "c", "enabled": None,
        "statistics.in-octets": None,
    }}
    assert pipe.now(IF_TOPIC, STATE) == expected
    # the whole batch again (at-least-once ingest) changes nothing
    pipe.send_all(steps, topic=IF_TOPIC)
    assert pipe.now(IF_TOPIC, STATE) == expected


def test_the_state_keeps_the_newest_row_per_scope_and_its_answer_when_parts_merge(
    pipe: Pipe,
) -> None:
    steps = [
        edit("merge", f"{IF}=eth0", iface_value("eth0", description="a")),
        edit("merge", f"{IF}=eth0", iface_value("eth0", **{"oper-status": "up"})),
        edit("replace", f"{IF}=eth0", iface_value("eth0", enabled=False)),
        edit("merge", f"{IF}=eth0", iface_value("eth0", description="b")),
        edit("delete", f"{IF}=eth0/description"),
        edit("merge", f"{IF}=eth0", iface_value("eth0", **{"oper-status": "down"})),
    ]
    for seq, change in enumerate(steps, 1):
        send_patch(pipe, change, seq=seq, time=f"{RECENT_DAY}T10:00:0{seq}Z")
    for seq in (1, 2, 3):  # older replays, each its own insert
        send_patch(pipe, steps[seq - 1], seq=seq, time=f"{RECENT_DAY}T10:00:0{seq}Z")
    expected = {path("eth0"): {
        "oper-status": "down", "description": None, "enabled": False,
        "statistics.in-octets": None,
    }}
    assert pipe.now(IF_TOPIC, STATE) == expected
    state = pipe.table(IF_TOPIC, "istate")
    pipe.conn.command(f"OPTIMIZE TABLE {state} FINAL")
    assert pipe.now(IF_TOPIC, STATE) == expected
    # one row per scope: the replace, the description merges, the oper-status merges, the delete
    # of description; each the newest of its scope
    rows = pipe.rows(f"SELECT covers, under, scope, sequence FROM (SELECT *, "
                     f"bitAnd(bitShiftRight(version, 64), 0xFFFFFFFF) AS sequence FROM {state}) "
                     "ORDER BY sequence")
    assert [(r["covers"], r["under"], r["scope"], r["sequence"]) for r in rows] == [
        (True, "", [], 3),
        (False, "", ["name", "description"], 4),
        (True, "description", [], 5),
        (False, "", ["name", "oper-status"], 6),
    ]


def test_periodic_statistics_give_one_row_per_interface(pipe: Pipe) -> None:
    data = {"ietf-interfaces:interfaces": {"interface": [
        {"name": f"eth{i}", "statistics": {"in-octets": str(100 * i)}} for i in range(10)
    ]}}
    # a recent event time: the topic keeps 2 days, older rows are dropped on insert (TTL)
    recent = datetime.now(UTC).isoformat()
    pipe.send(envelope(data, seq=1, sub=1043, time=recent), topic=STATS_TOPIC)
    rows = pipe.rows(f"SELECT `interface.name` AS n, `in-octets` AS o, instance_path "
                     f"FROM {pipe.table(STATS_TOPIC, 'ihist')} ORDER BY o")
    assert [r["n"] for r in rows] == [f"eth{i}" for i in range(10)]
    assert [r["o"] for r in rows] == [100 * i for i in range(10)]
    assert rows[3]["instance_path"] == f"{path('eth3')}/statistics"


# -- DDL -------------------------------------------------------------------------------------


@pytest.mark.parametrize("flavour", [
    DdlOptions(mode="server", kafka_brokers="k1:9092"),
    DdlOptions(mode="embedded"),
    DdlOptions(mode="server", cluster="prod"),
], ids=["server", "embedded", "cluster"])
def test_instance_ddl_parses_with_clickhouse(
    conn: ChdbConnection, example_catalog: Catalog, flavour: DdlOptions
) -> None:
    statements = render_catalog(example_catalog, flavour)
    validate(conn, statements)
    names = {s.name for s in statements}
    for topic in typed_topics(example_catalog):
        tables = topic_tables(topic, "yangkey", cluster=flavour.cluster is not None)
        for name in (tables.ihist, tables.ihist_local, tables.istate, tables.istate_local,
                     tables.instances, tables.iparsed, tables.mv_iparse, tables.mv_ihist,
                     tables.mv_istate):
            assert f"yangkey.{name}" in names


def test_server_ddl_creates_on_chdb_over_the_kafka_engine(
    conn: ChdbConnection, example_catalog: Catalog
) -> None:
    """The instance views over the real Kafka engine's parsed table are accepted by ClickHouse
    (chdb answers "Shutdown was called" when a Kafka table starts: tolerated, as in test_ddl)."""
    options = DdlOptions(mode="server", database="typed_server", kafka_brokers="127.0.0.1:1")
    for statement in render_catalog(example_catalog, options):
        try:
            conn.command(statement.sql)
        except ClickHouseError as exc:
            assert "Shutdown was called" in str(exc), statement.name
    tables = topic_tables(IF_TOPIC, "typed_server")
    created = {row["name"] for row in conn.query(
        "SELECT name FROM system.tables WHERE database = 'typed_server'")}
    assert {tables.ihist, tables.istate, tables.instances, tables.mv_ihist,
            tables.mv_istate} <= created


@pytest.mark.parametrize("raw", [envelope(INTERFACES_JSON, seq=1), INTERFACES_XML],
                         ids=["json", "xml"])
def test_ingest_computes_the_feed_the_producer_sends(
    example_catalog: Catalog, raw: str
) -> None:
    feed_on = ProducerKnobs.from_catalog(example_catalog, instances=True)
    with_feed = MessageBuilder(example_catalog, feed_on, strict=True).build(raw.encode(), "t")
    knobs = ProducerKnobs.from_catalog(example_catalog, instances=False)
    without = MessageBuilder(example_catalog, knobs, strict=True).build(raw.encode(), "t")
    assert isinstance(with_feed, list) and isinstance(without, list)
    feeds = CatalogFeeds(example_catalog)
    for sent, bare in zip(with_feed, without, strict=True):
        assert bare.header(HEADER_INSTANCES) is None
        row = QueueRow(bare.topic, 0, 0, bare.key, bare.value, list(bare.headers))
        added = dict(add_instances(feeds, row).headers)[HEADER_INSTANCES]
        assert added is not None and added == sent.header(HEADER_INSTANCES).encode()
        assert len(json.loads(added)) == 2  # eth0 and eth1
