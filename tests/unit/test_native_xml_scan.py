"""Issue 33: the fast XML reader's start tags across documents (``Decoder.keys_xml``) against
the reference: a tag's attributes that repeat, byte for byte, those of a tag read in an
earlier document (the reader takes them without reading them again, but interns their
namespace names in the new document), documents one after the other in every order, with
many declarations of the same and of different namespace names, redeclared prefixes, the
default namespace changed and restored, namespace names one byte apart (the last byte, the
length); and the arena's links (first child, next sibling) and the scope of declarations
made on a leaf, with and without attributes. Each document small (the reader's per-document
memos off) and padded past 2 KB (on).

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from typing import Any

import pytest
from test_native_xml_keys import DECLARED, NS_IANA, NS_IF, _entry, _interfaces, framed
from test_native_xml_reader import ALL, TEXT, _check

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

OTHER = "urn:example:other"
# namespace names one byte apart from iana-if-type's: the last byte, one byte more or less
NEAR = [NS_IANA[:-1] + "f", NS_IANA + "e", NS_IANA[:-1]]
PAD = [_entry(f"p{n}", DECLARED) for n in range(16)]


def _doc(entries: list[str], padded: bool, attrs: str = "") -> bytes:
    return framed("netconf", _interfaces(*(PAD if padded else []), *entries, attrs=attrs), "pe1", 7)


# (the ``<interfaces>`` tag's attributes, entries): the same runs in several documents,
# where the namespace names they declare have other indexes (declared before or not)
DOCUMENTS: list[tuple[str, list[str]]] = [
    ("", [_entry("a", DECLARED), _entry("b", DECLARED)]),
    (DECLARED, [_entry("c", DECLARED), _entry("d")]),
    (f' xmlns:z="{OTHER}"' + DECLARED, [_entry("e", DECLARED), _entry("f")]),
    (f' xmlns:t="{OTHER}"', [_entry("g", DECLARED), _entry("h")]),
    # many declarations on one tag, the same and different names, prefixes redeclared
    (
        f' xmlns:a="{OTHER}" xmlns:b="{NS_IANA}" xmlns:c="{OTHER}" xmlns:t="{NS_IANA}"'
        f' xmlns:d="{NEAR[0]}" xmlns:e="{NEAR[1]}"',
        [
            _entry("i", DECLARED),
            _entry("j", type_text="b:ethernetCsmacd"),
            _entry("k", f' xmlns:t="{OTHER}"'),
            _entry("l", f' xmlns:b="{NEAR[2]}"', type_text="b:ethernetCsmacd"),
            _entry("m", type_text="d:ethernetCsmacd"),
            _entry("n", f' xmlns:t="{NS_IANA}" xmlns:c="{NS_IANA}"', type_text="c:ethernetCsmacd"),
        ],
    ),
    # namespace names one byte apart, on the same prefix
    ("", [_entry(f"near{n}", f' xmlns:t="{near}"') for n, near in enumerate(NEAR)]),
    ("", [_entry("o", f' xmlns:t="{NEAR[0]}"'), _entry("p", DECLARED)]),
    # the default namespace changed and restored
    (
        DECLARED,
        [
            f'<interface xmlns="{OTHER}"><name>q</name><type>t:ethernetCsmacd</type></interface>',
            _entry("r"),
            f'<interface><x xmlns="{OTHER}"><y>1</y></x><name>s</name>'
            "<type>t:ethernetCsmacd</type></interface>",
            f'<interface xmlns="{NS_IF}"><name>t</name><type>t:ethernetCsmacd</type></interface>',
            f'<interface xmlns="{OTHER}" xmlns:t="{NS_IANA}"><name>u</name>'
            "<type>t:ethernetCsmacd</type></interface>",
            f'<interface xmlns:t="{NS_IANA}" xmlns="{NS_IF}"><name>v</name>'
            "<type>t:ethernetCsmacd</type></interface>",
        ],
    ),
    # self-closing tags with the attributes of an open one, and the other way
    (DECLARED, [f"<interface{DECLARED}/>", _entry("w", DECLARED), f"<interface{DECLARED}/>"]),
    # a run the reference refuses after the same one well formed
    ("", [_entry("x", DECLARED), _entry("y", ' xmlns:t=""')]),
    ("", [_entry("x", DECLARED), _entry("y", DECLARED + DECLARED)]),
]


@pytest.mark.parametrize("subscription", [TEXT, ALL])
def test_native_xml_scan_runs_across_documents(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    subscription: str,
) -> None:
    """The documents one after the other, in order, reversed, each twice, small and padded:
    each keyed as the reference keys it (natively where the reference keys it)."""
    documents = [
        _doc(entries, padded, attrs) for padded in (False, True) for attrs, entries in DOCUMENTS
    ]
    order = documents + documents[::-1] + [raw for raw in documents for _ in range(2)]
    for raw in order:
        _check(decoder, derivers, fx_schema, raw, fast=True, subscription=subscription)


@pytest.mark.parametrize("first", range(len(DOCUMENTS)))
def test_native_xml_scan_runs_after_each_document(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    first: int,
) -> None:
    """Every document after every other (the runs the first one left), small and padded."""
    for padded in (False, True):
        attrs, entries = DOCUMENTS[first]
        _check(decoder, derivers, fx_schema, _doc(entries, padded, attrs), fast=True)
        for attrs, entries in DOCUMENTS:
            _check(decoder, derivers, fx_schema, _doc(entries, padded, attrs), fast=True)


def test_native_xml_scan_many_runs(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """More distinct runs than the reader keeps from one document to the next (the oldest
    replaced), then the first ones again: each document keyed as the reference keys it."""
    documents = [
        _doc([_entry(f"e{n}", f' xmlns:t="{NS_IANA}"' + " " * n)], padded=False)
        for n in range(40)
    ]
    documents += [
        _doc([_entry(f"o{n}", f' xmlns:t="{OTHER}{n}"')], padded=False) for n in range(20)
    ]
    for raw in documents + documents[:20]:
        _check(decoder, derivers, fx_schema, raw, fast=True, subscription=ALL)
        _check(decoder, derivers, fx_schema, raw, fast=True)


# Children of every kind in every order: leaves, empty elements, containers, with and
# without attributes, declarations on a leaf (in scope for its text only) and on an empty
# element (in scope nowhere after it).
KINDS = [
    "<l>1</l>",
    "<e/>",
    "<c><l>2</l><e/></c>",
    "<l a='1'>3</l>",
    f'<l xmlns:t="{OTHER}">t:x</l>',
    f'<e xmlns:t="{OTHER}"/>',
    f'<c xmlns:t="{OTHER}"><l>t:y</l></c>',
    "<c><c><l>4</l></c><l>5</l></c>",
]


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("kind", range(len(KINDS)))
def test_native_xml_scan_children_in_order(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    kind: int,
    padded: bool,
) -> None:
    """An entry whose key leaves come before, between and after children of each kind (the
    arena's first child and next sibling links, the prefix ``t`` in scope at ``type``): keyed
    as the reference keys it, with both subscriptions."""
    child = KINDS[kind]
    entries = [
        f"<interface{DECLARED}>{child}<name>a</name>{child}{child}"
        f"<type>t:ethernetCsmacd</type>{child}</interface>",
        f"<interface{DECLARED}><name>b</name>{child}<type>t:ethernetCsmacd</type></interface>",
        f"<interface{DECLARED}>{child * 3}<type>t:ethernetCsmacd</type><name>c</name></interface>",
        f"<interface>{child}<name>d</name><type>t:ethernetCsmacd</type></interface>",
    ]
    for subscription in (TEXT, ALL):
        raw = _doc(entries, padded)
        assert _check(decoder, derivers, fx_schema, raw, fast=True, subscription=subscription) in (
            "native",
            "python",
        )
