"""Issue 33: the native yang-patch pass past the parse (native/src/xmlpatch.rs, patchwalk.rs,
patcharena.rs) against the Python reference.

What these read: an edit's operation told by its length then compared (every RFC 8072
operation, and words of their lengths that are none); an XML edit's fields found by their
names' lengths (in every order, beside names of the same lengths, given twice); an XML edit's
value read from the frame's (target, operation, value) elements by the edit's index (edits
with and without values interleaved, a data filter reading each value, so a value read for
another edit keys another set); the frame's edit vector kept per thread (a long patch, then
short ones, an edit the reference refuses in the middle, then a good patch; on several
threads); targets that repeat or differ only in a key, a module prefix, the last byte or the
length; several subscriptions over the same patches. JSON and XML yang-patch alike where
both apply.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from itertools import permutations
from typing import Any
from xml.sax.saxutils import escape

import pytest
from native_helpers import native_answer, on_threads, reference, same
from test_native_patch_native import change, edit
from test_native_patch_xml import IF, module_namespaces, xml_change, xml_edit

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

FILTERED = f"{IF}[description='d']"

OPERATIONS = ["create", "delete", "insert", "merge", "move", "replace", "remove"]

# Words of an operation's length (or near one) that are no operation: refused by the reference
NOT_OPERATIONS = [
    "mergf", "Merge", "creatf", "deletd", "insers", "removf", "mova", "movE", "replacf",
    "replaces", "mer", "", "delete ", "rem", "insertx", "moves", "abcd", "abcdef", "abcdefg",
]


def value(name: str, description: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "enabled": True}
    if description is not None:
        entry["description"] = description
    return {"ietf-interfaces:interface": [entry]}


def raw_of(shape: str, edits: list[dict[str, Any]], schema: SchemaContext) -> bytes:
    if shape == "json":
        return change(edits)
    namespaces = module_namespaces(schema)
    return xml_change("".join(xml_edit(e, namespaces) for e in edits))


def check(decoder: Any, deriver: KeyDeriver, raw: bytes, ns: dict[str, str], shape: str) -> str:
    """The native answer is the reference's; where the reference raises, the native pass
    answers None (the error kind and message are then the reference's)."""
    entry = "keys" if shape == "json" else "keys_xml"
    if reference(deriver, raw, ns, "dflt")[0] == "error":
        assert native_answer(decoder, deriver, raw, ns, "dflt", entry) is None, raw
        return "python"
    return same(decoder, deriver, raw, ns, "dflt", entry)


def deriver(text: str, schema: SchemaContext) -> KeyDeriver:
    return KeyDeriver(compile_subscription(text, schema))


# ------------------------------------------------------------------------- the operations


@pytest.mark.parametrize("shape", ["json", "xml"])
@pytest.mark.parametrize("operation", OPERATIONS + NOT_OPERATIONS)
def test_native_patch_post_operations(
    decoder: Any, fx_schema: SchemaContext, shape: str, operation: str
) -> None:
    """Each operation keyed natively, alone and after a good edit; a word that is none
    refused as the reference refuses it (the reference's error, native None)."""
    keys = deriver(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    edits = [edit(operation, f"{IF}=eth0", value("eth0"))]
    for patch in (edits, [edit("merge", f"{IF}=eth1", value("eth1")), *edits]):
        answered = check(decoder, keys, raw_of(shape, patch, fx_schema), ns, shape)
        # (XML strips the operation's text: "delete " is an operation there)
        known = operation.strip() if shape == "xml" else operation
        assert answered == ("native" if known in OPERATIONS else "python"), (operation, patch)


# ---------------------------------------------------------------- an XML edit's fields

FIELDS = {
    "edit-id": "<edit-id>e1</edit-id>",
    "operation": "<operation>merge</operation>",
    "target": f"<target>{IF}=eth0</target>",
    "value": '<value><interface xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">'
    "<name>eth0</name></interface></value>",
}

# Children whose names have a field's length but are none (skipped), and one of another
# length
LOOKALIKES = [
    "<targex>x</targex>",
    "<operatiom>x</operatiom>",
    "<valuf>x</valuf>",
    "<edit-ie>x</edit-ie>",
    "<tar>x</tar>",
    "<x/>",
]


@pytest.mark.parametrize("order", list(permutations(FIELDS)))
def test_native_patch_post_xml_fields_every_order(
    decoder: Any, fx_schema: SchemaContext, order: tuple[str, ...]
) -> None:
    """An edit's four fields in every order, bare and among look-alikes of their names'
    lengths: keyed natively, the reference's keys."""
    keys = deriver(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    bare = "".join(FIELDS[name] for name in order)
    mixed = "".join(f"{LOOKALIKES[at]}{FIELDS[name]}" for at, name in enumerate(order))
    for body in (bare, mixed + "".join(LOOKALIKES[4:])):
        raw = xml_change(f"<edit>{body}</edit>")
        assert check(decoder, keys, raw, ns, "xml") == "native", raw


@pytest.mark.parametrize("twice", list(FIELDS))
@pytest.mark.parametrize("at", [0, 1, 4])
def test_native_patch_post_xml_field_twice(
    decoder: Any, fx_schema: SchemaContext, twice: str, at: int
) -> None:
    """A field given twice (the reference refuses it, or reads the first: its answer) in
    the middle of the edit's children, in an edit among good ones."""
    keys = deriver(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    children = [FIELDS[name] for name in FIELDS]
    children.insert(at, FIELDS[twice])
    good = "".join(FIELDS.values())
    edits = [good.replace("eth0", "eth1"), "".join(children), good.replace("eth0", "eth2")]
    raw = xml_change("".join(f"<edit>{body}</edit>" for body in edits))
    assert check(decoder, keys, raw, ns, "xml") == "python", raw


# ------------------------------------------------ values by the edit's index, and the spare

# Interleavings of edits with a value (m: merge, its description d or e) and without (x:
# delete): a filter reads each value, so a value read for the wrong edit keys another set
PATTERNS = ["x", "md", "me", "xmd", "mdx", "xme", "mex", "mdxme", "xmdxmex", "memdmdxx",
            "xxmdmd", "mdmexmexmd"]


def interleaved(pattern: str, base: int = 0) -> list[dict[str, Any]]:
    edits = []
    at = 0
    index = base
    while at < len(pattern):
        name = f"eth{index}"
        if pattern[at] == "x":
            edits.append(edit("delete", f"{IF}={name}"))
            at += 1
        else:
            edits.append(edit("merge", f"{IF}={name}", value(name, pattern[at + 1])))
            at += 2
        index += 1
    return edits


@pytest.mark.parametrize("shape", ["json", "xml"])
@pytest.mark.parametrize("pattern", PATTERNS)
def test_native_patch_post_values_by_index(
    decoder: Any, fx_schema: SchemaContext, shape: str, pattern: str
) -> None:
    """Edits with and without values interleaved under a filter that reads each value: the
    reference's keys (its instances: the deletes and the values described ``d``)."""
    keys = deriver(FILTERED, fx_schema)
    ns = fx_schema.index.by_namespace
    edits = interleaved(pattern)
    raw = raw_of(shape, edits, fx_schema)
    answered = check(decoder, keys, raw, ns, shape)
    wanted = reference(keys, raw, ns, "dflt")
    described = any(p == "d" for p in pattern) or "x" in pattern
    assert answered == ("native" if described else "python"), (pattern, wanted)


@pytest.mark.parametrize("shape", ["json", "xml"])
def test_native_patch_post_long_then_short(
    decoder: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """A long patch, then short ones, one the reference refuses in the middle (a value
    naming another entry), then good ones again, with several subscriptions over each: every
    answer the reference's; nothing of the long patch read again."""
    ns = fx_schema.index.by_namespace
    derivers = [deriver(text, fx_schema) for text in (IF, FILTERED, f"{IF}/name")]
    long = interleaved("mdxme" * 60)
    bad = [
        edit("merge", f"{IF}=eth0", value("eth0", "d")),
        edit("merge", f"{IF}=eth1", value("eth9", "d")),
        edit("delete", f"{IF}=eth2"),
    ]
    patches = [long, interleaved("md"), interleaved("x", 7), bad, interleaved("mexmd", 3),
               long[:40], interleaved("md", 1)]
    for patch in patches + patches[::-1]:
        raw = raw_of(shape, patch, fx_schema)
        for keys in derivers:
            answered = check(decoder, keys, raw, ns, shape)
            if patch is bad:
                assert answered == "python"


def test_native_patch_post_on_threads(decoder: Any, fx_schema: SchemaContext) -> None:
    """Patches of other lengths on four threads at once (each thread's kept vectors its
    own): every answer the reference's."""
    ns = fx_schema.index.by_namespace
    keys = deriver(FILTERED, fx_schema)
    raws = [
        (shape, raw_of(shape, interleaved(pattern * repeat, base), fx_schema))
        for shape in ("json", "xml")
        for pattern, repeat, base in (("mdxme", 20, 0), ("md", 1, 5), ("xmex", 3, 9))
    ]
    wanted = {raw: reference(keys, raw, ns, "dflt") for _, raw in raws}

    def run(thread: int) -> None:
        for round_ in range(6):
            shape, raw = raws[(thread + round_) % len(raws)]
            entry = "keys" if shape == "json" else "keys_xml"
            assert native_answer(decoder, keys, raw, ns, "dflt", entry) == wanted[raw]

    on_threads(run)


# --------------------------------------------------------------------- the targets

TARGETS = [
    [f"{IF}=eth0", f"{IF}=eth0", f"{IF}=eth0"],  # repeated
    [f"{IF}=eth0", f"{IF}=eth1", f"{IF}=eth2"],  # a key value apart
    [f"{IF}=eth0", "/ietf-interfaces:interfaces/ietf-interfaces:interface=eth0"],  # a prefix
    [f"{IF}=eth0", f"{IF}=eth0/name"],  # longer
    [f"{IF}=eth10", f"{IF}=eth1", f"{IF}=eth100"],  # other lengths
    [f"{IF}=eth%2F0", f"{IF}=eth%2F1", f"{IF}=eth%2F0"],  # the last byte apart
    [f"{IF}=eth%2F0", f"{IF}=eth%2F"],  # shorter by one
    [f"{IF}=b", f"{IF}=a", f"{IF}=c", f"{IF}=a"],  # out of order, twice
]


@pytest.mark.parametrize("shape", ["json", "xml"])
@pytest.mark.parametrize("targets", TARGETS)
def test_native_patch_post_targets(
    decoder: Any, fx_schema: SchemaContext, shape: str, targets: list[str]
) -> None:
    """Targets that repeat or differ only a little, as deletes and merges (each value's key
    its target's), in order and reversed, over two subscriptions: the reference's keys."""
    ns = fx_schema.index.by_namespace
    derivers = [deriver(IF, fx_schema), deriver(f"{IF}/name", fx_schema)]

    def key_of(target: str) -> str:
        return target.partition("=")[2].split("/")[0].replace("%2F", "/")

    for order in (targets, targets[::-1]):
        for edits in (
            [edit("delete", t) for t in order],
            [edit("merge", t, value(key_of(t))) if "/name" not in t else edit("delete", t)
             for t in order],
        ):
            raw = raw_of(shape, edits, fx_schema)
            for keys in derivers:
                check(decoder, keys, raw, ns, shape)


# ------------------------------------------------------- an XML edit's texts, stripped

# Python's str.strip() whitespace (ASCII and not), and characters that are none
PADS = [" ", "\n\t", "\n ", "\u00a0", "\u2003", "\u2028", "\u3000", "\u0085"]
NOT_PADS = ["x", "\u00e9", "~", "!"]


@pytest.mark.parametrize("pad", PADS + NOT_PADS)
@pytest.mark.parametrize("where", ["target", "operation"])
def test_native_patch_post_xml_texts_stripped(
    decoder: Any, fx_schema: SchemaContext, pad: str, where: str
) -> None:
    """An edit's target or operation with whitespace (or other characters) before it, after
    it, or both: stripped as the reference strips it (keyed natively), or refused as it
    refuses it."""
    keys = deriver(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    for left, right in ((pad, ""), ("", pad), (pad, pad)):
        texts = {"target": f"{IF}=eth0", "operation": "merge"}
        texts[where] = left + texts[where] + right
        body = (
            f"<edit-id>e</edit-id><operation>{escape(texts['operation'])}</operation>"
            f"<target>{escape(texts['target'])}</target>{FIELDS['value']}"
        )
        raw = xml_change(f"<edit>{body}</edit>")
        answered = check(decoder, keys, raw, ns, "xml")
        assert answered == ("native" if pad in PADS else "python"), (left, right, raw)
