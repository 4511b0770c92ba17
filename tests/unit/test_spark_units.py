"""spark/source/units.py: what one Spark partition holds and how its task reads it, each
input's reader in Spark's DataSource shape (planned ranges read themselves; no kind switch)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from yangkey.errors import InputError
from yangkey.spark.source import kafka_source, splitting, units
from yangkey.spark.source.kafka_source import KafkaRange
from yangkey.spark.source.splitting import (
    RawRecord,
    file_range_key,
    plan_ranges,
    split_records,
)
from yangkey.spark.source.units import (
    BinaryFiles,
    PlannedUnits,
    StreamedFiles,
    StreamedRanges,
    by_bytes,
    by_record,
    describe_range_key,
)

LINES = b'{"a": 1}\n{"a": 2}\n\n{"a": 3}\n'


def _fake_kafka(config: Mapping[str, object], kafka_range: KafkaRange) -> Iterator[RawRecord]:
    for offset in range(kafka_range.start, kafka_range.end):
        yield f"{config['who']}-{offset}".encode(), f"kafka://{kafka_range.topic}@0:{offset}"


def test_a_planned_file_range_reads_itself_with_the_key_of_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(LINES * 50)
    with path.open("rb") as stream:
        ranges = plan_ranges(stream, str(path), path.stat().st_size, 200)
    assert len(ranges) > 2
    read = [PlannedUnits({}).open([(7 + i, r)]) for i, r in enumerate(ranges)]
    assert [opened.task for opened in read] == [7 + i for i in range(len(ranges))]
    data = path.read_bytes()
    assert [opened.key for opened in read] == [
        file_range_key(str(path), r.start, r.end, data[r.start : r.end]) for r in ranges
    ]
    records = [record for opened in read for record in opened.records]
    assert records == list(split_records(data, str(path)))  # exact path:line positions
    assert all(opened.weigh is by_bytes for opened in read)
    # a file that shrank under a planned range is an error naming it, not a short read
    path.write_bytes(LINES)
    with pytest.raises(InputError, match="the file shrank while the job ran"):
        ranges[-1].read()


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8, 9, 10, 64])
def test_lines_are_cut_a_chunk_at_a_time_with_the_same_records_and_positions(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """A range's lines are split a chunk of bytes at a time (memory): the records and their
    path:line positions are those of the whole range split at once, wherever a chunk ends
    (inside a line, on a line feed, a CR LF, a blank line, the end)."""
    data = b'{"a": 1}\r\n\n \n{"b": 22}\n{"c": 333}\r\n\r\n{"d": 4}\n\n{"e": 5}'
    whole = [
        (line.removesuffix(b"\r"), f"f:{number}")
        for number, line in enumerate(data.split(b"\n"), 3)
        if line.strip()
    ]
    for cut in (data, data + b"\n", data + b"\n\n"):
        monkeypatch.setattr(splitting, "CHUNK_BYTES", 1 << 20)
        at_once = list(split_records(cut, "f", "lines", 3))
        monkeypatch.setattr(splitting, "CHUNK_BYTES", chunk)
        assert list(split_records(cut, "f", "lines", 3)) == at_once == whole
    assert len(whole) == 5


def test_a_planned_kafka_range_reads_itself_with_its_offsets_as_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kafka_source, "read_kafka_range", _fake_kafka)
    opened = PlannedUnits({"who": "planned"}).open([(3, KafkaRange("raw", 0, 10, 12))])
    assert (opened.task, opened.key) == (3, "kafka:raw:0:10:12")
    assert [raw for raw, _ in opened.records] == [b"planned-10", b"planned-11"]
    assert opened.weigh is by_record
    assert describe_range_key(opened.key) == "offsets 10-12 of kafka://raw@0"


def test_streamed_ranges_read_as_planned_ones_without_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(units, "read_kafka_range", _fake_kafka)
    opened = StreamedRanges({"who": "stream"}).open([("raw", 0, 5, 7), ("raw", 1, 0, 1)])
    assert (opened.task, opened.key, opened.weigh) == (None, "", by_record)
    assert [raw for raw, _ in opened.records] == [b"stream-5", b"stream-6", b"stream-0"]


def test_binary_file_rows_batch_and_streamed() -> None:
    rows = [("hdfs:///b.jsonl", bytearray(LINES)), ("hdfs:///a.jsonl", bytearray(b'{"z": 0}\n'))]
    batch = BinaryFiles("auto").open(rows)
    assert batch.task is None and batch.key.startswith("files:2:")
    assert BinaryFiles("auto").open(list(reversed(rows))).key == batch.key  # order-free
    assert [source for _, source in batch.records] == [
        "hdfs:///a.jsonl:1", "hdfs:///b.jsonl:1", "hdfs:///b.jsonl:2", "hdfs:///b.jsonl:4",
    ]
    streamed = StreamedFiles("lines").open(rows)
    assert (streamed.key, streamed.weigh) == ("", by_bytes)
    assert [source for _, source in streamed.records] == [
        "hdfs:///b.jsonl:1", "hdfs:///b.jsonl:2", "hdfs:///b.jsonl:4", "hdfs:///a.jsonl:1",
    ]


def test_range_keys_in_words() -> None:
    assert describe_range_key(file_range_key("a.jsonl", 0, 3, b"abc")).startswith("bytes 0-3")
    assert describe_range_key("") == "an input range recorded by an older version"
