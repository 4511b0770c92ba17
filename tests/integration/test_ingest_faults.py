"""``yangkey ingest`` (the CLI, a separate process) against faults, on the real broker and chdb.

* The chdb data directory removed while ingest runs: ingest stops with one error line and
  commits nothing more; an ingest restarted on the (now empty) directory refuses to report the
  committed offsets as stored (issue 15.2).
* An ingest SIGKILLed and restarted at once takes its partitions back at once, instead of
  waiting out the dead consumer's 45 s session timeout (issue 15.6).
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from factories import unique_name
from test_ingest_crash import (
    CommittedOffsets,
    Ingest,
    produce_all,
    wait_until,
    write_subscriptions,
)

from yangkey.catalog import Catalog, load_catalog
from yangkey.demo.sample import generate
from yangkey.kafka.config import ensure_topics
from yangkey.messages import KeyedMessage, Rejection
from yangkey.producer import MessageBuilder
from yangkey.spark.preflight import topic_specs

#: librdkafka's default session.timeout.ms: how long a dead member holds its partitions.
SESSION_TIMEOUT = 45.0


def sample_messages(catalog: Catalog, nodes: int, seed: int) -> list[KeyedMessage]:
    data = generate(nodes=nodes, interfaces=4, rounds=4, seed=seed)
    builder = MessageBuilder(catalog)
    messages: list[KeyedMessage] = []
    for index, raw in enumerate(data.records):
        built = builder.build(raw, f"sample:{index}")
        if not isinstance(built, Rejection):
            messages.extend(built)
    return messages


def setup(bootstrap: str, tmp_path: Path) -> tuple[Path, Catalog, str]:
    prefix = unique_name("fault")
    subscriptions = write_subscriptions(tmp_path, prefix)
    catalog = load_catalog(subscriptions)
    ensure_topics(bootstrap, topic_specs(catalog, None))
    return subscriptions, catalog, prefix


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "yangkey.cli", *args]


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def test_removed_data_directory_stops_ingest_and_is_never_reported_as_stored(
    kafka_broker: object, tmp_path: Path, processes: list[Ingest]
) -> None:
    bootstrap: str = kafka_broker.bootstrap  # type: ignore[attr-defined]
    subscriptions, catalog, prefix = setup(bootstrap, tmp_path)
    before = produce_all(bootstrap, sample_messages(catalog, nodes=30, seed=1))
    group = f"{prefix}-ingest"
    chdb_path = tmp_path / "ch"
    args = [
        "ingest", "--subscriptions", str(subscriptions), "--bootstrap", bootstrap,
        "--embedded", str(chdb_path), "--consumer-group", group, "--batch-size", "50",
    ]  # fmt: skip
    partitions = sorted({(t, p) for t, p, _ in before})
    committed = CommittedOffsets(bootstrap, group, partitions)
    try:
        first = Ingest(cli(*args, "--follow"), tmp_path / "ingest-1.log")
        processes.append(first)
        wait_until(lambda: committed.total() == len(before), 90, "the backlog committed", first)
        shutil.rmtree(chdb_path)
        after = produce_all(bootstrap, sample_messages(catalog, nodes=30, seed=2))
        code = first.wait(60)
        output = first.output()
        assert code == 1, output
        assert "Traceback" not in output
        (line,) = error_lines(output)
        assert "data directory was removed or replaced while ingest was running" in line
        assert "done," not in output  # no success summary over the failure
        # nothing read after the removal was committed as stored
        assert committed.total() == len(before)
        assert after

        # restarted on the new, empty directory: the committed offsets belong to the old one
        second = Ingest(cli(*args), tmp_path / "ingest-2.log")
        processes.append(second)
        code = second.wait(90)
        output = second.output()
        assert code == 1, output
        (line,) = error_lines(output)
        assert f"consumer group {group!r} committed" in line
        assert "into another database" in line and "new --group" in line
        assert committed.total() == len(before)  # still nothing more committed

        # a new group re-reads everything into the new directory
        third = Ingest(
            cli(*[a if a != group else f"{group}-again" for a in args]),
            tmp_path / "ingest-3.log",
        )
        processes.append(third)
        assert third.wait(120) == 0, third.output()
        assert f"done, {len(before) + len(after)} messages" in third.output()
    finally:
        committed.close()


def test_ingest_restarted_after_a_kill_resumes_at_once(
    kafka_broker: object, tmp_path: Path, processes: list[Ingest]
) -> None:
    bootstrap: str = kafka_broker.bootstrap  # type: ignore[attr-defined]
    subscriptions, catalog, prefix = setup(bootstrap, tmp_path)
    positions = produce_all(bootstrap, sample_messages(catalog, nodes=40, seed=3))
    group = f"{prefix}-ingest"
    args = [
        "ingest", "--subscriptions", str(subscriptions), "--bootstrap", bootstrap,
        "--embedded", str(tmp_path / "ch"), "--consumer-group", group, "--batch-size", "20",
    ]  # fmt: skip
    partitions = sorted({(t, p) for t, p, _ in positions})
    committed = CommittedOffsets(bootstrap, group, partitions)
    try:
        first = Ingest(cli(*args, "--follow"), tmp_path / "ingest-1.log")
        processes.append(first)
        wait_until(lambda: committed.total() > 0, 90, "a first commit", first)
        first.kill()  # its consumer never leaves the group: the broker thinks it is alive
        started = time.monotonic()
        second = Ingest(cli(*args), tmp_path / "ingest-2.log")
        processes.append(second)
        assert second.wait(120) == 0, second.output()
        elapsed = time.monotonic() - started
        assert committed.total() == len(positions)
        # without static membership the restart waits for the dead member's session to time
        # out (45 s) before any partition is assigned
        assert elapsed < SESSION_TIMEOUT - 10, f"restart took {elapsed:.1f}s"
    finally:
        committed.close()
