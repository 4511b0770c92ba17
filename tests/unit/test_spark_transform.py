"""The Spark job's pure parts, without Spark and without Kafka.

transform.py is what every Spark task runs per record; the file planning decides which bytes
each task reads and which ``path:line`` each record is named by; job.py's option parsing and
error translation decide what the operator sees.
"""

from __future__ import annotations

import io
import itertools
import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner

from yangkey.errors import BrokerError, ConfigError, YangkeyError
from yangkey.messages import (
    HEADER_CONTENT_TYPE,
    HEADER_ERROR,
    HEADER_ERROR_KIND,
    HEADER_SOURCE,
    KeyedMessage,
    Rejection,
)
from yangkey.spark import job as job_module
from yangkey.spark import preflight as preflight_module
from yangkey.spark import transform as transform_module
from yangkey.spark.commands import produce
from yangkey.spark.config import JobConfig
from yangkey.spark.delivery import markers as markers_module
from yangkey.spark.delivery import sink as sink_module
from yangkey.spark.delivery.sink import produce_partition
from yangkey.spark.delivery.spec import SinkSpec
from yangkey.spark.job import run
from yangkey.spark.options import parse_size
from yangkey.spark.planning import prepare
from yangkey.spark.preflight import topic_specs
from yangkey.spark.runtime.session import spark_failure
from yangkey.spark.source.files import plan_files
from yangkey.spark.source.kafka_source import chunk_ranges, parse_kafka_input, parse_offset_spec
from yangkey.spark.source.splitting import (
    FileRange,
    detect_layout,
    plan_ranges,
    read_range,
    split_records,
)
from yangkey.spark.source.units import PlannedUnits
from yangkey.spark.tasks import partition_task
from yangkey.spark.transform import BuilderSpec, Tally, builder_for, outgoing

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "subscriptions.yaml"
NOTIFICATIONS = REPO / "tests" / "fixtures" / "notifications"


def envelope(node: str, sub: int, interfaces: list[str], status: str = "up") -> bytes:
    body = {
        "ietf-yp-notification:envelope": {
            "event-time": "2026-11-20T10:00:00Z",
            "hostname": node,
            "sequence-number": 3,
            "contents": {
                "ietf-yang-push:push-update": {
                    "id": sub,
                    "datastore-contents": {
                        "ietf-interfaces:interfaces": {
                            "interface": [{"name": n, "oper-status": status} for n in interfaces]
                        }
                    },
                }
            },
        }
    }
    return json.dumps(body).encode()


@pytest.fixture(scope="module")
def spec() -> BuilderSpec:
    return BuilderSpec.from_file(EXAMPLE)


# --------------------------------------------------------------------------- builder spec


def test_builder_is_compiled_once_per_process_and_per_spec(spec: BuilderSpec) -> None:
    first = builder_for(spec)
    again = builder_for(BuilderSpec.from_file(EXAMPLE))  # equal value, new object
    assert again is first
    other = builder_for(BuilderSpec.from_file(EXAMPLE, keys=False))
    assert other is not first
    assert spec in transform_module._BUILDERS


def test_builder_spec_ships_text_not_objects(spec: BuilderSpec) -> None:
    assert "subscriptions:" in spec.subscriptions_text
    assert spec.base_dir is not None and Path(spec.base_dir).is_absolute()
    assert hash(spec) == hash(BuilderSpec.from_file(EXAMPLE))


def test_unreadable_subscriptions_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read subscriptions file"):
        BuilderSpec.from_file(tmp_path / "missing.yaml")


# --------------------------------------------------------------------------- transform


def test_subscription_compile_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "subs.yaml"
    path.write_text(
        "subscriptions:\n  - id: 7\n    xpath: /ietf-interfaces:nosuch\n    type: periodic\n",
        encoding="utf-8",
    )
    with pytest.raises(YangkeyError) as caught:
        BuilderSpec.from_file(path).catalog()
    assert caught.value.source == str(path)
    assert caught.value.message().startswith(f"{path}: subscription 7")


def test_outgoing_keys_each_record_or_dead_letters_it(spec: BuilderSpec) -> None:
    builder = builder_for(spec)
    records = [
        (envelope("r1", 1042, ["eth0", "eth1"]), "f:1"),
        (b"{not json", "f:2"),
        (envelope("r1", 9999, ["eth0"]), "f:3"),
    ]
    tally = Tally()
    message, bad_json, unknown = list(outgoing(records, builder, "dlq", tally))
    assert message.topic == "netops-current-state-if-interfaces-interface"
    assert message.key == (
        b"r1\n1042\n/ietf-interfaces:interfaces/interface[name='eth0'] | "
        b"/ietf-interfaces:interfaces/interface[name='eth1']"
    )
    assert message.value == records[0][0]
    assert message.header(HEADER_CONTENT_TYPE) == "application/yang-data+json"
    assert bad_json.topic == "dlq" and bad_json.header(HEADER_SOURCE) == "f:2"
    assert bad_json.header(HEADER_ERROR_KIND) == "input"
    assert unknown.topic == "dlq" and "unknown subscription id 9999" in str(
        unknown.header(HEADER_ERROR)
    )
    assert tally.records == 3 and tally.messages == 1 and tally.rejections == 2


def test_empty_result_becomes_a_no_match_rejection() -> None:
    class Empty:
        header_bytes = 0
        native_keyed = 0

        def build(self, raw: bytes, source: str) -> list[KeyedMessage]:
            return []

        def counts_only(self, rejection: Rejection) -> bool:
            return False

    tally = Tally()
    (dead,) = outgoing([(b"{}", "x:1")], Empty(), "dlq", tally)  # type: ignore[arg-type]
    assert dead.topic == "dlq" and dead.value == b"{}"
    assert dead.header(HEADER_ERROR_KIND) == "no-match" and dead.header(HEADER_SOURCE) == "x:1"
    assert tally.rejected == Counter({"no-match": 1}) and tally.messages == 0


def test_outgoing_routes_rejections_to_the_dead_letter_topic(spec: BuilderSpec) -> None:
    builder = builder_for(spec)
    tally = Tally()
    raw_bad = b"<broken"
    records = [(envelope("r1", 1042, ["eth0"]), "in.jsonl:1"), (raw_bad, "in.jsonl:2")]
    messages = list(outgoing(records, builder, "dlq", tally))
    assert [m.topic for m in messages] == ["netops-current-state-if-interfaces-interface", "dlq"]
    dead = messages[1]
    assert dead.key is None and dead.value == raw_bad
    assert dead.header(HEADER_SOURCE) == "in.jsonl:2"
    assert dead.header(HEADER_ERROR_KIND) == "input"
    assert dead.header(HEADER_ERROR)
    assert tally.records == 2
    assert tally.produced == Counter({"netops-current-state-if-interfaces-interface": 1})
    assert tally.rejected == Counter({"input": 1})


def test_knobs_no_keys_and_single_topic() -> None:
    raw = envelope("r1", 1042, ["eth0"])
    no_keys = builder_for(BuilderSpec.from_file(EXAMPLE, keys=False))
    (message,) = outgoing([(raw, "a:1")], no_keys, "dlq", Tally())
    assert message.topic != "dlq" and message.key is None
    single = builder_for(BuilderSpec.from_file(EXAMPLE, single_topic="all-yang"))
    (message,) = outgoing([(raw, "a:1")], single, "dlq", Tally())
    assert message.topic == "all-yang"
    assert message.key is not None and message.key.startswith(b"r1\n1042\n")


def test_tally_merge_and_json_round_trip() -> None:
    a = Tally(3, Counter({"t1": 2}), Counter({"input": 1}))
    b = Tally(2, Counter({"t1": 1, "t2": 1}), Counter())
    merged = Tally().merge(a).merge(b)
    assert (merged.records, merged.messages, merged.rejections) == (5, 4, 1)
    assert Tally.from_json(merged.to_json()) == merged
    big = Tally(1, Counter({f"topic-{i:04d}-" + "x" * 60: 1 for i in range(100)}))
    compact = big.to_compact_json(500)
    assert len(compact) <= 500
    restored = Tally.from_json(compact)
    assert restored.records == 1 and restored.messages == 100


# --------------------------------------------------------------------------- files


@pytest.mark.parametrize(
    ("head", "layout"),
    [
        (b'{"a": 1}\n{"a": 2}\n', "lines"),
        (b'{\n  "a": 1\n}\n', "document"),
        (b'{"a": \n{"b": 2}\n', "lines"),  # broken first line, but JSON lines after it
        (b"<n><x/></n>\n<n/>\n", "lines"),
        (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "v">]><x>&e;</x>\n'
         b'<notification xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0"/>\n', "lines"),
        (b"<notification>\n<x/>\n</notification>\n", "document"),
        (b'<?xml version="1.0"?>\n<notification>\n  <x/>\n</notification>\n', "document"),
        (b'<?xml version="1.0"?><n><x/></n>\n', "lines"),
        (b"\n\n  \n", "lines"),
    ],
)
def test_detect_layout(head: bytes, layout: str) -> None:
    assert detect_layout(head) == layout


def test_split_records_positions_skip_blank_lines_and_crlf() -> None:
    data = b'{"a":1}\r\n\n{"a":2}\n   \n{"a":3}'
    assert list(split_records(data, "d.jsonl")) == [
        (b'{"a":1}', "d.jsonl:1"),
        (b'{"a":2}', "d.jsonl:3"),
        (b'{"a":3}', "d.jsonl:5"),
    ]
    assert next(split_records(data, "d.jsonl", "lines", first_line=41)) == (
        b'{"a":1}', "d.jsonl:41",
    )
    pretty = b"<notification>\n  <x/>\n</notification>\n"
    assert list(split_records(pretty, "n.xml")) == [(pretty, "n.xml")]
    assert list(split_records(b"  \n", "empty.xml", "document")) == []


def test_plan_ranges_cover_the_file_at_line_starts_with_exact_line_numbers() -> None:
    lines = [json.dumps({"n": i, "pad": "x" * (i % 37)}).encode() for i in range(2000)]
    lines[500] = b""  # a blank line keeps its number
    data = b"\n".join(lines) + b"\n"
    stream = io.BytesIO(data)
    ranges = plan_ranges(stream, "big.jsonl", len(data), split_size=4096)
    assert len(ranges) > 5
    assert ranges[0].start == 0 and ranges[-1].end == len(data)
    for left, right in itertools.pairwise(ranges):
        assert left.end == right.start
        assert data[right.start - 1 : right.start] == b"\n"
    planned = [record for r in ranges for record in read_range(stream, r)]
    assert planned == list(split_records(data, "big.jsonl"))
    assert planned[-1][1] == "big.jsonl:2000"


def test_plan_ranges_never_cut_a_document() -> None:
    data = b"<notification>\n" + b"  <x/>\n" * 2000 + b"</notification>\n"
    ranges = plan_ranges(io.BytesIO(data), "one.xml", len(data), split_size=100)
    assert len(ranges) == 1 and ranges[0].layout == "document"


def test_plan_files_lists_directories_and_skips_hidden(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.jsonl").write_bytes(b'{"a":1}\n')
    (tmp_path / "sub" / "b.jsonl").write_bytes(b'{"b":1}\n{"b":2}\n')
    (tmp_path / ".hidden").write_bytes(b"x\n")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    ranges = plan_files(str(tmp_path), 1 << 20, "auto")
    assert [Path(r.path).name for r in ranges] == ["a.jsonl", "b.jsonl"]
    with pytest.raises(YangkeyError, match="no such file"):
        plan_files(str(tmp_path / "nope"), 1 << 20, "auto")


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("earliest", ("earliest", None)),
        ("LATEST", ("latest", None)),
        ("42", ("offset", 42)),
        ("0:5,2:7", ("partitions", {0: 5, 2: 7})),
        ("@1700000000000", ("timestamp", 1700000000000)),
        ("2026-11-20T10:00:00Z", ("timestamp", 1795168800000)),
        ("2026-11-20T10:00:00", ("timestamp", 1795168800000)),  # naive = UTC
    ],
)
def test_parse_offset_spec(text: str, expected: tuple[str, object]) -> None:
    assert parse_offset_spec(text) == expected


def test_parse_offset_spec_rejects_nonsense() -> None:
    with pytest.raises(ConfigError, match=r"--until.*not an offset"):
        parse_offset_spec("yesterday", option="--until")


def test_chunk_ranges_split_by_max_records() -> None:
    ranges = chunk_ranges("raw", {0: 0, 1: 10, 2: 5}, {0: 25, 1: 10, 2: 6}, 10)
    assert [(r.partition, r.start, r.end) for r in ranges] == [
        (0, 0, 10), (0, 10, 20), (0, 20, 25), (2, 5, 6),
    ]


def test_parse_kafka_input() -> None:
    assert parse_kafka_input("kafka://yang-push-raw") == "yang-push-raw"
    with pytest.raises(ConfigError):
        parse_kafka_input("kafka://host:9092/topic")


def test_parse_size() -> None:
    assert parse_size("64m") == 64 << 20
    assert parse_size("4096") == 4096
    assert parse_size("1GiB") == 1 << 30


def test_spark_failure_recovers_the_task_error() -> None:
    text = (
        "An error occurred while calling o57.collectAndServe.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage"
        " 1.0 failed 2 times, most recent failure: Lost task 0.1 in stage 1.0: "
        "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
        '  File "sink.py", line 1, in begin\n'
        "yangkey.errors.BrokerError: kafka 127.0.0.1:1, partition task 0 (attempt 1, batch 0):"
        " cannot initialise transactions: Local: Timed out\n"
    )
    error = spark_failure(RuntimeError(text))
    assert isinstance(error, BrokerError)
    assert "cannot initialise transactions" in error.message()
    assert error.source == "kafka 127.0.0.1:1, partition task 0 (attempt 1, batch 0)"
    assert "failed 2 times" in error.message()
    plain = spark_failure(RuntimeError("java.lang.OutOfMemoryError: heap\nmore"))
    assert plain.message() == "spark: the Spark job failed: java.lang.OutOfMemoryError: heap"
    python_bug = spark_failure(RuntimeError(
        "Traceback (most recent call last):\n  File \"x.py\", line 3, in f\n"
        "    raise ZeroDivisionError('division by zero')\n"
        "ZeroDivisionError: division by zero\n"
    ))
    assert python_bug.message().endswith("failed: ZeroDivisionError: division by zero")
    # an edge's own error (the registry's) comes back as its own line
    registry = spark_failure(RuntimeError(
        "Lost task 0.0 in stage 1.0: org.apache.spark.api.python.PythonException: Traceback\n"
        "yangkey.registry.errors.RegistryError: http://reg:8081: schema incompatible\n"
    ))
    assert registry.message() == "http://reg:8081: schema incompatible"


# --------------------------------------------------------------------------- prepare


def _config(**changes: object) -> JobConfig:
    fields: dict[str, object] = {
        "subscriptions": str(EXAMPLE), "inputs": (str(NOTIFICATIONS),), "bootstrap": "h:1",
        "preflight": False,
    }
    return JobConfig.of(**{**fields, **changes})


def test_prepare_builds_transactional_sink_defaults() -> None:
    prepared = prepare(_config(run_id="r1"))
    sink = prepared.sink
    assert sink.exactly_once and sink.run_id == "r1"
    assert sink.transactional_id(3) == "yangkey-r1-3"
    assert sink.producer_config["partitioner"] == "murmur2_random"
    assert sink.producer_config["enable.idempotence"] is True
    assert sink.dead_letter_topic == "netops-yangkey-dead-letter"
    assert 120 < sink.timeout <= 130


def test_prepare_short_transaction_timeout_lowers_message_timeout() -> None:
    prepared = prepare(_config(producer_overrides={"transaction.timeout.ms": "5000"}))
    assert prepared.sink.producer_config["message.timeout.ms"] == 5000
    assert prepared.sink.timeout < 10


def test_prepare_long_message_timeout_raises_the_default_transaction_timeout() -> None:
    # librdkafka refuses to create a producer with message.timeout.ms > transaction.timeout.ms
    prepared = prepare(_config(producer_overrides={"message.timeout.ms": "700000"}))
    assert prepared.sink.producer_config["transaction.timeout.ms"] == 700000
    assert 700 < prepared.sink.timeout <= 710
    at_least_once = prepare(
        _config(delivery="at-least-once", producer_overrides={"message.timeout.ms": "700000"})
    )
    assert "transaction.timeout.ms" not in at_least_once.sink.producer_config


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"producer_overrides": {"message.timeout.ms": "2000", "transaction.timeout.ms": "1000"}},
         "message.timeout.ms .2000. must not exceed transaction.timeout.ms .1000."),
        ({"producer_overrides": {"message.timeout.ms": "2m"}}, "expected a number of millisec"),
    ],
)
def test_prepare_rejects_timeouts_librdkafka_would_refuse(
    changes: dict[str, object], message: str
) -> None:
    config = _config(**changes)  # legal options (test_spark_config.py), refused settings
    with pytest.raises(ConfigError, match=message):
        prepare(config)


def test_stream_run_id_is_stable_per_checkpoint(tmp_path: Path) -> None:
    one = prepare(_config(stream=True, checkpoint=str(tmp_path / "c")))
    two = prepare(_config(stream=True, checkpoint=str(tmp_path / "c")))
    other = prepare(_config(stream=True, checkpoint=str(tmp_path / "d")))
    assert one.sink.run_id == two.sink.run_id != other.sink.run_id
    assert one.sink.identity == two.sink.identity != other.sink.identity
    assert one.stream is not None and one.stream.created
    assert two.stream is not None and not two.stream.created
    # A checkpoint deleted and made again on the same path is a new stream, a new run.
    shutil.rmtree(tmp_path / "c")
    fresh = prepare(_config(stream=True, checkpoint=str(tmp_path / "c")))
    assert fresh.sink.run_id != one.sink.run_id and fresh.sink.identity != one.sink.identity
    with pytest.raises(ConfigError, match=f"belongs to run {fresh.sink.run_id}"):
        prepare(_config(stream=True, checkpoint=str(tmp_path / "c"), run_id="other"))


def test_batch_run_id_is_derived_from_what_the_command_reads(tmp_path: Path) -> None:
    assert prepare(_config()).sink.run_id == prepare(_config()).sink.run_id
    assert prepare(_config()).sink.run_id != prepare(_config(until="@5")).sink.run_id
    data = tmp_path / "in.jsonl"
    data.write_bytes(envelope("r1", 1042, ["eth0"]) + b"\n")
    assert prepare(_config()).sink.run_id != prepare(_config(inputs=(str(data),))).sink.run_id
    with pytest.raises(ConfigError, match="--run-id"):
        prepare(_config(run_id="a-b"))


def test_topic_specs_include_compaction_and_dead_letter() -> None:
    catalog = BuilderSpec.from_file(EXAMPLE).catalog()
    specs = {s.name: s for s in topic_specs(catalog, None)}
    assert specs["netops-current-state-if-interfaces-interface"].compaction is True
    assert specs["netops-stats-sys-system-clock"].compaction is False
    assert specs["netops-stats-sys-system-clock"].retention_seconds == 30 * 86400
    assert specs["netops-yangkey-dead-letter"].partitions == 6
    single = topic_specs(catalog, "all-yang")
    assert [s.name for s in single] == ["all-yang", "netops-yangkey-dead-letter"]


def test_marker_consumer_gets_connection_settings_only() -> None:
    spec = SinkSpec(
        producer_config={"bootstrap.servers": "h:1", "sasl.username": "u", "linger.ms": 5,
                         "security.protocol": "SASL_SSL", "compression.type": "lz4"},
        dead_letter_topic="dlq",
        run_id="r",
    )
    config = spec.marker_consumer_config(7)
    assert config["group.id"] == "yangkey-r-7"
    assert config["isolation.level"] == "read_committed"
    assert "linger.ms" not in config and "compression.type" not in config
    assert config["sasl.username"] == "u" and config["security.protocol"] == "SASL_SSL"


class _Stop(Exception):
    pass


def test_preflight_admin_client_gets_the_producer_connection_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, object] = {}

    def admin(config: dict[str, object]) -> None:
        seen.update(config)
        raise _Stop

    monkeypatch.setattr(markers_module, "AdminClient", admin)
    monkeypatch.setattr(preflight_module, "_any_reachable", lambda bootstrap: True)
    overrides = {"security.protocol": "SSL", "enable.ssl.certificate.verification": "false",
                 "ssl_engine_id": "e", "linger.ms": "5"}
    with pytest.raises(_Stop):
        prepare(_config(producer_overrides=overrides, preflight=True))
    assert seen["bootstrap.servers"] == "h:1" and seen["security.protocol"] == "SSL"
    # the same settings as the marker consumer: TLS against a self-signed broker works too
    assert seen["enable.ssl.certificate.verification"] == "false"
    assert seen["ssl_engine_id"] == "e"
    assert "linger.ms" not in seen


class _FakeProducer:
    instances: ClassVar[list[_FakeProducer]] = []

    def __init__(self, config: dict[str, object]) -> None:
        self.on_delivery = config["on_delivery"]
        self.closed = 0
        self.fail = False
        _FakeProducer.instances.append(self)

    def produce(self, topic: str, *args: object, **kwargs: object) -> None:
        if self.fail:
            from confluent_kafka import KafkaError, KafkaException  # noqa: PLC0415

            raise KafkaException(KafkaError(KafkaError._MSG_TIMED_OUT))

    def poll(self, timeout: float) -> int:
        return 0

    def flush(self, timeout: float) -> int:
        return 0

    def purge(self) -> None:
        pass

    def close(self) -> bool:
        self.closed += 1
        return True


@pytest.mark.parametrize("fail", [False, True])
def test_partition_closes_its_producer(
    spec: BuilderSpec, monkeypatch: pytest.MonkeyPatch, fail: bool
) -> None:
    _FakeProducer.instances.clear()

    class Producer(_FakeProducer):
        def __init__(self, config: dict[str, object]) -> None:
            super().__init__(config)
            self.fail = fail

    monkeypatch.setattr(sink_module, "Producer", Producer)
    # the faked confluent-kafka producer, not the native one
    sink = SinkSpec(producer_config={"bootstrap.servers": "h:1"}, dead_letter_topic="dlq",
                    run_id="r", exactly_once=False, native=False)
    records = [(envelope("r1", 1042, ["eth0"]), "a:1")]
    if fail:
        with pytest.raises(BrokerError, match="cannot produce"):
            produce_partition(records, builder_for(spec), sink, partition=0, attempt=0)
    else:
        result = produce_partition(records, builder_for(spec), sink, partition=0, attempt=0)
        assert result.tally.messages == 1
    # The producer's delivery callback ties it to the sink in a reference cycle: without an
    # explicit close its librdkafka threads and sockets outlive the task.
    assert [p.closed for p in _FakeProducer.instances] == [1]


def test_spark_that_cannot_start_is_one_error_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object) -> None:
        raise RuntimeError(
            "[JAVA_GATEWAY_EXITED] Java gateway process exited before sending its port number."
        )

    monkeypatch.setattr(job_module, "build_session", broken)
    with pytest.raises(YangkeyError, match=r"starting Spark failed: .*JAVA_GATEWAY_EXITED"):
        run(_config(dry_run=True))
    result = CliRunner().invoke(
        produce, ["--subscriptions", str(EXAMPLE), "--input", str(NOTIFICATIONS), "--dry-run"]
    )
    assert result.exit_code == 1
    assert "error: spark: starting Spark failed" in result.output
    assert "Traceback" not in result.output


def test_dry_run_partition_counts_without_kafka(spec: BuilderSpec) -> None:
    sink = SinkSpec(producer_config={}, dead_letter_topic="dlq", run_id="r", dry_run=True)
    records = [(envelope("r1", 1042, ["eth0"]), "a:1"), (b"", "a:2")]
    result = produce_partition(records, builder_for(spec), sink, partition=4, attempt=0)
    assert result.partition == 4 and not result.skipped
    assert result.tally.records == 2 and result.tally.messages == 1
    assert result.tally.rejections == 1


def test_a_plan_task_reads_its_partition_to_the_end(spec: BuilderSpec, tmp_path: Path) -> None:
    """PySpark reuses a Python worker only when its task read all of its input: a plan task
    that took its one range and left the rest unread cost every later task a new worker that
    imported yangkey and compiled the catalog again."""
    data = tmp_path / "in.jsonl"
    data.write_bytes(envelope("r1", 1042, ["eth0"]) + b"\n" + envelope("r2", 1042, ["eth1"]))
    (planned,) = plan_files(str(data), 1 << 20, "lines")
    sink = SinkSpec(producer_config={}, dead_letter_topic="dlq", run_id="r", dry_run=True)
    state = {"done": False}

    def partition() -> Iterator[tuple[int, FileRange]]:
        yield 3, planned
        state["done"] = True  # reached only when the task asks for more than its range

    class Shipped:
        value = spec

    task = partition_task(Shipped, sink, 0, PlannedUnits({}))
    (result,) = list(task(0, partition()))
    assert state["done"]
    assert result.partition == 3 and result.tally.records == 2 and result.tally.messages == 2


# --------------------------------------------------------------------------- CLI


def test_produce_help_teaches_with_examples() -> None:
    result = CliRunner().invoke(produce, ["--help"])
    assert result.exit_code == 0
    for expected in ("--subscriptions", "kafka://TOPIC", "--stream", "--create-topics",
                     "Examples:", "read_committed", "--producer-config"):
        assert expected in result.output


def test_produce_needs_bootstrap_unless_dry_run() -> None:
    result = CliRunner().invoke(produce, ["--subscriptions", str(EXAMPLE), "--input", "x"])
    assert result.exit_code == 2
    assert "--bootstrap is required" in result.output


def test_produce_reports_config_errors_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("subscriptions: [\n", encoding="utf-8")
    result = CliRunner().invoke(produce, ["--subscriptions", str(bad), "--input", "x", "--dry-run"])
    assert result.exit_code == 1
    assert "error:" in result.output and "invalid YAML" in result.output
    assert "Traceback" not in result.output
    # a missing file is a usage error
    missing = ["--subscriptions", str(tmp_path / "none.yaml"), "--input", "x", "--dry-run"]
    assert CliRunner().invoke(produce, missing).exit_code == 2


def test_fail_after_hook_from_environment_or_spark_conf(monkeypatch: pytest.MonkeyPatch) -> None:
    assert prepare(_config()).sink.fail_after is None
    monkeypatch.setenv("YANGKEY_TEST_FAIL_AFTER", "3")
    assert prepare(_config()).sink.fail_after == 3
    monkeypatch.delenv("YANGKEY_TEST_FAIL_AFTER")
    conf = {"spark.yangkey.test.fail_after": "7"}
    assert prepare(_config(spark_conf=conf)).sink.fail_after == 7


def test_prepare_plans_batch_inputs_before_spark(tmp_path: Path) -> None:
    prepared = prepare(_config())
    names = sorted(Path(r.path).name for _, r in prepared.plan)
    assert "envelope-interfaces.xml" in names and len(names) >= 10
    assert [task for task, _ in prepared.plan] == list(range(len(prepared.plan)))
    layouts = {Path(r.path).name: r.layout for _, r in prepared.plan}
    assert layouts["envelope-interfaces.json"] == "lines"  # one JSON value on one line
    assert layouts["envelope-interfaces.xml"] == "document"  # pretty-printed XML
    with pytest.raises(YangkeyError, match="no such file or directory"):
        prepare(_config(inputs=(str(tmp_path / "missing"),)))


def test_the_shared_catalog_waits_as_long_as_a_task_waits_for_its_deliveries() -> None:
    # A partition leader killed mid-run: the executors' catalog reads must ride through the
    # election as the produce does, not give up after the catalog's own 15 s (issue 28).
    from yangkey.spark.planning import _builder_spec  # noqa: PLC0415

    config = _config(catalog_topic="_yangkey_catalog")
    shared = _builder_spec(config, 130.0).shared_catalog
    assert shared is not None and shared.timeout == 130.0
    short = _builder_spec(config, 4.0).shared_catalog
    assert short is not None and short.timeout == 15.0
