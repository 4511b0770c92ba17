"""Cost curves of the per-record path (issue 13 item 4): per-instance cost flat, lookup O(1).

Two curves, each through ``MessageBuilder.build`` (decode, catalog lookup, derive, messages):

* **instances**: rows/s and microseconds per instance for a push-update carrying 1, 10, 100
  and 1000 interface entries, JSON and XML (the per-instance cost should stay flat);
* **catalog**: rows/s of one-instance JSON push-updates against catalogs of 10, 1,000 and
  10,000 subscriptions, the notifications' subscription ids spread over the whole catalog
  (the rate should not fall with the catalog's size).

Each figure is printed with its ratio to the curve's first point, measured in the same run
and timed like bench_keys.py (best of short CPU-time batches, interleaved).

    python benchmarks/bench_curves.py [--seconds 1]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml
from bench_keys import best_rates, envelope, interfaces, xml_notification

from yangkey.catalog import Catalog, load_catalog
from yangkey.producer import MessageBuilder, ProducerKnobs

SUBSCRIPTION_ID = 1042
INSTANCES = (1, 10, 100, 1000)
CATALOG_SIZES = (10, 1_000, 10_000)
SPREAD = CATALOG_SIZES[0]
"""Distinct subscription ids the catalog curve's notifications carry: the same number at every
size, so that only the catalog's size changes."""


def one_subscription_catalog() -> Catalog:
    document = {
        "organisation_prefix": "bench",
        "dead_letter_topic": "bench-dead-letter",
        "subscriptions": [
            {"id": SUBSCRIPTION_ID, "xpath": "/ietf-interfaces:interfaces/interface"}
        ],
    }
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "subscriptions.yaml"
        path.write_text(yaml.safe_dump(document), encoding="utf-8")
        return load_catalog(path)


def sized_catalog(base: Catalog, size: int) -> Catalog:
    """``size`` subscriptions sharing the base's compiled filter: what the lookup sees is a
    catalog of that size, without compiling the same filter ``size`` times."""
    entry = base.entries[0]
    entries = tuple(dataclasses.replace(entry, id=number) for number in range(1, size + 1))
    return dataclasses.replace(base, entries=entries)


def json_push_update(instances: int, subscription_id: int = SUBSCRIPTION_ID) -> bytes:
    data = {"ietf-interfaces:interfaces": {"interface": interfaces(instances)}}
    return envelope(
        {"ietf-yang-push:push-update": {"id": subscription_id, "datastore-contents": data}}
    )


def build_loop(builder: MessageBuilder, records: list[bytes]) -> Callable[[int], None]:
    build = builder.build

    def loop(n: int) -> None:
        count = len(records)
        for index in range(n):
            build(records[index % count], "bench")

    return loop


def check(builder: MessageBuilder, records: list[bytes], instances: int) -> None:
    for raw in records:
        result = builder.build(raw, "bench")
        assert isinstance(result, list), result  # a rejection would time the error path
        assert result[0].key is not None
        assert result[0].key.count(b" | ") == instances - 1, result[0].key


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per loop")
    args = parser.parse_args()
    base = one_subscription_catalog()
    knobs = ProducerKnobs.from_catalog(base, learn=False)

    print("instances per notification (MessageBuilder.build, 1 subscription):")
    builder = MessageBuilder(base, knobs, strict=True)
    loops: dict[str, Callable[[int], None]] = {}
    for count in INSTANCES:
        for name, raw in (
            ("json", json_push_update(count)),
            ("xml", xml_notification(count).replace(b">1042<", f">{SUBSCRIPTION_ID}<".encode())),
        ):
            check(builder, [raw], count)
            loops[f"{name}/{count}"] = build_loop(builder, [raw])
    rates = best_rates(loops, args.seconds)
    for name in ("json", "xml"):
        one = 1e6 / rates[f"{name}/1"]
        marginal: float | None = None
        for count in INSTANCES:
            row = 1e6 / rates[f"{name}/{count}"]
            line = f"  {name:4} {count:>5} instances: {1e6 / row:>10,.0f} rows/s {row:9.1f} us/row"
            if count > 1:
                # The cost of one more instance: flat means no hidden quadratic step.
                per_instance = (row - one) / (count - 1)
                marginal = marginal or per_instance
                line += (
                    f", {per_instance:5.2f} us per added instance "
                    f"({per_instance / marginal:.2f}x the 1->{INSTANCES[1]} figure)"
                )
            print(line)

    print(f"catalog size (JSON push-update, 1 instance, {SPREAD} subscription ids in use):")
    loops = {}
    for size in CATALOG_SIZES:
        catalog = sized_catalog(base, size)
        builder = MessageBuilder(catalog, knobs, strict=True)
        ids = sorted({1 + (number * size) // SPREAD for number in range(SPREAD)})
        records = [json_push_update(1, subscription_id) for subscription_id in ids]
        check(builder, records, 1)  # also compiles each entry's walkers before the clock
        loops[str(size)] = build_loop(builder, records)
    rates = best_rates(loops, args.seconds)
    first = rates[str(CATALOG_SIZES[0])]
    for size in CATALOG_SIZES:
        rate = rates[str(size)]
        print(
            f"  {size:>6,} subscriptions: {rate:>10,.0f} rows/s "
            f"({rate / first:.2f}x the {CATALOG_SIZES[0]}-subscription rate)"
        )


if __name__ == "__main__":
    main()
