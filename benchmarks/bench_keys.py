"""Phase 3 throughput: compiled subscription, 1-2 KB JSON push-update with 10 list instances.

Prints notifications/s for key derivation (decode + walk + compose) and for a parse-only loop
(``orjson.loads``) over the same bytes, and their ratio. Goals (issue 2): >= 100k
notifications/s on one core, derivation <= 3x the JSON parse.

    python benchmarks/bench_keys.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import orjson

from yangkey.keys import KeyDeriver
from yangkey.notifications import decode
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription


def notification(instances: int = 10) -> bytes:
    interfaces = [
        {
            "name": f"GigabitEthernet0/0/{i}",
            "type": "iana-if-type:ethernetCsmacd",
            "oper-status": "up" if i % 3 else "down",
            "admin-status": "up",
            "if-index": 100 + i,
        }
        for i in range(instances)
    ]
    document = {
        "ietf-yp-notification:envelope": {
            "event-time": "2026-11-20T10:00:00.000Z",
            "hostname": "router-nyc-01",
            "sequence-number": 42,
            "contents": {
                "ietf-yang-push:push-update": {
                    "id": 1042,
                    "datastore-contents": {"ietf-interfaces:interfaces": {"interface": interfaces}},
                }
            },
        }
    }
    return orjson.dumps(document)


def rate(loop: Callable[[int], None], seconds: float) -> float:
    loop(200)  # warm up
    count = 0
    batch = 2000
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        loop(batch)
        count += batch
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--instances", type=int, default=10)
    args = parser.parse_args()

    schema = SchemaContext.cached()
    compiled = compile_subscription("/ietf-interfaces:interfaces/interface", schema)
    deriver = KeyDeriver(compiled)
    ns_modules = schema.index.by_namespace
    raw = notification(args.instances)

    def parse_only(n: int) -> None:
        for _ in range(n):
            orjson.loads(raw)

    def derive(n: int) -> None:
        for _ in range(n):
            deriver.derive(decode(raw, "bench", ns_modules)).key  # noqa: B018

    expected = deriver.derive(decode(raw, "bench", ns_modules)).key
    assert expected.count(b" | ") == args.instances - 1, expected

    parse_rate = rate(parse_only, args.seconds)
    derive_rate = rate(derive, args.seconds)
    print(f"notification size        : {len(raw)} bytes, {args.instances} list instances")
    print(f"parse only (orjson.loads): {parse_rate:,.0f} notifications/s")
    print(f"derive key (decode+walk) : {derive_rate:,.0f} notifications/s")
    print(f"cost ratio derive/parse  : {parse_rate / derive_rate:.2f}x  (goal <= 3x)")
    print(f"goal >= 100,000/s        : {'met' if derive_rate >= 100_000 else 'NOT met'}")


if __name__ == "__main__":
    main()
