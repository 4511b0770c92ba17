"""Issue 35.2: the HTML report of a run, from the ClickHouse tables.

The data: the demo's data set keyed by the real producer code (MessageBuilder), each message
on the partition Kafka's Java-compatible partitioner gives its key (murmur2), stored through
the real views on chdb; the expected figures are counted in Python from the same messages.
The page is then opened in headless Chromium with the network off: it must draw every chart
without a console error, and a screenshot is taken.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from browser import headless_chromium
from cli_helpers import run
from confluent_kafka import murmur2

from yangkey.catalog import Catalog, load_catalog
from yangkey.clickhouse.apply import apply
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ddl import DdlOptions, render_catalog
from yangkey.clickhouse.ingest.arrow import insert_rows
from yangkey.clickhouse.ingest.rows import QueueRow, add_instances
from yangkey.clickhouse.instances import CatalogFeeds
from yangkey.demo.sample import generate
from yangkey.messages import MessageKey
from yangkey.producer import MessageBuilder
from yangkey.report.data import Report
from yangkey.report.page import render
from yangkey.report.runs import produce_report, tables_report, write

ROOT = Path(__file__).resolve().parents[2]
DB = "yangkey_report"


class Stored:
    """What was stored, counted in Python."""

    def __init__(self) -> None:
        self.partitions: Counter[tuple[str, int]] = Counter()
        self.keys: dict[str, set[bytes]] = {}
        self.nodes: Counter[tuple[str, int]] = Counter()


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(ROOT / "examples" / "subscriptions.yaml")


@pytest.fixture(scope="module")
def stored(conn: ChdbConnection, catalog: Catalog) -> Stored:
    apply(conn, render_catalog(catalog, DdlOptions(database=DB, mode="embedded")), DB)
    builder, feeds = MessageBuilder(catalog, strict=True), CatalogFeeds(catalog)
    partitions = {spec.name: spec.partitions for spec in catalog.topics}
    offsets: Counter[tuple[str, int]] = Counter()
    batches: dict[str, list[QueueRow]] = {}
    out = Stored()
    now_ms = int(time.time() * 1000)
    data = generate(nodes=4, interfaces=6, rounds=4, seed=3)
    for raw in data.records:
        messages = builder.build(raw, "demo")
        if not isinstance(messages, list):
            continue  # a bad notification: the dead-letter rows below stand for them
        for message in messages:
            partition = murmur2(message.key, partitions[message.topic])
            offset = offsets[(message.topic, partition)]
            offsets[(message.topic, partition)] += 1
            row = QueueRow(message.topic, partition, offset, message.key, message.value,
                           list(message.headers), now_ms)
            batches.setdefault(message.topic, []).append(add_instances(feeds, row))
            key = MessageKey.parse(message.key.decode())
            out.partitions[(message.topic, partition)] += 1
            out.keys.setdefault(message.topic, set()).add(message.key)
            out.nodes[(key.node, key.subscription_id)] += 1
    for topic, rows in batches.items():
        insert_rows(conn, DB, topic, rows)
    conn.command(
        f"INSERT INTO `{DB}`.`errors` (kafka_topic, kafka_partition, kafka_offset, "
        "kafka_timestamp, error_kind, error, source) VALUES "
        f"('{catalog.dead_letter_topic}', 0, 0, now64(3), 'rejected:input', "
        "'not JSON or XML </script><b>', 'notifications.jsonl:7'), "
        f"('{catalog.dead_letter_topic}', 0, 1, now64(3), 'rejected:input', "
        "'not JSON or XML </script><b>', 'notifications.jsonl:8'), "
        f"('{catalog.dead_letter_topic}', 0, 2, now64(3), 'rejected:no-match', "
        "'no matching instances', 'notifications.jsonl:9')"
    )
    return out


@pytest.fixture(scope="module")
def report(conn: ChdbConnection, catalog: Catalog, stored: Stored) -> Report:
    return tables_report(conn, DB, title="yangkey demo", catalog=catalog,
                         figures=[("records read", "123")])


def test_the_report_counts_what_was_stored(report: Report, stored: Stored) -> None:
    assert {(t, p): m for t, p, m in report.partitions} == dict(stored.partitions)
    assert {t: k for t, _, k in report.keys} == {t: len(k) for t, k in stored.keys.items()}
    assert {(n, s): m for n, s, m in report.nodes} == dict(stored.nodes)
    assert sorted((k, m) for k, _, m in report.dead_letters) == [
        ("rejected:input", 2), ("rejected:no-match", 1)
    ]
    assert report.reasons[0] == ("rejected:input", "not JSON or XML </script><b>", 2)
    assert report.figures[0] == ("records read", "123")
    assert ("dead letters", "3") in report.figures


def test_skew_counts_every_partition_of_a_topic(report: Report, stored: Stored, catalog: Catalog
                                                ) -> None:
    for skew in report.skew():
        counts = [stored.partitions[(skew.topic, p)] for p in range(skew.partitions)]
        assert skew.partitions == next(s.partitions for s in catalog.topics if s.name == skew.topic)
        assert skew.largest == max(counts)
        assert skew.ratio == pytest.approx(max(counts) / (sum(counts) / len(counts)))
    # one key per node on the clock topic: 4 keys on 6 partitions, so some stay empty and
    # count in the mean (the tables alone cannot see them)
    clock = next(s for s in report.skew() if "clock" in s.topic)
    assert clock.messages == 4 and clock.mean == pytest.approx(4 / 6)
    loads = report.partition_loads()
    assert len(loads) == sum(spec.partitions for spec in catalog.topics)
    assert 0.0 in loads


def test_throughput_and_latency(report: Report) -> None:
    stages = {stage for stage, _, _ in report.throughput}
    assert stages == {"produced (Kafka)", "stored (ClickHouse)"}
    produced = sum(rate for stage, _, rate in report.throughput if stage.startswith("produced"))
    assert produced > 0
    latency = {lat.stage: lat for lat in report.latency}
    # the demo's events are stamped from an hour before now; Kafka stamped them now
    device = latency["device to Kafka"]
    assert 3000 < device.p50 < 4 * 3600 and device.p50 <= device.p90 <= device.p99 <= device.worst
    assert abs(latency["Kafka to ClickHouse"].p50) < 120


def test_the_page_is_self_contained(report: Report) -> None:
    page = render(report)
    assert page.count("<script") == 2  # plotly.js inlined, then the figures
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page)
    assert page.count('class="yk-chart"') == 7
    # a reason holding "</script>" stays text: in the table escaped, in the figure JSON "<\/"
    assert "not JSON or XML &lt;/script&gt;&lt;b&gt;" in page
    assert page.count("</script>") == 2


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the module (its start is most of a page test's time)."""
    with headless_chromium(tmp_path_factory.mktemp("profile"), width=1280, height=2600) as driver:
        yield driver


def _load(driver: object, path: Path) -> None:
    """Open ``path`` with the network off, the console log of earlier pages emptied."""
    driver.get_log("browser")  # type: ignore[attr-defined]
    driver.execute_cdp_cmd("Network.enable", {})  # type: ignore[attr-defined]
    driver.execute_cdp_cmd(  # type: ignore[attr-defined]
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    driver.get(path.as_uri())  # type: ignore[attr-defined]


def test_the_page_renders_offline_in_headless_chromium(
    report: Report, tmp_path: Path, browser: Any
) -> None:
    path = write(report, tmp_path / "report.html")
    _load(browser, path)
    deadline = time.monotonic() + 30
    drawn = 0
    while time.monotonic() < deadline:
        drawn = browser.execute_script(
            "return [...document.querySelectorAll('.yk-chart')]"
            ".filter(d => d._fullLayout && d.querySelector('svg.main-svg')).length"
        )
        if drawn == 7:
            break
        time.sleep(0.2)
    assert drawn == 7
    traces = browser.execute_script(
        "return [...document.querySelectorAll('.yk-chart')].map(d => d.data.length)"
    )
    bars = browser.execute_script("return document.querySelectorAll('.yk-chart g.point').length")
    fetched = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot))
    assert errors == []
    assert fetched == []  # nothing loaded besides the file itself
    assert traces[0] == 6  # the partition chart: one trace per partition number
    assert bars > 50
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 50_000


def test_a_page_without_plotly_js_fails_the_browser_check(
    report: Report, tmp_path: Path, browser: Any
) -> None:
    # the check above can fail: the same page with plotly.js fetched from a CDN (offline)
    page = render(report)
    start = page.index("<script>")
    cut = page[: start] + '<script src="https://cdn.plot.ly/plotly-3.0.1.min.js">' + page[
        page.index("</script>") :]
    path = tmp_path / "cdn.html"
    path.write_text(cut, encoding="utf-8")
    _load(browser, path)
    time.sleep(1)
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert any("Plotly is not defined" in e for e in errors), errors


def test_yangkey_report_command(conn: ChdbConnection, stored: Stored, tmp_path: Path) -> None:
    out = tmp_path / "r" / "page.html"
    result = run("report", "--embedded", conn.path, "--database", DB, "-o", str(out),
                 "--subscriptions", str(ROOT / "examples" / "subscriptions.yaml"))
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.count('class="yk-chart"') == 7
    missing = run("report", "--embedded", str(tmp_path / "nothing"), "-o", str(out))
    assert missing.exit_code == 1 and "no embedded ClickHouse here" in missing.stderr


def test_a_producer_run_report_without_tables() -> None:
    summary = {
        "run_id": "r1", "records": 10, "messages": 12, "rejected": 1,
        "produced": {"t1": 8, "t2": 4}, "rejected_by_kind": {"input": 1},
        "dead_letter_topic": "dlq", "seconds": 2.0, "records_per_second": 5.0,
    }
    report = produce_report(summary, bootstrap=None)
    assert ("messages produced", "12") in report.figures
    assert report.keys == [("t1", 8, 0), ("t2", 4, 0)]
    assert report.dead_letters == [("input", "dlq", 1)]
    page = render(report)
    assert "No messages per partition in this source." in page
    assert json.dumps("yangkey produce: run r1")[1:-1] in page


def test_generated_times_are_utc(report: Report) -> None:
    assert report.created.tzinfo is UTC
    assert all(at.tzinfo is not None for _, at, _ in itertools.islice(report.throughput, 5))
    assert isinstance(report.created, datetime)
