"""The native pass producing straight into the native producer (yangkey.spark.delivery.direct)
against the real broker: one file range produced by a task (exactly-once and at-least-once)
through the outbox and again with ``SinkSpec.direct`` off (the line loop's tuples into the
same native producer), each under its own prefix, with a schema id on every keyed topic;
every partition of every topic must hold the same records in the same order, headers
included (``schema-id`` after the builder's), and the tasks must count the same.

The outbox's messages against the Python loop's, without a broker:
tests/unit/test_direct_sink.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from test_spark_job import make_setup, sample_records, write_jsonl
from test_spark_lines_broker import Log, periodic, read_back

from yangkey.kafka.config import ensure_topics
from yangkey.messages import HEADER_SOURCE
from yangkey.registry.client import RegistrySettings
from yangkey.spark.delivery import direct, native_producer
from yangkey.spark.delivery.sink import KafkaSink, produce_partition
from yangkey.spark.planning import prepare
from yangkey.spark.preflight import topic_specs
from yangkey.spark.source.splitting import FileRange, LineRecords
from yangkey.spark.transform import BuilderSpec, Tally

module = native_producer.load()[0]
if module is None or not hasattr(module, "Outbox"):
    pytest.skip("the native producer (with Outbox) is off", allow_module_level=True)


def produced(
    kafka_bootstrap: str,
    directory: Path,
    path: Path,
    monkeypatch: pytest.MonkeyPatch,
    on: bool,
    delivery: str,
) -> tuple[Log, Tally, int]:
    """What one task produces of ``path`` through the outbox or not, by (topic without the
    run's prefix, partition) in log order (records without a key: by topic, sorted), its
    tally, and how many times the sink produced an outbox."""
    monkeypatch.delenv(direct.DIRECT_ENV, raising=False)
    outboxes = 0
    send_outbox = KafkaSink.send_outbox

    def counted(self: KafkaSink, outbox: object) -> int:
        nonlocal outboxes
        outboxes += 1
        return send_outbox(self, outbox)

    monkeypatch.setattr(KafkaSink, "send_outbox", counted)
    setup = make_setup(directory)
    spec = BuilderSpec.from_file(setup.subscriptions)
    ensure_topics(kafka_bootstrap, topic_specs(spec.catalog(), None))
    config = setup.config(kafka_bootstrap, [str(path)])
    sink = dataclasses.replace(
        prepare(config).sink,
        exactly_once=delivery == "exactly-once",
        direct=on,  # off: the line loop's tuples into the same native producer
        schema_registry=RegistrySettings("http://127.0.0.1:1"),  # never asked: ids known
        schema_ids={topic: 40 + n for n, topic in enumerate(setup.topics)},
    )
    assert sink.native
    key, records = FileRange(str(path), 0, path.stat().st_size, 1, "lines").read()
    assert isinstance(records, LineRecords)
    result = produce_partition(records, spec.builder(), sink, 0, 0, 0, key)
    assert not result.skipped
    if sink.exactly_once:
        # a second attempt of the committed task: the marker's counts, nothing produced again
        again = produce_partition(records, spec.builder(), sink, 0, 1, 0, key)
        assert again.skipped and again.tally == result.tally
    log, tally = read_back(kafka_bootstrap, setup, result.tally)
    return log, tally, outboxes


@pytest.mark.parametrize("delivery", ["exactly-once", "at-least-once"])
def test_a_task_produces_the_same_records_through_the_outbox(
    kafka_bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delivery: str
) -> None:
    records = [*periodic(300), *sample_records(nodes=2), *periodic(80)[::7]]
    path = write_jsonl(tmp_path / "in.jsonl", records)
    path.write_bytes(path.read_bytes() + b"\n  \n{not json\n")
    args = (kafka_bootstrap, tmp_path / "a", path, monkeypatch, True, delivery)
    through, tally, outboxes = produced(*args)
    before, expected, none = produced(kafka_bootstrap, tmp_path / "b", *args[2:4], False, delivery)
    assert outboxes >= 1 and none == 0
    assert through == before
    assert tally == expected and tally.native_sink == expected.native_sink == tally.records
    assert tally.records == len(records) + 1 and tally.native >= 300 and tally.rejections >= 2
    keyed = [h for (t, _), rows in through.items() if t != "-dead-letter" for *_, h in rows]
    assert keyed and all(h[-1][0] == "schema-id" for h in keyed)
    sources = [
        dict(headers)[HEADER_SOURCE]
        for (topic, _), rows in through.items()
        if topic == "-dead-letter"
        for *_, headers in rows
    ]
    assert f"{path}:{len(records) + 3}".encode() in sources
