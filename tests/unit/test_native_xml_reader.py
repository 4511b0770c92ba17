"""Issue 33: the fast XML reader (``Decoder.keys_xml``) against the reference, element by
element: a start tag's name read in one sixteen-byte step (names of every length around
sixteen bytes, prefixed or not, a byte that ends them), an element written to the arena once
its text is read (leaf texts with and without references at every place, a leaf or an empty
element declaring the prefix its own text uses), white space runs of every length between
elements, runs of plain leaves (``<name>text</name>``) broken by every other kind of
element, deep and wide documents, and the refusals (DTD, entities, depth, name length,
malformed XML).
Each document small (the reader's memos off) and padded past 2 KB (on): keyed as the
reference keys it, natively where the fast reader takes it, left to the reference where the
reference refuses it.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import native_helpers
import pytest
from native_helpers import native_answer, reference
from test_native_xml_keys import (
    DECLARED,
    FRAMINGS,
    NS_IANA,
    NS_IF,
    NS_NC,
    NS_YP,
    _entry,
    _interfaces,
    framed,
)

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

same = partial(native_helpers.same, entry="keys_xml")

TEXT = "/ietf-interfaces:interfaces/interface[type='iana-if-type:ethernetCsmacd']"
ALL = "/ietf-interfaces:interfaces/interface"


def _document(entries: list[str], padded: bool, attrs: str = "") -> bytes:
    pad = [_entry(f"p{n}", DECLARED) for n in range(16)] if padded else []
    raw = framed("netconf", _interfaces(*pad, *entries, attrs=attrs), "pe1", 7)
    assert len(raw) >= 2048 or not padded
    return raw


def _check(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    raw: bytes,
    fast: bool,
    subscription: str = TEXT,
) -> str:
    """The native answer is the reference's; where the reference refuses, no native answer;
    ``fast``: a document the fast reader takes, so keyed natively when the reference keys
    it."""
    deriver, _ = derivers[subscription]
    ns = fx_schema.index.by_namespace
    answered = same(decoder, deriver, raw, ns, None)
    keyed = reference(deriver, raw, ns, None)[0] == "ok"
    if not keyed:
        assert native_answer(decoder, deriver, raw, ns, None, "keys_xml") is None, raw
    if fast:
        assert answered == ("native" if keyed else "python"), raw
    return answered


ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def _names() -> list[str]:
    """Element names of every length 1..40 (letters, digits, '-', '.', '_' inside)."""
    names = []
    for length in range(1, 41):
        name = "".join(ALPHABET[n % len(ALPHABET)] for n in range(length))
        names.append(name)
        if length >= 3:
            names.append(name[: length // 2] + "-._"[length % 3] + name[length // 2 + 1 :])
    return names


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("name", _names())
def test_native_xml_reader_names_of_every_length(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    name: str,
    padded: bool,
) -> None:
    """A leaf, an empty element, a container and an entry's own name of every length (the
    sixteen-byte step ends in, at and past its block), then a name one byte apart in its end
    tag (refused), and what may follow a name (space, '/', attribute)."""
    entries = [
        f"<interface{DECLARED}><name>n{name}</name><{name}>v</{name}><{name}/>"
        f"<{name} a='1'>w</{name} ><{name}><{name}>x</{name}></{name}>"
        f"<type>t:ethernetCsmacd</type></interface>"
    ]
    _check(decoder, derivers, fx_schema, _document(entries, padded), fast=True)
    wrong = name[:-1] + ("Q" if name[-1] != "Q" else "R")
    bad = [
        f"<interface{DECLARED}><name>n</name><{name}>v</{wrong}>"
        "<type>t:ethernetCsmacd</type></interface>"
    ]
    raw = _document(bad, padded)
    assert _check(decoder, derivers, fx_schema, raw, fast=True) == "python"


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("length", [1, 2, 7, 8, 14, 15, 16, 17, 18, 31, 32, 33])
@pytest.mark.parametrize("declared", [True, False])
def test_native_xml_reader_prefixed_names(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    length: int,
    declared: bool,
    padded: bool,
) -> None:
    """``prefix:name`` whose prefix ends anywhere around the sixteen-byte step (the step
    must hand a ':' to the full name scan): keyed with its namespace when declared, refused
    when not."""
    prefix = "".join(ALPHABET[n % 26] for n in range(length))
    decl = f' xmlns:{prefix}="{NS_IANA}"' if declared else ""
    entries = [
        f"<interface{DECLARED}{decl}><name>a</name><{prefix}:x>1</{prefix}:x>"
        f"<type>t:ethernetCsmacd</type></interface>"
    ]
    answered = _check(decoder, derivers, fx_schema, _document(entries, padded), fast=True)
    assert answered == ("native" if declared else "python")


# References at every place of a leaf's text, each alone and beside another.
REFERENCES = ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#233;", "&#x20AC;", "&#65;", ":"]
REFUSED = ["&bogus;", "&#0;", "&#xD800;", "&amp", "&", "]]>", "\x01"]


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("reference_text", REFERENCES + REFUSED)
def test_native_xml_reader_leaf_text_references(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    reference_text: str,
    padded: bool,
) -> None:
    """A key leaf's text with a reference (or a refused sequence) at every place of texts
    of lengths 0..20 (around the sixteen-byte text step): the key decoded as the reference
    decodes it; refused where the reference refuses."""
    for length in range(0, 21):
        base = "".join(ALPHABET[n % len(ALPHABET)] for n in range(length))
        for at in range(length + 1):
            text = base[:at] + reference_text + base[at:]
            entries = [
                _entry("first", DECLARED),
                _entry(text, DECLARED),
                _entry(text + "&amp;" + text, DECLARED),
            ]
            answered = _check(decoder, derivers, fx_schema, _document(entries, padded), True)
            assert answered == ("python" if reference_text in REFUSED else "native")


@pytest.mark.parametrize("padded", [False, True])
def test_native_xml_reader_own_declarations(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    padded: bool,
) -> None:
    """The prefix of a leaf's ``prefix:name`` text declared on the leaf itself (its element
    written once its text is read: the scope of its own declarations), on an empty element
    before it (out of scope), on the entry, or redeclared to another namespace on the leaf;
    a leaf and an empty element with attributes."""
    other = "urn:example:other"
    cases = [
        # declared on the leaf: in scope for its own text
        f'<interface><name>a</name><type xmlns:u="{NS_IANA}">u:ethernetCsmacd</type>'
        "</interface>",
        # declared on an empty sibling: out of scope at the leaf
        f'<interface><name>b</name><x xmlns:u="{NS_IANA}"/><type>u:ethernetCsmacd</type>'
        "</interface>",
        # declared on the entry, redeclared on the leaf to another namespace
        f'<interface xmlns:u="{NS_IANA}"><name>c</name>'
        f'<type xmlns:u="{other}">u:ethernetCsmacd</type></interface>',
        # redeclared on an empty sibling only: the entry's stands
        f'<interface xmlns:u="{NS_IANA}"><name>d</name><x xmlns:u="{other}"/>'
        "<type>u:ethernetCsmacd</type></interface>",
        # a leaf with a child declaring: the leaf's text before it, the scope after it
        f'<interface{DECLARED}><name>e</name><c a="1">t:x<y xmlns:t="{other}"/></c>'
        "<type>t:ethernetCsmacd</type></interface>",
        # empty elements with attributes, then the key leaves
        f"<interface{DECLARED}><e a='1'/><e a=\"2\" b='3' /><name>f</name>"
        "<type>t:ethernetCsmacd</type></interface>",
        # an entity reference in a text that holds a ':' after it
        f"<interface{DECLARED}><name>g&amp;h</name><type>t:ethernetCsmacd</type></interface>",
    ]
    for case in cases:
        _check(decoder, derivers, fx_schema, _document([case], padded), fast=True)
    _check(decoder, derivers, fx_schema, _document(cases, padded), fast=True)


WHITE = [" ", "\n", "\t", " \n\t", "\r\n"]


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("white", WHITE)
def test_native_xml_reader_white_space_runs(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    white: str,
    padded: bool,
) -> None:
    """White space runs of every length 0..40 between every two elements (and around the
    root's children): indented documents keyed as compact ones."""
    for length in range(0, 41):
        run = (white * length)[:length] if length else ""
        entry = (
            f"<interface{DECLARED}>{run}<name>w{length}</name>{run}<x>{run}<y>1</y>{run}</x>"
            f"{run}<type>t:ethernetCsmacd</type>{run}</interface>{run}"
        )
        raw = _document([run + entry, entry], padded)
        _check(decoder, derivers, fx_schema, raw, fast="\r" not in run)
        # white space inside a leaf's text is its text
        inside = [f"<interface{DECLARED}><name>{run}w{run}</name><type>t:ethernetCsmacd</type>"]
        inside[0] += "</interface>"
        _check(decoder, derivers, fx_schema, _document(inside, padded), "\r" not in run)


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize(
    "depth", [1, 60, 118, 119, 120, 121, 122, 126, 127, 128, 129, 140, 250, 254, 255, 256, 300]
)
def test_native_xml_reader_deep(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    depth: int,
    padded: bool,
) -> None:
    """Containers nested ``depth`` deep in an entry, a leaf at the bottom, around the
    reader's depth limit: keyed as the reference keys it, refused where it refuses."""
    nest = "".join(f"<c{n}>" for n in range(depth)) + "<z>1</z>"
    nest += "".join(f"</c{n}>" for n in reversed(range(depth)))
    entries = [f"<interface{DECLARED}><name>d</name>{nest}<type>t:ethernetCsmacd</type>"]
    entries[0] += "</interface>"
    _check(decoder, derivers, fx_schema, _document(entries, padded), fast=False)


def test_native_xml_reader_wide(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """Many entries, each with many leaves (the arena past its spare's size), keyed as the
    reference keys them, with both subscriptions."""
    entries = [
        f"<interface{DECLARED}><name>e{n}</name>"
        + "".join(f"<l{k}>{k}&amp;{n}</l{k}>" for k in range(n % 40))
        + "<type>t:ethernetCsmacd</type></interface>"
        for n in range(400)
    ]
    raw = _document(entries, True)
    assert _check(decoder, derivers, fx_schema, raw, fast=True) == "native"
    assert _check(decoder, derivers, fx_schema, raw, fast=True, subscription=ALL) == "native"


REFUSALS = [
    b'<!DOCTYPE notification [<!ENTITY e "eth0">]>',
    b"<!DOCTYPE notification>",
    b'<?xml version="1.0"?><!DOCTYPE notification SYSTEM "x.dtd">',
]


@pytest.mark.parametrize("padded", [False, True])
def test_native_xml_reader_refusals(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    padded: bool,
) -> None:
    """A DTD, an entity, CDATA, a comment, an unclosed or crossed element, text after the
    root: the reference's answer (an error where it refuses), never the reader's own."""
    good = _document([_entry("a", DECLARED)], padded)
    assert _check(decoder, derivers, fx_schema, good, fast=True) == "native"
    others = [
        *(prefix + good for prefix in REFUSALS),
        good.replace(b"<name>a", b"<name>&e;a"),
        good.replace(b"<name>a", b"<name><![CDATA[a]]>"),
        good.replace(b"<name>a", b"<name><!-- c -->a"),
        good.replace(b"</name>", b""),
        good.replace(b"<name>a</name>", b"<name><x>a</name></x>"),
        good + b"x",
        good[:-1],
    ]
    for raw in others:
        assert _check(decoder, derivers, fx_schema, raw, fast=False) == "python", raw


# What may break a run of plain leaves: each read by the general start tag, the run going on
# after it.
BREAKS = [
    "<b a='1'>x</b>",  # an attribute
    "<b >x</b>",  # white space before the '>'
    "<b/>",  # empty
    "<b></b>",  # no text
    "<b>x</b >",  # white space in the end tag
    f'<u:b xmlns:u="{NS_IANA}">x</u:b>',  # a prefix
    "<b>x&amp;y</b>",  # a reference
    "<b>x<c>1</c>y</b>",  # a container with text around its child
    "<b><c>1</c><d>t:x</d></b>",  # a container opened in the run, its leaves a run
    "<b>t:x<c>1</c></b>",  # a container's text with a ':' before its first child
    "<b>\n  <c>1</c>\n</b>",  # indented
    "<b><!-- c --></b>",  # a comment (left to the reference)
    "<b><![CDATA[x]]></b>",  # CDATA (left to the reference)
    "<abcdefghijklmnopqrstu>x</abcdefghijklmnopqrstu>",  # a name past sixteen bytes
    "<abcdefghijklmno>x</abcdefghijklmno>",  # fifteen bytes
    "<b>x</c>",  # another name (refused)
    "<b>x</bb>",  # (refused)
    "<bb>x</b>",  # (refused)
    "<b>x<c>1</b></c>",  # crossed (refused)
]


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("brk", BREAKS)
@pytest.mark.parametrize("place", [0, 1, 3])
def test_native_xml_reader_leaf_runs(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    brk: str,
    place: int,
    padded: bool,
) -> None:
    """A run of plain leaves broken at its first, second or fourth element by another kind
    of element: the key's leaves before and after the break read as the reference reads
    them, refused where the reference refuses."""
    leaves = ["<l0>0</l0>", "<l1>t:1</l1>", "<l2></l2>", "<l3>3</l3>"]
    run = "".join(leaves[:place]) + brk + "".join(leaves[place:])
    entries = [
        f"<interface{DECLARED}>{run}<name>r</name>{run}<type>t:ethernetCsmacd</type>{run}"
        "</interface>",
        f"<interface{DECLARED}><name>s</name><type>t:ethernetCsmacd</type></interface>",
    ]
    fast = "<!--" not in brk and "CDATA" not in brk
    _check(decoder, derivers, fx_schema, _document(entries, padded), fast=fast)
    _check(decoder, derivers, fx_schema, _document(entries, padded), fast, subscription=ALL)


@pytest.mark.parametrize("framing", sorted(set(FRAMINGS)))
def test_native_xml_reader_leaf_runs_near_the_end(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    framing: str,
) -> None:
    """Leaves whose text ends fewer than sixteen bytes before the document's end (the
    sixteen-byte steps give way to the general scan), every framing."""
    for tail in range(0, 20):
        leaf = "<z>" + "x" * tail + "</z>"
        entry = f"<interface{DECLARED}><name>e</name><type>t:ethernetCsmacd</type>{leaf}"
        raw = framed(framing, _interfaces(entry + "</interface>"), "pe1", 7)
        _check(decoder, derivers, fx_schema, raw, fast=framing != "iosxe")
        # the document cut after the leaf: refused
        cut = raw[: raw.index(leaf.encode()) + len(leaf)]
        _check(decoder, derivers, fx_schema, cut, fast=False)


@pytest.mark.parametrize("length", [49_999, 50_000, 50_001])
@pytest.mark.parametrize("leaf", [True, False])
def test_native_xml_reader_name_length_limit(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    length: int,
    leaf: bool,
) -> None:
    """A leaf or a container named around the 50,000-byte name limit: keyed up to it,
    refused past it, as the reference."""
    name = "n" * length
    element = f"<{name}>x</{name}>" if leaf else f"<{name}><c>1</c></{name}>"
    entries = [f"<interface{DECLARED}><name>a</name>{element}<type>t:ethernetCsmacd</type>"]
    entries[0] += "</interface>"
    answered = _check(decoder, derivers, fx_schema, _document(entries, True), fast=True)
    assert answered == ("native" if length <= 50_000 else "python")


def test_native_xml_reader_runs_default_namespace(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """Entries without attributes: the default namespace in scope inside them after a child
    container closes, and after one that declares another default."""
    entries = [
        "<interface><x><y>1</y></x><name>a</name><type>ethernetCsmacd</type></interface>",
        '<interface><x xmlns="urn:example:other"><y>1</y></x><name>b</name></interface>',
        "<interface><x><y><z>1</z></y></x><x><y>2</y></x><name>c</name></interface>",
    ]
    for padded in (False, True):
        raw = _document(entries, padded)
        answered = _check(decoder, derivers, fx_schema, raw, fast=True, subscription=ALL)
        assert answered == "native"


def _patch(edit: str, host: str = "<hostname>pe1</hostname>") -> bytes:
    return (
        f'<notification xmlns="{NS_NC}"><eventTime>2026-11-20T10:00:00Z</eventTime>{host}'
        f'<push-change-update xmlns="{NS_YP}"><id>7</id><datastore-changes><yang-patch '
        'xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-patch"><patch-id>p</patch-id>'
        f"{edit}</yang-patch></datastore-changes></push-change-update></notification>"
    ).encode()


VALUE = f'<value><interface xmlns="{NS_IF}"><name>eth0</name></interface></value>'
TEXT_AND_CHILD = [
    # a header field's or an edit field's text before a child (element.text): opened in a run
    (
        "<edit><edit-id>1</edit-id><operation>merge</operation>"
        f"<target>/ietf-interfaces:interfaces/interface=eth0</target>{VALUE}</edit>"
    ),
    (
        "<edit><edit-id>1</edit-id><operation>merge<x>1</x></operation>"
        f"<target>/ietf-interfaces:interfaces/interface=eth0</target>{VALUE}</edit>"
    ),
    (
        "<edit><edit-id>1</edit-id><operation>merge</operation>"
        f"<target>/ietf-interfaces:interfaces/interface=eth0<x>1</x></target>{VALUE}</edit>"
    ),
    (
        "<edit><edit-id>1<x>1</x></edit-id><operation>merge</operation>"
        f"<target>/ietf-interfaces:interfaces/interface=eth0</target>{VALUE}</edit>"
    ),
]


@pytest.mark.parametrize("edit", TEXT_AND_CHILD)
@pytest.mark.parametrize(
    "host", ["<hostname>pe1</hostname>", "<hostname>pe1<x>1</x></hostname>", ""]
)
def test_native_xml_reader_text_before_a_child(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    edit: str,
    host: str,
) -> None:
    """An element's text before its first child, read where the reference reads it (header
    fields, a yang-patch edit's fields): as the reference answers."""
    raw = _patch(edit, host)
    _check(decoder, derivers, fx_schema, raw, fast=False, subscription=ALL)
    deriver, _ = derivers[ALL]
    ns = fx_schema.index.by_namespace
    for default_node in ("dflt", None):
        native_helpers.same(decoder, deriver, raw, ns, default_node, entry="keys_xml")


# Names with a non-ASCII character (XML 1.0 NameChar) at every place around the sixteen-byte
# step: the step stops at a byte it does not know, which must not end the name.
NON_ASCII = ["é", "ü", "·", "ß", "\u00c0", "\u0300", "\u203f", "\u4e2d", "\U00010000"]


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("char", NON_ASCII)
def test_native_xml_reader_non_ascii_names(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    char: str,
    padded: bool,
) -> None:
    """Element names with a non-ASCII character at every place of names of lengths 2..20,
    as a leaf, an empty element and a container: keyed as the reference keys them."""
    for length in range(2, 21):
        base = "".join(ALPHABET[n % 26] for n in range(length))
        for at in range(1, length):
            name = base[:at] + char + base[at:]
            entries = [
                f"<interface{DECLARED}><name>n</name><{name}>v</{name}><{name}/>"
                f"<{name}><{name}>x</{name}></{name}><type>t:ethernetCsmacd</type></interface>"
            ]
            _check(decoder, derivers, fx_schema, _document(entries, padded), fast=False)
