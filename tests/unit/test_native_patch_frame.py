"""Issue 33: the JSON yang-patch's per-edit work after its target is parsed, against the Python
reference: the edit's framing (its members ``target``, ``operation`` and ``value``), the short
way of the commonest edit (patchentry.rs: a target naming one entry of the list a branch ends
in, below containers alone, no filter), and the value's entry read in place
(patcharena.rs's ``entry`` for the tape: a value of one member and an array of one item read
without a scan, else the early-stopping lookup).

Edits whose members come in every order, or miss one; every operation and unknown ones;
values whose list member is plain, qualified, both, null, or not there, with no, one or two
entries, or items that are no object; entries whose key leaf is the target's text, another
entry's, or canonically the same in other text (numbers, booleans, identities, escaped
strings, percent-escaped targets); 1 and 1,000 edits; targets beside the short way (below the
entry, the list itself, a container, a list in a list, a branch with a filter or a pinned key),
and the same edits as an XML yang-patch.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import pytest
from native_helpers import native_answer, reference, same
from test_native_patch_native import change, edit
from test_native_patch_xml import module_namespaces, xml_change, xml_edit

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IF = "/ietf-interfaces:interfaces/interface"
LIST = "ietf-interfaces:interface"
FLOW = "/yk-test:top/flow"
SITE = "/yk-test:top/site"
PEER = "/yk-test:top/peer"


def deriver(text: str, schema: SchemaContext) -> KeyDeriver:
    return KeyDeriver(compile_subscription(text, schema))


def answered(decoder: Any, keys: KeyDeriver, raw: bytes, ns: dict[str, str]) -> str:
    """The native answer is the reference's (None where the reference raises); which path
    answered."""
    if reference(keys, raw, ns, "dflt")[0] == "error":
        assert native_answer(decoder, keys, raw, ns, "dflt") is None, raw
        return "python"
    return same(decoder, keys, raw, ns, "dflt")


def both(decoder: Any, keys: KeyDeriver, edits: list[Any], schema: SchemaContext) -> str:
    """:func:`answered` of ``edits`` as a JSON yang-patch and as an XML one (the XML's
    answer the JSON's, or the reference's where the native XML pass leaves it); the JSON's
    path."""
    ns = schema.index.by_namespace
    json_path = answered(decoder, keys, change(edits), ns)
    raw = xml_change("".join(xml_edit(e, module_namespaces(schema)) for e in edits))
    if reference(keys, raw, ns, "dflt")[0] == "error":
        assert native_answer(decoder, keys, raw, ns, "dflt", "keys_xml") is None, raw
    else:
        same(decoder, keys, raw, ns, "dflt", "keys_xml")
    return json_path


def entry(name: str, **more: Any) -> dict[str, Any]:
    return {"name": name, **more}


def filler(count: int) -> list[dict[str, Any]]:
    """``count`` good edits before the one under test (1,000 edits: 999 of them)."""
    return [edit("merge", f"{IF}=f{n}", {LIST: [entry(f"f{n}")]}) for n in range(count)]


# ------------------------------------------------------------------ the edit's members


MEMBERS = {
    "edit-id": "e1",
    "operation": "merge",
    "target": f"{IF}=eth0",
    "value": {LIST: [entry("eth0", description="d")]},
}


@pytest.mark.parametrize("order", list(permutations(MEMBERS)), ids=str)
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_frame_member_orders(
    decoder: Any, fx_schema: SchemaContext, order: tuple[str, ...], count: int
) -> None:
    """The edit's four members in every order (after ``count - 1`` good edits): keyed
    natively, the reference's key; the value naming another entry refused in every order."""
    keys = deriver(IF, fx_schema)
    good = {name: MEMBERS[name] for name in order}
    assert both(decoder, keys, [*filler(count - 1), good], fx_schema) == "native"
    bad = dict(good, value={LIST: [entry("eth1")]})
    assert both(decoder, keys, [*filler(count - 1), bad], fx_schema) == "python"


@pytest.mark.parametrize("missing", list(MEMBERS))
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_frame_member_missing(
    decoder: Any, fx_schema: SchemaContext, missing: str, count: int
) -> None:
    """One member left out: no target or operation is the reference's error (left to it), no
    value a merge of the target's keys alone, no edit-id nothing."""
    keys = deriver(IF, fx_schema)
    one = {name: value for name, value in MEMBERS.items() if name != missing}
    want = "python" if missing in ("target", "operation") else "native"
    assert both(decoder, keys, [*filler(count - 1), one], fx_schema) == want


@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_frame_members_of_other_edits(
    decoder: Any, fx_schema: SchemaContext, count: int
) -> None:
    """Edits each with its own members, in an order of their own: none reads another's (a
    value without target after a target without value, and so on)."""
    keys = deriver(IF, fx_schema)
    edits: list[Any] = []
    for n in range(count):
        members = list(MEMBERS.items())
        members = members[n % 4 :] + members[: n % 4]
        item = dict(members, target=f"{IF}=i{n}")
        if n % 3 == 0:
            item.pop("value")
        else:
            item["value"] = {LIST: [entry(f"i{n}")]}
        edits.append(item)
    assert both(decoder, keys, edits, fx_schema) == "native"


OPERATIONS = ["create", "delete", "insert", "merge", "move", "replace", "remove"]
UNKNOWN = ["", "Merge", "MERGE", "merge ", "merg", "mergee", "removes", "moves", "get", "none"]


@pytest.mark.parametrize("operation", OPERATIONS + UNKNOWN)
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_frame_operations(
    decoder: Any, fx_schema: SchemaContext, operation: str, count: int
) -> None:
    """Every RFC 8072 operation keyed natively (with value or without; a delete's value too),
    any other (one byte off, another case, a trailing space) the reference's error."""
    keys = deriver(IF, fx_schema)
    want = "native" if operation in OPERATIONS else "python"
    for value in ({LIST: [entry("eth0")]}, None):
        one = edit(operation, f"{IF}=eth0", value)
        assert both(decoder, keys, [*filler(count - 1), one], fx_schema) == want


def test_native_patch_frame_operation_not_text(decoder: Any, fx_schema: SchemaContext) -> None:
    """An operation or target that is no string: the reference's error."""
    keys = deriver(IF, fx_schema)
    for name, value in (("operation", 1), ("operation", None), ("target", ["x"])):
        one = dict(MEMBERS, **{name: value})
        assert answered(decoder, keys, change([one]), fx_schema.index.by_namespace) == "python"


# ------------------------------------------------------------------ the value's entry


# (value, whether the reference keys it): the target's key is "eth0"
VALUES: list[tuple[Any, bool]] = [
    ({LIST: [entry("eth0")]}, True),
    ({"interface": [entry("eth0")]}, True),  # plain
    ({LIST: [entry("eth1")]}, False),  # another entry: refused
    ({"interface": [entry("eth1")]}, False),
    ({LIST: entry("eth0")}, True),  # the entry itself, no array
    ({LIST: entry("eth1")}, False),
    ({LIST: []}, True),  # no entry: the target's keys
    ({LIST: None}, True),  # null: absent
    ({LIST: ["eth1"]}, True),  # no object: no entry
    ({LIST: [None]}, True),
    ({LIST: [["eth1"]]}, True),
    ({LIST: [entry("eth0"), entry("eth0")]}, False),  # two entries: refused
    ({LIST: ["x", entry("eth1")]}, False),  # the one object names another
    ({LIST: ["x", entry("eth0")]}, True),
    ({LIST: [entry("eth1"), "x"]}, False),
    ({"ietf-interfaces:other": [entry("eth1")]}, True),  # not the list: no entry
    ({"interfaces": [entry("eth1")]}, True),
    ({"ietf-interfaces:interfac": [entry("eth1")]}, True),
    ({"ietf-interfaces:interfacf": [entry("eth1")]}, True),
    ({"jetf-interfaces:interface": [entry("eth1")]}, True),
    ({"interface": [entry("eth0")], LIST: [entry("eth1")]}, True),  # plain first
    ({LIST: [entry("eth1")], "interface": [entry("eth0")]}, True),
    ({"interface": [entry("eth1")], LIST: [entry("eth0")]}, False),
    ({LIST: [entry("eth0")], "interface": [entry("eth1")]}, False),
    ({"interface": None, LIST: [entry("eth1")]}, False),  # null plain: the qualified one
    ({LIST: [entry("eth1")], "interface": None}, False),
    ({"interface": None, LIST: [entry("eth0")]}, True),
    ({"interface": [], LIST: [entry("eth1")]}, True),  # plain, empty: no entry
    ({"x": 1, LIST: [entry("eth1")]}, False),  # other members around it
    ({"x": 1, LIST: [entry("eth0")], "y": 2}, True),
    ({}, True),
]


@pytest.mark.parametrize(("value", "good"), VALUES, ids=str)
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_frame_values(
    decoder: Any, fx_schema: SchemaContext, value: Any, good: bool, count: int
) -> None:
    """The value's list member plain, qualified, both, null, absent, as an array of no, one
    or two entries or of other items, after ``count - 1`` good edits: keyed natively where
    the reference keys it, the same key."""
    keys = deriver(IF, fx_schema)
    edits = [*filler(count - 1), edit("merge", f"{IF}=eth0", value)]
    assert both(decoder, keys, edits, fx_schema) == ("native" if good else "python")


# (entry's key leaf, whether the reference keys it), the target's key ``eth0``
KEY_LEAVES: list[tuple[dict[str, Any], bool]] = [
    ({"name": "eth0"}, True),
    ({"name": "eth1"}, False),
    ({"name": "eth"}, False),
    ({"name": "eth00"}, False),
    ({"name": "Eth0"}, False),
    ({"name": ""}, False),
    ({"name": None}, False),  # null: left to the reference
    ({"name": 0}, False),
    ({"name": True}, False),
    ({"name": ["eth0"]}, False),
    ({}, True),  # no key given
    ({"ietf-interfaces:name": "eth1"}, True),  # not ``name`` for dict.get
    ({"description": "eth0", "name": "eth0"}, True),  # the key not first
    ({"description": "eth0", "name": "eth1"}, False),
    ({"nam": "eth1", "namee": "eth1", "name": "eth0"}, True),
]


@pytest.mark.parametrize(("members", "good"), KEY_LEAVES, ids=str)
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_frame_key_leaf(
    decoder: Any, fx_schema: SchemaContext, members: dict[str, Any], good: bool, count: int
) -> None:
    """The entry's key leaf the target's, another text, another type, null, absent, not
    first: keyed natively where the reference keys it."""
    keys = deriver(IF, fx_schema)
    edits = [*filler(count - 1), edit("merge", f"{IF}=eth0", {LIST: [members]})]
    assert both(decoder, keys, edits, fx_schema) == ("native" if good else "python")


# (target's key text, raw JSON of the entry's name, whether the reference keys it)
ESCAPES: list[tuple[str, str, bool]] = [
    ("eth0", '"eth\\u0030"', True),  # a JSON escape: the same text
    ("eth0", '"\\u0065th0"', True),
    ("eth%30", '"eth0"', True),  # a percent escape in the target
    ("eth%30", '"eth\\u0030"', True),
    ("Gi0%2F0%2F1", '"Gi0/0/1"', True),
    ("Gi0%2F0%2F1", '"Gi0\\/0\\/1"', True),
    ("Gi0%2f0%2f1", '"Gi0/0/1"', True),
    ("Gi0%2F0%2F1", '"Gi0/0/2"', False),
    ("a%2Cb", '"a,b"', True),
    ("a%2Cb", '"a%2Cb"', False),
    ("caf%C3%A9", '"caf\\u00e9"', True),
    ("caf%C3%A9", '"café"', True),
    ("eth0", '"eth\\u0031"', False),
    ("x" * 40, '"' + "x" * 40 + '"', True),  # past the inline compare's 32 bytes
    ("x" * 40, '"' + "x" * 39 + 'y"', False),
    ("x" * 17, '"' + "x" * 16 + 'y"', False),
]


@pytest.mark.parametrize(("target_key", "given", "good"), ESCAPES, ids=str)
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_frame_escaped_keys(
    decoder: Any,
    fx_schema: SchemaContext,
    target_key: str,
    given: str,
    good: bool,
    count: int,
) -> None:
    """The entry's key written with JSON escapes, the target's with percent escapes: equal
    text keyed natively, other text refused, as the reference."""
    keys = deriver(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    edits = [*filler(count - 1), edit("merge", f"{IF}={target_key}", {LIST: [{"name": "K"}]})]
    raw = change(edits).replace(b'"K"', given.encode())
    assert answered(decoder, keys, raw, ns) == ("native" if good else "python")


# (target's keys, the entry's proto/port/enabled, whether the reference keys it)
CANONICAL: list[tuple[str, dict[str, Any], bool]] = [
    ("tcp,80,true", {"proto": "tcp", "port": 80, "enabled": True}, True),
    ("tcp,80,true", {"proto": "yk-test:tcp", "port": 80, "enabled": True}, True),
    ("yk-test:tcp,80,true", {"proto": "tcp", "port": 80, "enabled": True}, True),
    ("tcp,80,true", {"proto": "tcp", "port": "80", "enabled": True}, True),
    ("tcp,080,true", {"proto": "tcp", "port": 80, "enabled": True}, True),
    ("tcp,%2B80,true", {"proto": "tcp", "port": 80, "enabled": True}, True),
    ("tcp,80,true", {"proto": "tcp", "port": 81, "enabled": True}, False),
    ("tcp,80,true", {"proto": "udp", "port": 80, "enabled": True}, False),
    ("tcp,80,true", {"proto": "tcp", "port": 80, "enabled": False}, False),
    ("tcp,80,true", {"proto": "tcp", "port": 80, "enabled": "true"}, True),
    ("tcp,80,true", {"proto": "tcp"}, True),
    ("tcp,80,true", {}, True),
    ("tcp,80,true", {"port": None}, False),
    ("tcp,80", {"proto": "tcp", "port": 80}, False),  # a key short: refused
    ("tcp,80,true,x", {"proto": "tcp", "port": 80}, False),
]


@pytest.mark.parametrize(("target_keys", "given", "good"), CANONICAL, ids=str)
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_frame_canonical_keys(
    decoder: Any,
    fx_schema: SchemaContext,
    target_keys: str,
    given: dict[str, Any],
    good: bool,
    count: int,
) -> None:
    """A composite key (identityref, uint32, boolean) given in other text than the target's
    but canonically the same (a module-qualified identity, a number for digits, leading
    zeros): the reference's answer, whichever path gives it; another value refused."""
    keys = deriver(FLOW, fx_schema)
    ns = fx_schema.index.by_namespace
    before = [
        edit("merge", f"{FLOW}=tcp,{n},true", {"yk-test:flow": [{"port": n}]})
        for n in range(count - 1)
    ]
    value = {"yk-test:flow": [{"label": "l", **given}]}
    raw = change([*before, edit("merge", f"{FLOW}={target_keys}", value)])
    path = answered(decoder, keys, raw, ns)
    if not good:
        assert path == "python"


# ------------------------------------------------------------------ beside the short way


# (subscription, target, value): targets the short way must not take
BESIDE: list[tuple[str, str, Any]] = [
    (IF, f"{IF}=eth0/description", {"ietf-interfaces:description": "d"}),
    (IF, f"{IF}=eth0/description", None),
    (IF, f"{IF}=eth0/name", {"ietf-interfaces:name": "eth0"}),
    (IF, f"{IF}=eth0/name", {"ietf-interfaces:name": "eth1"}),
    (IF, IF, {LIST: [entry("eth0"), entry("eth1")]}),
    (IF, IF, {LIST: [entry("eth0"), {"description": "no key"}]}),
    (IF, IF, None),
    (IF, "/ietf-interfaces:interfaces", {"ietf-interfaces:interfaces": {"interface": []}}),
    (IF, "/ietf-interfaces:interfaces", {"ietf-interfaces:interfaces": {LIST: [entry("a")]}}),
    (IF, "/ietf-interfaces:interfaces", None),
    (IF, "/ietf-interfaces:interfaces-state", {"x": 1}),
    (IF, "/ietf-interfaces:interfaces/other=eth0", {"ietf-interfaces:other": [entry("eth0")]}),
    (IF, "/other-module:interfaces/interface=eth0", {LIST: [entry("eth0")]}),
    (IF, "/ietf-interfaces:interfacez/interface=eth0", {LIST: [entry("eth0")]}),
    (IF, f"{IF}=eth0,eth1", {LIST: [entry("eth0")]}),  # two keys for one: refused
    (IF, f"{IF}=eth0/description/x", None),
    (f"{IF}/description", f"{IF}=eth0", {LIST: [entry("eth0", description="d")]}),
    (f"{IF}/description", f"{IF}=eth0", {LIST: [entry("eth1", description="d")]}),
    (f"{IF}/description", f"{IF}=eth0", None),
    (f"{IF}/description", f"{IF}=eth0/description", {"ietf-interfaces:description": "d"}),
    (f"{IF}[name='eth0']", f"{IF}=eth0", {LIST: [entry("eth0")]}),  # a pinned key
    (f"{IF}[name='eth0']", f"{IF}=eth1", {LIST: [entry("eth1")]}),
    (f"{IF}[name='eth0']", f"{IF}=eth1", {LIST: [entry("eth0")]}),
    (f"{IF}[description='d']", f"{IF}=eth0", {LIST: [entry("eth0", description="d")]}),
    (f"{IF}[description='d']", f"{IF}=eth0", {LIST: [entry("eth0", description="e")]}),
    (f"{IF}[description='d']", f"{IF}=eth0", {LIST: [entry("eth1", description="d")]}),
    (f"{IF}[description='d']", f"{IF}=eth0", {LIST: ["x"]}),
    (f"{IF}[description='d']", f"{IF}=eth0", None),
    (SITE, f"{SITE}=a", {"yk-test:site": [{"name": "a", "region": "r"}]}),
    (SITE, f"{SITE}=a/rack=1", {"yk-test:rack": [{"id": "1"}]}),
    (SITE, f"{SITE}=a/rack=1", None),
    (f"{SITE}/rack", f"{SITE}=a/rack=1", {"yk-test:rack": [{"id": "1"}]}),
    (f"{SITE}/rack", f"{SITE}=a/rack=1", {"yk-test:rack": [{"id": "01"}]}),
    (f"{SITE}/rack", f"{SITE}=a/rack=1", {"yk-test:rack": [{"id": "2"}]}),
    (f"{SITE}/rack", f"{SITE}=a/rack=1", None),
    (f"{SITE}/rack", f"{SITE}=a", {"yk-test:site": [{"name": "a", "rack": [{"id": "3"}]}]}),
    (PEER, f"{PEER}=2001:db8::1", {"yk-test:peer": [{"addr": "2001:db8::1"}]}),
    (PEER, f"{PEER}=2001:db8::1", {"yk-test:peer": [{"addr": "2001:DB8::1"}]}),
    (PEER, f"{PEER}=2001:DB8::1", {"yk-test:peer": [{"addr": "2001:db8::2"}]}),
]


@pytest.mark.parametrize(("text", "target", "value"), BESIDE, ids=str)
@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_frame_beside(
    decoder: Any, fx_schema: SchemaContext, text: str, target: str, value: Any, count: int
) -> None:
    """Targets below the entry, the list itself, a container, another module's, a list in a
    list, branches below the entry, with a pinned key or a filter, an address key (a Python
    canon), after ``count - 1`` other edits: the reference's answer, JSON and XML."""
    keys = deriver(text, fx_schema)
    edits = [*filler(count - 1), edit("merge", target, value)]
    both(decoder, keys, edits, fx_schema)


@pytest.mark.parametrize("count", [1, 1000])
def test_native_patch_frame_pinned_and_filtered_many(
    decoder: Any, fx_schema: SchemaContext, count: int
) -> None:
    """``count`` edits, a pinned key and a filter picking some: the reference's instances,
    keyed natively (one edit: none picked, which the native pass leaves to the reference)."""
    edits = [
        edit("merge", f"{IF}=e{n % 7}", {LIST: [entry(f"e{n % 7}", description=f"d{n % 3}")]})
        for n in range(count)
    ]
    for text in (f"{IF}[name='e3']", f"{IF}[description='d1']", IF, f"{IF}/description"):
        path = both(decoder, deriver(text, fx_schema), edits, fx_schema)
        assert path == "native" or (count == 1 and "=" in text), text
