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

Phase B (the native key pass) follows in the same run: for the push-update of each size
(JSON, the same data as XML, the same instances as a yang-patch),

* ``python``: Phase 3 by the reference, bytes to key: :func:`yangkey.notifications.decode`
  then ``KeyDeriver.derive(...).key``;
* ``native``: ``Decoder.keys`` (parse, framing, walk, canonical values, templates, key bytes;
  no data tree in Python), routed to the deriver's native walker as MessageBuilder routes
  (the route's answer remembered in a ``yangkey_native.Routes`` the pass reads itself);
  ``Decoder.keys_xml`` for XML; for yang-patch (one merge edit per instance: 1, 10, 100,
  1,000 edits) ``Decoder.keys`` too (native/src/patchwalk.rs: each edit's target parsed and
  its value walked in place); for ``xml-patch`` (the same edits in XML) ``Decoder.keys_xml``
  (native/src/xmlpatch.rs: the fast XML reader's framing and edits, the values written into
  the tape, then patchwalk.rs's walk);
* ``b.py`` / ``b.nat``: ``MessageBuilder.build`` (the Spark worker's record building: keyed
  messages with their headers) without and with the native pass;

and the ratios native / orjson.loads (target <= 1.0x), python / native, b.py / b.nat, and
native / native JSON push-update of the same instances (``vs json``; XML, yang-patch and
xml-patch: target <= 2x). The XML yang-patch is both XML and a yang-patch, so the same row also
gives each factor alone: ``xml/json``, XML against the JSON of the same message (xml against
json, xml-patch against yang-patch), and ``patch/upd``, a yang-patch against the push-update of
the same instances in the same encoding (yang-patch against json, xml-patch against xml); and
``per byte``, the time per byte of the document against the JSON push-update's (a yang-patch
carries 2.0-2.2x its bytes in JSON, 3.3-3.5x in XML).

Timed like bench_keys.py: the best of short CPU-time batches, interleaved across loops.

Then MessageBuilder.build over ``yangkey sample``'s mix (``--mix`` records), both paths.

Last, the instance feed (the ``yangkey-instances`` header) for the JSON push-update of each
size, the same data as XML (identities written ``ianaift:...``, handed to their converter as
the reference's QNameText) and the same instances as a JSON yang-patch and an XML one (one
merge edit each: each edit's object, ``@op`` ``merge``): ``MessageBuilder.build`` with the
instances knob on,
Python path (``b.py``) and native pass (``b.nat``: keys and header in one pass;
``Decoder.keys_xml(..., with_instances=True)`` for XML), and ``yangkey ingest``'s
``CatalogFeeds.header`` (``i.py``: decode then ``InstanceFeed.header``; ``i.nat``:
``Decoder.instances``, with ``ns_modules`` for XML), and the XML's and yang-patches' native
times against the JSON push-update's (``vs json``); ``--feed-only`` runs this part alone.

    python benchmarks/bench_native.py [--seconds 1] [--instances 1,10,100,1000] [--mix 2000]
        [--feed-only]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from bench_keys import best_rates, notification, xml_notification, xml_yang_patch, yang_patch

from yangkey.catalog import build_catalog
from yangkey.config import parse_subscriptions
from yangkey.keys import KeyDeriver
from yangkey.native import model
from yangkey.native import routes as native_routes
from yangkey.notifications import decode
from yangkey.producer import MessageBuilder
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

IF = "/ietf-interfaces:interfaces/interface"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--instances", default="1,10,100,1000")
    parser.add_argument("--mix", type=int, default=2000, help="records of the mixed run")
    parser.add_argument("--feed-only", action="store_true", help="only the instance feed's figures")
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

    if args.feed_only:
        feed(args, loop)
        return
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
    phase_b(native, ns_modules, args, loop)


def phase_b(
    native: Any,
    ns_modules: dict[str, str],
    args: argparse.Namespace,
    loop: Callable[[Callable[[], object]], Callable[[int], None]],
) -> None:
    """Phase 3 and record building, Python path and native key pass side by side."""
    schema = SchemaContext.cached()
    deriver = KeyDeriver(compile_subscription(IF, schema))
    if deriver.native is None:
        sys.exit("bench_native: the native key pass is off (YANGKEY_NATIVE=0?)")
    catalog = build_catalog(parse_subscriptions(f"subscriptions:\n  - id: 1042\n    xpath: {IF}\n"))
    by_python = MessageBuilder(catalog)
    by_python.native = False
    by_native = MessageBuilder(catalog)

    routes = native_routes()  # a yangkey_native.Routes (the native path is on)

    def route(subscription_id: int, node: str | None) -> tuple[Any, str, None] | None:
        if node is None:
            return None
        answer = routes[(subscription_id, node)] = (deriver.native, node, None)
        return answer

    print(
        "\nphase B: bytes -> key (JSON push-update; XML: the same data, Decoder.keys_xml;"
        " yang-patch: the same instances as merge edits, Decoder.keys; xml-patch: those in XML,"
        " Decoder.keys_xml); microseconds per notification"
    )
    print(
        f"{'instances':>9} {'shape':<10} {'bytes':>8} {'orjson':>9} {'python':>9} {'native':>9} "
        f"{'b.py':>9} {'b.nat':>9}  {'nat/orjson':>10} {'py/nat':>7} {'b.py/b.nat':>10} "
        f"{'vs json':>7} {'xml/json':>8} {'patch/upd':>9} {'per byte':>8}"
    )
    # One factor at a time: XML against the JSON of the same message, a yang-patch against
    # the push-update of the same instances in the same encoding.
    as_json = {"xml": "json", "xml-patch": "yang-patch"}
    as_update = {"yang-patch": "json", "xml-patch": "xml"}
    passes = {
        "json": native.keys,
        "xml": native.keys_xml,
        "yang-patch": native.keys,
        "xml-patch": native.keys_xml,
    }
    for count in (int(n) for n in args.instances.split(",")):
        inputs = {
            "json": notification(count),
            "xml": xml_notification(count),
            "yang-patch": yang_patch(count),
            "xml-patch": xml_yang_patch(count),
        }
        loops = {}
        for shape, raw in inputs.items():
            key = deriver.derive(decode(raw, "bench", ns_modules)).key
            keys = passes[shape]
            if keys is not None:
                found = keys(raw, "bench", ns_modules, route)
                assert found is not None and found[4] == key, f"the native {shape} key differs"
                loops[f"{shape} native"] = loop(
                    lambda raw=raw, keys=keys: keys(raw, "bench", ns_modules, route, False, routes)
                )
            assert by_native.build(raw, "b") == by_python.build(raw, "b")
            loops[f"{shape} python"] = loop(
                lambda raw=raw: deriver.derive(decode(raw, "bench", ns_modules)).key
            )
            loops[f"{shape} b.py"] = loop(lambda raw=raw: by_python.build(raw, "b"))
            loops[f"{shape} b.nat"] = loop(lambda raw=raw: by_native.build(raw, "b"))
        json_raw = inputs["json"]
        loops["orjson"] = loop(lambda raw=json_raw: orjson.loads(raw))
        seconds = args.seconds * len(loops) / 10
        us = {name: 1e6 / rate for name, rate in best_rates(loops, seconds).items()}
        for shape, raw in inputs.items():
            own = keyed = us.get(f"{shape} native")

            def ratio(a: float | None, b: float | None) -> str:
                return "" if a is None or b is None else f"{a / b:.2f}x"

            print(
                f"{count:>9} {shape:<10} {len(raw):>8} {us['orjson']:>9.2f} "
                f"{us[shape + ' python']:>9.2f} {'' if own is None else format(own, '.2f'):>9} "
                f"{us[shape + ' b.py']:>9.2f} {us[shape + ' b.nat']:>9.2f}  "
                f"{ratio(keyed, us['orjson']):>10} {ratio(us[shape + ' python'], keyed):>7} "
                f"{ratio(us[shape + ' b.py'], us[shape + ' b.nat']):>10} "
                f"{ratio(keyed, us['json native']):>7} "
                f"{ratio(keyed, us.get(f'{as_json.get(shape)} native')):>8} "
                f"{ratio(keyed, us.get(f'{as_update.get(shape)} native')):>9} "
                f"{ratio(keyed and keyed / len(raw), us['json native'] / len(inputs['json'])):>8}"
            )
    print(
        "nat/orjson: the native key pass / orjson.loads of the JSON bytes (target <= 1.0x);"
        " py/nat and b.py/b.nat: the speed-up of keys and of MessageBuilder.build; vs json:"
        " native / native JSON push-update of the same instances (target <= 2x); xml/json: XML"
        " / the JSON of the same message; patch/upd: a yang-patch / the push-update of the same"
        " instances in the same encoding; per byte: native time per byte / the JSON"
        " push-update's"
    )
    mixed(args)
    feed(args, loop)


def mixed(args: argparse.Namespace) -> None:
    """MessageBuilder.build over the demo's mix (the example subscriptions; JSON and XML,
    every wrapper, yang-patch, bad records), Python path and native key pass."""
    from yangkey.catalog import load_catalog  # noqa: PLC0415
    from yangkey.demo.sample import generate_count  # noqa: PLC0415

    records = generate_count(args.mix).records
    examples = Path(__file__).resolve().parents[1] / "examples" / "subscriptions.yaml"
    builders = {}
    for name in ("python", "native"):
        builder = builders[name] = MessageBuilder(load_catalog(examples), default_node="dflt")
        builder.native = name == "native"
    outputs = {name: [b.build(raw, "m") for raw in records] for name, b in builders.items()}
    assert outputs["python"] == outputs["native"], "the builders' records differ"
    share = builders["native"].native_keyed / len(records)

    def everything(builder: MessageBuilder) -> Callable[[int], None]:
        def run(n: int) -> None:
            for _ in range(n):
                for raw in records:
                    builder.build(raw, "m")

        return run

    loops = {name: everything(b) for name, b in builders.items()}
    us = {name: 1e6 / rate / len(records) for name, rate in best_rates(loops, args.seconds).items()}
    print(
        f"\nmixed (yangkey sample, {len(records):,} records, {share:.0%} keyed natively):"
        f" MessageBuilder.build python {us['python']:.2f} us, native {us['native']:.2f} us per"
        f" record: {us['python'] / us['native']:.2f}x"
    )


def feed(
    args: argparse.Namespace, loop: Callable[[Callable[[], object]], Callable[[int], None]]
) -> None:
    """The instance feed header: MessageBuilder.build with instances on and ingest's
    CatalogFeeds.header, Python path and native pass side by side."""
    from yangkey.clickhouse.instances import CatalogFeeds  # noqa: PLC0415
    from yangkey.producer import ProducerKnobs  # noqa: PLC0415

    catalog = build_catalog(parse_subscriptions(f"subscriptions:\n  - id: 1042\n    xpath: {IF}\n"))
    knobs = ProducerKnobs(instances=True)
    by_python = MessageBuilder(catalog, knobs)
    by_python.native = False
    by_native = MessageBuilder(catalog, knobs)
    python_feeds, native_feeds = CatalogFeeds(catalog), CatalogFeeds(catalog)
    python_feeds.walkers = dict.fromkeys(python_feeds.branches)  # no native walker
    print(
        "\ninstance feed (JSON push-update, the same as XML, and its instances as a JSON and an"
        " XML yang-patch of merge edits; instances knob on); microseconds per notification"
    )
    print(
        f"{'instances':>9} {'shape':<10} {'bytes':>8} {'header':>8} {'b.py':>9} {'b.nat':>9} "
        f"{'i.py':>9} {'i.nat':>9}  {'b.py/b.nat':>10} {'i.py/i.nat':>10} {'vs json':>13}"
    )
    for count in (int(n) for n in args.instances.split(",")):
        inputs = {
            "json": notification(count),
            "xml": xml_notification(count),
            "yang-patch": yang_patch(count),
            "xml-patch": xml_yang_patch(count),
        }
        loops = {}
        header_sizes = {}
        for shape, raw in inputs.items():
            keyed, fed = by_native.native_keyed, native_feeds.native_fed
            built = by_native.build(raw, "b")
            assert built == by_python.build(raw, "b"), "the builders' records differ"
            assert isinstance(built, list)
            topic = built[0].topic
            header = python_feeds.header(topic, raw, "i")
            assert header is not None and native_feeds.header(topic, raw, "i") == header
            if shape in ("json", "xml", "xml-patch"):
                # (a module from before the yang-patch's native feed leaves that to Python:
                # its header column says so)
                assert by_native.native_keyed > keyed, "the native pass did not answer"
                assert native_feeds.native_fed > fed, "the native feed did not answer"
            native_answered = native_feeds.native_fed > fed
            loops[f"{shape} b.py"] = loop(lambda raw=raw: by_python.build(raw, "b"))
            loops[f"{shape} b.nat"] = loop(lambda raw=raw: by_native.build(raw, "b"))
            loops[f"{shape} i.py"] = loop(
                lambda raw=raw, topic=topic: python_feeds.header(topic, raw, "i")
            )
            loops[f"{shape} i.nat"] = loop(
                lambda raw=raw, topic=topic: native_feeds.header(topic, raw, "i")
            )
            header_sizes[shape] = f"{len(header)}{'' if native_answered else ' (py)'}"
        us = {name: 1e6 / rate for name, rate in best_rates(loops, args.seconds).items()}
        for shape, raw in inputs.items():
            mine = {part: us[f"{shape} {part}"] for part in ("b.py", "b.nat", "i.py", "i.nat")}
            versus = (
                f"{mine['b.nat'] / us['json b.nat']:.2f}x/{mine['i.nat'] / us['json i.nat']:.2f}x"
            )
            print(
                f"{count:>9} {shape:<10} {len(raw):>8} {header_sizes[shape]:>8} "
                f"{mine['b.py']:>9.2f} {mine['b.nat']:>9.2f} {mine['i.py']:>9.2f} "
                f"{mine['i.nat']:>9.2f}  {mine['b.py'] / mine['b.nat']:>9.2f}x "
                f"{mine['i.py'] / mine['i.nat']:>9.2f}x {versus:>13}"
            )
    print(
        "b.*: MessageBuilder.build with the yangkey-instances header; i.*: yangkey ingest's"
        " CatalogFeeds.header; ratios: the native speed-up; vs json: b.nat/i.nat against the"
        " push-update's of the same instances; header '(py)': the native feed left it to Python"
    )


if __name__ == "__main__":
    main()
