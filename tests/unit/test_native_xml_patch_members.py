"""Issue 33: an XML yang-patch's edit values looked up in the reader's arena
(native/src/patcharena.rs) against the Python reference: the value's list member when the
value has one child element (compared once, no groups), and an entry's key checked in one
pass over its children (``leaf_is``: one child of the key's local name, a leaf, the target's
text), the general lookup deciding the rest.

Each case: the entry's key given plainly, by a prefix, in another module (same local name),
twice, missing, with a child element, differing from the target's in one byte, among other
members of the same length; the value's one child of the list's module, of another module,
unqualified, of another name, a text; attributes quoted either way; white space of 0 to 32
bytes before the tags; the edit's fields and the entry's members in every order; 1 and 1,000
edits. The native answer, where there is one, is the reference's (native_helpers.same); where
the reference keys the notification the native pass answers, else the reference does.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from native_helpers import reference, same
from test_native_patch_xml import IF, NS_IF, deriver_of, xml_change

from yangkey.schema import SchemaContext

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

OTHER = "urn:example:other"


def keyed(raw: bytes, decoder: Any, schema: SchemaContext, text: str = IF) -> str:
    """Who answered (asserting the native answer is the reference's); where the reference
    keys the notification, the native pass must have."""
    deriver = deriver_of(text, schema)
    ns = schema.index.by_namespace
    answered = same(decoder, deriver, raw, ns, "dflt", "keys_xml")
    want = "native" if reference(deriver, raw, ns, "dflt")[0] == "ok" else "python"
    assert answered == want, raw
    return answered


def edit(target: str, value: str, order: tuple[int, int, int] = (0, 1, 2)) -> str:
    fields = [
        "<operation>merge</operation>",
        f"<target>{target}</target>",
        f"<value>{value}</value>",
    ]
    return "<edit>" + "".join(fields[i] for i in order) + "</edit>"


def interface(body: str, quote: str = '"', pad: str = "") -> str:
    return f"<interface xmlns={quote}{NS_IF}{quote}>{body}{pad}</interface>"


# An entry's members (the target's key: eth0): who keys it is the reference's to say.
ENTRIES: list[str] = [
    "<name>eth0</name>",
    "<name>eth1</name>",
    "<name>eth0</name><type>x</type>",
    "<type>eth0</type><name>eth0</name>",
    # one byte apart: first, middle, last, one more, one less, empty
    "<name>fth0</name>",
    "<name>etg0</name>",
    "<name>eth9</name>",
    "<name>eth00</name>",
    "<name>eth</name>",
    "<name></name>",
    "<name/>",
    # missing: no key given (only other members, of the key's length too)
    "<type>eth0</type>",
    "<nam>eth0</nam><names>eth0</names><mame>eth0</mame>",
    "",
    # the key's local name in another module only (not the plain member)
    f'<name xmlns="{OTHER}">eth0</name>',
    f'<name xmlns="{OTHER}">eth1</name>',
    # the key's module and another's, both orders, equal or different texts
    f'<name xmlns="{OTHER}">eth1</name><name>eth0</name>',
    f'<name>eth0</name><name xmlns="{OTHER}">eth1</name>',
    f'<name xmlns="{OTHER}">eth0</name><name>eth1</name>',
    f'<name>eth1</name><name xmlns="{OTHER}">eth0</name>',
    f'<name xmlns="{OTHER}">eth0</name><name>eth0</name>',
    # the key by a prefix of its own namespace (the same member); of another
    f'<i:name xmlns:i="{NS_IF}">eth0</i:name>',
    f"<i:name xmlns:i='{NS_IF}'>eth1</i:name>",
    f'<o:name xmlns:o="{OTHER}">eth0</o:name>',
    # repeated (an array): equal, different, apart
    "<name>eth0</name><name>eth0</name>",
    "<name>eth0</name><name>eth1</name>",
    "<name>eth0</name><type>x</type><name>eth0</name>",
    # with a child element: its text before the child the target's, or not
    "<name>eth0<x/></name>",
    "<name><x>eth0</x></name>",
    f'<name>eth0<o:x xmlns:o="{OTHER}">y</o:x></name>',
]

# The value's children: the list's entry (wrapping an entry's members) in several spellings.
VALUES: list[str] = [
    interface("{}"),
    interface("{}", "'"),
    f'<i:interface xmlns:i="{NS_IF}">{{}}</i:interface>',
    f"<i:interface xmlns:i='{NS_IF}'>{{}}</i:interface>",
    # another module's, unqualified, another name: not the list's member
    f'<interface xmlns="{OTHER}">{{}}</interface>',
    "<interface>{}</interface>",
    f'<interfaces xmlns="{NS_IF}">{{}}</interfaces>',
    f'<interfac xmlns="{NS_IF}">{{}}</interfac>',
    # beside another child: the general lookup
    interface("{}") + f'<other xmlns="{OTHER}">x</other>',
    f'<other xmlns="{OTHER}">x</other>' + interface("{}"),
    interface("{}") + interface("<name>eth0</name>"),
]


@pytest.mark.parametrize("members", ENTRIES)
@pytest.mark.parametrize("value", VALUES[:4] + VALUES[8:9])
def test_native_xml_patch_entry_keys(
    decoder: Any, fx_schema: SchemaContext, members: str, value: str
) -> None:
    """An entry's key, every spelling, under the list's entry spelled several ways."""
    raw = xml_change(edit(f"{IF}=eth0", value.replace("{}", members)))
    keyed(raw, decoder, fx_schema)


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("members", ["<name>eth0</name>", "<name>eth1</name>", ""])
@pytest.mark.parametrize("framing", ["netconf", "telemetry"])
def test_native_xml_patch_value_child(
    decoder: Any, fx_schema: SchemaContext, value: str, members: str, framing: str
) -> None:
    """The value's one child (or several): the list's member only where its module and
    name are the list's."""
    raw = xml_change(edit(f"{IF}=eth0", value.replace("{}", members)), framing)
    keyed(raw, decoder, fx_schema)


def test_native_xml_patch_value_text(decoder: Any, fx_schema: SchemaContext) -> None:
    """A value whose one child is a leaf of the list's name (a text, not an entry), or
    empty."""
    for value in (f'<interface xmlns="{NS_IF}">eth0</interface>', f'<interface xmlns="{NS_IF}"/>'):
        keyed(xml_change(edit(f"{IF}=eth0", value)), decoder, fx_schema)


@pytest.mark.parametrize("pad", [0, 1, 7, 15, 16, 17, 31, 32])
@pytest.mark.parametrize("quote", ['"', "'"])
@pytest.mark.parametrize("key", ["eth0", "eth1"])
def test_native_xml_patch_padding(
    decoder: Any, fx_schema: SchemaContext, pad: int, quote: str, key: str
) -> None:
    """White space of 0 to 32 bytes before every tag of the value, its namespace quoted
    either way."""
    space = ("\n" + " " * 40)[:pad]
    members = f"{space}<type>x</type>{space}<name>{key}</name>{space}<mtu>1</mtu>"
    value = space + interface(members, quote, space) + space
    keyed(xml_change(edit(f"{IF}=eth0", value)), decoder, fx_schema)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
@pytest.mark.parametrize("key", ["eth0", "eth1"])
def test_native_xml_patch_orders(
    decoder: Any, fx_schema: SchemaContext, order: tuple[int, int, int], key: str
) -> None:
    """The edit's fields in every order, the entry's key first, between and last."""
    members = ["<name>" + key + "</name>", "<type>x</type>", "<mtu>1</mtu>"]
    for at in range(3):
        rest = members[1:]
        body = "".join(rest[:at] + members[:1] + rest[at:])
        keyed(xml_change(edit(f"{IF}=eth0", interface(body), order)), decoder, fx_schema)


@pytest.mark.parametrize("count", [1, 1000, 4500])
@pytest.mark.parametrize("wrong", [None, "first", "last"])
def test_native_xml_patch_many(
    decoder: Any, fx_schema: SchemaContext, count: int, wrong: str | None
) -> None:
    """1, 1,000 and 4,500 edits (more than the edits vector kept between documents), every
    entry's key the target's, or one (the first or the last) differing in its last byte."""
    edits = []
    for i in range(count):
        name = f"eth{i}"
        given = name[:-1] + "x" if (wrong, i) in (("first", 0), ("last", count - 1)) else name
        members = [f"<name>{given}</name>", f"<type>t{i}</type>"]
        body = "".join(members if i % 2 else members[::-1])
        edits.append(edit(f"{IF}={name}", interface(body), (0, 1, 2) if i % 3 else (2, 1, 0)))
    answered = keyed(xml_change("".join(edits)), decoder, fx_schema)
    assert answered == ("python" if wrong else "native")
