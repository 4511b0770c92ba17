"""The one hardened XML parser: no DTD, no entity expansion, no network, no huge trees.

Used for subtree filters (Phase 1) and XML notifications (Phase 3). A document that declares a
DTD or uses an entity reference is refused outright rather than parsed with the entity left
unexpanded: such input is either an attack or a producer bug, and both deserve a clear error.
"""

from __future__ import annotations

from typing import Any

from lxml import etree

from yangkey.errors import InputError, Position

_PARSER = etree.XMLParser(
    resolve_entities=False,
    no_network=True,
    load_dtd=False,
    dtd_validation=False,
    huge_tree=False,
    remove_comments=True,
    remove_pis=True,
    collect_ids=False,
)


def parse_xml(data: bytes | str, source: str) -> etree._Element:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    # One byte search first: a notification rarely has a '!' (memchr), and both need one.
    if b"!" in raw and (b"<!DOCTYPE" in raw or b"<!ENTITY" in raw):
        offset = raw.find(b"<!")
        text = raw.decode("utf-8", "replace")
        raise InputError(
            "XML with a DTD or entity declarations is not accepted",
            source=source,
            position=Position.in_text(text, offset),
            text=text,
        )
    try:
        root = etree.fromstring(raw, _PARSER)
    except etree.XMLSyntaxError as exc:
        line, column = exc.position if exc.position else (0, 0)
        # libxml2 ends some messages with a newline: the error line stays one line.
        message = " ".join(str(exc.msg or exc).split(" (line")[0].split())
        raise InputError(
            f"malformed XML: {message}",
            source=source,
            position=Position(0, line, column + 1),
            text=raw.decode("utf-8", "replace"),
        ) from None
    if root is None:
        raise InputError("empty XML document", source=source)
    # Non-UTF-8 encodings (UTF-16, UTF-32, or one an XML declaration names) slip past the byte
    # scan above. A document starting with '<' and then neither NUL nor '?' has no BOM, no
    # declaration, and no 16/32-bit code units: libxml2 reads it as UTF-8, where the scan is
    # exact, and the look at the document's DTD is skipped.
    if raw[:1] != b"<" or raw[1:2] in (b"\x00", b"?"):
        docinfo: Any = root.getroottree().docinfo
        if docinfo.doctype or docinfo.internalDTD is not None:
            raise InputError("XML with a DTD or entity declarations is not accepted", source=source)
    # A document that starts with a '<' byte is in an ASCII-compatible encoding, where '&' is
    # a 0x26 byte: without one there is no entity reference to look for, and the walk over the
    # whole tree is skipped. Anything else (a BOM, EBCDIC) is walked.
    if b"&" in raw or raw[:1] != b"<":
        for node in root.iter(etree.Entity):
            raise InputError(f"XML entity reference {node.text} is not accepted", source=source)
    return root


def local_name(element: etree._Element) -> str:
    return etree.QName(element).localname


def namespace(element: etree._Element) -> str | None:
    return etree.QName(element).namespace
