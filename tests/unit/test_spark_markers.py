"""Commit markers and resumed plans (no broker), and the size check of outgoing messages."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException

from yangkey.errors import BrokerError, ConfigError, InputError
from yangkey.messages import HEADER_ERROR_KIND, HEADER_TRUNCATED_FROM, KeyedMessage, Rejection
from yangkey.spark.delivery.checkpoint import (
    LocalCheckpoint,
    check_no_foreign_markers,
    stream_identity,
)
from yangkey.spark.delivery.markers import Marker, decode_marker, encode_marker
from yangkey.spark.delivery.resume import resume_plan
from yangkey.spark.delivery.sink import KafkaSink
from yangkey.spark.delivery.spec import SinkSpec
from yangkey.spark.source.kafka_source import KafkaRange, within_budget
from yangkey.spark.source.splitting import FileRange, file_range_key, plan_ranges
from yangkey.spark.transform import (
    BuilderSpec,
    Tally,
    builder_for,
    dead_letter,
    outgoing,
    wire_size,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "subscriptions.yaml"


def _marker(task: int, key: str, records: int = 1) -> Marker:
    return Marker(task, 1, Tally(records=records), key)


def test_marker_metadata_round_trip_keeps_range_and_identity() -> None:
    tally = Tally(records=3, produced=Counter({"t": 2}), rejected=Counter({"bad": 1}))
    text = encode_marker(tally, "kafka:raw:0:10:20", "abc")
    marker = decode_marker(4, 7, text)
    assert marker == Marker(4, 7, tally, "kafka:raw:0:10:20", "abc")
    # a marker of an older version has counts only: no range, no identity
    old = decode_marker(1, 1, tally.to_json())
    assert old.tally == tally and old.range_key == "" and old.identity == ""
    huge = Tally(records=1, produced=Counter({f"topic-{i}" * 5: 1 for i in range(500)}))
    assert len(encode_marker(huge, "k" * 300, "i" * 32)) <= 3000


def test_resume_produces_exactly_the_new_offsets() -> None:
    committed = {
        0: _marker(0, KafkaRange("raw", 0, 0, 100).key, 100),
        1: _marker(1, KafkaRange("raw", 1, 0, 80).key, 80),
    }
    plan = [KafkaRange("raw", 0, 0, 150), KafkaRange("raw", 1, 0, 80), KafkaRange("raw", 2, 0, 5)]
    resumed = resume_plan(plan, committed, 2, 1 << 20, "r")
    assert resumed.plan == [(2, KafkaRange("raw", 0, 100, 150)), (3, KafkaRange("raw", 2, 0, 5))]
    assert [m.task for m in resumed.committed] == [0, 1]
    # --from moved back into a committed range: the committed part is still not repeated
    back = resume_plan([KafkaRange("raw", 0, 50, 120)], committed, 2, 1 << 20, "r")
    assert back.plan == [(2, KafkaRange("raw", 0, 100, 120))]


def _plan(path: Path, split: int) -> list[FileRange]:
    with path.open("rb") as stream:
        return plan_ranges(stream, str(path), path.stat().st_size, split, "lines")


def _committed(path: Path, ranges: list[FileRange]) -> dict[int, Marker]:
    data = path.read_bytes()
    return {
        i: _marker(i, file_range_key(str(path), r.start, r.end, data[r.start : r.end]))
        for i, r in enumerate(ranges)
    }


def test_resume_of_a_grown_file_plans_only_the_new_lines(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"".join(b'{"n": %d}\n' % i for i in range(100)))
    first = _plan(path, 300)
    committed = _committed(path, first)
    with path.open("ab") as stream:
        stream.write(b"".join(b'{"n": %d}\n' % i for i in range(100, 130)))
    # another --split-size on the resumed run changes nothing already produced
    resumed = resume_plan(_plan(path, 5000), committed, len(first), 5000, "r")
    assert [task for task, _ in resumed.plan] == [len(first)]
    (_, rest), = resumed.plan
    assert isinstance(rest, FileRange)
    assert (rest.start, rest.end, rest.first_line) == (first[-1].end, path.stat().st_size, 101)
    assert len(resumed.committed) == len(first)


def test_resume_refuses_a_file_changed_under_committed_bytes(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"n": 1}\n{"n": 2}\n')
    committed = _committed(path, _plan(path, 1 << 20))
    path.write_bytes(b'{"n": 9}\n{"n": 2}\n{"n": 3}\n')
    with pytest.raises(InputError, match="changed since run r"):
        resume_plan(_plan(path, 1 << 20), committed, 1, 1 << 20, "r")


def test_resume_refuses_a_last_line_that_grew(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"n": 1}\n{"n": 2')
    committed = _committed(path, _plan(path, 1 << 20))
    with path.open("ab") as stream:
        stream.write(b'3}\n')
    with pytest.raises(InputError, match="incomplete"):
        resume_plan(_plan(path, 1 << 20), committed, 1, 1 << 20, "r")


def test_stream_identity_is_written_once_and_guards_the_run_id(tmp_path: Path) -> None:
    files = LocalCheckpoint(str(tmp_path / "ck"))
    first = stream_identity(files, None, "legacy")
    assert first.created and first.run_id == f"s{first.identity[:12]}"
    again = stream_identity(files, None, "legacy")
    assert (again.identity, again.run_id, again.created) == (first.identity, first.run_id, False)
    with pytest.raises(ConfigError, match="belongs to run"):
        stream_identity(files, "mine", "legacy")
    # a checkpoint of an older version keeps its path-derived run id
    old = tmp_path / "old"
    (old / "offsets").mkdir(parents=True)
    kept = stream_identity(LocalCheckpoint(str(old)), None, "spath")
    assert (kept.run_id, kept.created, kept.identity) == ("spath", False, "")


def test_markers_of_another_checkpoint_ahead_refuse_the_stream(tmp_path: Path) -> None:
    identity = stream_identity(LocalCheckpoint(str(tmp_path)), "r", "legacy")
    own = {0: Marker(0, 5, Tally(), "", identity.identity)}
    check_no_foreign_markers(own, identity, "ck")  # a replay of its own batches: fine
    foreign = {0: Marker(0, 5, Tally(), "", "elsewhere")}
    with pytest.raises(ConfigError, match="up to micro-batch 4 written under another"):
        check_no_foreign_markers(foreign, identity, "ck")


def _notification(padding: int) -> bytes:
    return (
        b'{"ietf-yp-notification:envelope": {"event-time": "2026-11-20T10:00:00Z",'
        b' "hostname": "r1", "contents": {"ietf-yang-push:push-update": {"id": 1042,'
        b' "datastore-contents": {"ietf-interfaces:interfaces": {"interface":'
        b' [{"name": "eth0", "description": "' + b"x" * padding + b'"}]}}}}}}'
    )


def test_oversized_message_is_dead_lettered_truncated_and_the_rest_goes_on() -> None:
    builder = builder_for(BuilderSpec.from_file(EXAMPLE))
    small, big = _notification(10), _notification(5000)
    tally = Tally()
    out = list(outgoing([(small, "f:1"), (big, "f:2"), (small, "f:3")], builder, "dlq", tally,
                        max_bytes=3000))
    assert tally.records == 3 and tally.rejected == Counter({"oversized": 1})
    assert tally.messages == len([m for m in out if m.topic != "dlq"]) >= 2
    letters = [m for m in out if m.topic == "dlq"]
    assert len(letters) == 1 and wire_size(letters[0]) <= 3000
    assert letters[0].header(HEADER_ERROR_KIND) == "oversized"
    assert letters[0].header(HEADER_TRUNCATED_FROM) == str(len(big))
    assert big.startswith(letters[0].value) and len(letters[0].value) > 1000
    assert all(wire_size(m) <= 3000 for m in out)
    # without the limit the same record is produced normally
    plain = Tally()
    list(outgoing([(big, "f:2")], builder, "dlq", plain))
    assert plain.rejections == 0 and plain.messages >= 1


def test_dead_letter_of_a_small_rejection_is_untouched() -> None:
    rejection = Rejection("f:1", "json", "bad", b"{")
    assert dead_letter(rejection, "dlq", 2000) == rejection.dead_letter("dlq")
    cut = dead_letter(Rejection("f:1", "json", "bad", b"{" * 5000), "dlq", 2000)
    assert isinstance(cut, KeyedMessage) and wire_size(cut) <= 2000


def test_kafka_range_key_names_topic_partition_and_offsets() -> None:
    assert KafkaRange("raw", 2, 10, 20).key == "kafka:raw:2:10:20"
    key = file_range_key("a.jsonl", 0, 3, b"abc")
    assert key.startswith("file:") and key.endswith(":0:3:" + key.rsplit(":", 1)[1])
    assert key != file_range_key("a.jsonl", 0, 3, b"abd")


def test_task_skips_only_a_marker_of_its_own_range_and_checkpoint() -> None:
    spec = SinkSpec(producer_config={"bootstrap.servers": "127.0.0.1:1"}, dead_letter_topic="d",
                    run_id="r", identity="me")
    sink = KafkaSink(spec, 0, 0, 0, "kafka:t:0:0:10")
    try:
        done = sink._already_done(Marker(0, 1, Tally(records=10), "kafka:t:0:0:10", "me"))
        assert done.records == 10
        with pytest.raises(InputError, match="committed offsets 0-5 of kafka://t@0"):
            sink._already_done(Marker(0, 1, Tally(), "kafka:t:0:0:5", "me"))
        with pytest.raises(ConfigError, match="of another checkpoint"):
            sink._already_done(Marker(0, 1, Tally(), "kafka:t:0:0:10", "other"))
    finally:
        sink.close()


@pytest.mark.slow
def test_lookups_retry_through_an_outage_up_to_the_budget() -> None:
    calls: list[float] = []

    def flaky(timeout: float) -> str:
        calls.append(timeout)
        if len(calls) < 3:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT))
        return "ok"

    assert within_budget(flaky, "cannot reach the broker", "kafka://t", 10.0) == "ok"
    assert len(calls) == 3

    def dead(timeout: float) -> str:
        raise KafkaException(KafkaError(KafkaError._TIMED_OUT))

    started = time.monotonic()
    with pytest.raises(BrokerError, match="outage budget of 1s") as caught:
        within_budget(dead, "cannot reach the broker", "kafka://t", 1.0)
    assert 0.5 <= time.monotonic() - started < 5
    assert caught.value.source == "kafka://t" and "\n" not in caught.value.message()
