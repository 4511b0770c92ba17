"""Issue 29, items 2 and 3 — a real fleet: subscription identity is (node, id), and one bad
subscription does not take the catalog down.

The fleet (tests/fixtures/fleet): a 6WIND VSR, a Huawei OLT and an IOS XR router all use
subscription id 1, each with its own filter; an IOS-XE and the NE8000s (a node pattern) share
211; id 2 is fleet-wide with an OpenConfig override for the IOS XR router, written
root-relative as IOS XR reports it; a second IOS XR's subscription 3 names a native model this
collector lacks. The YANG modules are the IETF ones pyang ships and two small OpenConfig-like
ones written for these tests."""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from pathlib import Path

import orjson
import pytest
from cli_helpers import assert_one_error, run

from yangkey.catalog import build_catalog, load_catalog
from yangkey.clickhouse.apply import apply
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ddl import DdlOptions, render_catalog
from yangkey.clickhouse.ingest.arrow import insert_rows
from yangkey.clickhouse.ingest.rows import QueueRow
from yangkey.clickhouse.queries import current_state, history
from yangkey.config import parse_subscriptions
from yangkey.errors import ConfigError, YangkeyError
from yangkey.fleet import FleetIndex
from yangkey.messages import HEADER_GENERATION, HEADER_SUBSCRIPTION_TYPE, KeyedMessage, Rejection
from yangkey.producer import MessageBuilder
from yangkey.schema import SchemaContext
from yangkey.shared_catalog import (
    CatalogState,
    RecordKey,
    SharedBranch,
    SharedCatalog,
    SharedSubscription,
)
from yangkey.spark.source.splitting import split_records
from yangkey.templates import compile_subscription

REPO = Path(__file__).resolve().parents[2]
FLEET = REPO / "tests" / "fixtures" / "fleet"
FLEET_FILE = FLEET / "subscriptions.yaml"
EXAMPLE_FLEET = REPO / "examples" / "fleet.yaml"
#: The line of the fleet file's bad entry (its `- id: 3`).
BAD_LINE = 47
IF = "/ietf-interfaces:interfaces/interface"
CLOCK = "/ietf-system:system/clock"
HW = "/ietf-hardware:hardware/component"

#: (node, subscription id) -> the topic its notifications go to: the fixture's answer key.
TOPIC_OF = {
    ("vsr-paris-1", 1): "lab-current-state-if-interfaces-interface",
    ("olt-ma5800-1", 1): "lab-stats-if-interfaces-interface-statistics",
    ("xr-lab-1", 1): "lab-stats-oc-if-interfaces-interface-state-counters",
    ("xr-lab-1", 2): "lab-state-oc-platform-components-component-state",
    ("vsr-paris-1", 2): "lab-state-hw-hardware-component",
    ("olt-ma5800-1", 2): "lab-state-hw-hardware-component",
    ("xr-lab-2", 2): "lab-state-hw-hardware-component",
    ("xe-core-1", 211): "lab-state-change-if-interfaces-interface-ip-ipv4-address",
    ("ne8000-edge-1", 211): "lab-stats-sys-system-clock",
    ("ne8000-edge-2", 211): "lab-stats-sys-system-clock",
}


def fleet_records() -> list[tuple[bytes, str]]:
    """Every notification of the fleet folder, as ``yangkey produce`` splits them."""
    return [
        record
        for path in sorted((FLEET / "notifications").iterdir())
        for record in split_records(path.read_bytes(), path.name)
    ]


# --------------------------------------------------------------------------- the file


def test_a_mixed_fleet_file_declares_one_id_per_device() -> None:
    catalog = load_catalog(FLEET_FILE)
    assert Counter(entry.id for entry in catalog.entries) == {1: 3, 2: 2, 211: 2}
    assert sorted(str(e.node_pattern) for e in catalog.entries if e.id == 1) == [
        "olt-ma5800-1",
        "vsr-paris-1",
        "xr-lab-1",
    ]


def test_the_same_node_and_id_declared_differently_is_one_error_naming_both_lines(
    tmp_path: Path,
) -> None:
    text = (
        "subscriptions:\n"
        f"  - id: 1\n    node: pe1\n    xpath: {IF}\n"
        f"  - id: 1\n    node: pe2\n    xpath: {CLOCK}\n"
        f"  - id: 1\n    node: pe1\n    xpath: {CLOCK}\n"
    )
    with pytest.raises(ConfigError) as info:
        parse_subscriptions(text, "fleet.yaml")
    error = info.value
    assert error.position is not None and error.position.line == 8
    assert "subscription 1 for node pe1 is declared twice (first at line 2)" in error.reason


def test_two_fleet_wide_entries_of_one_id_differ_the_error_says_node() -> None:
    text = f"subscriptions:\n  - id: 1\n    xpath: {IF}\n  - id: 1\n    xpath: {CLOCK}\n"
    with pytest.raises(ConfigError, match="give each entry the 'node' it is for"):
        parse_subscriptions(text)


def test_an_identical_repeat_is_accepted_once_with_a_warning() -> None:
    entry = f"  - id: 1\n    node: pe1\n    xpath: {IF}\n"
    model = parse_subscriptions("subscriptions:\n" + entry + entry, "fleet.yaml")
    assert len(model.subscriptions) == 1
    (warning,) = model.warnings
    assert warning.startswith("fleet.yaml at line 5")
    assert "repeats an identical entry (first at line 2)" in warning
    catalog = build_catalog(model)
    assert catalog.warnings == (warning,)


@pytest.mark.parametrize("node", ["''", "'  '", '"pe1\\nevil"'])
def test_a_node_must_be_a_name_or_pattern(node: str) -> None:
    with pytest.raises(ConfigError, match=r"subscriptions\.0\.node"):
        parse_subscriptions(f"subscriptions:\n  - id: 1\n    node: {node}\n    xpath: {IF}\n")


# --------------------------------------------------------------------------- precedence


PRECEDENCE = f"""
subscriptions:
  - id: 5
    xpath: {CLOCK}
  - id: 5
    node: "pe*"
    xpath: {IF}
  - id: 5
    node: "*nyc*"
    xpath: {IF}/statistics
  - id: 5
    node: pe1.nyc
    xpath: {HW}
  - id: 6
    node: pe1.nyc
    xpath: {CLOCK}
"""


@pytest.mark.parametrize(
    ("node", "xpath"),
    [
        ("pe1.nyc", HW),  # the exact node beats both patterns and the fleet-wide entry
        ("pe2.nyc", IF),  # two patterns match: the first declared wins
        ("core1.nyc", IF + "/statistics"),
        ("core1.lon", CLOCK),  # no node entry matches: fleet-wide
        (None, CLOCK),  # node unknown: fleet-wide
    ],
)
def test_exact_node_beats_pattern_beats_fleet_wide(node: str | None, xpath: str) -> None:
    catalog = build_catalog(parse_subscriptions(PRECEDENCE))
    entry = catalog.entry(5, node)
    assert entry is not None and entry.compiled.xpath == xpath


def test_an_id_declared_for_other_nodes_only_is_unknown_for_this_one() -> None:
    catalog = build_catalog(parse_subscriptions(PRECEDENCE))
    assert catalog.entry(6, "pe1.nyc") is not None
    assert catalog.entry(6, "pe2.nyc") is None
    assert catalog.known("pe2.nyc") == "the catalog has 5 for node pe2.nyc"


def test_fleet_index_keeps_the_first_item_of_an_identity() -> None:
    index: FleetIndex[str] = FleetIndex()
    for node, item in [("a", "first"), ("a", "second"), (None, "fleet"), ("a?", "pattern")]:
        index.add(9, node, item)
    assert (index.pick(9, "a"), index.pick(9, "ab"), index.pick(9, "b")) == (
        "first",
        "pattern",
        "fleet",
    )
    assert index.pick(10, "a") is None


# --------------------------------------------------------------------------- bad subscriptions


def test_a_bad_subscription_is_skipped_and_named_the_rest_compiles() -> None:
    catalog = load_catalog(FLEET_FILE)
    (skipped,) = catalog.skipped
    assert (skipped.id, skipped.node_pattern, skipped.line) == (3, "xr-lab-2", BAD_LINE)
    assert skipped.message().startswith(f"{FLEET_FILE} at line {BAD_LINE}")
    assert "subscription 3 for node xr-lab-2 skipped" in skipped.message()
    assert "unknown prefix or module 'Cisco-IOS-XR-infra-statsd-oper'" in skipped.reason
    assert len(catalog.entries) == 7
    assert all("Cisco" not in topic.name for topic in catalog.topics)


def test_strict_fails_on_the_first_bad_subscription() -> None:
    with pytest.raises(YangkeyError, match=f"subscription 3 for node xr-lab-2 .line {BAD_LINE}.: "):
        load_catalog(FLEET_FILE, strict=True)


def test_a_file_where_nothing_compiles_is_an_error() -> None:
    text = "subscriptions:\n  - id: 1\n    xpath: /ietf-interfaces:nope\n"
    with pytest.raises(YangkeyError, match=r"subscription 1 \(line 2\): .*nope"):
        build_catalog(parse_subscriptions(text))


def test_a_root_relative_path_is_read_as_absolute_with_a_warning(
    ietf_schema: SchemaContext,
) -> None:
    compiled = compile_subscription(
        "ietf-interfaces:interfaces/interface | /ietf-system:system/clock", ietf_schema
    )
    assert compiled.xpath == "/ietf-interfaces:interfaces/interface | /ietf-system:system/clock"
    assert [b.template for b in compiled.branches] == [f"{IF}[name='%s']", CLOCK]
    (warning,) = compiled.warnings
    assert "'ietf-interfaces:interfaces/interface' read as '/ietf-interfaces:interfaces/inter" in (
        warning
    )
    entry = load_catalog(FLEET_FILE).entry(2, "xr-lab-1")
    assert entry is not None
    assert entry.compiled.branches[0].template == (
        "/openconfig-platform:components/component[name='%s']/state"
    )
    assert "root-relative" in entry.compiled.warnings[0]


# --------------------------------------------------------------------------- the producer


def test_every_fleet_notification_goes_to_its_own_node_and_id_topic() -> None:
    builder = MessageBuilder(load_catalog(FLEET_FILE))
    keyed: list[KeyedMessage] = []
    rejected: list[tuple[str, Rejection]] = []
    for raw, source in fleet_records():
        result = builder.build(raw, source)
        if isinstance(result, Rejection):
            rejected.append((source, result))
        else:
            assert result, source
            keyed.extend(result)
    for message in keyed:
        assert message.key is not None
        node, sub, _ = message.key.decode().split("\n", 2)
        assert message.topic == TOPIC_OF[(node, int(sub))], message.key
    assert {tuple(m.key.decode().split("\n")[:2]) for m in keyed if m.key} == {
        (node, str(sub)) for node, sub in TOPIC_OF
    }
    assert [(source, r.kind) for source, r in rejected] == [
        ("xr-lab-2.jsonl:1", "bad-subscription"),
        ("xr-lab-2.jsonl:2", "bad-subscription"),
        ("xr-lab-2.jsonl:4", "notification"),
    ]
    bad = rejected[0][1].reason
    assert bad.startswith("subscription 3 for node xr-lab-2 does not compile, the catalog ")
    assert f"{FLEET_FILE} line {BAD_LINE}" in bad and "Cisco-IOS-XR-infra-statsd-oper" in bad
    unknown = rejected[2][1].reason
    assert unknown.startswith("unknown subscription id 1 for node xr-lab-2 (the catalog has 2 ")


def test_fleet_keys_are_the_devices_own() -> None:
    builder = MessageBuilder(load_catalog(FLEET_FILE))
    keys = {
        source: [m.key for m in result]
        for raw, source in fleet_records()
        if isinstance(result := builder.build(raw, source), list)
    }
    assert keys["xr-lab-1.jsonl:1"] == [
        b"xr-lab-1\n1\n"
        b"/openconfig-interfaces:interfaces/interface[name='Bundle-Ether1']/state/counters | "
        b"/openconfig-interfaces:interfaces/interface[name='HundredGigE0/0/0/0']/state/counters"
    ]
    assert (
        keys["olt-ma5800-1.jsonl:1"]
        == keys["olt-ma5800-1.jsonl:2"]
        == [
            b"olt-ma5800-1\n1\n"
            b"/ietf-interfaces:interfaces/interface[name='gpon 0/1/0']/statistics | "
            b"/ietf-interfaces:interfaces/interface[name='gpon 0/1/1']/statistics"
        ]
    )
    assert keys["vsr-paris-1.jsonl:2"] == [
        b"vsr-paris-1\n1\n/ietf-interfaces:interfaces/interface[name='eth1']"
    ]
    assert keys["xe-core-1.xml"] == [
        b"xe-core-1\n211\n/ietf-interfaces:interfaces/interface[name='GigabitEthernet1']"
        b"/ietf-ip:ipv4/address[ip='192.0.2.1']"
    ]
    assert keys["ne8000.jsonl:2"] == [b"ne8000-edge-2\n211\n/ietf-system:system/clock"]


def test_headers_are_those_of_the_nodes_subscription() -> None:
    """Three devices' subscription 1 differ in type: each message says its own (the
    builder's header cache must not take one device's for another's)."""
    builder = MessageBuilder(load_catalog(FLEET_FILE))
    types = {}
    for raw, source in fleet_records():
        result = builder.build(raw, source)
        if isinstance(result, list):
            for message in result:
                assert message.key is not None
                node, sub, _ = message.key.decode().split("\n", 2)
                types[(node, int(sub))] = message.header(HEADER_SUBSCRIPTION_TYPE)
    assert types[("vsr-paris-1", 1)] == "on-change-sync"
    assert types[("olt-ma5800-1", 1)] == "periodic"
    assert types[("xe-core-1", 211)] == "on-change"
    assert types[("ne8000-edge-1", 211)] == "periodic"


# --------------------------------------------------------------------------- learning, shared


class MemoryLog:
    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []

    def read(self, store: CatalogState) -> None:
        for offset in range(store.end, len(self.records)):
            store.apply(offset, *self.records[offset])

    def append(self, key: bytes, value: bytes | None) -> int:
        self.records.append((key, value))
        return len(self.records) - 1


def telemetry(node: str, sub_id: int, xpath: str | None, data: dict[str, object]) -> bytes:
    subscription: dict[str, object] = {"id": sub_id}
    if xpath is not None:
        subscription["xpath-filter"] = xpath
    envelope = {
        "event-time": "2026-03-02T09:00:00Z",
        "contents": {"ietf-yang-push:push-update": {"id": sub_id, "datastore-contents": data}},
    }
    return orjson.dumps(
        {
            "ietf-telemetry-message:message": {
                "network-node-manifest": {"name": node},
                "telemetry-message-metadata": {"yang-push-subscription": subscription},
                "payload": {"ietf-yp-notification:envelope": envelope},
            }
        }
    )


CLOCK_DATA = {"ietf-system:system": {"clock": {"timezone-utc-offset": 60}}}
IF_DATA = {"ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}]}}


def test_learned_subscriptions_are_per_node_and_generations_per_identity() -> None:
    log = MemoryLog()
    catalog = build_catalog(parse_subscriptions("learn: true\n"))
    catalog.attach(SharedCatalog(log, "producer-a"))
    builder = MessageBuilder(catalog)
    first = builder.build(telemetry("pe1", 7, CLOCK, CLOCK_DATA), "t:1")
    other_node = builder.build(telemetry("pe2", 7, IF, IF_DATA), "t:2")
    changed = builder.build(telemetry("pe1", 7, IF, IF_DATA), "t:3")
    generations = []
    for result in (first, other_node, changed):
        assert isinstance(result, list)
        generations.append(result[0].header(HEADER_GENERATION))
    # pe2's subscription 7 is not a change of pe1's: generation 1; pe1's new filter is its 2
    assert generations == ["1", "1", "2"]
    records = SharedCatalog(log, "reader").find(7)
    assert sorted((r.node_pattern, r.generation) for r in records) == [
        ("pe1", 1),
        ("pe1", 2),
        ("pe2", 1),
    ]
    keys = [orjson.loads(key) for key, _ in log.records]
    assert [k["for-node"] for k in keys] == ["pe1", "pe2", "pe1"]


def test_a_node_learns_its_own_subscription_from_the_shared_catalog() -> None:
    log = MemoryLog()
    writer = build_catalog(parse_subscriptions("learn: true\n"))
    writer.attach(SharedCatalog(log, "a"))
    assert isinstance(
        MessageBuilder(writer).build(telemetry("pe1", 7, CLOCK, CLOCK_DATA), "t"), list
    )
    reader = build_catalog(parse_subscriptions("learn: true\n"))
    reader.attach(SharedCatalog(log, "b"))
    builder = MessageBuilder(reader)
    (message,) = builder.build(telemetry("pe1", 7, None, CLOCK_DATA), "t:1")  # type: ignore[misc]
    assert message.key == b"pe1\n7\n/ietf-system:system/clock"
    # pe2's subscription 7 is pe2's: pe1's filter is not a guess for it
    refused = builder.build(telemetry("pe2", 7, None, CLOCK_DATA), "t:2")
    assert isinstance(refused, Rejection)
    assert refused.reason.startswith("subscription 7 for node pe2: metadata has neither")


def old_record(sub_id: int, xpath: str, topic: str) -> SharedSubscription:
    return SharedSubscription(
        id=sub_id,
        origin="learned",
        filter=xpath,
        subtree=False,
        xpath=xpath,
        content_id="",
        generation=1,
        subscription_type="periodic",
        compaction=False,
        branches=(SharedBranch(topic, xpath, xpath, "container"),),
    )


def test_records_written_before_subscriptions_had_a_node_still_apply_to_every_node() -> None:
    log = MemoryLog()
    record = old_record(7, CLOCK, "sys-system-clock")
    # the key an earlier yangkey wrote: no for-node
    old_key = {"keytype": "SUBSCRIPTION", "id": 7, "digest": record.digest, "seq": 0}
    log.append(orjson.dumps({**old_key, "node": "old-writer"}), record.encode())
    state = CatalogState()
    log.read(state)
    assert list(state.records.values()) == [replace_writer(record, "old-writer")]
    catalog = build_catalog(parse_subscriptions("learn: true\n"))
    catalog.attach(SharedCatalog(log, "new"))
    (message,) = MessageBuilder(catalog).build(  # type: ignore[misc]
        telemetry("any-node", 7, None, CLOCK_DATA), "t:1"
    )
    assert message.topic == "sys-system-clock"


def replace_writer(record: SharedSubscription, writer: str) -> SharedSubscription:
    return SharedSubscription.from_json(record.to_json(), writer=writer)


def test_a_key_naming_another_node_than_its_record_is_ignored() -> None:
    record = old_record(7, CLOCK, "t")
    state = CatalogState()
    state.apply(0, RecordKey(record.digest, 7, 0, "w", "pe9").encode(), record.encode())
    assert state.records == {} and state.ignored == 1


# --------------------------------------------------------------------------- the CLI


def test_catalog_show_reports_the_bad_subscription_and_shows_the_rest() -> None:
    result = run("catalog", "show", "-s", str(FLEET_FILE), "--format", "json")
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith(
        f"warning: {FLEET_FILE} at line {BAD_LINE}, column 1: subscription 3 "
    )
    assert lines[-1].startswith("1 of 8 subscriptions skipped")
    document = json.loads(result.stdout)
    assert len(document["subscriptions"]) == 7
    (skipped,) = document["skipped"]
    assert (skipped["subscription_id"], skipped["node"], skipped["line"]) == (
        3,
        "xr-lab-2",
        BAD_LINE,
    )
    assert any(
        w.startswith("subscription 2 for node xr-lab-1: root-relative")
        for w in (document["warnings"])
    )


def test_catalog_show_node_shows_what_that_node_uses() -> None:
    result = run("catalog", "show", "-s", str(FLEET_FILE), "--node", "xr-lab-1", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["subscriptions"]
    assert [(r["subscription_id"], r["node"], r["topic"]) for r in rows] == [
        (2, "xr-lab-1", TOPIC_OF[("xr-lab-1", 2)]),
        (1, "xr-lab-1", TOPIC_OF[("xr-lab-1", 1)]),
    ]
    only = run("catalog", "show", "-s", str(FLEET_FILE), "-n", "ne8000-edge-7", "-i", "211")
    assert [line.split("\t")[3] for line in only.stdout.splitlines()[1:]] == ["ne8000-*"]


def test_catalog_show_strict_is_one_error() -> None:
    assert_one_error(
        run("catalog", "show", "-s", str(FLEET_FILE), "--strict"),
        str(FLEET_FILE),
        f"subscription 3 for node xr-lab-2 (line {BAD_LINE})",
        "Cisco-IOS-XR-infra-statsd-oper",
    )


def test_ddl_generate_says_what_it_left_out(tmp_path: Path) -> None:
    result = run("ddl", "generate", "-s", str(FLEET_FILE), "--mode", "embedded")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1].startswith("1 of 8 subscriptions skipped")
    assert "-- Not included: 1 of 8 subscriptions skipped" in result.stdout
    assert "lab-stats-oc-if-interfaces-interface-state-counters" in result.stdout


def test_the_readme_fleet_example_compiles() -> None:
    result = run("catalog", "show", "-s", str(EXAMPLE_FLEET), "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["subscriptions"]
    assert Counter(r["subscription_id"] for r in rows)[1] >= 3
    assert result.stderr.count("root-relative") == 0  # warnings come with the document
    assert any("root-relative" in w for w in json.loads(result.stdout)["warnings"])


def test_the_readme_fleet_block_compiles_as_the_example_file_does() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Declaring a fleet") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None
    shown = build_catalog(parse_subscriptions(block.group(1)))
    example = load_catalog(EXAMPLE_FLEET)
    assert [(e.identity, e.compiled.xpath, e.subscription_type) for e in shown.entries] == [
        (e.identity, e.compiled.xpath, e.subscription_type) for e in example.entries
    ]
    used = {}
    for node in ("core-1.par", "core-2.par", "pe-1.par"):
        entry = shown.entry(2, node)
        assert entry is not None
        used[node] = entry.compiled.xpath
    assert used == {"core-1.par": IF + "/statistics", "core-2.par": HW, "pe-1.par": CLOCK}


def test_a_file_without_nodes_keeps_its_meaning() -> None:
    """examples/subscriptions.yaml declares no node: every entry is fleet-wide."""
    catalog = load_catalog(REPO / "examples" / "subscriptions.yaml")
    assert all(entry.node_pattern is None for entry in catalog.entries)
    assert catalog.skipped == () and catalog.warnings == ()
    assert catalog.entry(1042, "any-router") is catalog.entry(1042, None) is not None


# --------------------------------------------------------------------------- ClickHouse

_databases = itertools.count()


def test_state_and_history_filter_by_node_and_id(conn: ChdbConnection) -> None:
    """The fleet's messages through the embedded ClickHouse: subscription id 1 is three
    devices' subscriptions, and a new generation of one of them hides none of the others."""
    catalog = load_catalog(FLEET_FILE)
    database = f"yk_fleet_{next(_databases)}"
    apply(conn, render_catalog(catalog, DdlOptions(database=database, mode="embedded")), database)
    builder = MessageBuilder(catalog)
    by_topic: dict[str, list[QueueRow]] = {}
    for raw, source in fleet_records():
        result = builder.build(raw, source)
        for message in result if isinstance(result, list) else ():
            rows = by_topic.setdefault(message.topic, [])
            rows.append(queue_row(message, len(rows)))
    # the VSR's subscription 1 changed (generation 2): its new message hides its old keys only
    vsr = by_topic["lab-current-state-if-interfaces-interface"]
    newer = vsr[0]._replace(offset=len(vsr), headers=with_generation(vsr[0].headers, b"2"))
    vsr.append(newer)
    for topic, rows in by_topic.items():
        insert_rows(conn, database, topic, rows)

    def nodes(rows: list[dict[str, object]]) -> list[object]:
        return sorted({r["node"] for r in rows})  # type: ignore[type-var]

    ones = current_state(conn, database, subscription_id=1)
    assert nodes(ones) == ["olt-ma5800-1", "vsr-paris-1", "xr-lab-1"]
    vsr_rows = current_state(conn, database, node="vsr-paris-1", subscription_id=1)
    assert [(r["generation"], r["kafka_offset"]) for r in vsr_rows] == [(2, 2)]
    olt = current_state(conn, database, node="olt-ma5800-1", subscription_id=1)
    assert [r["generation"] for r in olt] == [1]
    assert current_state(conn, database, node="olt-ma5800-1", subscription_id=211) == []
    page = history(conn, database, node="xr-lab-1", subscription_id=2)
    assert [r["kafka_topic"] for r in page.rows] == [TOPIC_OF[("xr-lab-1", 2)]]
    current = history(conn, database, subscription_id=1, current_generation=True)
    assert Counter(str(r["node"]) for r in current.rows) == {
        "vsr-paris-1": 1,
        "olt-ma5800-1": 2,
        "xr-lab-1": 1,
    }
    pattern = history(conn, database, subscription_id=211)
    assert nodes(pattern.rows) == ["ne8000-edge-1", "ne8000-edge-2", "xe-core-1"]


def queue_row(message: KeyedMessage, offset: int) -> QueueRow:
    return QueueRow(
        topic=message.topic,
        partition=0,
        offset=offset,
        key=message.key,
        value=message.value,
        headers=list(message.headers),
        timestamp_ms=1_772_442_000_000,
        error="",
        raw_message=b"",
    )


def with_generation(
    headers: list[tuple[str, bytes | None]], generation: bytes
) -> list[tuple[str, bytes | None]]:
    return [(n, generation if n == HEADER_GENERATION else v) for n, v in headers]
