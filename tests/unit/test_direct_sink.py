"""The native pass producing straight into the native producer (yangkey.spark.delivery.direct)
against the Python loop it replaces (yangkey.spark.lines.outgoing_lines, itself checked
against the per-record transform in test_spark_lines.py): what the outbox would produce
(``Outbox.take``, the order ``produce_outbox`` sends in) must be the loop's messages (topic,
key, value, headers in order), dead letters and positions included, with the same counts and
the same bound on header bytes, under every producer knob the native pass serves.

The broker end (``RdProducer.produce_outbox`` into a real log) is
tests/integration/test_direct_sink_broker.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_native_learning import FILE as LEARNING_FILE
from test_native_learning import learning_stream
from test_spark_lines import (
    KNOBS,
    TWO_BRANCHES,
    Run,
    assert_same,
    by_lines,
    mixed_input,
    periodic,
    plain_input,
    spec_of,
    system,
    xml_lines,
)

from yangkey.errors import InputError
from yangkey.messages import HEADER_SOURCE
from yangkey.producer import MessageBuilder
from yangkey.spark import lines as lines_module
from yangkey.spark.delivery import direct as direct_module
from yangkey.spark.delivery.direct import fill, make_outbox
from yangkey.spark.source import splitting
from yangkey.spark.source.splitting import LineRecords, split_records
from yangkey.spark.source.units import by_bytes
from yangkey.spark.transform import BuilderSpec, Tally

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")
if not hasattr(yangkey_native, "Outbox"):
    pytest.skip("yangkey-native has no Outbox: rebuild it", allow_module_level=True)


def outbox_of(builder: MessageBuilder, max_bytes: int = 10**6) -> Any:
    outbox = make_outbox(yangkey_native, builder, max_bytes)
    assert outbox is not None
    return outbox


def direct(
    spec: BuilderSpec,
    data: bytes,
    first_line: int = 1,
    max_bytes: int = 10**6,
    builder: MessageBuilder | None = None,
) -> tuple[Run, int]:
    """``by_lines``' run through the outbox, and how many messages the native side kept
    (plain tuples; the Python side's are ``KeyedMessage``)."""
    builder = spec.builder() if builder is None else builder
    outbox = outbox_of(builder, max_bytes)
    tally = Tally()
    messages: list[Any] = []
    records = LineRecords(data, "in.jsonl", first_line)
    for held in fill(records, builder, outbox, "dlq", tally, max_bytes):
        assert held == len(outbox)
        messages.extend(outbox.take())
    assert len(outbox) == 0
    kept = sum(type(m) is tuple for m in messages)
    return (messages, tally, builder.header_bytes), kept


@pytest.mark.parametrize("knobs", KNOBS[:4], ids=lambda k: ",".join(k) or "defaults")
@pytest.mark.parametrize("chunk", [splitting.CHUNK_BYTES, 700])
def test_the_outbox_holds_the_line_loops_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, knobs: dict[str, Any], chunk: int
) -> None:
    monkeypatch.setattr(splitting, "CHUNK_BYTES", chunk)  # chunk borders between lines
    spec = spec_of(tmp_path, **knobs)
    data = mixed_input()
    old = by_lines(spec, data, 41)
    new, kept = direct(spec, data, 41)
    assert_same(old, new)
    _, tally, _ = old  # the input reaches every branch of the loop
    assert tally.records == 109 and tally.rejected["input"] >= 3
    assert kept >= 60  # the periodic records at least, without a KeyedMessage


def test_periodic_lines_are_all_kept_natively(tmp_path: Path) -> None:
    spec = spec_of(tmp_path)
    data = b"\n".join(periodic(300)) + b"\n"
    new, kept = direct(spec, data)
    assert_same(by_lines(spec, data), new)
    assert kept == 300 and new[1].native == 300


def test_dead_letters_and_blank_lines_keep_their_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(splitting, "CHUNK_BYTES", 500)
    spec = spec_of(tmp_path)
    data = b"\n".join([*periodic(9), b"{not json", b"", *periodic(9), b"<broken", b"{"]) + b"\n"
    (messages, tally, _), kept = direct(spec, data, 100)
    assert_same(by_lines(spec, data, 100), (messages, tally, _))
    sources = [dict(m[3])[HEADER_SOURCE] for m in messages if m[0] == "dlq"]
    assert sources == [b"in.jsonl:109", b"in.jsonl:120", b"in.jsonl:121"]
    assert [m[0] == "dlq" for m in messages].index(True) == 9  # after the 9 lines before it
    assert kept == 18


def test_plain_input_and_crlf_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splitting, "CHUNK_BYTES", 900)
    spec = spec_of(tmp_path)
    rows = periodic(30)
    data = b"\n".join(rows[:10]) + b"\n" + b"\r\n".join(rows[10:20]) + b"\r\n\r\n"
    data += b"\n".join(rows[20:]) + b"\r\n" + plain_input()
    new, kept = direct(spec, data)
    assert_same(by_lines(spec, data), new)
    assert 0 < kept < new[1].messages  # the chunks with a \r go the Python way


def test_oversized_messages(tmp_path: Path) -> None:
    spec = spec_of(tmp_path)
    data = mixed_input()
    limit = 1024 + 520  # some periodic messages fit, some go to the dead letters
    old = by_lines(spec, data, max_bytes=limit)
    new, kept = direct(spec, data, max_bytes=limit)
    assert_same(old, new)
    assert old[1].rejected["oversized"] > 0 and kept > 0


def test_learned_subscriptions(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, LEARNING_FILE)
    data = b"\n".join(learning_stream()) + b"\n"
    old = by_lines(spec, data)
    new, kept = direct(spec, data)
    assert_same(old, new)
    assert old[1].native > 0 and old[1].rejections > 0 and kept > 0


@pytest.mark.parametrize("knobs", KNOBS[:3], ids=lambda k: ",".join(k) or "defaults")
def test_several_branches_and_no_event_time(tmp_path: Path, knobs: dict[str, Any]) -> None:
    """Two topics: Python builds them (one topic for all: kept natively); no event time."""
    spec = spec_of(tmp_path, TWO_BRANCHES, **knobs)
    data = b"\n".join(system(n) for n in range(40)) + b"\n"
    new, kept = direct(spec, data)
    assert_same(by_lines(spec, data), new)
    assert (kept > 0) if "single_topic" in knobs else (kept == 0)
    untimed = b"\n".join(system(n) for n in range(0, 40, 2)) + b"\n"
    assert_same(by_lines(spec, untimed), direct(spec, untimed)[0])


def test_xml_lines(tmp_path: Path) -> None:
    spec = spec_of(tmp_path)
    rows = xml_lines()
    data = b"\n".join(rows) + b"\n"
    new, kept = direct(spec, data)
    assert_same(by_lines(spec, data), new)
    assert kept == len(rows) == new[1].native


def test_an_error_the_native_pass_raises(tmp_path: Path) -> None:
    """The pass raising (here: its route question) leaves the line to ``build``, whose
    rejection names its position, as in the Python loop."""
    spec = spec_of(tmp_path)
    data = b"\n".join(periodic(20)) + b"\n"

    def refusing(builder: MessageBuilder) -> MessageBuilder:
        route = builder._native_route

        def refused(subscription_id: int, node: str | None, *rest: Any) -> Any:
            if subscription_id == 1043:  # asked again each time: a refusal is not remembered
                raise InputError("refused by the test", source="route")
            return route(subscription_id, node, *rest)

        builder._native_route = refused  # type: ignore[method-assign]
        return builder

    builder = refusing(spec.builder())
    tally = Tally()
    reference = list(
        lines_module.outgoing_lines(LineRecords(data, "in.jsonl"), builder, "dlq", tally)
    )
    new, kept = direct(spec, data, builder=refusing(spec.builder()))
    assert_same((reference, tally, builder.header_bytes), new)
    dead = [m for m in new[0] if m[0] == "dlq"]
    sources = [dict(m[3])[HEADER_SOURCE] for m in dead]
    assert sources == [b"in.jsonl:1", b"in.jsonl:6", b"in.jsonl:11", b"in.jsonl:16"]
    assert kept == 16


def test_progress_adds_up_to_the_per_record_reports(tmp_path: Path) -> None:
    data = mixed_input() + b"\r\n".join(periodic(5)) + b"\r\n"
    told: list[tuple[int, int]] = []
    records = LineRecords(data, "in.jsonl", 1, lambda n, w: told.append((n, w)))
    builder = spec_of(tmp_path).builder()
    list(fill(records, builder, outbox_of(builder), "dlq", Tally()))
    expected = list(split_records(data, "in.jsonl", "lines"))
    assert told[-1] == (0, -1)
    assert sum(n for n, _ in told[:-1]) == len(expected)
    assert sum(w for _, w in told[:-1]) == sum(map(by_bytes, expected))


def test_no_outbox_where_the_direct_path_does_not_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builder = spec_of(tmp_path).builder()
    assert make_outbox(yangkey_native, builder, 10**6) is not None
    # the instance feed: the native pass's messages take more than its answer
    assert make_outbox(yangkey_native, spec_of(tmp_path, instances=True).builder(), 10**6) is None
    assert make_outbox(object(), builder, 10**6) is None  # a module without Outbox
    for switch in (direct_module.DIRECT_ENV, lines_module.LINE_LOOP_ENV):
        monkeypatch.setenv(switch, "0")
        assert make_outbox(yangkey_native, builder, 10**6) is None
        monkeypatch.delenv(switch)



def test_an_answer_left_to_python_goes_out_in_its_place(tmp_path: Path) -> None:
    """Where ``Outbox.run`` stops at a line it has an answer for (a route it cannot read,
    say), ``Leftovers.take`` makes the line loop's message of it and counts it."""
    spec = spec_of(tmp_path)
    line = periodic(5)[4]
    (expected, _, _) = by_lines(spec, line + b"\n")
    builder = spec.builder()
    native = builder.native_pass()
    assert native is not None
    found = native.json(line, "in.jsonl", native.ns_modules, native.route, False, native.routes,
                        False, True)
    tally = Tally()
    leftovers = lines_module.Leftovers(LineRecords(line, "in.jsonl"), builder, "dlq", tally, 10**6)
    taken, lighter = leftovers.take(line, 1, lines_module.UNANSWERED, found)
    assert taken == expected and lighter == 0
    assert dict(tally.produced) == {expected[0].topic: 1}
