"""Issue 29 — ``yangkey produce`` and ``yangkey ingest`` on a mixed fleet, on the real broker.

The folder tests/fixtures/fleet/notifications holds what six devices sent (JSON lines and an
XML document); the subscriptions file declares subscription id 1 for three of them, 211 for
two (one by node pattern), a fleet-wide id 2 with a node-specific override, and one entry that
does not compile. Every notification with data must be keyed under its own (node, id)
subscription's topic; the skipped subscription's notifications, and the one of an id its device
has no subscription for, must be dead-lettered, each with its own kind and reason; ``ingest``
then stores them so that ``state`` and ``history`` answer per (node, id).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import yaml
from factories import unique_name
from test_spark_job import _env, consume, headers_of

from yangkey.messages import HEADER_ERROR, HEADER_ERROR_KIND, HEADER_SOURCE

REPO = Path(__file__).resolve().parents[2]
FLEET = REPO / "tests" / "fixtures" / "fleet"

#: (node, subscription id) -> (topic without the organisation prefix, messages expected).
EXPECTED = {
    ("vsr-paris-1", 1): ("current-state-if-interfaces-interface", 2),
    ("olt-ma5800-1", 1): ("stats-if-interfaces-interface-statistics", 2),
    ("xr-lab-1", 1): ("stats-oc-if-interfaces-interface-state-counters", 1),
    ("xr-lab-1", 2): ("state-oc-platform-components-component-state", 1),
    ("vsr-paris-1", 2): ("state-hw-hardware-component", 1),
    ("olt-ma5800-1", 2): ("state-hw-hardware-component", 1),
    ("xr-lab-2", 2): ("state-hw-hardware-component", 1),
    ("xe-core-1", 211): ("state-change-if-interfaces-interface-ip-ipv4-address", 1),
    ("ne8000-edge-1", 211): ("stats-sys-system-clock", 1),
    ("ne8000-edge-2", 211): ("stats-sys-system-clock", 1),
}


def test_produce_keys_a_mixed_fleet_and_dead_letters_the_rest(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    prefix = unique_name("fl")
    document = yaml.safe_load((FLEET / "subscriptions.yaml").read_text(encoding="utf-8"))
    document["organisation_prefix"] = prefix
    document["dead_letter_topic"] = dead_letter = f"{prefix}-dead-letter"
    document["defaults"]["yang_dirs"] = [str(FLEET / "yang")]
    subscriptions = tmp_path / "fleet.yaml"
    subscriptions.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "yangkey.cli", "produce", "--subscriptions", str(subscriptions),
         "--input", str(FLEET / "notifications"), "--bootstrap", kafka_bootstrap,
         "--create-topics", "--master", "local[1]", "--json"],
        capture_output=True, text=True, timeout=300, env=_env(), check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert any(
        f"{subscriptions} at line" in line and "subscription 3 for node xr-lab-2 skipped" in line
        for line in warnings
    ), result.stderr
    summary = json.loads(result.stdout)
    assert summary["skipped_subscriptions"] == 1
    assert summary["records"] == 15
    assert summary["rejected_by_kind"] == {"bad-subscription": 2, "notification": 1}

    topics = sorted({f"{prefix}-{topic}" for topic, _ in EXPECTED.values()})
    messages = consume(kafka_bootstrap, [*topics, dead_letter])
    keyed: Counter[tuple[str, int]] = Counter()
    dead: list[dict[str, str]] = []
    for message in messages:
        if message.topic() == dead_letter:
            dead.append({k: v.decode() for k, v in headers_of(message).items()})
            continue
        key = message.key()
        assert key is not None
        node, sub, _ = key.decode().split("\n", 2)
        identity = (node, int(sub))
        assert message.topic() == f"{prefix}-{EXPECTED[identity][0]}", key
        keyed[identity] += 1
    assert keyed == {identity: count for identity, (_, count) in EXPECTED.items()}

    by_source = {d[HEADER_SOURCE].rsplit("/", 1)[-1]: d for d in dead}
    assert sorted(by_source) == ["xr-lab-2.jsonl:1", "xr-lab-2.jsonl:2", "xr-lab-2.jsonl:4"]
    for source in ("xr-lab-2.jsonl:1", "xr-lab-2.jsonl:2"):
        assert by_source[source][HEADER_ERROR_KIND] == "bad-subscription"
        reason = by_source[source][HEADER_ERROR]
        assert reason.startswith("subscription 3 for node xr-lab-2 does not compile"), reason
        assert "Cisco-IOS-XR-infra-statsd-oper" in reason
    unknown = by_source["xr-lab-2.jsonl:4"]
    assert unknown[HEADER_ERROR_KIND] == "notification"
    assert unknown[HEADER_ERROR].startswith("unknown subscription id 1 for node xr-lab-2")

    # ingest the same topics into an embedded ClickHouse: the skipped subscription is counted,
    # and the queries answer per (node, id)
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "yangkey.cli", *args],
            capture_output=True, text=True, timeout=300, env=_env(), check=False,
        )  # fmt: skip

    store = str(tmp_path / "ch")
    ingested = cli(
        "ingest", "-s", str(subscriptions), "-b", kafka_bootstrap, "--embedded", store,
        "--consumer-group", f"{prefix}-ingest",
    )  # fmt: skip
    assert ingested.returncode == 0, ingested.stderr[-3000:]
    assert "ingest: 1 of 8 subscriptions skipped" in ingested.stderr

    def state(*filters: str) -> list[dict[str, object]]:
        shown = cli("state", "--embedded", store, "--format", "json", *filters)
        assert shown.returncode == 0, shown.stderr
        return [json.loads(line) for line in shown.stdout.splitlines()]

    ones = state("--subscription-id", "1")
    assert sorted({str(r["node"]) for r in ones}) == ["olt-ma5800-1", "vsr-paris-1", "xr-lab-1"]
    olt = state("--node", "olt-ma5800-1", "--subscription-id", "1")
    assert {str(r["kafka_topic"]) for r in olt} == {f"{prefix}-{EXPECTED[('olt-ma5800-1', 1)][0]}"}
    xr = state("-n", "xr-lab-1", "-i", "2")
    assert [str(r["kafka_topic"]) for r in xr] == [f"{prefix}-{EXPECTED[('xr-lab-1', 2)][0]}"]
    assert state("-n", "xr-lab-2", "-i", "3") == []
