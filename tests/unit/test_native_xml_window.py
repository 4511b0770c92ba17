"""Issue 33: the fast XML reader's start tags read from one 32-byte window (``Decoder.keys_xml``)
against the reference: the name, the '>' after it and the text up to its '<' found in one
step, texts that end in the window, run past it, or hold what the window leaves to the full
scan (references, ']]>', CDATA, a comment, a processing instruction, controls, CR, U+FFFF),
at every place of texts of 0..44 bytes, after padding text of 0..32 bytes; an identity's
prefix of 1..24 bytes (its ':' in and past the window); tags the window does not take
(attributes with both quotes and a '>' in a value, white space, a prefix, a '/'); and a
document cut at every byte. Each document small (the reader's memos off) and padded past
2 KB (on).

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from typing import Any

import pytest
from test_native_xml_keys import DECLARED, NS_IANA, _entry
from test_native_xml_reader import ALPHABET, _check, _document

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

# (mark, whether the fast reader takes a key leaf holding it and the reference keys it: else
# the full parser or the reference answers; CDATA, comments and PIs: either)
MARKS: list[tuple[str, bool | None]] = [
    ("&amp;", True),
    ("&#58;", True),
    (":", True),
    ("\t", True),
    ("]", True),
    (">", True),
    ("\ufffd", True),
    ("é", True),
    ("&bogus;", False),
    ("&", False),
    ("]]>", False),
    ("\x01", False),
    ("\ufffe", False),
    ("<![CDATA[c]]>", None),
    ("<!--c-->", None),
    ("<?pi x?>", None),
]


def _places(length: int) -> list[int]:
    """Every place around the ends of the text and of the window (the text starts 6 bytes
    into it, after ``name>``)."""
    return sorted({0, 1, length // 2, *range(max(0, length - 2), length + 1)} | set(range(24, 29)))


def _padding(pad: int) -> str:
    return f"<description>{'q' * pad}</description>"


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize(("mark", "keyed"), MARKS)
def test_native_xml_window_marks_at_every_place(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    mark: str,
    keyed: bool | None,
    padded: bool,
) -> None:
    """A key leaf's text of 0..44 bytes with the mark at places in and around the window,
    the entry padded by 0..32 bytes: keyed as the reference keys it."""
    for length in range(0, 45):
        base = "".join(ALPHABET[n % len(ALPHABET)] for n in range(length))
        for at in (a for a in _places(length) if a <= length):
            text = base[:at] + mark + base[at:]
            pad = (length * 7 + at) % 33
            entries = [
                _entry("first", DECLARED),
                f"<interface{DECLARED}>{_padding(pad)}<name>{text}</name>"
                "<type>t:ethernetCsmacd</type></interface>",
                _entry(base, DECLARED),
            ]
            raw = _document(entries, padded)
            answered = _check(decoder, derivers, fx_schema, raw, keyed is not None)
            if keyed is not None:
                assert answered == ("native" if keyed else "python"), (mark, length, at)


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("pad", range(0, 33))
def test_native_xml_window_texts_of_every_length(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    pad: int,
    padded: bool,
) -> None:
    """Key texts of 0..44 bytes (ending in the window, at its end, past it) and identities
    whose prefix is 1..24 bytes long (the ':' that makes the text a QName in the window and
    past it), after 0..32 bytes of padding: the keys and the identities' namespaces as the
    reference reads them."""
    entries = []
    for length in range(0, 45):
        name = "".join(ALPHABET[(n + pad) % len(ALPHABET)] for n in range(length))
        prefix = "p" + name[: length % 25]
        entries.append(
            f'<interface xmlns:{prefix}="{NS_IANA}">{_padding(pad)}<name>n{name}</name>'
            f"<type>{prefix}:ethernetCsmacd</type></interface>"
        )
    answered = _check(decoder, derivers, fx_schema, _document(entries, padded), True)
    assert answered == "native"


TAGS = [
    "<name a='1>2'>{t}</name>",
    '<name a="1>2">{t}</name>',
    "<name >{t}</name>",
    "<name\n>{t}</name>",
    "<name>{t}</name >",
    "<n:name xmlns:n='urn:ietf:params:xml:ns:yang:ietf-interfaces'>{t}</n:name>",
    "<name>{t}</name><description/>",
    "<name>{t}</name><description>d</description >",
]


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("tag", TAGS)
def test_native_xml_window_other_tags(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    tag: str,
    padded: bool,
) -> None:
    """Tags the window leaves to the general path (attributes, white space, a prefix, an
    empty element), key texts of 0..40 bytes after 0..32 bytes of padding."""
    entries = [
        f"<interface{DECLARED}>{_padding(length % 33)}{tag.format(t='k' * length)}"
        "<type>t:ethernetCsmacd</type></interface>"
        for length in range(0, 41)
    ]
    assert _check(decoder, derivers, fx_schema, _document(entries, padded), True) == "native"


@pytest.mark.parametrize("padded", [False, True])
def test_native_xml_window_cut_at_every_byte(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    padded: bool,
) -> None:
    """A document cut at every byte of its last entries: refused as the reference refuses."""
    entries = [_entry("a" * n, DECLARED) for n in (3, 20, 30)]
    raw = _document(entries, padded)
    tail = raw.rindex(b"<interface") - 200
    for cut in range(tail, len(raw)):
        assert _check(decoder, derivers, fx_schema, raw[:cut], True) == "python"


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize(("mark", "keyed"), MARKS)
def test_native_xml_window_tails(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    mark: str,
    keyed: bool | None,
    padded: bool,
) -> None:
    """The mark in the text after a leaf's end tag (a tail, checked and dropped) and after a
    container's, at places in tails of 0..40 bytes: refused where the reference refuses."""
    for length in range(0, 41, 3):
        base = "".join(ALPHABET[n % len(ALPHABET)] for n in range(length))
        for at in (0, length // 2, length):
            tail = base[:at] + mark + base[at:]
            for entry in (
                f"<interface{DECLARED}><name>k{length}</name>{tail}"
                "<type>t:ethernetCsmacd</type></interface>",
                f"<interface{DECLARED}><name>k{length}</name>"
                f"<type>t:ethernetCsmacd</type></interface>{tail}",
            ):
                raw = _document([_entry("first", DECLARED), entry], padded)
                answered = _check(decoder, derivers, fx_schema, raw, keyed is not None)
                if keyed is False:
                    assert answered == "python", (mark, length, at)
