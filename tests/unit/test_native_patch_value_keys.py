"""Issue 33: a JSON yang-patch value's entry keys checked against the target's
(patcharena.rs's ``check_value_keys``, ``_check_value_keys`` in the reference) with the scan of
the entry's members stopping at the key's first name (tape.rs's ``V::first``: the parse refused
any document naming a member twice, so the first is ``dict.get``'s), against the Python
reference.

The key member first, in the middle, last, alone, absent, given twice (the document refused),
spelled qualified (no key for ``dict.get``), with the target's value or another (the
reference refuses), as null or a number; composite keys in every order; 1 and 1,000 edits;
the XML yang-patch's tape (which scans every member) beside it.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import orjson
import pytest
from native_helpers import native_answer, reference, same
from test_native_patch_native import change, edit
from test_native_patch_xml import module_namespaces, xml_change, xml_edit

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IF = "/ietf-interfaces:interfaces/interface"
FLOW = "/yk-test:top/flow"
OTHER_MEMBERS: list[tuple[str, Any]] = [
    ("enabled", True),
    ("description", "nam"),
    ("type", "iana-if-type:ethernetCsmacd"),
    ("namf", "eth0"),
]


def deriver(text: str, schema: SchemaContext) -> KeyDeriver:
    return KeyDeriver(compile_subscription(text, schema))


def answered(
    decoder: Any, keys: KeyDeriver, raw: bytes, ns: dict[str, str], entry: str = "keys"
) -> str:
    """The native answer is the reference's (None where the reference raises)."""
    if reference(keys, raw, ns, "dflt")[0] == "error":
        assert native_answer(decoder, keys, raw, ns, "dflt", entry) is None, raw
        return "python"
    return same(decoder, keys, raw, ns, "dflt", entry)


def entry_with(key: tuple[str, Any] | None, at: int) -> dict[str, Any]:
    """The other members with ``key`` (member, value) inserted at ``at``."""
    members = list(OTHER_MEMBERS)
    if key is not None:
        members.insert(at, key)
    return dict(members)


# (key member and value, whether the reference keys it): the target's key is "eth0"
KEYS: list[tuple[tuple[str, Any] | None, bool]] = [
    (("name", "eth0"), True),
    (("name", "eth1"), False),  # names another entry: refused
    (("name", "eth00"), False),
    (("name", None), False),  # null: the native pass leaves it to the reference
    (("name", 0), False),
    (("ietf-interfaces:name", "eth1"), True),  # not ``name`` for dict.get: no key given
    (None, True),
]


@pytest.mark.parametrize("key", KEYS, ids=str)
@pytest.mark.parametrize("at", [0, 2, 4])
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_value_keys_position(
    decoder: Any,
    fx_schema: SchemaContext,
    key: tuple[tuple[str, Any] | None, bool],
    at: int,
    count: int,
) -> None:
    """The key member at each position of the entry, among members whose names share its
    length or first bytes; the same entry in ``count`` edits (after ``count - 1`` good ones):
    keyed natively where the reference keys it."""
    keys = deriver(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    member, good = key
    edits = [
        edit("merge", f"{IF}=e{n}", {"ietf-interfaces:interface": [{"name": f"e{n}"}]})
        for n in range(count - 1)
    ]
    value = {"ietf-interfaces:interface": [entry_with(member, at)]}
    edits.append(edit("merge", f"{IF}=eth0", value))
    answer = answered(decoder, keys, change(edits), ns)
    assert answer == ("native" if good else "python"), (member, at)


@pytest.mark.parametrize("at", [0, 1, 2])
def test_native_patch_value_keys_given_twice(
    decoder: Any, fx_schema: SchemaContext, at: int
) -> None:
    """The key member twice in an entry (the target's value first, another last, and the
    reverse): the document is refused (the reference's error), never keyed by the first."""
    keys = deriver(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    for first, last in (("eth0", "eth1"), ("eth1", "eth0"), ("eth0", "eth0")):
        entry = entry_with(("name", first), at)
        text = orjson.dumps(entry).decode()
        twice = text[:-1] + f',"name":"{last}"}}'
        raw = change([edit("merge", f"{IF}=eth0", {"ietf-interfaces:interface": ["X"]})])
        raw = raw.replace(b'["X"]', f"[{twice}]".encode())
        assert answered(decoder, keys, raw, ns) == "python", raw


@pytest.mark.parametrize("order", list(permutations(range(3))))
def test_native_patch_value_keys_composite(
    decoder: Any, fx_schema: SchemaContext, order: tuple[int, ...]
) -> None:
    """A composite key's three members in every order, with a non-key member first: the
    target's values keyed natively, one of them changed refused."""
    keys = deriver(FLOW, fx_schema)
    ns = fx_schema.index.by_namespace
    given = [("proto", "tcp"), ("port", 80), ("enabled", True)]
    for changed in (None, 0, 1, 2):
        members = [("label", "l"), *(given[at] for at in order)]
        if changed is not None:
            name, value = given[changed]
            swap = {"tcp": "udp", 80: 81, True: False}[value]
            members = [(n, swap if n == name else v) for n, v in members]
        value = {"yk-test:flow": [dict(members)]}
        raw = change([edit("merge", f"{FLOW}=tcp,80,true", value)])
        assert answered(decoder, keys, raw, ns) == ("native" if changed is None else "python")


@pytest.mark.parametrize("at", [0, 2, 4])
def test_native_patch_value_keys_xml_beside(
    decoder: Any, fx_schema: SchemaContext, at: int
) -> None:
    """The same entries as an XML yang-patch (its values in the fast reader's arena, or the
    tape when a filter needs it): the reference's keys, JSON and XML one after the other."""
    ns = fx_schema.index.by_namespace
    namespaces = module_namespaces(fx_schema)
    for text in (IF, f"{IF}[description='nam']"):
        keys = deriver(text, fx_schema)
        for name in ("eth0", "eth1"):
            entry = entry_with(("name", name), at)
            entry.pop("namf")
            edits = [edit("merge", f"{IF}=eth0", {"ietf-interfaces:interface": [entry]})]
            want = "native" if name == "eth0" else "python"
            assert answered(decoder, keys, change(edits), ns) == want
            raw = xml_change("".join(xml_edit(e, namespaces) for e in edits))
            assert answered(decoder, keys, raw, ns, "keys_xml") == want
