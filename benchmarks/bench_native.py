"""The native decoder (yangkey-native, issue 33 phase A) against the Python reference and the
parse alone, in the same run.

For a push-update carrying 1, 10, 100 and 1,000 interface entries (JSON envelope, the same data
as XML, and the same instances as a yang-patch of one merge edit each), prints the time per
notification of:

* ``orjson.loads`` of the JSON bytes (the yardstick: Python cannot parse them faster);
* ``python``: :func:`yangkey.notifications.decode`, the reference (full conversion);
* ``native``: ``yangkey_native.Decoder.decode`` (the same Notification, Python dicts built);
* ``n.loads``: the native JSON parser with its duplicate-member check, building the same tree
  orjson.loads builds;
* ``n.parse``: the native parse and duplicate-member check alone, no Python object built
  (``Decoder.check``): where a native walk (phase B) starts from;

and the ratios: native / orjson.loads, n.parse / orjson.loads, python / native, and XML or
yang-patch native / JSON native. The issue's final targets (Phase 3 <= 1.0x orjson.loads; XML
and yang-patch <= 2x the native JSON path) are phase B's, where walk, key and record building
move into Rust and the data tree no longer becomes Python objects; phase A's native decode
still builds them.

Timed like bench_keys.py: the best of short CPU-time batches, interleaved across loops.

    python benchmarks/bench_native.py [--seconds 1] [--instances 1,10,100,1000]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import orjson
from bench_keys import best_rates, notification, xml_notification, yang_patch

from yangkey.native import model
from yangkey.notifications import decode
from yangkey.schema import SchemaContext


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--instances", default="1,10,100,1000")
    args = parser.parse_args()
    try:
        import yangkey_native  # noqa: PLC0415
    except ImportError:
        sys.exit("bench_native: yangkey-native is not installed (make native)")
    native = yangkey_native.Decoder(model())
    ns_modules = SchemaContext.cached().index.by_namespace

    def loop(call: Callable[[], object]) -> Callable[[int], None]:
        def run(n: int) -> None:
            for _ in range(n):
                call()

        return run

    print(f"yangkey-native {yangkey_native.__version__}; microseconds per notification")
    header = (
        f"{'instances':>9} {'shape':<10} {'bytes':>8} {'orjson':>9} {'python':>9} "
        f"{'native':>9} {'n.loads':>9} {'n.parse':>9}  {'nat/orjson':>10} {'parse/orj':>9} "
        f"{'py/nat':>7} {'vs json':>7}"
    )
    print(header)
    for count in (int(n) for n in args.instances.split(",")):
        inputs = {
            "json": notification(count),
            "xml": xml_notification(count),
            "yang-patch": yang_patch(count),
        }
        loops: dict[str, Callable[[int], None]] = {}
        for shape, raw in inputs.items():
            reference = decode(raw, "bench", ns_modules)
            assert native.decode(raw, "bench", ns_modules) == reference, shape
            loops[f"{shape} python"] = loop(lambda raw=raw: decode(raw, "bench", ns_modules))
            loops[f"{shape} native"] = loop(lambda raw=raw: native.decode(raw, "bench", ns_modules))
            if shape != "xml":
                loops[f"{shape} orjson"] = loop(lambda raw=raw: orjson.loads(raw))
                loops[f"{shape} loads"] = loop(lambda raw=raw: native.loads(raw))
                loops[f"{shape} parse"] = loop(lambda raw=raw: native.check(raw))
        seconds = args.seconds / max(1, len(loops) // 4)
        us = {name: 1e6 / rate for name, rate in best_rates(loops, seconds).items()}
        json_native = us["json native"]
        for shape, raw in inputs.items():
            orj = us.get(f"{shape} orjson", us["json orjson"])
            loads = us.get(f"{shape} loads")
            parse = us.get(f"{shape} parse")
            own = us[shape + " native"]

            def cell(value: float | None, spec: str = ".2f") -> str:
                return "" if value is None else format(value, spec)

            print(
                f"{count:>9} {shape:<10} {len(raw):>8} {orj:>9.2f} {us[shape + ' python']:>9.2f} "
                f"{own:>9.2f} {cell(loads):>9} {cell(parse):>9}  {own / orj:>9.2f}x "
                f"{cell(None if parse is None else parse / orj) + ('x' if parse else ''):>9} "
                f"{us[shape + ' python'] / own:>6.2f}x {own / json_native:>6.2f}x"
            )
    print(
        "nat/orjson: native decode / orjson.loads of the JSON bytes (for xml: of the JSON"
        " push-update with the same data); parse/orj: n.parse / orjson.loads; py/nat: the"
        " speed-up; vs json: native / native JSON"
    )


if __name__ == "__main__":
    main()
