"""Issue 33: an XML yang-patch edit's fields read in one pass (native/src/xmlpatch.rs: each
edit's target and operation stripped as its children are read, its value element kept for
the arena or the tape) against the Python reference (xmlnotifications.py's
``_xml_notification``).

Edits whose fields come in every order, repeated fields (the reference refuses them: left to
it), missing ones, values whose members come in every order, duplicate and unknown members,
comments and white space between fields, namespaced fields and values; many edits in one
patch, with and without values, keyed in the arena and through the tape (a walk below the
target), so each edit keeps its own target, operation and value.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import pytest
from native_helpers import reference, same
from test_native_patch_xml import IF, NS_IF, deriver_of, xml_change

from yangkey.schema import SchemaContext

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IFS = "/ietf-interfaces:interfaces"
IFT = 'xmlns:ift="urn:ietf:params:xml:ns:yang:iana-if-type"'
TYPED = f"{IF}[type='iana-if-type:ethernetCsmacd']"


def entry(name: str, extra: str = "", order: int = 0) -> str:
    leaves = [
        f"<name>{name}</name>",
        f"<type {IFT}>ift:ethernetCsmacd</type>",
        "<enabled>true</enabled>",
        extra,
    ]
    leaves = leaves[order:] + leaves[:order]
    return f'<interface xmlns="{NS_IF}">{"".join(leaves)}</interface>'


def fields(name: str, operation: str = "merge", value: str | None = None) -> dict[str, str]:
    out = {
        "edit-id": f"<edit-id>{name}</edit-id>",
        "operation": f"<operation>{operation}</operation>",
        "target": f"<target>{IF}={name}</target>",
    }
    if value is not None:
        out["value"] = f"<value>{value}</value>"
    return out


def edit(parts: dict[str, str], order: tuple[str, ...], between: str = "") -> str:
    return "<edit>" + between.join(parts[f] for f in order) + "</edit>"


def check(
    fx_schema: SchemaContext, decoder: Any, text: str, edits: str, framing: str = "netconf"
) -> str:
    deriver = deriver_of(text, fx_schema)
    ns = fx_schema.index.by_namespace
    raw = xml_change(edits, framing)
    answered = same(decoder, deriver, raw, ns, "dflt", "keys_xml")
    if reference(deriver, raw, ns, "dflt")[0] != "ok":
        assert answered == "python", raw
    return answered


ORDERS = list(permutations(["edit-id", "operation", "target", "value"]))


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("between", ["", " \n\t", "<!-- c -->", "<?pi x?>", "<other>o</other>"])
def test_native_xml_patch_fields_every_order(
    decoder: Any, fx_schema: SchemaContext, order: tuple[str, ...], between: str
) -> None:
    """An edit's four fields in each order, with white space, a comment, a processing
    instruction or an unknown element between them: the reference's answer (natively but
    for a comment or processing instruction, which the fast reader leaves to it)."""
    edits = edit(fields("eth0", value=entry("eth0")), order, between) + edit(
        fields("eth1", "delete", value=entry("eth1", order=2)), order[::-1], between
    )
    for text in (IF, TYPED, IFS):
        answered = check(fx_schema, decoder, text, edits)
        assert answered == "native" or between.startswith(("<!", "<?")), text


@pytest.mark.parametrize("twice", ["edit-id", "operation", "target", "value"])
@pytest.mark.parametrize("where", [0, 1, 2])
def test_native_xml_patch_fields_repeated(
    decoder: Any, fx_schema: SchemaContext, twice: str, where: int
) -> None:
    """A field given twice (anywhere in the edit, in the first or a later edit): the
    reference's answer (its refusal), never a native one."""
    parts = fields("eth0", value=entry("eth0"))
    order = ["edit-id", "operation", "target", "value"]
    order.insert(where + 1, twice)
    bad = edit(parts, tuple(order))
    good = edit(fields("eth1", value=entry("eth1")), ("operation", "target", "value"))
    for edits in (bad + good, good + bad):
        assert check(fx_schema, decoder, IF, edits) == "python"


@pytest.mark.parametrize("missing", ["edit-id", "operation", "target", "value"])
def test_native_xml_patch_fields_missing(
    decoder: Any, fx_schema: SchemaContext, missing: str
) -> None:
    """A field left out: no edit-id or no value is keyed natively; no operation or target is
    the reference's (its error)."""
    order = tuple(f for f in ("edit-id", "operation", "target", "value") if f != missing)
    parts = fields("eth0", value=entry("eth0"))
    edits = edit(parts, order) + edit(fields("eth1", "delete"), ("operation", "target"))
    who = check(fx_schema, decoder, IF, edits)
    assert who == ("python" if missing in ("operation", "target") else "native")


@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize(
    "extra",
    [
        "",
        "<unknown>u</unknown>",
        '<x:unknown xmlns:x="urn:other">u</x:unknown>',
        "<name>eth0</name>",  # a duplicate key member: an array (the reference's)
        "<name>eth9</name>",
        "<description>d</description><description>e</description>",
        "<type>ift:other</type>",
    ],
)
def test_native_xml_patch_fields_members(
    decoder: Any, fx_schema: SchemaContext, order: int, extra: str
) -> None:
    """A value's members in each order, with unknown, duplicate and namespaced ones: the
    reference's answer (natively or left to it), under subscriptions that read the key, a
    filter, or walk below the target."""
    parts = fields("eth0", value=entry("eth0", extra, order))
    edits = edit(parts, ("operation", "target", "value"))
    for text in (IF, TYPED, IFS):
        check(fx_schema, decoder, text, edits)


@pytest.mark.parametrize("framing", ["netconf", "envelope", "bare", "telemetry", "iosxe"])
@pytest.mark.parametrize("text", [IF, TYPED, IFS, f"{IF}/name"])
def test_native_xml_patch_fields_many_edits(
    decoder: Any, fx_schema: SchemaContext, framing: str, text: str
) -> None:
    """Many edits, some without a value, their fields in varying orders and namespaces, each
    with its own target, operation and value (white space around the texts): each keyed
    with its own, in the arena and through the tape (a walk below the target)."""
    out = []
    for i in range(12):
        name = f"eth{i}"
        extra = "" if i % 2 else "<description>d</description>"
        value = None if i % 3 == 1 else entry(name, extra, i % 4)
        operation = ("merge", " delete\n", "replace", "create", "\tmerge ")[i % 5]
        parts = fields(name, operation, value)
        parts["target"] = f"<target>\n {IF}={name} </target>" if i % 4 == 3 else parts["target"]
        order = ORDERS[(i * 5) % len(ORDERS)]
        order = tuple(f for f in order if f in parts)
        body = edit(parts, order, " " if i % 2 else "<x/>")
        if i % 6 == 5:
            body = body.replace("<edit>", f'<p:edit xmlns:p="{NS_IF}">')
            body = body.replace("</edit>", "</p:edit>")
        out.append(body)
    # a whole-list edit among them: its value walked below the target (the tape)
    whole = fields("x", value=entry("eth20") + entry("eth21"))
    whole["target"] = f"<target>{IFS}</target>"
    out.insert(4, edit(whole, ("operation", "value", "target")))
    answered = check(fx_schema, decoder, text, "".join(out), framing)
    assert answered == "native" or text not in (IF, TYPED)
