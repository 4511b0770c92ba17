"""Issue 13.1: MessageBuilder's per-record fast path against the general path.

The builder remembers, per (subscription id, node, content type), the catalog entry and its
fixed headers, and builds KeyedMessage with ``tuple.__new__``. The reference below is the
general path written out from its parts: Catalog.entry's scan, a full decode, the deriver,
the header rules of docs/design.md#producer-contract and KeyedMessage's own constructor.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

import yangkey.producer
from yangkey.catalog import build_catalog, load_catalog
from yangkey.config import parse_subscriptions
from yangkey.demo.sample import generate
from yangkey.errors import YangkeyError
from yangkey.messages import (
    HEADER_CONTENT_TYPE,
    HEADER_EVENT_TIME,
    HEADER_GENERATION,
    HEADER_SEQUENCE_NUMBER,
    HEADER_SUBSCRIPTION_TYPE,
    KeyedMessage,
    Rejection,
    header_bytes,
)
from yangkey.notifications import decode
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.spark.transform import Tally, outgoing, wire_size

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "subscriptions.yaml"
IF = "/ietf-interfaces:interfaces/interface"


def reference(builder: MessageBuilder, raw: bytes, source: str) -> list[KeyedMessage] | None:
    """The messages of ``raw`` by the general path; None where it is rejected."""
    if len(raw) > builder.max_bytes:
        return None
    try:
        note = decode(raw, source, builder.ns_modules)
        if note.subscription_id is None:
            return None
        node = note.node or builder.default_node
        entry = builder.catalog.entry(note.subscription_id, node)
        if entry is None:
            return None
        derived = entry.deriver.derive(note, default_node=builder.default_node)
    except YangkeyError:
        return None
    headers = [
        (HEADER_CONTENT_TYPE, note.content_type.encode()),
        (HEADER_GENERATION, str(entry.generation).encode()),
        (HEADER_SUBSCRIPTION_TYPE, entry.subscription_type.encode()),
        (HEADER_SEQUENCE_NUMBER, str(note.sequence_number or 0).encode()),
    ]
    if note.event_time:
        headers.append((HEADER_EVENT_TIME, str(note.event_time).encode()))
    return [
        KeyedMessage(entry.topics[index], derived.branch_key(index), raw, tuple(headers))
        for index, xpaths in enumerate(derived.branch_xpaths)
        if xpaths
    ]


def _same(builder: MessageBuilder, records: list[tuple[bytes, str]]) -> int:
    """Asserts build() == reference() for every record; returns how many were accepted."""
    accepted = 0
    for raw, source in records:
        got = builder.build(raw, source)
        want = reference(builder, raw, source)
        if want is None:
            assert isinstance(got, Rejection), (source, got)
            continue
        assert got == want, source
        assert all(type(message) is KeyedMessage for message in got)
        assert all(header_bytes(m.headers) <= builder.header_bytes for m in got)
        accepted += 1
    return accepted


@pytest.mark.parametrize("max_routes", [100_000, 2])
def test_records_fastpath_matches_general_path_on_demo_data(
    monkeypatch: pytest.MonkeyPatch, max_routes: int
) -> None:
    """The demo data set: JSON and XML, every wrapper, yang-patch, bad records; with 2 routes
    remembered at most, the memory is emptied again and again and answers stay the same."""
    monkeypatch.setattr(yangkey.producer, "MAX_ROUTES", max_routes)
    records = generate(nodes=3, interfaces=3, rounds=2).records
    builder = MessageBuilder(load_catalog(EXAMPLES))
    accepted = _same(builder, [(raw, f"demo:{n}") for n, raw in enumerate(records, 1)])
    assert accepted > len(records) // 2
    assert 0 < len(builder._routes) <= max_routes


def _envelope(sub_id: int, node: str, sequence: int | None, event_time: Any) -> bytes:
    body: dict[str, Any] = {"hostname": node}
    if event_time is not None:
        body["event-time"] = event_time
    if sequence is not None:
        body["sequence-number"] = sequence
    body["contents"] = {
        "ietf-yang-push:push-update": {
            "id": sub_id,
            "datastore-contents": {
                "ietf-interfaces:interfaces": {"interface": [{"name": f"eth{sequence or 0}"}]}
            },
        }
    }
    return json.dumps({"ietf-yp-notification:envelope": body}).encode()


def _envelope_xml(sub_id: int, node: str) -> bytes:
    return (
        '<envelope xmlns="urn:ietf:params:xml:ns:yang:ietf-yp-notification">'
        f"<event-time>2026-11-20T10:00:00Z</event-time><hostname>{node}</hostname>"
        '<contents><push-update xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-push">'
        f"<id>{sub_id}</id><datastore-contents>"
        '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">'
        "<interface><name>eth0</name></interface></interfaces>"
        "</datastore-contents></push-update></contents></envelope>"
    ).encode()


def test_records_fastpath_routes_by_node_and_content_type() -> None:
    """One subscription id from nodes its pattern takes and refuses, in JSON and XML, in turns:
    a remembered route never answers for another node or another encoding."""
    text = (
        "topic_policy:\n  type_level: true\nsubscriptions:\n"
        f"  - id: 1\n    xpath: {IF}\n    node: 'pe*'\n    type: periodic\n    generation: 4\n"
        f"  - id: 2\n    xpath: {IF}\n    type: on-change\n"
    )
    builder = MessageBuilder(build_catalog(parse_subscriptions(text)))
    records: list[tuple[bytes, str]] = []
    for turn in range(3):
        for sub_id in (1, 2):
            for node in ("pe-1", "core-1", "pe-2"):
                records.append((_envelope(sub_id, node, turn or None, None), "json"))
                records.append((_envelope(sub_id, node, turn, "2026-11-20T10:00:00Z"), "json"))
                records.append((_envelope(sub_id, node, turn, 1.5e15), "json"))
                records.append((_envelope_xml(sub_id, node), "xml"))
    accepted = _same(builder, records)
    assert 0 < accepted < len(records)  # core-1 on subscription 1 is refused
    assert isinstance(builder.build(_envelope(1, "core-1", 1, None), "x"), Rejection)
    (message,) = builder.build(_envelope(1, "pe-1", 1, None), "x")  # type: ignore[misc]
    assert message.header(HEADER_GENERATION) == "4"


def test_records_fastpath_message_is_a_plain_keyed_message() -> None:
    """Built with tuple.__new__, a message is what the constructor makes: equal, same type,
    picklable (Spark), its fields and headers readable by name."""
    builder = MessageBuilder(load_catalog(EXAMPLES))
    (message,) = builder.build(_envelope(1042, "pe-1", 9, "2026-11-20T10:00:00Z"), "x")  # type: ignore[misc]
    rebuilt = KeyedMessage(message.topic, message.key, message.value, message.headers)
    assert message == rebuilt and type(message) is KeyedMessage
    assert pickle.loads(pickle.dumps(message)) == message
    assert message.header(HEADER_SEQUENCE_NUMBER) == "9"
    assert message.header("no-such-header") is None


def test_records_fastpath_header_bound_covers_the_instance_feed() -> None:
    """The typed instance header makes headers much bigger: the bound follows."""
    catalog = load_catalog(EXAMPLES)
    builder = MessageBuilder(catalog, ProducerKnobs.from_catalog(catalog, instances=True))
    seen = 0
    for n, raw in enumerate(generate(nodes=2, interfaces=3, rounds=1).records):
        result = builder.build(raw, f"demo:{n}")
        if isinstance(result, Rejection):
            continue
        for message in result:
            seen = max(seen, header_bytes(message.headers))
            assert header_bytes(message.headers) <= builder.header_bytes
    assert seen > 300  # instance rows were there to count


def _exact_outgoing(
    records: list[tuple[bytes, str]], builder: MessageBuilder, max_bytes: int
) -> list[tuple[str, bytes | None, str | None]]:
    """outgoing's size rule with every message's headers counted, as before the bound."""
    out: list[tuple[str, bytes | None, str | None]] = []
    for raw, source in records:
        result = builder.build(raw, source)
        assert not isinstance(result, Rejection)
        fits = [m for m in result if wire_size(m) <= max_bytes]
        out += [(m.topic, m.key, None) for m in fits]
        if len(fits) < len(result):
            out.append(("dlq", None, "oversized"))
    return out


def test_records_fastpath_size_check_is_exact_at_the_limit() -> None:
    """Limits one byte either side of each message's exact wire size, with event times
    (headers) of growing length: the bound never lets a message over the limit through and
    never sends one under it to the dead-letter topic."""
    builder = MessageBuilder(load_catalog(EXAMPLES))
    records = [
        (_envelope(1042, "pe-1", n, "2026-11-20T10:00:00Z" + "x" * (n * 300)), f"f:{n}")
        for n in range(4)
    ]
    sizes = sorted({wire_size(m) for raw, s in records for m in builder.build(raw, s)})  # type: ignore[union-attr]
    assert builder.header_bytes > 900  # the longest event time sets the bound
    for size in sizes:
        for max_bytes in (size - 1, size, size + 1):
            tally = Tally()
            got = [
                (m.topic, m.key, m.header("yangkey-error-kind"))
                for m in outgoing(records, builder, "dlq", tally, max_bytes)
            ]
            assert got == _exact_outgoing(records, builder, max_bytes), max_bytes
            assert tally.rejected.get("oversized", 0) == sum(s > max_bytes for s in sizes)
