"""A realistic, deterministic YANG-Push data set for the example subscriptions.

Several nodes stream, for ``examples/subscriptions.yaml``: interface state (sync-on-start
push-update, then on-change push-change-update yang-patch edits including a delete), interface
counters, IPv4 addresses, hardware inventory, the system clock and DNS search domains, in JSON
and XML, bare, in the notification envelope, in NETCONF ``<notification>`` and in telemetry
messages. A replayed older update and a few bad notifications are mixed in.

:func:`generate` also returns the expected outcome (current state per key, rejected count), so
that the end-to-end test and the demo can check what the pipeline produced.

Event times start an hour before the process first asks for data (not at a fixed date): the
ClickHouse tables expire rows by event time plus the topic's retention, so data stamped with a
fixed date would vanish from them once that date is older than the shortest retention.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import click
import orjson

from yangkey.messages import XPATH_SEPARATOR

IF_NS = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
YP_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
NC_NS = "urn:ietf:params:xml:ns:netconf:notification:1.0"


@functools.cache
def default_start() -> datetime:
    """An hour ago, to the minute; fixed for the life of the process so that two calls of
    :func:`generate` with the same arguments give the same bytes."""
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    return now - timedelta(hours=1)


@dataclass
class Expected:
    """What a correct pipeline ends with."""

    current: dict[tuple[str, int, str], str] = field(default_factory=dict)
    """(node, subscription id, key xpaths line) -> event time of the newest message."""
    interface_status: dict[tuple[str, str], str] = field(default_factory=dict)
    """(node, interface) -> last oper-status (deleted interfaces absent)."""
    deleted: set[tuple[str, str]] = field(default_factory=set)
    bad: int = 0


@dataclass
class DataSet:
    records: list[bytes]
    expected: Expected


def _envelope(node: str, seq: int, when: datetime, body: dict[str, Any]) -> bytes:
    return orjson.dumps(
        {
            "ietf-yp-notification:envelope": {
                "event-time": when.isoformat().replace("+00:00", "Z"),
                "hostname": node,
                "sequence-number": seq,
                "contents": body,
            }
        }
    )


def _update(subscription_id: int, contents: dict[str, Any]) -> dict[str, Any]:
    """The body of a push-update carrying ``contents``."""
    return {"ietf-yang-push:push-update": {"id": subscription_id, "datastore-contents": contents}}


def _patch(subscription_id: int, patch_id: str, edit: dict[str, Any]) -> dict[str, Any]:
    """The body of a push-change-update carrying one yang-patch edit."""
    return {
        "ietf-yang-push:push-change-update": {
            "id": subscription_id,
            "datastore-changes": {"yang-patch": {"patch-id": patch_id, "edit": [edit]}},
        }
    }


def _xml_interfaces(
    node: str, seq: int, when: datetime, sub: int, ifs: list[dict[str, str]]
) -> bytes:
    entries = "".join(
        f"<interface><name>{i['name']}</name><oper-status>{i['oper-status']}</oper-status>"
        "</interface>"
        for i in ifs
    )
    stamp = when.isoformat().replace("+00:00", "Z")
    return (
        f'<notification xmlns="{NC_NS}"><eventTime>{stamp}</eventTime>'
        f"<hostname>{node}</hostname><sequence-number>{seq}</sequence-number>"
        f'<push-update xmlns="{YP_NS}"><id>{sub}</id><datastore-contents>'
        f'<interfaces xmlns="{IF_NS}">{entries}</interfaces>'
        "</datastore-contents></push-update></notification>"
    ).encode()


def _address(n: int) -> str:
    """A valid IPv4 address per node, the documentation range for the first 254."""
    if n < 254:
        return f"192.0.2.{n + 1}"
    return f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


def _telemetry(node: str, when: datetime, body: dict[str, Any]) -> bytes:
    stamp = when.isoformat().replace("+00:00", "Z")
    return orjson.dumps(
        {
            "ietf-telemetry-message:message": {
                "network-node-manifest": {"name": node, "vendor": "example"},
                "telemetry-message-metadata": {
                    "node-export-timestamp": stamp,
                    "session-protocol": "yang-push",
                },
                "payload": body,
            }
        }
    )


def generate(
    nodes: int = 4,
    interfaces: int = 6,
    rounds: int = 3,
    seed: int = 7,
    start: datetime | None = None,
    extra_rounds: int = 0,
) -> DataSet:
    """A data set of ``nodes * (interfaces + rounds + 7) + extra_rounds + 4`` notifications
    (one fewer per node without rounds: no replay; 4 bad ones), the first stamped ``start`` (default
    :func:`default_start`). The first ``extra_rounds`` nodes get one on-change round more."""
    rng = random.Random(seed)
    records: list[bytes] = []
    expected = Expected()
    start = start or default_start()
    clock = start

    def tick() -> datetime:
        nonlocal clock
        clock += timedelta(milliseconds=rng.randint(5, 50))
        return clock

    def note_current(node: str, sub: int, xpaths: str, when: datetime) -> None:
        expected.current[(node, sub, xpaths)] = when.isoformat().replace("+00:00", "Z")

    for n in range(nodes):
        node = f"pe{n + 1}.{['nyc', 'lon', 'fra', 'sin'][n % 4]}"
        seq = 0
        names = [f"GigabitEthernet0/0/{i}" for i in range(interfaces)]
        status = {name: rng.choice(["up", "up", "down"]) for name in names}
        # Sync-on-start: one push-update per interface for subscription 1042 (current state).
        for index, name in enumerate(names):
            seq += 1
            when = tick()
            body = _update(
                1042,
                {
                    "ietf-interfaces:interfaces": {
                        "interface": [
                            {
                                "name": name,
                                "oper-status": status[name],
                                "type": "iana-if-type:ethernetCsmacd",
                            }
                        ]
                    }
                },
            )
            if index % 3 == 2:
                records.append(
                    _xml_interfaces(
                        node, seq, when, 1042, [{"name": name, "oper-status": status[name]}]
                    )
                )
            elif index % 3 == 1:
                records.append(_telemetry(node, when, body))
            else:
                records.append(_envelope(node, seq, when, body))
            note_current(node, 1042, f"/ietf-interfaces:interfaces/interface[name='{name}']", when)
        # On-change: yang-patch edits flipping oper-status, in several rounds.
        replay: tuple[bytes, str] | None = None
        for _ in range(rounds + (n < extra_rounds)):
            name = rng.choice(names)
            if (node, name) in expected.deleted:
                continue
            status[name] = "down" if status[name] == "up" else "up"
            seq += 1
            when = tick()
            target = "/ietf-interfaces:interfaces/interface=" + name.replace("/", "%2F")
            raw = _envelope(
                node,
                seq,
                when,
                _patch(
                    1042,
                    f"p{seq}",
                    {
                        "edit-id": "1",
                        "operation": "merge",
                        "target": target,
                        "value": {
                            "ietf-interfaces:interface": [
                                {"name": name, "oper-status": status[name]}
                            ]
                        },
                    },
                ),
            )
            records.append(raw)
            note_current(node, 1042, f"/ietf-interfaces:interfaces/interface[name='{name}']", when)
            replay = replay or (raw, name)
        # Delete the last interface (a yang-patch delete carries no value).
        gone = names[-1]
        seq += 1
        when = tick()
        records.append(
            _envelope(
                node,
                seq,
                when,
                _patch(
                    1042,
                    f"p{seq}",
                    {
                        "edit-id": "1",
                        "operation": "delete",
                        "target": "/ietf-interfaces:interfaces/interface="
                        + gone.replace("/", "%2F"),
                    },
                ),
            )
        )
        note_current(node, 1042, f"/ietf-interfaces:interfaces/interface[name='{gone}']", when)
        expected.deleted.add((node, gone))
        # A replayed older message: same key, older event time; must not win in current state.
        if replay is not None:
            records.append(replay[0])
        for name in names:
            if (node, name) not in expected.deleted:
                expected.interface_status[(node, name)] = status[name]
        # Counters (periodic), addresses, inventory, clock, DNS search list.
        seq += 1
        when = tick()
        records.append(
            _envelope(
                node,
                seq,
                when,
                _update(
                    1043,
                    {
                        "ietf-interfaces:interfaces": {
                            "interface": [
                                {
                                    "name": name,
                                    "statistics": {
                                        "in-octets": str(rng.randint(1, 10**12)),
                                        "out-octets": str(rng.randint(1, 10**12)),
                                    },
                                }
                                for name in names
                            ]
                        }
                    },
                ),
            )
        )
        note_current(
            node,
            1043,
            XPATH_SEPARATOR.join(
                sorted(
                    f"/ietf-interfaces:interfaces/interface[name='{name}']/statistics"
                    for name in names
                )
            ),
            when,
        )
        seq += 1
        when = tick()
        records.append(
            _envelope(
                node,
                seq,
                when,
                _update(
                    1100,
                    {
                        "ietf-interfaces:interfaces": {
                            "interface": [
                                {
                                    "name": names[0],
                                    "ietf-ip:ipv4": {
                                        "address": [{"ip": _address(n), "prefix-length": 24}]
                                    },
                                }
                            ]
                        }
                    },
                ),
            )
        )
        note_current(
            node,
            1100,
            "/ietf-interfaces:interfaces/interface"
            f"[name='{names[0]}']/ietf-ip:ipv4/address[ip='{_address(n)}']",
            when,
        )
        seq += 1
        when = tick()
        components = [
            {"name": "chassis", "class": "iana-hardware:chassis", "serial-num": f"SN{n:03d}00"},
            {"name": "fan-1", "class": "iana-hardware:fan", "serial-num": f"SN{n:03d}01"},
        ]
        records.append(
            _envelope(
                node,
                seq,
                when,
                _update(3001, {"ietf-hardware:hardware": {"component": components}}),
            )
        )
        note_current(
            node,
            3001,
            XPATH_SEPARATOR.join(
                sorted(
                    f"/ietf-hardware:hardware/component[name='{c['name']}']/serial-num"
                    for c in components
                )
            ),
            when,
        )
        seq += 1
        when = tick()
        records.append(
            _envelope(
                node,
                seq,
                when,
                _update(2001, {"ietf-system:system": {"clock": {"timezone-utc-offset": 60}}}),
            )
        )
        note_current(node, 2001, "/ietf-system:system/clock", when)
        seq += 1
        when = tick()
        domains = ["example.net", f"site{n}.example.net"]
        records.append(
            _envelope(
                node,
                seq,
                when,
                _update(2002, {"ietf-system:system": {"dns-resolver": {"search": domains}}}),
            )
        )
        note_current(
            node,
            2002,
            XPATH_SEPARATOR.join(
                sorted(f"/ietf-system:system/dns-resolver/search[.='{d}']" for d in domains)
            ),
            when,
        )

    bad = [
        b'{"ietf-yp-notification:envelope": {"hostname": "pe1.nyc", "contents": ',
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>',
        _envelope(
            "pe1.nyc",
            999,
            start,
            _update(424242, {}),
        ),
        _envelope(
            "pe2.lon",
            998,
            start,
            _update(1042, {"ietf-interfaces:interfaces": {"interface": [{"oper-status": "up"}]}}),
        ),
    ]
    for index, raw in enumerate(bad):
        records.insert((index + 1) * len(records) // (len(bad) + 1), raw)
    expected.bad = len(bad)
    return DataSet(records, expected)


def iter_jsonl(records: list[bytes]) -> Iterator[bytes]:
    """One record per line (XML and JSON alike carry no raw newline here)."""
    for raw in records:
        yield raw.replace(b"\n", b" ") + b"\n"


BAD_RECORDS = 4
MIN_COUNT = 18
"""One node with 6 interfaces and 1 on-change round, plus the bad records."""


def generate_count(
    count: int, interfaces: int = 6, seed: int = 7, start: datetime | None = None
) -> DataSet:
    """Exactly ``count`` notifications: as many nodes as give each about 3 on-change rounds,
    the remainder spread as extra rounds."""
    per_node = interfaces + 7  # besides its rounds (at least one), see generate()
    budget = count - BAD_RECORDS
    nodes = max(1, budget // (per_node + 3))
    rest = budget - nodes * per_node  # the rounds of every node
    if rest < nodes:
        raise click.BadParameter(
            f"at least {nodes * per_node + BAD_RECORDS} with --interfaces {interfaces}",
            param_hint="--count",
        )
    data = generate(nodes, interfaces, rest // nodes, seed, start, extra_rounds=rest % nodes)
    assert len(data.records) == count, (len(data.records), count)
    return data


def expected_document(data: DataSet) -> dict[str, Any]:
    """The outcome a correct pipeline ends with, as JSON: what ``--expected`` writes."""
    expected = data.expected
    return {
        "notifications": len(data.records),
        "rejected": expected.bad,
        "current_state": [
            {"node": node, "subscription_id": sub, "xpaths": xpaths, "event_time": when}
            for (node, sub, xpaths), when in sorted(expected.current.items())
        ],
        "interfaces": [
            {"node": node, "interface": name, "oper_status": status}
            for (node, name), status in sorted(expected.interface_status.items())
        ],
        "deleted_interfaces": [
            {"node": node, "interface": name} for node, name in sorted(expected.deleted)
        ],
    }
