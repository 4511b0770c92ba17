"""Learned subscriptions on the native key pass (issue 33, contract 4).

A notification of an id the subscriptions file lacks is keyed by the native pass once the
catalog learns its subscription from the notification's ``yang-push-subscription`` metadata
(or takes it from the shared catalog); the records must be the ones the Python reference
builds: same topics, keys, headers, and the same rejections where learning is refused.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest
from test_shared_catalog import MemoryLog

from yangkey import native
from yangkey.catalog import Catalog, build_catalog
from yangkey.config import parse_subscriptions
from yangkey.messages import KeyedMessage, Rejection
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.shared_catalog import SharedCatalog

pytestmark = pytest.mark.skipif(not native.active(), reason="yangkey-native is not built")

IF = "/ietf-interfaces:interfaces/interface"
FILE = f"""
learn: true
limits:
  max_learned_subscriptions: 7
subscriptions:
  - id: 1
    xpath: {IF}
    type: on-change
"""


def telemetry(
    node: str | None, sub_id: int, xpath: str | None, data: dict[str, Any], seq: int = 0
) -> bytes:
    """A telemetry message (draft-ietf-nmop-message-broker-telemetry-message) wrapping an
    envelope push-update, as a collector forwards it, with its subscription's metadata."""
    subscription: dict[str, Any] = {"id": sub_id}
    if xpath is not None:
        subscription["xpath-filter"] = xpath
    envelope = {
        "event-time": f"2026-11-20T10:00:{seq % 60:02d}Z",
        "sequence-number": seq,
        "contents": {"ietf-yang-push:push-update": {"id": sub_id, "datastore-contents": data}},
    }
    message: dict[str, Any] = {
        "telemetry-message-metadata": {"yang-push-subscription": subscription},
        "payload": {"ietf-yp-notification:envelope": envelope},
    }
    if node is not None:
        message["network-node-manifest"] = {"name": node}
    return orjson.dumps({"ietf-telemetry-message:message": message})


def interfaces(*names: str) -> dict[str, Any]:
    return {
        "ietf-interfaces:interfaces": {
            "interface": [{"name": n, "oper-status": "up"} for n in names]
        }
    }


CLOCK = {"ietf-system:system": {"clock": {"timezone-utc-offset": 60}}}
DNS = {"ietf-system:system": {"dns-resolver": {"search": ["a.example", "b.example"]}}}


def learning_stream() -> list[bytes]:
    """Learned ids from several nodes, repeated and interleaved with the file's own; the same
    id with another filter; refusals (no metadata, a filter that does not compile, the limit
    of learned subscriptions)."""
    records = []
    for seq, node in zip(itertools.count(), ["pe1", "pe2", "pe1", "pe3"] * 3, strict=False):
        records += [
            telemetry(node, 777, f"{IF}/oper-status", interfaces("eth0", "eth1"), seq),
            telemetry(node, 1, None, interfaces(f"ge-{seq}"), seq),
            telemetry(node, 778, "/ietf-system:system/dns-resolver/search", DNS, seq),
        ]
    records += [
        telemetry("pe1", 780, "/ietf-system:system/nonexistent", CLOCK, 50),  # no such node
        telemetry("pe1", 777, "/ietf-system:system/clock", CLOCK, 51),  # another filter
        telemetry("pe1", 777, f"{IF}/oper-status", interfaces("eth2"), 52),  # the first again
        telemetry("pe9", 779, None, CLOCK, 53),  # nothing to learn it from
        telemetry("pe4", 781, "/ietf-system:system/clock", CLOCK, 54),  # over the limit
        telemetry(None, 782, "/ietf-system:system/clock", CLOCK, 55),  # no node, the limit
    ]
    return records


def outputs(
    catalog: Catalog, records: list[bytes], use_native: bool, knobs: ProducerKnobs | None = None
) -> tuple[list[list[KeyedMessage] | Rejection], int]:
    builder = MessageBuilder(catalog, knobs, default_node=None)
    builder.native = use_native
    built = [builder.build(raw, f"t:{n}") for n, raw in enumerate(records, 1)]
    return built, builder.native_keyed


@pytest.mark.parametrize(
    "knobs", [None, ProducerKnobs(instances=True)], ids=["keys", "instance-feed"]
)
def test_native_learning_records_equal_the_reference(knobs: ProducerKnobs | None) -> None:
    """Every record, learned or refused, as the Python path builds it (with the instance feed
    too: its header from the learned entry's feeds); and the learned subscriptions'
    notifications did take the native pass (not only the file's)."""
    records = learning_stream()
    with_native, keyed = outputs(build_catalog(parse_subscriptions(FILE)), records, True, knobs)
    without, _ = outputs(build_catalog(parse_subscriptions(FILE)), records, False, knobs)
    assert with_native == without
    learned = [
        raw
        for raw, built in zip(records, without, strict=True)
        if isinstance(built, list) and b'"id":1,' not in raw
    ]
    refused = [r.reason for r in without if isinstance(r, Rejection)]
    assert len(learned) == 26 and len(refused) == 4, (len(learned), refused)
    assert "nonexistent" in refused[0] and "metadata has neither" in refused[1], refused
    assert all("limit of 7 learned" in r for r in refused[2:]), refused
    file_records = len(records) - len(learned) - len(refused)
    assert keyed == file_records + len(learned)


def test_native_learning_off_and_shared_catalog() -> None:
    """Learning off for the run: the same rejections both ways (none keyed natively). A
    subscription another producer learned, taken from the shared catalog for a notification
    without metadata: the same records, keyed natively."""
    records = learning_stream()
    off = ProducerKnobs(learn=False)
    with_native, keyed = outputs(build_catalog(parse_subscriptions(FILE)), records, True, off)
    without, _ = outputs(build_catalog(parse_subscriptions(FILE)), records, False, off)
    assert with_native == without
    assert keyed == sum(1 for r in records if b'"id":1,' in r)

    log = MemoryLog()
    writer = build_catalog(parse_subscriptions(FILE))
    writer.attach(SharedCatalog(log, "writer"))
    assert isinstance(MessageBuilder(writer).build(records[0], "w"), list)  # learns 777 @ pe1
    bare = [telemetry("pe1", 777, None, interfaces("eth0", f"x{n}"), n) for n in range(5)]

    def reader() -> Catalog:
        catalog = build_catalog(parse_subscriptions(FILE))
        catalog.attach(SharedCatalog(log, "reader"))
        return catalog

    shared_native, shared_keyed = outputs(reader(), bare, True)
    shared_python, _ = outputs(reader(), bare, False)
    assert shared_native == shared_python
    assert all(isinstance(r, list) and r for r in shared_native)
    assert shared_keyed == len(bare)
