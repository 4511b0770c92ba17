"""Issue 33: the fast XML reader's name comparisons (``Decoder.keys_xml``): a start tag's name
taken from the memo of names read before, a leaf's ``</name>`` read right after its text, an
end tag's name: each compared sixteen bytes at once where both names have sixteen bytes to
read, else word by word. Names sharing a prefix, a length, the memo's slot, longer than
sixteen bytes, a byte apart at their first, last or seventeenth byte, near the document's
end: every document keyed as the reference keys it (natively where the reference keys it),
refused where the reference refuses it.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import native_helpers
import pytest
from native_helpers import reference
from test_native_xml_keys import DECLARED, _entry, _interfaces, framed

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

same = partial(native_helpers.same, entry="keys_xml")

TEXT = "/ietf-interfaces:interfaces/interface[type='iana-if-type:ethernetCsmacd']"


def _with(name: str, *leaves: str) -> str:
    """An entry with other leaves between its name and type (the walk does not read them)."""
    return (
        f"<interface{DECLARED}><name>{name}</name>{''.join(leaves)}"
        "<type>t:ethernetCsmacd</type></interface>"
    )


LONG = "abcdefghijklmnopq"  # seventeen bytes
NAMES: list[list[str]] = [
    # a name read before, then one of its length and memo slot (first two bytes and fifth)
    # that is not a name, or another name
    [_with("a", "<oper-status>up</oper-status>", "<oper-st@tus>x</oper-st@tus>")],
    [_with("a", "<oper-status>up</oper-status>", "<oper-statux>x</oper-statux>")],
    [_with("a", "<oper-status>up</oper-status>", "<oper-status>x</oper-statux>")],
    [_with("a", "<oper-status>up</oper-status>", "<oper-status>x</Oper-status>")],
    [_with("a", "<oper-status>up</oper-status><oper-statu$>x</oper-statu$>")],
    # a leaf's end tag a byte apart: first, last, within sixteen bytes and past them
    [_with("a", "<description>x</descriptioN>")],
    [_with("a", "<description>x</Description>")],
    [_with("a", "<description>x</description>")],
    [_with("a", f"<{LONG[:16]}>x</{LONG[:15]}Q>")],
    [_with("a", f"<{LONG[:16]}>x</{LONG[:16]}>")],
    [_with("a", f"<{LONG}>x</{LONG[:16]}Q>")],
    [_with("a", f"<{LONG}>x</{LONG}>")],
    [_with("a", f"<{LONG}x>x</{LONG}y>")],
    [_with("a", f"<{LONG}{LONG}>x</{LONG}{LONG[:16]}Q>")],
    # a container's end tag (after its children) a byte apart
    [_with("a", f"<{LONG}><c>1</c></{LONG[:16]}Q>")],
    [_with("a", f"<{LONG}><c>1</c></{LONG}>")],
    [_with("a", "<statistics><c>1</c></statisticS>")],
    [_with("a", "<statistics><c>1</c></statistics>")],
    # a name's first byte: a letter or '_' (each range's bounds and the bytes beside them)
    *(
        [_with("a", f"<{first}x>1</{first}x>")]
        for first in ["_", "a", "z", "A", "Z", "@", "[", "`", "{", "^", "-", ".", "0", "9"]
    ),
    # what follows an end tag's name: '>', white space then '>', anything else
    [_with("a", "<statistics><c>1</c></statistics >")],
    [_with("a", "<statistics><c>1</c></statistics\n\t>")],
    [_with("a", "<statistics><c>1</c></statistics/>")],
    [_with("a", "<statistics><c>1</c></statistics x>")],
    [_with("a", "<statistics><c>1</c></statistics")],
    # names of the same length one after the other, sharing a prefix
    [
        _with(
            "a",
            f"<{LONG}>1</{LONG}>",
            f"<{LONG[:16]}Q>2</{LONG[:16]}Q>",
            f"<{LONG[:16]}Q>3</{LONG}>",
        )
    ],
]


def _document(entries: list[str], tail: str = "") -> bytes:
    # entries before each case: past the size from which the reader memoises (2 KB)
    pad = [_entry(f"p{n}", DECLARED) for n in range(16)]
    return framed("netconf", _interfaces(*pad, *entries) + tail, "pe1", 7)


@pytest.mark.parametrize("entries", NAMES)
@pytest.mark.parametrize("padded", [True, False])
def test_native_xml_names_compared(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    entries: list[str],
    padded: bool,
) -> None:
    deriver, _ = derivers[TEXT]
    ns = fx_schema.index.by_namespace
    if padded:
        raw = _document(entries)
        assert len(raw) >= 2048
    else:
        raw = framed("netconf", _interfaces(*entries), "pe1", 7)
        assert len(raw) < 2048
    answered = same(decoder, deriver, raw, ns, None)
    keyed = reference(deriver, raw, ns, None)[0] == "ok"
    assert answered == ("native" if keyed else "python"), raw


@pytest.mark.parametrize(
    "end", ["</rpc-reply>", "</notificatioN>", "</notification>", "</notification >"]
)
def test_native_xml_names_at_the_end(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    end: str,
) -> None:
    """The root's end tag, fewer than sixteen bytes from the document's end."""
    deriver, _ = derivers[TEXT]
    ns = fx_schema.index.by_namespace
    raw = _document([_entry("a", DECLARED)])
    assert raw.endswith(b"</notification>")
    raw = raw[: -len("</notification>")] + end.encode()
    answered = same(decoder, deriver, raw, ns, None)
    keyed = reference(deriver, raw, ns, None)[0] == "ok"
    assert answered == ("native" if keyed else "python"), raw
    assert keyed == (end in ("</notification>", "</notification >"))
