"""Issue 33: yang-patch keys natively (RFC 8641 section 3.10's push-change-update carrying
RFC 8072 edits; native/src/patchwalk.rs) against the Python reference (patch.py's EditPlan,
edit_tree and edits_xpaths, notification_model's target parsing, walker.py's DELETED node).

``Decoder.keys`` now keys a JSON yang-patch itself: each edit's target parsed and matched
against each branch, the target's keys as the entry's key leaves, the value walked in place.
Where it answers, its answer is the reference's byte for byte (test_native_keys.py's
``same``); where the reference refuses (a value naming another entry than its target, two
entries, the wrong number of keys, a target it cannot parse) or the pass does not mirror a
shape exactly, it answers None and the reference words the error, so MessageBuilder's records
and rejections are the same with the module and without. Inputs: each public JSON key vector
re-sent as a yang-patch (its data as one edit's value, and as one edit per entry), hand
edges (percent-encoding, composite and nested keys, augments, leaf and container targets,
targets above and below the subscription, pinned keys, qualified member names), hypothesis
edits drawn from the differential tests' generated trees over every differential
subscription in each JSON framing (with mutations: a key changed, dropped or added, entries
doubled, junk after the target, bad percent-escapes); the ``yangkey sample`` mix through
MessageBuilder is test_native_patch_keys.py's.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import pairwise
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from native_helpers import native_answer, reference, same
from test_core_differential import SUBSCRIPTIONS, TreeMaker
from test_native_patch_keys import framed, patch

from yangkey.compiled import Branch, CompiledSubscription
from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
IF = "/ietf-interfaces:interfaces/interface"
WRAPPERS = ["envelope", "envelope", "bare", "restconf", "telemetry"]


def edit(operation: str, target: str, value: Any = None) -> dict[str, Any]:
    item: dict[str, Any] = {"edit-id": f"e-{operation}", "operation": operation, "target": target}
    if value is not None:
        item["value"] = value
    return item


def change(
    edits: list[dict[str, Any]], wrapper: str = "envelope", sub: Any = 7, node: str = "pe1"
) -> bytes:
    return framed(wrapper, patch(sub, edits), node=node)


# ----------------------------------------------------------------------------- the vectors


def _contents(notification: Any) -> tuple[Any, dict[str, Any]]:
    """A push-update's subscription id and datastore contents, in whatever framing."""
    stack: list[Any] = [notification]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "datastore-contents" in node:
                return node.get("id"), node["datastore-contents"]
            stack.extend(node.values())
    raise AssertionError(notification)


def json_key_vectors(
    ietf_schema: SchemaContext,
) -> Iterator[tuple[dict[str, Any], CompiledSubscription, Any, dict[str, Any]]]:
    """Each public JSON key vector: itself, its subscription compiled, its push-update's
    subscription id and datastore contents (skips without the vectors)."""
    from test_core_vectors import _vector_file  # noqa: PLC0415 (where the vectors are found)

    vectors = _vector_file()
    if not vectors.is_file():
        pytest.skip(f"public vectors not found at {vectors} (set YANGKEY_VECTORS)")
    for line in vectors.read_text(encoding="utf-8").splitlines():
        vector = json.loads(line)
        if vector["kind"] != "key" or not vector["notification"].lstrip().startswith("{"):
            continue
        if "subtree" in vector:
            compiled = compile_subscription(vector["subtree"], ietf_schema, subtree=True)
        else:
            compiled = compile_subscription(vector["xpath"], ietf_schema)
        sub, data = _contents(json.loads(vector["notification"]))
        yield vector, compiled, sub, data


def test_native_patch_vectors(decoder: Any, ietf_schema: SchemaContext) -> None:
    """Each public JSON key vector re-sent as a yang-patch whose edit carries the vector's
    data under its top-level container: keyed natively, byte for byte the reference's, and
    the vector's expected key (the same instances as the push-update)."""
    ns = ietf_schema.index.by_namespace
    answered = 0
    for vector, compiled, sub, data in json_key_vectors(ietf_schema):
        deriver = KeyDeriver(compiled)
        whole = [edit("merge", f"/{member}", {member: value}) for member, value in data.items()]
        node = vector["expect"].partition("\n")[0]  # the key's node, the notification's name
        for raw in (change(whole, "envelope", sub, node), change(whole, "telemetry", sub, node)):
            want = reference(deriver, raw, ns, vector.get("node"))
            got = native_answer(decoder, deriver, raw, ns, vector.get("node"))
            assert got == want, (vector["id"], raw)
            assert got[4] == vector["expect"].encode(), vector["id"]
            answered += 1
    assert answered >= 2


# ------------------------------------------------------------------------- the hand edges

EDGES: list[tuple[str, list[dict[str, Any]]]] = [
    # replace/merge/create of a list entry, as devices send them; delete/remove without value
    (IF, [edit("merge", f"{IF}=eth3", {"ietf-interfaces:interface": [{"name": "eth3"}]})]),
    (IF, [edit("replace", f"{IF}=eth3", {"ietf-interfaces:interface": {"name": "eth3"}})]),
    (IF, [edit("create", f"{IF}=eth3", {"interface": [{"name": "eth3", "enabled": True}]})]),
    (IF, [edit("delete", f"{IF}=eth3"), edit("remove", f"{IF}=eth4")]),
    # percent-encoding: '/', ',', space and apostrophe, UTF-8
    (IF, [edit("delete", f"{IF}=eth0%2F1"), edit("delete", f"{IF}=a%2Cb")]),
    (IF, [edit("delete", f"{IF}=sp%20ace%27q"), edit("delete", f"{IF}=%C3%BC1")]),
    # the value's entry spells the key the target names, or leaves it out, or is no object
    (IF, [edit("merge", f"{IF}=eth0", {"ietf-interfaces:interface": [{"enabled": True}]})]),
    (IF, [edit("merge", f"{IF}=eth0", {"ietf-interfaces:interface": ["x", {"name": "eth0"}]})]),
    (IF, [edit("merge", f"{IF}=eth0", {"ietf-interfaces:interface": "x"})]),
    (IF, [edit("merge", f"{IF}=eth0", {"other": 1})]),
    (IF, [edit("merge", f"{IF}=eth0", "not an object")]),
    # composite keys: percent-encoded identityref, integer and boolean text vs JSON values
    (
        "/yk-test:top/flow",
        [
            edit("delete", "/yk-test:top/flow=yk-test%3Atcp,0080,true"),
            edit(
                "merge",
                "/yk-test:top/flow=yk-aug:sctp,9,false",
                {"yk-test:flow": [{"proto": "yk-aug:sctp", "port": 9, "enabled": False}]},
            ),
        ],
    ),
    (
        "/yk-test:top/flow[port='80'][enabled='true']",
        [
            edit("delete", "/yk-test:top/flow=yk-test%3Atcp,080,true"),
            edit("delete", "/yk-test:top/flow=yk-test%3Atcp,81,true"),
        ],
    ),
    # nested lists, the outer pinned; a target below and above the subscription
    ("/yk-test:top/site/rack", [edit("remove", "/yk-test:top/site=paris/rack=0042")]),
    ("/yk-test:top/site[name=\"a'b\"]/rack[id='7']", [edit("delete", "/yk-test:top/site=a'b")]),
    (
        "/yk-test:top/site/rack",
        [
            edit(
                "merge",
                "/yk-test:top/site=p",
                {"yk-test:site": {"name": "p", "rack": [{"id": 1}]}},
            )
        ],
    ),
    (IF, [edit("replace", f"{IF}=eth0/description", {"ietf-interfaces:description": "up"})]),
    (
        IF,
        [
            edit(
                "create",
                "/ietf-interfaces:interfaces",
                {"ietf-interfaces:interfaces": {"interface": [{"name": "x"}, {"name": "y"}]}},
            )
        ],
    ),
    (IF, [edit("delete", "/ietf-interfaces:interfaces")]),
    # a target naming the list without keys, with the entries as its value
    (IF, [edit("merge", IF, {"ietf-interfaces:interface": [{"name": "a"}, {"name": "b"}]})]),
    # leaf targets, key-leaf subscriptions, pinned keys, augments, leaf-lists
    (
        f"{IF}/oper-status",
        [
            edit("replace", f"{IF}=eth0/oper-status", {"ietf-interfaces:oper-status": "down"}),
            edit("remove", f"{IF}=eth1/oper-status"),
            edit("merge", f"{IF}=eth2", {"ietf-interfaces:interface": [{"name": "eth2"}]}),
        ],
    ),
    (f"{IF}/name", [edit("delete", f"{IF}=eth0"), edit("merge", f"{IF}=eth1", {})]),
    (f"{IF}[name='eth0']", [edit("delete", f"{IF}=eth1"), edit("delete", f"{IF}=eth0")]),
    (f"{IF}[name='eth0']", [edit("delete", f"{IF}=eth1")]),
    (f"{IF}/ietf-ip:ipv4/address", [edit("delete", f"{IF}=eth0/ietf-ip:ipv4/address=10.0.0.1")]),
    (
        f"{IF}/ietf-ip:ipv4/address",
        [
            edit(
                "merge",
                f"{IF}=eth0/ietf-ip:ipv4",
                {"ietf-ip:ipv4": {"address": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}},
            )
        ],
    ),
    # a deleted entry above a list the subscription opens: no instance there (DELETED is read
    # only where nothing below is open); one deleted where nothing below is open
    (
        f"{IF}/ietf-ip:ipv4/address",
        [edit("delete", f"{IF}=eth0"), edit("delete", f"{IF}=eth1/ietf-ip:ipv4/address=10.0.0.1")],
    ),
    (f"{IF}[name='eth1']/ietf-ip:ipv4/address[ip='10.0.0.1']", [edit("delete", f"{IF}=eth1")]),
    (f"{IF}/statistics/in-octets", [edit("remove", f"{IF}=eth0/statistics")]),
    ("/yk-test:top/codes", [edit("merge", "/yk-test:top", {"yk-test:top": {"codes": [5, "7"]}})]),
    ("/yk-test:top/codes", [edit("delete", "/yk-test:top/codes=5,007")]),
    ("/yk-test:top/codes[.='5']", [edit("merge", "/yk-test:top/codes=05", {"codes": [6]})]),
    ("/yk-test:top/codes", [edit("merge", "/yk-test:top/codes", {"yk-test:codes": [5, "8"]})]),
    # data filters: the value's entry contradicts one, or leaves it out
    (
        "/ietf-interfaces:interfaces/interface[type='iana-if-type:ethernetCsmacd']",
        [
            edit("merge", f"{IF}=a", {"ietf-interfaces:interface": [{"type": "x:y"}]}),
            edit("merge", f"{IF}=b", {"ietf-interfaces:interface": {"name": "b"}}),
            edit("delete", f"{IF}=c"),
        ],
    ),
    # another subtree only, and a qualified yang-patch member
    (IF, [edit("delete", "/ietf-system:system/ntp/server=s1")]),
    (IF, [edit("delete", "/ietf-system:system/ntp/server=s1"), edit("delete", f"{IF}=e")]),
    # several branches
    (
        "/yk-test:top/flow | /yk-test:top/site/rack | /yk-test:top/codes",
        [
            edit("delete", "/yk-test:top/site=p/rack=3"),
            edit("merge", "/yk-test:top", {"yk-test:top": {"codes": [1], "flow": []}}),
        ],
    ),
]

# Keyed by the reference, left to it by the native pass: a keyless list's entry named by
# position (the walker reads the synthetic entry's position), and no instance where the
# reference falls back on a container template without placeholders.
LEFT_TO_PYTHON: list[tuple[str, list[dict[str, Any]]]] = [
    ("/yk-test:top/sample", [edit("merge", "/yk-test:top/sample")]),
    ("/yk-test:top/site[name='eth0']/yk-aug:ports", [edit("delete", "/yk-test:top/site=k")]),
]

# Contradictory or malformed edits: the reference refuses them; the native pass leaves each
# to it (None), so the error is the reference's.
REFUSED: list[tuple[str, list[dict[str, Any]]]] = [
    # the value names another entry than the target
    (IF, [edit("merge", f"{IF}=eth0", {"ietf-interfaces:interface": [{"name": "eth9"}]})]),
    (IF, [edit("merge", f"{IF}=eth0", {"ietf-interfaces:interface": {"name": 5}})]),
    (
        "/yk-test:top/flow",
        [
            edit(
                "merge",
                "/yk-test:top/flow=yk-test:tcp,80,true",
                {"yk-test:flow": [{"proto": "yk-test:udp", "port": 80, "enabled": True}]},
            )
        ],
    ),
    # two entries for a target naming one
    (
        IF,
        [
            edit(
                "merge",
                f"{IF}=eth0",
                {"ietf-interfaces:interface": [{"name": "eth0"}, {"name": "eth0"}]},
            )
        ],
    ),
    # the wrong number of keys
    ("/yk-test:top/flow", [edit("delete", "/yk-test:top/flow=yk-test%3Atcp,80")]),
    (IF, [edit("delete", f"{IF}=a,b")]),
    # a list on the path without keys and without value (the walker's missing key)
    (f"{IF}/oper-status", [edit("delete", f"{IF}/oper-status")]),
    # a deleted entry above a list the subscription opens: no instance
    (f"{IF}/ietf-ip:ipv4/address", [edit("delete", f"{IF}=eth0")]),
    # targets the reference cannot parse; edits without target or operation
    (IF, [edit("delete", "ietf-interfaces:interfaces")]),
    (IF, [edit("delete", "/interfaces/interface=x")]),
    (IF, [edit("delete", "/")]),
    (IF, [edit("delete", f"{IF}=%zz")]),
    (IF, [edit("delete", f"{IF}=%FF")]),
    (IF, [edit("unknown", f"{IF}=eth0")]),
    (IF, [{"operation": "delete"}]),
    (IF, [{"target": f"{IF}=eth0"}]),
    (IF, ["not an edit"]),
    (IF, [{"operation": "delete", "target": 5}]),
    (IF, []),
]


@pytest.mark.parametrize(("text", "edits"), EDGES + LEFT_TO_PYTHON)
@pytest.mark.parametrize("wrapper", ["envelope", "bare", "restconf", "telemetry"])
def test_native_patch_edges(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    text: str,
    edits: list[dict[str, Any]],
    wrapper: str,
) -> None:
    """The shapes devices send and the reference's edge cases: where the reference keys the
    notification the native pass does too, byte for byte."""
    deriver = derivers[text][0] if text in derivers else KeyDeriver(
        compile_subscription(text, fx_schema)
    )
    ns = fx_schema.index.by_namespace
    raw = change(edits, wrapper)
    answered = same(decoder, deriver, raw, ns, "dflt")
    if reference(deriver, raw, ns, "dflt")[0] == "ok":
        assert answered == ("python" if (text, edits) in LEFT_TO_PYTHON else "native"), raw


@pytest.mark.parametrize(("text", "edits"), REFUSED)
def test_native_patch_refused_by_the_reference(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    text: str,
    edits: list[dict[str, Any]],
) -> None:
    """Contradictory and malformed edits: the reference raises; the native pass leaves them
    to it (None), so the error kind and message are the reference's."""
    deriver = derivers[text][0] if text in derivers else KeyDeriver(
        compile_subscription(text, fx_schema)
    )
    ns = fx_schema.index.by_namespace
    raw = change(edits)
    want = reference(deriver, raw, ns, "dflt")
    assert want[0] == "error", want
    assert native_answer(decoder, deriver, raw, ns, "dflt") is None, raw


def test_native_patch_refused_after_a_cached_target(
    decoder: Any, fx_schema: SchemaContext
) -> None:
    """The reference's per-plan cache answers a target seen before without walking it again:
    an entry whose key is null is refused on a first walk but not after its target was
    cached; the native pass leaves it to the reference both times."""
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    ns = fx_schema.index.by_namespace
    null_key = change(
        [edit("merge", f"{IF}=eth0", {"ietf-interfaces:interface": [{"name": None}]})]
    )
    assert native_answer(decoder, deriver, null_key, ns, "dflt") is None
    first = reference(deriver, null_key, ns, "dflt")
    plain = change([edit("delete", f"{IF}=eth0")])
    assert same(decoder, deriver, plain, ns, "dflt") == "native"
    reference(deriver, plain, ns, "dflt")  # caches the target
    assert native_answer(decoder, deriver, null_key, ns, "dflt") is None
    assert first[0] == "error"


# ------------------------------------------------------------------------- hypothesis


def _text(value: Any) -> str:
    """A key value as a target writes it (RFC 8040 section 3.5.3: the canonical text)."""
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


@st.composite
def tree_edit(draw: st.DrawFn, tree: dict[str, Any], branch: Branch) -> dict[str, Any]:
    """One edit of the data in ``tree`` along ``branch``: a target at some step of it (an
    entry's keys read from the entry), with the data there as value or none (delete); now
    and then mutated (a key changed, dropped or added, entries doubled, junk past the
    target, a bad percent-escape)."""
    node: Any = tree
    segments: list[str] = []
    module = None
    stop = draw(st.integers(0, len(branch.steps) - 1))
    value: Any = None
    for index, step in enumerate(branch.steps):
        name = step.name if step.module == module and draw(st.integers(0, 3)) else (
            f"{step.module}:{step.name}"
        )
        module = step.module
        child = node.get(step.member, node.get(step.qualified_member)) if isinstance(
            node, dict
        ) else None
        named = [slot for slot in step.keys if not slot.positional]
        if step.kind in ("list", "leaf-list"):
            entries = child if isinstance(child, list) else [child] if child is not None else []
            entry = draw(st.sampled_from(entries)) if entries else None
            if step.kind == "list":
                keys = [
                    _text(entry.get(slot.member, "k")) if isinstance(entry, dict) else "k"
                    for slot in named
                ]
            else:
                keys = [_text(entry)]
            if named or step.kind == "leaf-list":
                segment = name + "=" + ",".join(quote(k, safe="") for k in keys)
            else:
                segment = name
            if index == stop and draw(st.booleans()):
                value = {step.qualified_member: [entry] if draw(st.booleans()) else entry}
            child = entry
        else:
            segment = name
            if index == stop and child is not None and draw(st.booleans()):
                value = {step.qualified_member: child}
        segments.append(segment)
        node = child
        if index == stop:
            break
    mutation = draw(st.integers(0, 12))
    if mutation == 0 and "=" in segments[-1]:
        segments[-1] += ",extra"
    elif mutation == 1 and "=" in segments[-1]:
        segments[-1] = segments[-1].partition("=")[0]
    elif mutation == 2 and "=" in segments[-1]:
        segments[-1] = segments[-1].partition("=")[0] + "=other"
    elif mutation == 3:
        segments.append("ietf-interfaces:description")
    elif mutation == 4:
        segments[-1] += "%zz"
    elif mutation == 5 and isinstance(value, dict):
        (member, content), = value.items()
        value = {member: [content, content]}
    operation = draw(st.sampled_from(["merge", "replace", "create", "delete", "remove"]))
    return edit(operation, "/" + "/".join(segments), value)


@st.composite
def notifications(
    draw: st.DrawFn, derivers: dict[str, tuple[KeyDeriver, Any]]
) -> tuple[KeyDeriver, bytes]:
    text = draw(st.sampled_from(SUBSCRIPTIONS))
    deriver, root = derivers[text]
    tree = draw(st.composite(lambda d: TreeMaker(root, deriver.compiled).tree(d))())
    branches = deriver.compiled.branches
    edits = [
        draw(tree_edit(tree, draw(st.sampled_from(branches))))
        for _ in range(draw(st.integers(1, 3)))
    ]
    wrapper = draw(st.sampled_from(WRAPPERS))
    node = draw(st.sampled_from(["pe1"] * 6 + [None, ""]))
    sub = draw(st.sampled_from([7] * 6 + ["7", None]))
    raw = framed(wrapper, patch(sub, edits), node=node)
    return deriver, raw


@SETTINGS
@given(data=st.data())
def test_native_patch_generated_edits_agree(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext, data: Any
) -> None:
    """Edits drawn from the differential tests' generated trees, over every differential
    subscription (pinned keys, filters, unions, identityrefs, leaf-lists, positions, several
    branches) in each JSON framing: where the native pass answers, the reference's answer."""
    deriver, raw = data.draw(notifications(derivers))
    default = data.draw(st.sampled_from([None, "dflt"]))
    event(same(decoder, deriver, raw, fx_schema.index.by_namespace, default))


def test_native_patch_answers_most_generated_edits(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """No fallback in disguise: over the generated edits the native pass answers most of
    those the reference keys."""
    counts = {"native": 0, "python": 0, "keyed": 0}
    ns = fx_schema.index.by_namespace

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(data=st.data())
    def run(data: Any) -> None:
        deriver, raw = data.draw(notifications(derivers))
        counts[same(decoder, deriver, raw, ns, "dflt")] += 1
        counts["keyed"] += reference(deriver, raw, ns, "dflt")[0] == "ok"

    run()
    assert counts["native"] >= counts["keyed"] * 0.6, counts


# ------------------------------------------------------------------- the target's spelling

TARGET_PIECES = [
    "/",
    "//",
    "ietf-interfaces:",
    "interfaces",
    "interface",
    "=",
    ",",
    ":",
    "%2F",
    "%2C",
    "%3D",
    "%C3%BC",
    "%C3",
    "%zz",
    "%",
    "%41",
    "ü",
    "eth0",
    "ietf-ip:",
    "ipv4",
    "address",
    "name",
]


@SETTINGS
@given(
    text=st.sampled_from([IF, f"{IF}/name", f"{IF}/ietf-ip:ipv4/address", "/yk-test:top/flow"]),
    head=st.sampled_from(["", "/ietf-interfaces:interfaces", IF, f"{IF}=", "/yk-test:top/flow="]),
    pieces=st.lists(st.sampled_from(TARGET_PIECES), max_size=8),
    with_value=st.booleans(),
)
def test_native_patch_target_spellings(
    decoder: Any,
    fx_schema: SchemaContext,
    text: str,
    head: str,
    pieces: list[str],
    with_value: bool,
) -> None:
    """Targets spelled every which way (empty and trailing segments, several ``=`` and
    ``:``, escapes good, bad and not UTF-8, non-ASCII text): the native parse of RFC 8040's
    data resource identifier is the reference's, whatever it keys or refuses."""
    deriver = KeyDeriver(compile_subscription(text, fx_schema))
    value = {"ietf-interfaces:interface": [{"name": "eth0"}]} if with_value else None
    raw = change([edit("merge", head + "".join(pieces), value)])
    event(same(decoder, deriver, raw, fx_schema.index.by_namespace, "dflt"))


# Each target after the first shares a prefix with the one before it that ends inside a
# segment, at a '/', inside a key or after an escape: the native parse reuses the steps of
# the last target's segments that end (their '/' included) before the first byte differing.
SHARED_PREFIXES = [
    f"{IF}=eth0",
    f"{IF}=eth0x",
    f"{IF}=eth0%2F1",
    f"{IF}=eth0%2F1%2F2",
    f"{IF}=eth0%2C1",
    f"{IF}x=eth2",
    "/ietf-interfaces:interfacesx/interface=eth3",
    "/ietf-interfaces:interfaces-state/interface=eth4",
    "/ietf-interfaces:interfaces//interface=eth5",
    "/ietf-interfaces:interfaces/ietf-interfaces:interface=eth6",
    f"{IF}=eth7",
    f"{IF}=eth7%C3%BC",
    "/ietf-interfaces:interfaces",
    "/ietf-interfaces:interfaces/",
    f"{IF}=eth8/name",
    f"{IF}=eth8/namex",
    f"{IF}=eth9",
    "/ietf-ip:interfaces/interface=eth10",
    f"{IF}=eth11",
]


@pytest.mark.parametrize("text", [IF, f"{IF}/name"])
@pytest.mark.parametrize("with_value", [False, True])
def test_native_patch_shared_prefixes(
    decoder: Any, fx_schema: SchemaContext, text: str, with_value: bool
) -> None:
    """One patch whose targets each share a prefix with the one before, ending anywhere (in
    a segment's name, at its '/', in a key, after an escape; a longer or shorter name, an
    empty segment, another module): keyed natively, the reference's answer."""
    deriver = KeyDeriver(compile_subscription(text, fx_schema))
    edits = [
        edit("merge", target, {"ietf-interfaces:interface": [{"name": "eth0"}]})
        if with_value and target == f"{IF}=eth0"
        else edit("delete", target)
        for target in SHARED_PREFIXES
    ]
    ns = fx_schema.index.by_namespace
    assert same(decoder, deriver, change(edits), ns, "dflt") == "native"
    # and each pair alone, in both orders
    for first, second in pairwise(SHARED_PREFIXES):
        for pair in ([first, second], [second, first]):
            raw = change([edit("delete", target) for target in pair])
            same(decoder, deriver, raw, ns, "dflt")


HEADS = ["", "/ietf-interfaces:interfaces", IF, f"{IF}=", "/yk-test:top/flow="]


@SETTINGS
@given(
    text=st.sampled_from([IF, f"{IF}/name", f"{IF}/ietf-ip:ipv4/address", "/yk-test:top/flow"]),
    targets=st.lists(
        st.tuples(
            st.sampled_from(HEADS),
            st.lists(st.sampled_from(TARGET_PIECES), max_size=6),
        ),
        min_size=2,
        max_size=4,
    ),
)
def test_native_patch_target_sequences(
    decoder: Any, fx_schema: SchemaContext, text: str, targets: list[tuple[str, list[str]]]
) -> None:
    """Several targets spelled every which way in one patch (so each shares some prefix with
    the one before it): the native parse is the reference's, whatever it keys or refuses."""
    deriver = KeyDeriver(compile_subscription(text, fx_schema))
    raw = change([edit("delete", head + "".join(pieces)) for head, pieces in targets])
    event(same(decoder, deriver, raw, fx_schema.index.by_namespace, "dflt"))
