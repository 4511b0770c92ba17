"""End to end: generated notifications -> Spark job -> real Kafka -> ingest -> chdb -> answers.

The generator (yangkey.demo.sample) says what a correct pipeline ends with; this test checks the
exact current state after sync-on-start updates, on-change yang-patch merges, a delete and a
replayed older message, and that every bad notification reached the errors table through the
dead-letter topic with its reason and source position.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from factories import unique_name

from yangkey.demo.pipeline import check, query_commands, run_demo
from yangkey.demo.sample import generate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def outcome(kafka_broker: Any, spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    prefix = unique_name("e2e")
    return run_demo(
        ROOT / "examples" / "subscriptions.yaml",
        tmp_path_factory.mktemp("e2e"),
        bootstrap=kafka_broker.bootstrap,
        nodes=3,
        interfaces=5,
        rounds=4,
        spark=spark,
        subscription_topics_prefix=prefix,
    )


def test_current_state_is_exact(outcome: Any) -> None:
    assert outcome.problems == []
    stored = {
        (row["node"], row["subscription_id"], " | ".join(row["xpaths"])): row
        for row in outcome.current
    }
    assert set(stored) == set(outcome.expected.current)
    # Every key carries the newest message: for interfaces, the last oper-status written, or
    # the delete; never the replayed older update.
    for (node, name), status in outcome.expected.interface_status.items():
        row = stored[(node, 1042, f"/ietf-interfaces:interfaces/interface[name='{name}']")]
        assert f"<oper-status>{status}</oper-status>" in row["payload"] or (
            f'"oper-status":"{status}"' in row["payload"].replace(" ", "")
        ), (node, name, row["payload"])
    for node, name in outcome.expected.deleted:
        row = stored[(node, 1042, f"/ietf-interfaces:interfaces/interface[name='{name}']")]
        edit = orjson.loads(row["payload"])["ietf-yp-notification:envelope"]["contents"][
            "ietf-yang-push:push-change-update"
        ]["datastore-changes"]["yang-patch"]["edit"][0]
        assert edit["operation"] == "delete"


def test_every_bad_notification_reached_the_errors_table(outcome: Any) -> None:
    assert outcome.rejected == outcome.expected.bad == len(outcome.dead_letters)
    reasons = sorted(row["error"] for row in outcome.dead_letters)
    assert any("malformed JSON" in reason for reason in reasons)
    assert any("DTD" in reason for reason in reasons)
    assert any("unknown subscription id 424242" in reason for reason in reasons)
    assert any("has no key leaf name" in reason for reason in reasons)
    for row in outcome.dead_letters:
        # source position: the input file and its line number
        assert row["source"].rsplit(":", 1)[-1].isdigit(), row["source"]


def test_stored_messages_carry_the_schema_ids_the_demo_registry_holds(outcome: Any) -> None:
    produced = {topic for topic, count in outcome.produced.items() if count}
    assert set(outcome.subjects) == {f"{topic}-value" for topic in produced}
    assert len(set(outcome.subjects.values())) == len(produced), "one schema a topic"
    carried = {
        (row["topic"], row["schema_id"]) for row in outcome.stored_ids if row["messages"]
    }
    assert carried == {(t, outcome.subjects[f"{t}-value"]) for t in produced}


def test_messages_spread_over_partitions_by_key(outcome: Any) -> None:
    produced = sum(outcome.produced.values())
    assert produced == sum(row["messages"] for row in outcome.partitions)
    interface_partitions = {
        row["partition"] for row in outcome.partitions if row["topic"].endswith("-interface")
    }
    assert len(interface_partitions) > 1


def test_the_demo_report_says_what_the_run_did(outcome: Any) -> None:
    # the report's figures come from the same tables and run as the demo's own checks
    report = outcome.report
    assert report.partitions == [
        (row["topic"], row["partition"], row["messages"]) for row in outcome.partitions
    ]
    rejected = sum(m for kind, _, m in report.dead_letters if kind.startswith("rejected"))
    assert rejected == outcome.expected.bad == outcome.rejected
    figures = dict(report.figures)
    assert figures["records read"] == f"{outcome.records:,}"
    assert figures["messages ingested"] == f"{sum(outcome.ingested.values()):,}"
    assert {lat.stage for lat in report.latency} >= {"device to Kafka", "Kafka to ClickHouse"}
    # every partition of every topic counts, the empty ones included
    assert all(s.partitions == 6 for s in report.skew())


def test_the_commands_the_demo_ends_with_query_its_data(outcome: Any) -> None:
    """``yangkey demo`` ends by printing where its data is and the commands that query it
    (issue 34.6): run as printed (another process, as the user would), ``state`` answers with
    the node's current state, ``history`` with a page of it, ``sql`` with every topic."""
    node = min(row["node"] for row in outcome.current)
    state, history, sql = query_commands(outcome.store, node)

    def run(command: str, *more: str) -> str:
        words = shlex.split(command)
        assert words[0] == "yangkey"
        done = subprocess.run(
            [sys.executable, "-m", "yangkey.cli", *words[1:], *more],
            capture_output=True, text=True, timeout=120, check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    rows = [orjson.loads(line) for line in run(state, "--format", "json").splitlines()]
    wanted = [row for row in outcome.current if row["node"] == node]
    assert sorted(r["message_key"] for r in rows) == sorted(r["message_key"] for r in wanted)
    page = run(history, "--format", "json").splitlines()
    assert len([line for line in page if '"node"' in line]) == 5
    per_topic = run(sql, "--format", "json")
    assert {orjson.loads(line)["kafka_topic"] for line in per_topic.splitlines()} == {
        row["topic"] for row in outcome.partitions
    }


def test_check_notices_a_stale_current_state() -> None:
    # The checker is what the demo and this test rely on: make sure it can fail.
    data = generate(nodes=1, interfaces=2, rounds=0)
    key = next(iter(data.expected.current))
    row = {"node": key[0], "subscription_id": key[1], "xpaths": key[2].split(" | "),
           "event_time": "1999-01-01T00:00:00Z"}
    from yangkey.demo.pipeline import DemoResult  # noqa: PLC0415

    result = DemoResult(records=0, produced={}, rejected=0, ingested={}, current=[row],
                        partitions=[], dead_letters=[], expected=data.expected)
    problems, expired = check(result)
    assert expired == []
    assert any("stale current state" in p for p in problems)
    assert any("lost current state" in p for p in problems)
    assert any("dead letters instead of" in p for p in problems)
