"""``yangkey produce`` on a folder of notifications as real devices send them (issue 29).

Huawei VRP and MA5800 (sequencing framing, sysName), IOS-XE (ncclient's ``<?xml?>`` line,
``datastore-contents-xml`` in XML and in JSON), a 6WIND heartbeat through NetGauze, a collector
that sends containers as arrays and an RFC 8639 ``subscription-started``: through the CLI, a
real Spark job and the test broker. Every notification with data is keyed (its own node name
winning over ``--default-node``), the rest are dead-lettered with their own kinds, and the
heartbeat is counted, not dead-lettered.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from test_spark_job import consume, headers_of

from yangkey.messages import HEADER_ERROR_KIND, MessageKey

DEVICES = Path(__file__).resolve().parents[1] / "fixtures" / "notifications" / "devices"
IF = "/ietf-interfaces:interfaces/interface"

FLEET = f"""
dead_letter_topic: fleet-dead-letter
subscriptions:
  - id: 1
    xpath: "{IF}[type='iana-if-type:ethernetCsmacd']/statistics"
  - id: 2
    xpath: "{IF}[type='iana-if-type:gpon']"
  - id: 211
    xpath: {IF}
  - id: 2147483650
    xpath: /ietf-interfaces:interfaces-state/interface/statistics
  - id: 7
    xpath: {IF}
"""


def test_produce_a_mixed_fleet_folder(kafka_bootstrap: str, tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(DEVICES, inbox)
    # ncclient's log of two IOS-XE notifications: <?xml?> line, then the document.
    capture = (DEVICES / "iosxe-datastore-contents-xml.xml").read_bytes()
    (inbox / "ncclient.log.xml").write_bytes(capture + capture)
    subscriptions = tmp_path / "fleet.yaml"
    subscriptions.write_text(FLEET, encoding="utf-8")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    result = subprocess.run(
        [sys.executable, "-m", "yangkey.cli", "produce", "--subscriptions", str(subscriptions),
         "--input", str(inbox), "--bootstrap", kafka_bootstrap, "--create-topics",
         "--default-node", "collector-1", "--master", "local[1]", "--json"],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    records = len(list(DEVICES.iterdir())) + 2
    assert summary["records"] == records
    assert summary["rejected_by_kind"] == {"framing": 1, "shape": 1}
    assert summary["empty_updates"] == 1
    assert summary["messages"] == records - 3

    keyed = [
        m for m in consume(kafka_bootstrap, [t for t in summary["produced"]]) if m.key()
    ]
    nodes = Counter(MessageKey.parse(m.key() or b"").node for m in keyed)
    assert nodes == Counter({"MA5800-X7-OLT1": 2, "NE8000-PE1": 2, "collector-1": 4})
    dead = consume(kafka_bootstrap, ["fleet-dead-letter"])
    assert Counter(headers_of(m)[HEADER_ERROR_KIND].decode() for m in dead) == Counter(
        {"framing": 1, "shape": 1}
    )
