"""``yangkey ingest --follow`` as a service runs it: idle it says it is waiting (not "0/s"),
and SIGTERM stops it as Ctrl-C does: the last batch committed, a summary, exit status 0."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Any

from factories import unique_name
from test_ingest_crash import (
    CommittedOffsets,
    Ingest,
    produce_all,
    wait_until,
    write_subscriptions,
)

from yangkey.catalog import load_catalog
from yangkey.demo.sample import generate
from yangkey.kafka.config import ensure_topics
from yangkey.messages import KeyedMessage, Rejection
from yangkey.producer import MessageBuilder
from yangkey.spark.preflight import topic_specs


def test_follow_waits_quietly_and_sigterm_commits_and_exits_0(
    kafka_broker: Any, tmp_path: Path, processes: list[Ingest]
) -> None:
    bootstrap: str = kafka_broker.bootstrap
    prefix = unique_name("follow")
    subscriptions = write_subscriptions(tmp_path, prefix)
    catalog = load_catalog(subscriptions)
    ensure_topics(bootstrap, topic_specs(catalog, None))
    builder = MessageBuilder(catalog)
    messages: list[KeyedMessage] = []
    for index, raw in enumerate(generate(nodes=2, interfaces=3, rounds=1).records):
        built = builder.build(raw, f"sample:{index}")
        if not isinstance(built, Rejection):
            messages.extend(built)
    positions = produce_all(bootstrap, messages)
    group = f"{prefix}-group"
    committed = CommittedOffsets(bootstrap, group, sorted({(t, p) for t, p, _ in positions}))

    ingest = Ingest(
        [
            sys.executable,
            "-m",
            "yangkey.cli",
            "ingest",
            "--subscriptions",
            str(subscriptions),
            "--bootstrap",
            bootstrap,
            "--embedded",
            str(tmp_path / "ch"),
            "--consumer-group",
            group,
            "--follow",
        ],
        tmp_path / "ingest.log",
    )
    processes.append(ingest)
    try:
        wait_until(
            lambda: "waiting for messages" in ingest.output(), 180, "the idle report", ingest
        )
        assert committed.total() == len(positions)
        ingest.process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        code = ingest.wait(60)
        output = ingest.output()
        assert code == 0, output
        assert time.monotonic() - started < 30
        assert "terminated (SIGTERM); the last batch was committed" in output
        assert f"ingest: done, {len(positions)} messages" in output
        assert "Traceback" not in output
        # idle is not reported as a rate
        idle_lines = [line for line in output.splitlines() if "waiting for messages" in line]
        assert all("/s" not in line for line in idle_lines), idle_lines
        assert committed.total() == len(positions)
    finally:
        committed.close()
