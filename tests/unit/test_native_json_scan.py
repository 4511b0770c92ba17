"""The native JSON parser's block-wise reads (native/src/json.rs), differentially: the ASCII
check of the whole input (32 bytes a step before UTF-8 validation) and the string scan (16
bytes a step, then 8, then 1), with the byte that matters at every offset of those blocks.
Each document is decoded by both paths (``check``: the same Notification or error), parsed
by ``Decoder.loads`` against ``orjson.loads``, and keyed (``Decoder.keys``) when it keys.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from test_native_decode import canon, check

from yangkey.schema import SchemaContext

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")


@pytest.fixture(scope="module")
def ns_modules() -> dict[str, str]:
    return SchemaContext.cached().index.by_namespace


def push_update(name: str, value: str) -> str:
    """A push-update whose interface entry has a member ``name`` of string ``value`` (both
    JSON text as written between the quotes)."""
    return (
        '{"ietf-yang-push:push-update":{"id":7,"datastore-contents":'
        '{"ietf-interfaces:interfaces":{"interface":[{"name":"eth0","'
        + name
        + '":"'
        + value
        + '"}]}}}}'
    )


def same_parse(raw: bytes, decoder: Any) -> None:
    """``Decoder.loads`` is ``orjson.loads`` (None where orjson refuses)."""
    try:
        expected = canon(orjson.loads(raw))
    except orjson.JSONDecodeError:
        assert decoder.loads(raw) is None, raw
        return
    assert canon(decoder.loads(raw)) == expected, raw


# What a string may hold at the offset tested: the scan's stop bytes (a quote ends it, a
# backslash starts an escape, a control character is refused), the bytes either side of
# them (0x1f/0x20, 0x7f, non-ASCII) that must not stop it, and a byte that breaks UTF-8.
INSIDE = {
    "escaped-quote": '\\"',
    "escaped-backslash": "\\\\",
    "escape-n": "\\n",
    "escape-u": "\\u00e9",
    "control-01": "\x01",
    "control-1f": "\x1f",
    "space": " ",
    "tilde": "~",
    "delete-7f": "\x7f",
    "e-acute": "é",
    "emoji": "\U0001f600",
}


@pytest.mark.parametrize("what", INSIDE, ids=list(INSIDE))
def test_native_string_scan_any_offset(what: str, decoder: Any, ns_modules: dict[str, str]) -> None:
    """The byte at offsets 0..47 of a string value and of a member name (the value's or
    name's start moved across the 16-byte blocks too): both paths agree, the parse is
    orjson's."""
    inside = INSIDE[what]
    for at in range(48):
        for pad in range(0, 17, 4):
            text = "x" * at + inside + "y" * pad
            for raw in (push_update("description", text), push_update("d" + text, "v")):
                data = raw.encode("utf-8")
                check(data, decoder, ns_modules)
                same_parse(data, decoder)


def test_native_string_ends_at_any_offset(decoder: Any, ns_modules: dict[str, str]) -> None:
    """Strings of every length 0..64 (the closing quote at each offset of the blocks, and
    right at the input's end for the last value): the same answers."""
    for size in range(65):
        text = "".join(chr(97 + i % 26) for i in range(size))
        data = push_update("description", text).encode()
        check(data, decoder, ns_modules)
        same_parse(data, decoder)
        same_parse(b'"' + text.encode() + b'"', decoder)
        same_parse(b'"' + text.encode(), decoder)  # no closing quote


@pytest.mark.parametrize(
    "bad", [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc3\xa9", b"\xf0\x9f\x98\x80"]
)
def test_native_non_ascii_at_any_offset(
    bad: bytes, decoder: Any, ns_modules: dict[str, str]
) -> None:
    """A non-ASCII sequence (valid or not as UTF-8) at every offset of documents around the
    32-byte blocks of the ASCII check, in a string and between tokens: invalid UTF-8 is
    refused as the reference refuses it, valid UTF-8 decodes the same."""
    base = push_update("description", "z" * 40).encode()
    start = base.index(b"z" * 40)
    for at in range(start, start + 40):
        raw = base[:at] + bad + base[at + len(bad) :]
        check(raw, decoder, ns_modules)
        same_parse(raw, decoder)
    for at in range(len(base)):
        raw = base[:at] + bad + base[at:]  # inserted anywhere, between tokens too
        same_parse(raw, decoder)
    for size in range(70):
        same_parse(b'"' + b"a" * size + bad + b'"', decoder)
