"""A Spark task's loop over its range's lines (yangkey.spark.lines) against the real broker:
one file range produced by a task (exactly-once, its transaction and commit marker) with the
loop and again with ``YANGKEY_LINE_LOOP=0`` (record by record), each under its own prefix;
every partition of every topic must hold the same records in the same order, headers
included, and the tasks must count the same.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import orjson
import pytest
from confluent_kafka import Message
from test_spark_job import Setup, consume, make_setup, sample_records, write_jsonl

from yangkey import native
from yangkey.kafka.config import ensure_topics
from yangkey.messages import HEADER_SOURCE
from yangkey.spark.delivery.sink import produce_partition
from yangkey.spark.lines import LINE_LOOP_ENV
from yangkey.spark.planning import prepare
from yangkey.spark.preflight import topic_specs
from yangkey.spark.source.splitting import FileRange, LineRecords
from yangkey.spark.transform import BuilderSpec, Tally

pytestmark = pytest.mark.skipif(not native.active(), reason="yangkey-native is not built")


def periodic(count: int) -> list[bytes]:
    return [
        orjson.dumps(
            {
                "ietf-yp-notification:envelope": {
                    "event-time": f"2026-11-20T10:00:{n % 60:02d}Z",
                    "hostname": f"pe{n % 5}",
                    "sequence-number": n,
                    "contents": {
                        "ietf-yang-push:push-update": {
                            "id": 1042,
                            "datastore-contents": {
                                "ietf-interfaces:interfaces": {
                                    "interface": [{"name": f"ge-{n % 9}", "oper-status": "up"}]
                                }
                            },
                        }
                    },
                }
            }
        )
        for n in range(count)
    ]


Log = dict[tuple[str, int], list[tuple[bytes | None, bytes, list[tuple[str, bytes]]]]]


def produced(
    kafka_bootstrap: str, directory: Path, path: Path, monkeypatch: pytest.MonkeyPatch, loop: bool
) -> tuple[Log, Tally]:
    """What one task produces of ``path`` with the loop on or off, by (topic without the
    run's prefix, partition) in log order (records without a key: by topic, sorted), and its
    tally."""
    if loop:
        monkeypatch.delenv(LINE_LOOP_ENV, raising=False)
    else:
        monkeypatch.setenv(LINE_LOOP_ENV, "0")
    setup = make_setup(directory)
    spec = BuilderSpec.from_file(setup.subscriptions)
    ensure_topics(kafka_bootstrap, topic_specs(spec.catalog(), None))
    config = setup.config(kafka_bootstrap, [str(path)])
    sink = prepare(config).sink
    size = path.stat().st_size
    key, records = FileRange(str(path), 0, size, 1, "lines").read()
    assert isinstance(records, LineRecords)
    result = produce_partition(records, spec.builder(), sink, 0, 0, 0, key)
    assert not result.skipped
    return read_back(kafka_bootstrap, setup, result.tally)


def read_back(kafka_bootstrap: str, setup: Setup, tally: Tally) -> tuple[Log, Tally]:
    """``setup``'s topics and dead letters as read back, by (topic without the run's prefix,
    partition) in log order (records without a key: by topic, sorted), and ``tally`` with
    its topics without the prefix too."""
    log: Log = defaultdict(list)
    message: Message
    for message in consume(kafka_bootstrap, [*setup.topics, setup.dead_letter]):
        topic = str(message.topic()).removeprefix(setup.prefix)
        headers = [(name, value or b"") for name, value in message.headers() or []]
        key = message.key()
        # a record without a key goes to any partition: those of a topic compared as a set
        partition = int(message.partition() or 0) if key is not None else -1
        log[topic, partition].append((key, message.value() or b"", headers))
    for (_, partition), rows in log.items():
        if partition == -1:
            rows.sort(key=repr)
    tally.produced = Counter({t.removeprefix(setup.prefix): n for t, n in tally.produced.items()})
    return log, tally


def test_a_task_produces_the_same_records_with_the_line_loop(
    kafka_bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [*periodic(150), *sample_records(nodes=2), *periodic(50)[::7]]
    path = write_jsonl(tmp_path / "in.jsonl", records)
    path.write_bytes(path.read_bytes() + b"\n  \n{not json\n")
    with_loop, tally = produced(kafka_bootstrap, tmp_path / "a", path, monkeypatch, True)
    per_record, expected = produced(kafka_bootstrap, tmp_path / "b", path, monkeypatch, False)
    assert with_loop == per_record
    assert tally == expected
    assert tally.records == len(records) + 1 and tally.native >= 150 and tally.rejections >= 2
    sources = [
        dict(headers)[HEADER_SOURCE]
        for (topic, _), rows in with_loop.items()
        if topic == "-dead-letter"
        for *_, headers in rows
    ]
    assert f"{path}:{len(records) + 3}".encode() in sources
