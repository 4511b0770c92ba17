"""Issue 35.1: the Grafana dashboards generated from the example subscriptions.

Grafana cannot run here. What is checked instead:

* every panel's SQL and every variable query, expanded as Grafana and the ClickHouse plugin
  expand them (:mod:`grafana_emulation`), runs on chdb over the demo's data set (plus counter
  and gauge series a device would send) and returns the columns the panel reads, with rows;
* the counter rates are the right numbers (a wrap, a discontinuity), and the node and instance
  variables filter;
* the JSON validates against a JSON Schema of the dashboard model the provisioning loads
  (tests/fixtures/grafana, written from Grafana's dashboard kind), plus what a schema cannot
  say: unique ids and uids, panels inside the 24-column grid without overlap, every ``$var``
  declared;
* the compose stack's Grafana provisions the plugin, the data source and these dashboards,
  and deploy/grafana/dashboards is what ``yangkey dashboards`` writes today.

Not checked: that Grafana's front end draws the panels (no Grafana here).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from cli_helpers import run
from grafana_emulation import ALL, Selection, interpolate
from typed_helpers import Pipe, envelope

from yangkey.catalog import Catalog, load_catalog
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.dashboards.commands import dashboard_text
from yangkey.dashboards.grafana import PLUGIN, PLUGIN_VERSION, Dashboard, catalog_dashboards
from yangkey.dashboards.queries import Panel
from yangkey.demo.sample import generate

ROOT = Path(__file__).resolve().parents[2]
DB = "yangkey"
SCHEMA = json.loads((ROOT / "tests/fixtures/grafana/dashboard.schema.json").read_text())
IF = "/ietf-interfaces:interfaces/interface"
STATS = "netops-stats-if-interfaces-interface-statistics"
IFACES = "netops-current-state-if-interfaces-interface"
ADDRESSES = "netops-state-change-if-interfaces-interface-ip-ipv4-address"
NOW = datetime.now(UTC).replace(microsecond=0)
START = NOW.replace(second=0) - timedelta(minutes=40)
BOOT, REBOOT = "2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z"
U32, U64 = 2**32, 2**64
COUNTERS = [
    f"{way}-{what}"
    for way in ("in", "out")
    for what in ("octets", "unicast-pkts", "broadcast-pkts", "multicast-pkts", "discards", "errors")
] + ["in-unknown-protos"]


def _everything() -> Selection:
    """Three hours back from this module's NOW to five minutes past the moment of asking, as
    Grafana's "now" moves: rows stamped by the server on insert (received_at) are as late as
    the fixture that inserted them, which under `make test` runs long after import."""
    return Selection(NOW - timedelta(hours=3), datetime.now(UTC) + timedelta(minutes=5), 60, {})


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(ROOT / "examples" / "subscriptions.yaml")


@pytest.fixture(scope="module")
def dashboards(catalog: Catalog) -> list[Dashboard]:
    return catalog_dashboards(catalog, DB)


def _stamp(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def _series() -> list[str]:
    """What a device sends besides the demo's data: interface counters every 15 s (eth0 at
    1000 bytes/s with a counter reset, eth1 wrapping through 2^64; in-errors, a counter32,
    wrapping through 2^32), the interface speed (a gauge64) changing once, an address origin
    (an enumeration) changing once, and one statistics sample older than its topic's
    retention (2 days)."""
    out: list[str] = []
    for i in range(12):
        when = _stamp(START + timedelta(seconds=15 * i))
        eth0 = 5_000 + 15_000 * i if i < 6 else 100 + 15_000 * (i - 6)
        stats = {
            "eth0": {"in-octets": str(eth0), "discontinuity-time": BOOT if i < 6 else REBOOT},
            "eth1": {"in-octets": str((U64 - 3 * 2**20 + 2**20 * i) % U64),
                     "discontinuity-time": BOOT},
        }
        others = {name: (str(150 * i) if "octets" in name or "pkts" in name else 150 * i)
                  for name in COUNTERS}  # 10/s
        out.append(envelope({"ietf-interfaces:interfaces": {"interface": [
            {"name": name, "statistics": {**others, **value}} for name, value in stats.items()
        ]}}, seq=i, time=when, sub=1043, host="pe1.nyc"))
        # the whole interface subtree: every counter at 10/s, in-errors at 1/s wrapping at 2^32
        statistics: dict[str, Any] = dict(others)
        statistics["in-errors"] = (U32 - 45 + 15 * i) % U32
        statistics["discontinuity-time"] = BOOT
        out.append(envelope({"ietf-interfaces:interfaces": {"interface": [{
            "name": "eth0", "oper-status": "up", "admin-status": "up",
            "link-up-down-trap-enable": "enabled", "speed": str(10**9 if i < 6 else 10**10),
            "statistics": statistics,
        }]}}, seq=100 + i, time=when, sub=1042, host="pe1.nyc"))
    for i, origin in enumerate(["static", "dhcp"]):
        out.append(envelope({"ietf-interfaces:interfaces": {"interface": [{
            "name": "eth0", "ietf-ip:ipv4": {"address": [
                {"ip": "192.0.2.1", "prefix-length": 24, "origin": origin}]},
        }]}}, seq=200 + i, time=_stamp(START + timedelta(minutes=i)), sub=1100, host="pe1.nyc"))
    out.append(envelope({"ietf-interfaces:interfaces": {"interface": [
        {"name": "eth9", "statistics": {"in-octets": "1"}}]}},
        seq=300, time=_stamp(NOW - timedelta(days=3)), sub=1043, host="pe1.nyc"))
    return out


@pytest.fixture(scope="module")
def data(conn: ChdbConnection, catalog: Catalog) -> Pipe:
    pipe = Pipe(conn, catalog, db=DB)
    demo = generate(nodes=3, interfaces=4, rounds=6, seed=11)
    pipe.send_all([r for r in demo.records if isinstance(pipe.builder.build(r, "demo"), list)])
    pipe.send_all(_series())
    # the producer's rejects, as the dead-letter topic's records reach the errors table; at
    # NOW, not now64(): the panels' window ends at NOW + 5 minutes, and `pytest` runs these
    # tests after the integration suite (half an hour after this module's NOW was taken)
    at = f"toDateTime64('{NOW:%Y-%m-%d %H:%M:%S}', 3, 'UTC')"
    conn.command(
        f"INSERT INTO `{DB}`.`errors` (kafka_topic, kafka_partition, kafka_offset, "
        "kafka_timestamp, error_kind, error, source) VALUES "
        f"('{catalog.dead_letter_topic}', 0, 0, {at}, 'rejected:input', "
        "'not JSON or XML', 'notifications.jsonl:7'), "
        f"('{catalog.dead_letter_topic}', 0, 1, {at}, 'rejected:no-match', "
        "'no matching instances', 'notifications.jsonl:9')"
    )
    return pipe


def _result(conn: ChdbConnection, sql: str) -> tuple[list[tuple[str, str]], list[list[Any]]]:
    """(column name, ClickHouse type) of every column, and the rows (JSONCompact)."""
    document = json.loads(conn._run(sql, "JSONCompact", None))  # the types: not in query()
    return [(m["name"], m["type"]) for m in document["meta"]], document["data"]


def _bare(kind: str) -> str:
    for wrapper in ("LowCardinality(", "Nullable("):
        while kind.startswith(wrapper):
            kind = kind[len(wrapper) : -1]
    return kind


NUMERIC = re.compile(r"^(U?Int\d+|Float\d+|Decimal.*)$")


def _selection(dashboard: Dashboard, **chosen: list[str]) -> Selection:
    names = [v["name"] for v in dashboard.model["templating"]["list"] if v["type"] == "query"]
    everything = _everything()
    return Selection(
        everything.start,
        everything.end,
        everything.interval_seconds,
        {name: chosen.get(name, [ALL]) for name in names},
    )


def _panel(dashboards: list[Dashboard], name: str, title: str) -> tuple[Dashboard, Panel]:
    dashboard = next(d for d in dashboards if d.name == name)
    return dashboard, next(p for p in dashboard.panels if p.title == title)


#: Panels the data set leaves empty on purpose: no topic but the statistics one has a
#: message its tables could not store.
MAY_BE_EMPTY = {(name, "Messages not stored") for name in (IFACES, ADDRESSES)} | {
    ("netops-current-state-hw-hardware-component-serial-num", "Messages not stored"),
    ("netops-stats-sys-system-clock", "Messages not stored"),
    ("netops-state-change-sys-system-dns-resolver-search", "Messages not stored"),
}


def test_every_panel_query_runs_and_returns_its_columns(
    conn: ChdbConnection, data: Pipe, dashboards: list[Dashboard]
) -> None:
    assert {d.name for d in dashboards} >= {"overview", STATS, IFACES, ADDRESSES}
    checked = 0
    for dashboard in dashboards:
        selection = _selection(dashboard)
        for panel in dashboard.panels:
            columns, rows = _result(conn, interpolate(panel.sql, selection))
            where = f"{dashboard.name}: {panel.title}"
            assert tuple(name for name, _ in columns) == panel.columns, where
            if (dashboard.name, panel.title) not in MAY_BE_EMPTY:
                assert rows, f"{where}: no rows"
            types = dict(columns)
            if panel.kind in ("timeseries", "state-timeline"):
                assert _bare(types["time"]).startswith("DateTime"), where
                for label in (*panel.labels, panel.partition_by):
                    if label:
                        assert _bare(types[label]) == "String", where
            if panel.kind == "timeseries":
                values = [c for c in panel.columns if c != "time" and c not in panel.labels]
                assert values and all(NUMERIC.match(_bare(types[v])) for v in values), where
                times = [row[0] for row in rows]
                assert times == sorted(times), f"{where}: not sorted by time"
            checked += 1
    assert checked >= 40


def test_every_variable_query_runs(
    conn: ChdbConnection, data: Pipe, dashboards: list[Dashboard]
) -> None:
    for dashboard in dashboards:
        for variable in dashboard.model["templating"]["list"]:
            if variable["type"] != "query":
                continue
            sql = variable["query"]["rawSql"]
            assert variable["definition"] == sql
            columns, rows = _result(conn, interpolate(sql, _selection(dashboard)))
            assert rows, f"{dashboard.name}: ${variable['name']}"
            if variable["name"] == "node":
                assert {r[0] for r in rows} <= {"pe1.nyc", "pe2.lon", "pe3.fra"}
            else:  # instance: the value (instance path) and the text shown
                assert [name for name, _ in columns] == ["instance_path", "instance"]
                _, rows_pe2 = _result(
                    conn, interpolate(sql, _selection(dashboard, node=["pe2.lon"]))
                )
                assert rows_pe2 and all(r[1].startswith("pe2.lon ") for r in rows_pe2)


def _values(conn: ChdbConnection, dashboard: Dashboard, panel: Panel, **chosen: list[str]) -> (
    dict[str, list[float]]
):
    _, rows = _result(conn, interpolate(panel.sql, _selection(dashboard, **chosen)))
    series: dict[str, list[float]] = {}
    for _, label, value in rows:
        series.setdefault(label, []).append(float(value))
    return series


def test_counter_rates_count_through_wraps_and_restart_on_discontinuity(
    conn: ChdbConnection, data: Pipe, dashboards: list[Dashboard]
) -> None:
    dashboard, panel = _panel(dashboards, STATS, "in-octets per second")
    assert panel.unit == "Bps"
    series = _values(conn, dashboard, panel, node=["pe1.nyc"])
    # eth0: 1000 bytes/s in every interval, the reset sample adding nothing (not -75000/15)
    assert series["pe1.nyc eth0"] and set(series["pe1.nyc eth0"]) == {1000.0}
    # eth1: 2^20 bytes per 15 s throughout, the wrap through 2^64 included
    assert series["pe1.nyc eth1"] and {round(v, 3) for v in series["pe1.nyc eth1"]} == {
        round(2**20 / 15, 3)
    }
    # a counter32 inside the interface subtree wraps at 2^32, not 2^64
    dashboard, panel = _panel(dashboards, IFACES, "statistics.in-errors per second")
    series = _values(conn, dashboard, panel)
    assert set(series) == {"pe1.nyc eth0"} and set(series["pe1.nyc eth0"]) == {1.0}


def test_variables_filter_the_panels(
    conn: ChdbConnection, data: Pipe, dashboards: list[Dashboard]
) -> None:
    dashboard, panel = _panel(dashboards, STATS, "in-octets per second")
    path = f"{IF}[name='eth1']/statistics"
    only = _values(conn, dashboard, panel, node=["pe1.nyc"], instance=[path])
    assert set(only) == {"pe1.nyc eth1"}
    dashboard, panel = _panel(dashboards, "overview", "Messages per node")
    per_node = _values(conn, dashboard, panel, node=["pe2.lon", "pe3.fra"])
    assert set(per_node) == {"pe2.lon", "pe3.fra"}


def test_gauges_and_states_show_what_the_device_sent(
    conn: ChdbConnection, data: Pipe, dashboards: list[Dashboard]
) -> None:
    dashboard, panel = _panel(dashboards, IFACES, "speed")
    speeds = _values(conn, dashboard, panel)["pe1.nyc eth0"]
    # the mean per minute: 1 Gb/s, then 10 Gb/s (a minute with both in between)
    assert speeds[0] == 1e9 and speeds[-1] == 1e10 and speeds == sorted(speeds)
    dashboard, panel = _panel(dashboards, ADDRESSES, "origin")
    assert panel.kind == "state-timeline"
    _, rows = _result(conn, interpolate(panel.sql, _selection(dashboard, node=["pe1.nyc"])))
    assert [(r[1], r[2]) for r in rows if r[1] == "pe1.nyc eth0 192.0.2.1"] == [
        ("pe1.nyc eth0 192.0.2.1", "static"),
        ("pe1.nyc eth0 192.0.2.1", "dhcp"),
    ]
    dashboard, panel = _panel(dashboards, "overview", "Dead-letter reasons")
    _, rows = _result(conn, interpolate(panel.sql, _selection(dashboard)))
    assert {(r[0], r[1]) for r in rows} == {
        ("rejected:input", "not JSON or XML"),
        ("rejected:no-match", "no matching instances"),
    }


def test_what_is_charted_follows_the_yang_types(dashboards: list[Dashboard]) -> None:
    stats = next(d for d in dashboards if d.name == STATS)
    counters = {p.title for p in stats.panels if p.title.endswith(" per second")}
    # every counter32/counter64 of ietf-interfaces statistics, nothing else
    assert len(counters) == 13 and "discontinuity-time per second" not in counters
    interfaces = next(d for d in dashboards if d.name == IFACES)
    kinds = {p.title: p.kind for p in interfaces.panels}
    assert kinds["oper-status"] == kinds["admin-status"] == "state-timeline"
    assert kinds["speed"] == "timeseries"  # yang:gauge64
    assert "if-index" not in kinds and "type" not in kinds  # int32, identityref: the table
    current = next(p for p in interfaces.panels if p.title == "Current state")
    assert current.columns[:3] == ("node", "name", "updated")


def test_the_json_validates_against_the_dashboard_schema(dashboards: list[Dashboard]) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    validator.check_schema(SCHEMA)
    uids = [d.uid for d in dashboards]
    assert len(set(uids)) == len(uids)
    for dashboard in dashboards:
        model = json.loads(dashboard_text(dashboard.model))
        errors = sorted(validator.iter_errors(model), key=lambda e: list(e.path))
        assert not errors, f"{dashboard.name}: {errors[0].message} at {list(errors[0].path)}"
        panels = model["panels"]
        assert len({p["id"] for p in panels}) == len(panels)
        cells: set[tuple[int, int]] = set()
        for panel in panels:
            grid = panel["gridPos"]
            assert grid["x"] + grid["w"] <= 24, panel["title"]
            area = {
                (x, y)
                for x in range(grid["x"], grid["x"] + grid["w"])
                for y in range(grid["y"], grid["y"] + grid["h"])
            }
            assert not area & cells, f"{panel['title']} overlaps another panel"
            cells |= area
        declared = {v["name"] for v in model["templating"]["list"]}
        assert "datasource" in declared
        text = json.dumps(model)
        used = set(re.findall(r"\$\{?(?!__)(\w+)", text))
        assert used <= declared, used - declared
        for panel in panels:
            for target in panel.get("targets", []):
                assert target["datasource"] == {"type": PLUGIN, "uid": "${datasource}"}


def test_a_schema_violation_is_caught() -> None:
    # the schema is closed where the model is: a misspelt member or a panel off the grid fails
    model = {"uid": "x", "title": "t", "schemaVersion": 41, "panels": [], "editable": True,
             "graphTooltip": 0, "time": {"from": "now-6h", "to": "now"}, "templating": {}}
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert not list(validator.iter_errors(model))
    assert list(validator.iter_errors({**model, "pannels": []}))
    row = {"type": "row", "id": 1, "collapsed": False, "panels": [],
           "gridPos": {"h": 1, "w": 25, "x": 0, "y": 0}}
    assert list(validator.iter_errors({**model, "panels": [row]}))


def test_compose_provisions_grafana_with_the_generated_dashboards() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    grafana = compose["services"]["grafana"]
    assert grafana["environment"]["GF_PLUGINS_PREINSTALL_SYNC"] == f"{PLUGIN}@{PLUGIN_VERSION}"
    mounts = dict(volume.split(":")[:2] for volume in grafana["volumes"])
    assert mounts["./deploy/grafana/provisioning"] == "/etc/grafana/provisioning"
    dashboards_at = mounts["./deploy/grafana/dashboards"]
    provider = yaml.safe_load(
        (ROOT / "deploy/grafana/provisioning/dashboards/yangkey.yaml").read_text()
    )["providers"][0]
    assert provider["type"] == "file" and provider["options"]["path"] == dashboards_at
    source = yaml.safe_load(
        (ROOT / "deploy/grafana/provisioning/datasources/clickhouse.yaml").read_text()
    )["datasources"][0]
    assert source["type"] == PLUGIN
    assert source["jsonData"]["host"] == "clickhouse" and "clickhouse" in compose["services"]
    assert source["secureJsonData"]["password"] == "$CLICKHOUSE_PASSWORD"
    assert "CLICKHOUSE_PASSWORD" in grafana["environment"]


def test_the_checked_in_dashboards_are_current(tmp_path: Path) -> None:
    result = run("dashboards", "-s", str(ROOT / "examples/subscriptions.yaml"), "-o", str(tmp_path))
    assert result.exit_code == 0, result.output
    fresh = {p.name: p.read_text() for p in tmp_path.glob("*.json")}
    deployed = ROOT / "deploy/grafana/dashboards"
    checked_in = {p.name: p.read_text() for p in deployed.glob("*.json")}
    assert fresh == checked_in, (
        "deploy/grafana/dashboards is stale: yangkey dashboards -s examples/subscriptions.yaml "
        "-o deploy/grafana/dashboards"
    )
