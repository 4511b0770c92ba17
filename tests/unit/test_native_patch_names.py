"""Issue 33: member names of 17-32 bytes (a module-qualified name such as
``ietf-interfaces:interface``) compared inline by native/src/tape.rs's ``same_name`` (four
8-byte loads, no library call) against the Python reference.

Each name is spelled with one byte changed at every position (the loads cover the first 16
bytes and the last 16, overlapping), and with one byte more or less: a yang-patch value's list
member (whose entry names another key than the target's, so a misspelled member read as the
list's stops the native pass), an entry's qualified member a filter reads, and a
push-update's top member (a misspelled one holds no instance). JSON yang-patch and
push-update; 1 and 1,000 edits.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from typing import Any

import pytest
from native_helpers import native_answer, reference, same
from test_native_keys import envelope
from test_native_patch_native import change, edit

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IF = "/ietf-interfaces:interfaces/interface"
LIST = "ietf-interfaces:interface"  # 25 bytes
TOP = "ietf-interfaces:interfaces"  # 26 bytes
DESCRIPTION = "ietf-interfaces:description"  # 27 bytes


def misspellings(name: str) -> list[str]:
    """``name`` with the byte at each position changed (a letter's case, another
    punctuation), and one byte longer and shorter."""
    found = []
    for at, char in enumerate(name):
        other = char.swapcase() if char.isalpha() else ("_" if char != "_" else "-")
        found.append(name[:at] + other + name[at + 1 :])
    return [*found, name + "s", name[:-1]]


def deriver(text: str, schema: SchemaContext) -> KeyDeriver:
    return KeyDeriver(compile_subscription(text, schema))


def answered(decoder: Any, keys: KeyDeriver, raw: bytes, ns: dict[str, str]) -> str:
    """The native answer is the reference's (None where the reference raises)."""
    if reference(keys, raw, ns, "dflt")[0] == "error":
        assert native_answer(decoder, keys, raw, ns, "dflt") is None, raw
        return "python"
    return same(decoder, keys, raw, ns, "dflt")


@pytest.mark.parametrize("member", [LIST, *misspellings(LIST)])
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_names_value_member(
    decoder: Any, fx_schema: SchemaContext, member: str, count: int
) -> None:
    """A value whose list member is spelled ``member``, its entry naming ``other``, not the
    target's key: the list's own spelling is refused by the reference (the entry names another
    instance); any misspelling is no member the walk reads, and the target's instance is
    keyed natively."""
    keys = deriver(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    edits = [
        edit("merge", f"{IF}=eth{i}", {member: [{"name": f"other{i}", "enabled": True}]})
        for i in range(count)
    ]
    raw = change(edits)
    assert answered(decoder, keys, raw, ns) == ("python" if member == LIST else "native")


@pytest.mark.parametrize("member", [DESCRIPTION, *misspellings(DESCRIPTION)])
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_names_filter_member(
    decoder: Any, fx_schema: SchemaContext, member: str, count: int
) -> None:
    """Entries giving ``member`` (the qualified spelling of ``description``, or a
    misspelling: no description) as ``x`` under a filter ``description='d'``, and one entry it
    keeps: that one instance for the qualified spelling, every target's for a misspelling,
    as the reference finds."""
    keys = deriver(f"{IF}[description='d']", fx_schema)
    ns = fx_schema.index.by_namespace
    edits = [
        edit("merge", f"{IF}=eth{i}", {LIST: [{"name": f"eth{i}", member: "x"}]})
        for i in range(count)
    ]
    # and one entry the filter keeps (all filtered out, the reference raises)
    edits.append(edit("merge", f"{IF}=kept", {LIST: [{"name": "kept", "description": "d"}]}))
    raw = change(edits)
    assert answered(decoder, keys, raw, ns) == "native"
    found = reference(keys, raw, ns, "dflt")
    assert len(found[-1]) == (1 if member == DESCRIPTION else count + 1), member


@pytest.mark.parametrize("member", [TOP, *misspellings(TOP)])
def test_native_patch_names_push_update_top(
    decoder: Any, fx_schema: SchemaContext, member: str
) -> None:
    """A push-update whose top member is spelled ``member``: the list's instances for the
    right spelling, the reference's error for a misspelling (no module of that name)."""
    keys = deriver(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    raw = envelope({member: {"interface": [{"name": "eth0"}, {"name": "eth1"}]}})
    # (a misspelled top member: the reference raises, the native pass answers None)
    assert answered(decoder, keys, raw, ns) == ("native" if member == TOP else "python")
