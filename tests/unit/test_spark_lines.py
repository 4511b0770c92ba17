"""A task's loop over the lines of its range (yangkey.spark.lines) against the per-record
transform it replaces: the same input through ``outgoing(split_records(...))`` and through
``outgoing_lines(LineRecords(...))`` must produce the same messages (topic, key, value,
headers in order), the same dead letters (positions included) and the same counts, native
ones included, under every producer knob; progress reports must add up to the same totals.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from test_native_learning import FILE as LEARNING_FILE
from test_native_learning import learning_stream

from yangkey import native, native_messages, producer
from yangkey.demo.sample import generate, iter_jsonl
from yangkey.errors import InputError
from yangkey.messages import HEADER_SOURCE, KeyedMessage
from yangkey.producer import MessageBuilder
from yangkey.spark import lines as lines_module
from yangkey.spark.delivery.sink import produce_partition
from yangkey.spark.delivery.spec import SinkSpec
from yangkey.spark.progress import Channel, reporting
from yangkey.spark.source import splitting
from yangkey.spark.source.splitting import FileRange, LineRecords, line_records, split_records
from yangkey.spark.source.units import by_bytes
from yangkey.spark.transform import BuilderSpec, Tally, outgoing

pytestmark = pytest.mark.skipif(not native.active(), reason="yangkey-native is not built")

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "subscriptions.yaml"
LIMIT = 6000
"""limits.max_notification_bytes of the test's file: one line below is over it."""


def periodic(count: int) -> list[bytes]:
    """Envelope push-updates as benchmarks/bench_spark_produce.py's periodic data."""
    return [
        orjson.dumps(
            {
                "ietf-yp-notification:envelope": {
                    "event-time": f"2026-11-20T10:00:{n % 60:02d}.{n:04d}Z",
                    "hostname": f"pe{n % 7}.example.net",
                    "sequence-number": n,
                    "contents": {
                        "ietf-yang-push:push-update": {
                            "id": 1042 if n % 5 else 1043,
                            "datastore-contents": {
                                "ietf-interfaces:interfaces": {
                                    "interface": [
                                        {
                                            "name": f"ge-0/0/{n % 48}",
                                            "oper-status": "up" if n % 3 else "down",
                                            "statistics": {"in-octets": str(n)},
                                        }
                                    ]
                                }
                            },
                        }
                    },
                }
            }
        )
        for n in range(count)
    ]


def mixed_input() -> bytes:
    """The demo data set (JSON and XML, yang-patch, wrappers, bad records) and
    :func:`plain_input`."""
    sample = b"".join(iter_jsonl(generate(nodes=3, interfaces=4, rounds=2, seed=3).records))
    return sample + plain_input()


def plain_input() -> bytes:
    """Periodic push-updates and what ``split_records`` cuts or skips: blank and white lines,
    a line with leading blanks, one over the size limit, one a notification without data,
    bad ones."""
    rows = periodic(60)
    empty = orjson.dumps(
        {
            "ietf-yp-notification:envelope": {
                "event-time": "2026-11-20T10:00:00Z",
                "hostname": "pe1",
                "contents": {"ietf-yang-push:push-update": {"id": 1042}},
            }
        }
    )
    odd = [
        b"",
        b"   ",
        b"\t",
        b"  " + rows[1],
        b"{not json",
        b'{"a": "' + b"x" * LIMIT + b'"}',  # over limits.max_notification_bytes
        empty,
        b"<broken",
        rows[2] + b"  ",
    ]
    lines = [*rows[:30], *odd, *rows[30:]]
    return b"\n".join(lines) + b"\n\n"


def spec_of(tmp_path: Path, text: str | None = None, **options: Any) -> BuilderSpec:
    if text is None:
        document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    else:
        document = yaml.safe_load(text)
    document.setdefault("limits", {})["max_notification_bytes"] = LIMIT
    path = tmp_path / "subs.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return BuilderSpec.from_file(path, **options)


Run = tuple[list[KeyedMessage], Tally, int]


def per_record(spec: BuilderSpec, data: bytes, first_line: int = 1, max_bytes: int = 10**6) -> Run:
    builder = spec.builder()
    tally = Tally()
    records = split_records(data, "in.jsonl", "lines", first_line)
    messages = list(outgoing(records, builder, "dlq", tally, max_bytes))
    return messages, tally, builder.header_bytes


def by_lines(spec: BuilderSpec, data: bytes, first_line: int = 1, max_bytes: int = 10**6) -> Run:
    builder = spec.builder()
    tally = Tally()
    records = LineRecords(data, "in.jsonl", first_line)
    messages = list(lines_module.outgoing_lines(records, builder, "dlq", tally, max_bytes))
    return messages, tally, builder.header_bytes


def assert_same(old: Run, new: Run) -> None:
    assert len(new[0]) == len(old[0])
    for before, after in zip(old[0], new[0], strict=True):
        assert tuple(after) == tuple(before)
    assert new[1] == old[1]
    assert new[2] == old[2]  # the builder's bound on header bytes


KNOBS: list[dict[str, Any]] = [
    {},
    {"keys": False},
    {"single_topic": "all-yang"},
    {"empty_updates": "dead-letter"},
    {"instances": True},
]


@pytest.mark.parametrize("knobs", KNOBS, ids=lambda k: ",".join(k) or "defaults")
@pytest.mark.parametrize("chunk", [splitting.CHUNK_BYTES, 700])
def test_lines_give_the_records_of_the_per_record_transform(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, knobs: dict[str, Any], chunk: int
) -> None:
    monkeypatch.setattr(splitting, "CHUNK_BYTES", chunk)  # chunk borders between lines
    spec = spec_of(tmp_path, **knobs)
    data = mixed_input()
    old = per_record(spec, data, 41)
    assert_same(old, by_lines(spec, data, 41))
    _, tally, _ = old  # the input reaches every branch of the loop
    assert tally.records == 109 and tally.native >= 80 and tally.rejected["input"] >= 3
    assert tally.empty + tally.rejected["empty-update"] == 1


def test_dead_letters_name_each_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splitting, "CHUNK_BYTES", 500)
    spec = spec_of(tmp_path)
    data = b"\n".join([*periodic(9), b"{not json", b"", *periodic(9), b"<broken", b"{"]) + b"\n"
    messages, tally, _ = by_lines(spec, data, 100)
    sources = [m.header(HEADER_SOURCE) for m in messages if m.topic == "dlq"]
    assert sources == ["in.jsonl:109", "in.jsonl:120", "in.jsonl:121"]
    assert tally.records == 21 and tally.native == 18


def test_crlf_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splitting, "CHUNK_BYTES", 900)
    spec = spec_of(tmp_path)
    rows = periodic(30)
    data = b"\n".join(rows[:10]) + b"\n" + b"\r\n".join(rows[10:20]) + b"\r\n\r\n"
    data += b"\n".join(rows[20:]) + b"\r\n"
    old = per_record(spec, data)
    assert_same(old, by_lines(spec, data))
    assert old[1].records == 30 and all(not m.value.endswith(b"\r") for m in old[0])


def test_oversized_messages(tmp_path: Path) -> None:
    spec = spec_of(tmp_path)
    data = mixed_input()
    # each periodic record's message is near this: some fit, some go to the dead letters
    limit = 1024 + 520
    old = per_record(spec, data, max_bytes=limit)
    assert_same(old, by_lines(spec, data, max_bytes=limit))
    assert old[1].rejected["oversized"] > 0 and old[1].messages > 0


def test_learned_subscriptions(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, LEARNING_FILE)
    data = b"\n".join(learning_stream()) + b"\n"
    old = per_record(spec, data)
    assert_same(old, by_lines(spec, data))
    assert old[1].native > 0 and old[1].rejections > 0


TWO_BRANCHES = """
subscriptions:
  - id: 2001
    subtree: |
      <system xmlns="urn:ietf:params:xml:ns:yang:ietf-system">
        <clock/><dns-resolver><search/></dns-resolver>
      </system>
    type: periodic
"""


def system(n: int) -> bytes:
    """A push-update of both branches, one of them, or neither; no event time every other."""
    data: dict[str, Any] = {}
    if n % 3:
        data["clock"] = {"timezone-utc-offset": n}
    if n % 4:
        data["dns-resolver"] = {"search": [f"d{n}.example", "b.example"]}
    envelope: dict[str, Any] = {
        "hostname": f"pe{n % 3}",
        "sequence-number": n,
        "contents": {
            "ietf-yang-push:push-update": {
                "id": 2001,
                "datastore-contents": {"ietf-system:system": data},
            }
        },
    }
    if n % 2:
        envelope["event-time"] = f"2026-11-20T10:00:{n % 60:02d}Z"
    return orjson.dumps({"ietf-yp-notification:envelope": envelope})


@pytest.mark.parametrize("knobs", KNOBS[:3], ids=lambda k: ",".join(k) or "defaults")
def test_several_branches_and_no_event_time(tmp_path: Path, knobs: dict[str, Any]) -> None:
    spec = spec_of(tmp_path, TWO_BRANCHES, **knobs)
    data = b"\n".join(system(n) for n in range(40)) + b"\n"
    old = per_record(spec, data)
    assert_same(old, by_lines(spec, data))
    messages, tally, _ = old
    assert tally.native >= 25 and len(messages) > tally.native
    untimed = b"\n".join(system(n) for n in range(0, 40, 2)) + b"\n"
    assert_same(per_record(spec, untimed), by_lines(spec, untimed))


def test_an_error_the_native_pass_raises_names_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass that raises was given the path, not the line: the record is built again, its
    rejection naming its own position."""
    spec = spec_of(tmp_path)
    rows = periodic(10)
    data = b"\n".join(rows) + b"\n"

    def raising(builder: MessageBuilder) -> None:
        keys = builder._native_keys
        assert keys is not None

        def wrapped(raw: bytes, source: str, *args: Any) -> Any:
            if b'"sequence-number":4,' in raw:
                raise InputError("refused by the test", source=source)
            return keys(raw, source, *args)

        builder._native_keys = wrapped

    def built(run: Callable[..., Run]) -> Run:
        original = BuilderSpec.builder

        def builder(self: BuilderSpec) -> MessageBuilder:
            made = original(self)
            raising(made)
            return made

        monkeypatch.setattr(BuilderSpec, "builder", builder)
        try:
            return run(spec, data)
        finally:
            monkeypatch.setattr(BuilderSpec, "builder", original)

    old = built(per_record)
    assert_same(old, built(by_lines))
    (dead,) = [m for m in old[0] if m.topic == "dlq"]
    assert dead.header(HEADER_SOURCE) == "in.jsonl:5"


def counting_builds(builder: MessageBuilder) -> Iterator[int]:
    """A counter of ``builder.build``'s calls from now on (``next`` of it: the count so far)."""
    calls = itertools.count()
    build = builder.build

    def counted(raw: bytes, source: str, native: bool = True) -> Any:
        next(calls)
        return build(raw, source, native)

    builder.build = counted  # type: ignore[method-assign]
    return calls


def test_periodic_lines_never_go_through_build(tmp_path: Path) -> None:
    """What the loop is for: records the native pass answers skip ``build``."""
    builder = spec_of(tmp_path).builder()
    calls = counting_builds(builder)
    data = b"\n".join([*periodic(50), b"{not json"]) + b"\n"
    tally = Tally()
    messages = list(lines_module.outgoing_lines(LineRecords(data, "x"), builder, "dlq", tally))
    assert next(calls) == 1 and tally.native == 50 and len(messages) == 51


def xml_lines() -> list[bytes]:
    """The demo data set's XML push-updates (NETCONF notifications), one a line."""
    records = generate(nodes=12, interfaces=4, rounds=2, seed=3).records
    return [
        line.rstrip(b"\n") for line in iter_jsonl(records) if line.startswith(b"<notification")
    ]


def test_xml_lines_skip_build_too(tmp_path: Path) -> None:
    """XML push-updates the native pass answers are keyed in the loop as JSON ones are: no
    ``build`` call, the same messages."""
    spec = spec_of(tmp_path)
    rows = xml_lines()
    assert len(rows) >= 10
    data = b"\n".join(rows) + b"\n"
    builder = spec.builder()
    calls = counting_builds(builder)
    tally = Tally()
    messages = list(lines_module.outgoing_lines(LineRecords(data, "x"), builder, "dlq", tally))
    assert next(calls) == 0 and tally.native == len(rows) == len(messages)
    assert_same(per_record(spec, data), by_lines(spec, data))


def test_an_error_the_xml_pass_raises_names_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As for JSON: an XML line whose pass raised is built again, the rejection naming it."""
    spec = spec_of(tmp_path)
    rows = xml_lines()
    data = b"\n".join(rows) + b"\n"
    chosen = rows[3]

    def raising(found: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(raw: bytes, source: str, *args: Any) -> Any:
            if raw == chosen:
                raise InputError("refused by the test", source=source)
            return found(raw, source, *args)

        return wrapped

    # the pass as build calls it (per record) and as the loop does (Decoder.keys_xml)
    monkeypatch.setattr(producer, "native_keys_xml", raising(native.keys_xml))
    monkeypatch.setattr(native_messages, "native_keys_xml_of", lambda: raising(native.keys_xml))
    old = per_record(spec, data)
    assert_same(old, by_lines(spec, data))
    (dead,) = [m for m in old[0] if m.topic == "dlq"]
    assert dead.header(HEADER_SOURCE) == "in.jsonl:4"


def test_progress_adds_up_to_the_per_record_reports(tmp_path: Path) -> None:
    data = mixed_input() + b"\r\n".join(periodic(5)) + b"\r\n"
    told: list[tuple[int, int]] = []
    records = LineRecords(data, "in.jsonl", 1, lambda n, w: told.append((n, w)))
    list(lines_module.outgoing_lines(records, spec_of(tmp_path).builder(), "dlq", Tally()))
    expected = list(split_records(data, "in.jsonl", "lines"))
    assert told[-1] == (0, -1)
    assert sum(n for n, _ in told[:-1]) == len(expected)
    assert sum(w for _, w in told[:-1]) == sum(map(by_bytes, expected))


def test_reporting_hands_lines_their_reporter() -> None:
    records = LineRecords(b"{}\n", "in.jsonl", 3)
    assert reporting(records, None, 0, 0, by_bytes) is records
    reported = reporting(records, Channel("127.0.0.1", 9, b"t" * 8), 1, 0, by_bytes)
    assert isinstance(reported, LineRecords) and reported.progress is not None
    assert (reported.data, reported.path, reported.first_line) == (b"{}\n", "in.jsonl", 3)


def test_line_records_iterate_as_split_records() -> None:
    data = b"a\n\n b \r\nc\r\n"
    assert list(LineRecords(data, "p", 5)) == list(split_records(data, "p", "lines", 5))
    assert isinstance(line_records(data, "p", "lines"), LineRecords)
    # an XML declaration alone joins the next line; a document is one record: per record
    declared = b'{}\n<?xml version="1.0"?>\r\n<a/>\n'
    assert not isinstance(line_records(declared, "p", "lines"), LineRecords)
    inline = b'{}\n<?xml version="1.0"?> <a/>\n  <?xml version="1.0"?>\n'
    assert not isinstance(line_records(inline, "p", "lines"), LineRecords)
    assert isinstance(line_records(inline[:-24], "p", "lines"), LineRecords)
    assert not isinstance(line_records(b'{\n "a": 1\n}\n', "p"), LineRecords)


def test_line_loop_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lines_module.LINE_LOOP_ENV, "0")
    spec = spec_of(tmp_path)
    data = mixed_input()
    assert_same(per_record(spec, data), by_lines(spec, data))


def test_a_dry_run_task_over_a_file_range(tmp_path: Path) -> None:
    """The task's own entry: a planned range read as lines, counted as record by record."""
    spec = spec_of(tmp_path)
    path = tmp_path / "in.jsonl"
    data = plain_input()
    path.write_bytes(data)
    _key, records = FileRange(str(path), 0, len(data), 1, "lines").read()
    assert isinstance(records, LineRecords)
    sink = SinkSpec({"bootstrap.servers": "127.0.0.1:9"}, "dlq", "run", dry_run=True)
    result = produce_partition(records, spec.builder(), sink, 0, 0)
    assert result.tally == per_record_tally(spec, data, str(path))


def per_record_tally(spec: BuilderSpec, data: bytes, path: str) -> Tally:
    tally = Tally()
    for _ in outgoing(split_records(data, path, "lines"), spec.builder(), "dlq", tally):
        pass
    return tally
