"""Issue 33: the order and dedup of a native key's XPaths (native/src/keytext.rs).

The native pass sorts each branch's rendered XPaths and drops repeats as the reference's
``_sorted_unique`` does (code-point order; UTF-8 byte order is the same): one pass over
neighbours finds the XPaths' common prefix and whether they arrive in strict order already (then
no sort), the sort orders the 8-byte big-endian words past that prefix (the rest only where two
tie) and moves the XPaths into that order, the dedup compares past the prefix and runs only
where two words tie; several branches' XPaths are merged the same way. The key's bytes are
written straight into the bytes object (no zero fill first). Every answer here must be the
reference's byte for byte: names that arrive in order, reversed, shuffled, with repeats, sharing
a prefix of every length 0..70 (so the first difference falls at every place of an 8-byte word),
differing in their last byte only, non-ASCII (code point against UTF-16 order), 1 and 1,000
instances; as a JSON push-update, a JSON yang-patch (one merge edit each) and an XML
push-update, and through a subscription of three branches.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape

import pytest
from native_helpers import same
from test_native_keys import envelope
from test_native_keys_spare import site, top
from test_native_patch_keys import framed, patch
from test_native_xml_keys import NS_IF
from test_native_xml_keys import framed as xml_framed
from test_native_xml_keys import same as xml_same

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IF = "/ietf-interfaces:interfaces/interface"
THREE = "/yk-test:top/flow | /yk-test:top/site/rack | /yk-test:top/codes"
SHAPES = ["json", "yang-patch", "xml"]
# past ASCII: Latin-1, BMP, private use (above the surrogates: UTF-16 orders it after the
# astral planes), astral; and ASCII's end
ODD = ["~", "\x7f", "é", "ü", "ÿ", "Ā", "中", "\ud7ff", "\ue000", "\uffee", "😀", "\U0010fffd"]


def raw_of(shape: str, names: list[str]) -> bytes:
    """A notification carrying one interface entry per name, in that order."""
    if shape == "json":
        entries = [{"name": name} for name in names]
        return envelope({"ietf-interfaces:interfaces": {"interface": entries}})
    if shape == "yang-patch":
        edits = [
            {
                "edit-id": str(index),
                "operation": "merge",
                "target": f"{IF}={quote(name, safe='')}",
                "value": {"ietf-interfaces:interface": [{"name": name}]},
            }
            for index, name in enumerate(names)
        ]
        return framed("envelope", patch(7, edits))
    text = "".join(f"<interface><name>{escape(name)}</name></interface>" for name in names)
    return xml_framed("envelope", f'<interfaces xmlns="{NS_IF}">{text}</interfaces>', "pe1", 7)


def check(
    shape: str, names: list[str], decoder: Any, derivers: Any, schema: SchemaContext
) -> None:
    """The native answer for ``names`` is there and is the reference's."""
    deriver: KeyDeriver = derivers[IF][0]
    ns = schema.index.by_namespace
    raw = raw_of(shape, names)
    if shape == "xml":
        answered = xml_same(decoder, deriver, raw, ns, None)
    else:
        answered = same(decoder, deriver, raw, ns, None)
    assert answered == "native", (shape, names[:5])


def orders(names: list[str], seed: int) -> list[list[str]]:
    """``names`` in code-point order, reversed, shuffled, and the sorted ones with every
    name twice side by side and the whole list twice over."""
    ordered = sorted(set(names))
    shuffled = list(ordered)
    random.Random(seed).shuffle(shuffled)
    doubled = [name for name in ordered for _ in range(2)]
    return [ordered, ordered[::-1], shuffled, doubled, shuffled + ordered]


def prefixed(length: int) -> list[str]:
    """Names sharing their first ``length`` characters, then differing in every way: one
    ends there, one goes on with a lower or higher character, a longer or shorter tail."""
    head = "".join(chr(ord("a") + i % 26) for i in range(length))
    tails = ["", "0", "00", "0a", "1", "9", "A", "Z", "_", "z", "zz", "z0", "~", "é"]
    tails += ["0" * 9, "0" * 8 + "1", "1" * 17]
    return [head + tail for tail in tails]


@pytest.mark.parametrize("shape", SHAPES)
def test_native_key_order_every_order(
    decoder: Any, derivers: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """Interface names in order, reversed, shuffled, with repeats (side by side, and far
    apart), numbered as a router numbers them (so not in code-point order)."""
    names = [f"GigabitEthernet0/0/{i}" for i in range(40)] + ["ge-0/0/1", "Lo0", "eth0"]
    for seed, listed in enumerate(orders(names, 1)):
        check(shape, listed, decoder, derivers, fx_schema)
        check(shape, listed[:2], decoder, derivers, fx_schema)
        check(shape, listed[:3][::-1], decoder, derivers, fx_schema)
        check(shape, listed + listed[seed:], decoder, derivers, fx_schema)
    check(shape, ["eth0"], decoder, derivers, fx_schema)
    check(shape, ["eth0", "eth0"], decoder, derivers, fx_schema)
    check(shape, ["eth1", "eth0", "eth1"], decoder, derivers, fx_schema)
    check(shape, ["eth0", "eth1", "eth1"], decoder, derivers, fx_schema)


@pytest.mark.parametrize("shape", SHAPES)
def test_native_key_order_shared_prefixes(
    decoder: Any, derivers: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """Names sharing a prefix of every length 0..70: the first difference at every place of
    an 8-byte word and past several; in each order."""
    for length in range(71):
        for listed in orders(prefixed(length), length):
            check(shape, listed, decoder, derivers, fx_schema)


@pytest.mark.parametrize("shape", SHAPES)
def test_native_key_order_last_byte(
    decoder: Any, derivers: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """Long names of one length that differ in their last character only (the sort's word
    past the common prefix holds it), some names one character longer or shorter."""
    for length in (1, 7, 8, 9, 15, 16, 40, 63, 64, 65):
        head = "x" * (length - 1)
        names = [head + c for c in "0123456789abcdefABCDEF"] + [head, head + "00", head + "f0"]
        for listed in orders(names, length):
            check(shape, listed, decoder, derivers, fx_schema)


@pytest.mark.parametrize("shape", SHAPES)
def test_native_key_order_non_ascii(
    decoder: Any, derivers: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """Names past ASCII, alone and after a shared prefix: code-point order (which UTF-8
    byte order keeps and UTF-16's does not, for the private use area against the astral
    planes)."""
    names = ODD + [f"if{c}" for c in ODD] + [f"if{c}{d}" for c in ODD[:4] for d in ODD[-4:]]
    for listed in orders(names, 7):
        check(shape, listed, decoder, derivers, fx_schema)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("count", [1, 1000])
def test_native_key_order_sizes(
    decoder: Any, derivers: Any, fx_schema: SchemaContext, shape: str, count: int
) -> None:
    """1 and 1,000 instances, in each order, some repeated."""
    names = [f"GigabitEthernet{i % 7}/{i // 7 % 3}/{i}" for i in range(count)]
    for listed in orders(names, count):
        check(shape, listed[:count], decoder, derivers, fx_schema)
    check(shape, names + names[::-3], decoder, derivers, fx_schema)


def test_native_key_order_branches(
    decoder: Any, derivers: Any, fx_schema: SchemaContext
) -> None:
    """Three branches' XPaths merged into one key (no common prefix past the first ``/``; a
    site's rack XPaths share a prefix of any length): in order, shuffled, one branch only."""
    deriver: KeyDeriver = derivers[THREE][0]
    ns = fx_schema.index.by_namespace
    rng = random.Random(3)
    for length in (0, 1, 5, 8, 9, 30):
        head = "s" * length
        sites = [site(head + tail, *rng.sample(range(40), 6)) for tail in ("", "a", "b", "é")]
        for listed in (sites, sites[::-1], rng.sample(sites, len(sites))):
            codes = rng.sample(range(30), 8)
            for raw in (top(listed, codes), top(listed), top(codes=codes + codes)):
                assert same(decoder, deriver, raw, ns, None) == "native", raw
