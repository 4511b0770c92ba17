"""XML push-updates and yang-patches in the framings other than the envelope: the native key
pass and ``MessageBuilder.build``, in the same run.

bench_native.py's XML documents (1 … 1,000 interface entries, as a push-update and as one
merge edit each) re-framed as devices send them:

* ``telemetry``: a telemetry message (manifest node name, metadata export timestamp) whose
  payload is a NETCONF notification;
* ``huawei``: a NETCONF notification with Huawei's legacy ``sysName`` / ``sequenceNumber``;
* ``iosxe``: a NETCONF notification whose push-update or push-change-update names its
  subscription by IOS-XE's pre-RFC 8639 ``subscription-id``, a push-update's contents in
  ``datastore-contents-xml`` (as elements, as IOS-XE sends them over NETCONF);
* ``envelope``: the framing bench_native.py measures, for comparison.

For each, microseconds per notification of ``Decoder.keys_xml`` (``-`` where it answers None
and the Python path keys the document) and of ``MessageBuilder.build`` with the native pass
(b.nat) and without (b.py). Timed like bench_keys.py (the best of short CPU-time batches,
interleaved across loops). Run it with an older yangkey-native first on ``PYTHONPATH`` to
compare builds.

    python benchmarks/bench_xml_framings.py [--seconds 1] [--instances 1,10,100,1000]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import Any

from bench_keys import best_rates, xml_notification, xml_yang_patch

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
NS_TM = "urn:ietf:params:xml:ns:yang:ietf-telemetry-message"
NS_NC = "urn:ietf:params:xml:ns:netconf:notification:1.0"
TIME = "<eventTime>2026-11-20T10:00:00.000Z</eventTime>"
BODY = re.compile(r"<push-(?:change-)?update .*</push-(?:change-)?update>", re.DOTALL)


def framed(raw: bytes, framing: str) -> bytes:
    """The push-update or push-change-update of ``raw`` (an envelope) in ``framing``."""
    found = BODY.search(raw.decode())
    assert found is not None
    push = found.group(0)
    if framing == "envelope":
        return raw
    if framing == "telemetry":
        return (
            f'<message xmlns="{NS_TM}"><network-node-manifest><name>router-nyc-01</name>'
            "</network-node-manifest><telemetry-message-metadata><node-export-timestamp>"
            "2026-11-20T10:00:01Z</node-export-timestamp></telemetry-message-metadata><payload>"
            f'<notification xmlns="{NS_NC}">{TIME}{push}</notification></payload></message>'
        ).encode()
    if framing == "huawei":
        return (
            f'<notification xmlns="{NS_NC}">{TIME}<sysName>router-nyc-01</sysName>'
            f"<sequenceNumber>42</sequenceNumber>{push}</notification>"
        ).encode()
    assert framing == "iosxe"
    legacy = push.replace("<id>1042</id>", "<subscription-id>1042</subscription-id>", 1)
    legacy = legacy.replace("datastore-contents>", "datastore-contents-xml>", 2)
    return (
        f'<notification xmlns="{NS_NC}">{TIME}<hostname>router-nyc-01</hostname>{legacy}'
        "</notification>"
    ).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--instances", default="1,10,100,1000")
    args = parser.parse_args()
    try:
        import yangkey_native  # noqa: PLC0415
    except ImportError:
        sys.exit("bench_xml_framings: yangkey-native is not installed (make native)")
    native = yangkey_native.Decoder(model())
    schema = SchemaContext.cached()
    ns_modules = schema.index.by_namespace
    deriver = KeyDeriver(compile_subscription(IF, schema))
    if deriver.native is None:
        sys.exit("bench_xml_framings: the native key pass is off (YANGKEY_NATIVE=0?)")
    routes = native_routes()

    def route(subscription_id: int, node: str | None) -> tuple[Any, str, None] | None:
        if node is None:
            return None
        answer = routes[(subscription_id, node)] = (deriver.native, node, None)
        return answer

    catalog = build_catalog(parse_subscriptions(f"subscriptions:\n  - id: 1042\n    xpath: {IF}\n"))
    by_python = MessageBuilder(catalog)
    by_python.native = False
    by_native = MessageBuilder(catalog)

    def loop(call: Callable[[], object]) -> Callable[[int], None]:
        def run(n: int) -> None:
            for _ in range(n):
                call()

        return run

    print(f"yangkey-native {yangkey_native.__version__}; microseconds per notification")
    print(
        f"{'instances':>9} {'shape':<10} {'framing':<10} {'bytes':>8} {'native':>9} "
        f"{'b.py':>9} {'b.nat':>9} {'b.py/b.nat':>10}"
    )
    shapes = {"xml": xml_notification, "xml-patch": xml_yang_patch}
    for count in (int(n) for n in args.instances.split(",")):
        inputs = {}
        for shape, make in shapes.items():
            for framing in ("envelope", "telemetry", "huawei", "iosxe"):
                inputs[(shape, framing)] = framed(make(count), framing)
        loops: dict[str, Callable[[int], None]] = {}
        answered = set()
        for (shape, framing), raw in inputs.items():
            name = f"{shape} {framing}"
            key = deriver.derive(decode(raw, "bench", ns_modules)).key
            found = native.keys_xml(raw, "bench", ns_modules, route)
            if found is not None:
                assert found[4] == key, f"the native {name} key differs"
                answered.add(name)
                loops[f"{name} native"] = loop(
                    lambda raw=raw: native.keys_xml(raw, "bench", ns_modules, route, False, routes)
                )
            assert by_native.build(raw, "b") == by_python.build(raw, "b")
            loops[f"{name} b.py"] = loop(lambda raw=raw: by_python.build(raw, "b"))
            loops[f"{name} b.nat"] = loop(lambda raw=raw: by_native.build(raw, "b"))
        us = {
            name: 1e6 / rate
            for name, rate in best_rates(loops, args.seconds * len(loops) / 10).items()
        }
        for (shape, framing), raw in inputs.items():
            name = f"{shape} {framing}"
            own = f"{us[name + ' native']:.2f}" if name in answered else "-"
            b_py, b_nat = us[name + " b.py"], us[name + " b.nat"]
            print(
                f"{count:>9} {shape:<10} {framing:<10} {len(raw):>8} {own:>9} {b_py:>9.2f} "
                f"{b_nat:>9.2f} {b_py / b_nat:>9.2f}x"
            )
    print(
        "native: Decoder.keys_xml ('-': None, the Python path keys it); b.py / b.nat:"
        " MessageBuilder.build without and with the native pass"
    )


if __name__ == "__main__":
    main()
