"""Issue 33: the instance feed of a yang-patch on the native path (``Decoder.keys(...,
with_instances=True)`` and ``Decoder.instances`` of a push-change-update; native/src/feed.rs's
sink fed by native/src/patchwalk.rs's edit walk) against the Python reference
(:meth:`yangkey.instances.InstanceFeed.edit`: per edit ``@path``, ``@op``, ``@under`` for an
edit below the target, the keys, the leaves of the edit's value; none for a delete/remove).

Where the native pass answers, each branch's ``yangkey-instances`` header is the reference's,
byte for byte (None exactly where the reference has no object); where the reference refuses
the notification, the native pass answers None. Inputs: the yang-patch edges of
test_native_patch_native (accepted, left to Python, refused), edges of the feed's own
(edits below the target with ``@under``, typed leaves, leaf-lists, empty leaves, identities,
nested lists, several edits on one entry, insert and move), each public JSON vector re-sent
as a yang-patch, the ``yangkey sample``'s yang-patches (and MessageBuilder's records with the
feed on), and hypothesis edits over every differential subscription.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from native_helpers import builder_outputs
from native_helpers import feed_same as same
from test_core_differential import SUBSCRIPTIONS, TreeMaker
from test_native_feed import SETTINGS, Feeds
from test_native_patch_keys import framed, json_patches, patch
from test_native_patch_native import (
    EDGES,
    LEFT_TO_PYTHON,
    REFUSED,
    edit,
    json_key_vectors,
    tree_edit,
)

from yangkey.demo.sample import generate
from yangkey.messages import HEADER_INSTANCES
from yangkey.producer import ProducerKnobs
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IF = "/ietf-interfaces:interfaces/interface"
THING = "/yk-typed:things/thing"


@pytest.fixture(scope="module")
def schema(fx_dir: str) -> SchemaContext:
    from test_native_feed import TYPED_YANG  # noqa: PLC0415

    return SchemaContext.cached((fx_dir, str(TYPED_YANG)))


class FeedCache:
    """Feeds (test_native_feed's) of each subscription text, compiled on first use."""

    def __init__(self, schema: SchemaContext) -> None:
        self.schema = schema
        self.found: dict[str, Feeds] = {}

    def __getitem__(self, text: str) -> Feeds:
        feeds = self.found.get(text)
        if feeds is None:
            compiled = compile_subscription(
                text, self.schema, keyless="position" if "sample" in text else "reject"
            )
            feeds = self.found[text] = Feeds(compiled, self.schema)
        return feeds


@pytest.fixture(scope="module")
def feeds(schema: SchemaContext) -> FeedCache:
    return FeedCache(schema)


# ------------------------------------------------------------------------- the hand edges

# The feed's own: what an edit's objects carry (typed leaves, an edit below the target and
# its "@under", a leaf-list, an empty leaf, an identity, a nested list, a reserved name).
THING_VALUE = {
    "yk-typed:thing": [
        {
            "id": 7,
            "ratio": "1.50",
            "state": "on",
            "colour": "yk-typed:red",
            "flags": " a  c ",
            "mixed": -3,
            "seen": "2026-01-01T00:00:00Z",
            "addr": "2001:DB8::1",
            "marker": [None],
            "big": "0042",
            "version": "v1",
            "weights": ["1.0", "2.5"],
            "deep": {"small": 4},
            "part": [{"n": 2, "label": "b"}, {"n": 1, "label": "a"}],
        }
    ]
}
BOTH = [*THING_VALUE["yk-typed:thing"], {"id": 9, "state": "off"}]
ODD = {"name": "eth0", "description": "a\"b\\c\u0001\u00fc", "enabled": False}
ODD["type"] = "iana-if-type:other"
FEED_EDGES: list[tuple[str, list[dict[str, Any]]]] = [
    (THING, [edit("merge", f"{THING}=7", THING_VALUE)]),
    (THING, [edit("replace", f"{THING}=07", THING_VALUE)]),
    (THING, [edit("create", f"{THING}=7", {"yk-typed:thing": {"id": "7", "marker": [None]}})]),
    (THING, [edit("delete", f"{THING}=7"), edit("remove", f"{THING}=8")]),
    (THING, [edit("merge", "/yk-typed:things", {"yk-typed:things": {"thing": BOTH}})]),
    (THING, [edit("merge", f"{THING}=7/deep", {"yk-typed:deep": {"small": 5}})]),
    (THING, [edit("replace", f"{THING}=7/deep/small", {"yk-typed:small": 6})]),
    (THING, [edit("delete", f"{THING}=7/deep")]),
    (THING, [edit("merge", f"{THING}=7/part=3", {"yk-typed:part": [{"n": 3, "label": "c"}]})]),
    (THING, [edit("remove", f"{THING}=7/part=3")]),
    (THING, [edit("merge", f"{THING}=7/weights=1.5", {"yk-typed:weights": ["1.5"]})]),
    (THING, [edit("merge", f"{THING}=7/colour", {"yk-typed:colour": "yk-typed:red"})]),
    (THING, [edit("merge", f"{THING}=7/flags", {"flags": "b  a"})]),
    (THING, [edit("merge", f"{THING}=7/marker", {"yk-typed:marker": [None]})]),
    (THING, [edit("merge", f"{THING}=7/version", {"yk-typed:version": "v2"})]),
    (THING, [edit("merge", f"{THING}=7/ratio", {"yk-typed:ratio": "2.000", "x": 1})]),
    (THING, [edit("merge", f"{THING}=7/yk-typed:big", {"big": 17})]),
    (THING, [edit("merge", f"{THING}=7/nothing", {"yk-typed:nothing": 1})]),
    # several edits on one entry, and insert / move (RFC 8072's list ordering edits)
    (
        THING,
        [
            edit("merge", f"{THING}=7", {"yk-typed:thing": [{"id": 7, "state": "on"}]}),
            edit("replace", f"{THING}=7/deep", {"yk-typed:deep": {"small": 1}}),
            edit("delete", f"{THING}=7/part=1"),
            edit("merge", f"{THING}=7", {"yk-typed:thing": [{"state": "off", "big": 1}]}),
        ],
    ),
    (THING, [edit("insert", f"{THING}=7", {"yk-typed:thing": [{"id": 7, "mixed": "x"}]})]),
    (THING, [edit("move", f"{THING}=7")]),
    (THING, [edit("merge", f"{THING}=7")]),
    # a target and subscriptions that end in a leaf-list, an empty leaf, a nested list
    (f"{THING}/weights", [edit("merge", f"{THING}=7/weights=1.5,02.50")]),
    (f"{THING}/weights", [edit("delete", f"{THING}=7/weights=1.5")]),
    (f"{THING}/weights", [edit("merge", f"{THING}=7", THING_VALUE)]),
    (f"{THING}/marker", [edit("merge", f"{THING}=7/marker", {"yk-typed:marker": [None]})]),
    (f"{THING}/marker", [edit("merge", f"{THING}=7/marker")]),
    (f"{THING}/marker", [edit("delete", f"{THING}=7/marker")]),
    (f"{THING}[id='7']/part", [edit("merge", f"{THING}=7/part=2", {"part": {"label": "x"}})]),
    (f"{THING}[id='7']/part", [edit("delete", f"{THING}=7/part=2/label")]),
    (f"{THING}[id='7']/part", [edit("merge", f"{THING}=7", THING_VALUE)]),
    (f"{THING}[id='7']/part", [edit("delete", f"{THING}=7"), edit("merge", f"{THING}=7")]),
    (f"{THING}/deep", [edit("merge", f"{THING}=7/deep", {"yk-typed:deep": {"small": "05"}})]),
    (f"{THING}/deep", [edit("delete", f"{THING}=7"), edit("merge", f"{THING}=8/deep")]),
    (f"{THING}/deep", [edit("merge", f"{THING}=7/deep/small", {"small": 1})]),
    (f"{THING}[state='on']", [edit("merge", f"{THING}=7", THING_VALUE)]),
    (f"{THING}[state='on']", [edit("merge", f"{THING}=7", {"thing": {"state": "off"}})]),
    # interfaces: the sample's shapes, descriptions, an augment below the target
    (IF, [edit("merge", f"{IF}=eth0", {"ietf-interfaces:interface": [ODD]})]),
    (IF, [edit("merge", f"{IF}=eth0/ietf-ip:ipv4", {"ietf-ip:ipv4": {"mtu": 1500}})]),
    (
        IF,
        [
            edit(
                "merge",
                f"{IF}=eth0/ietf-ip:ipv4/address=10.0.0.1",
                {"ietf-ip:address": [{"ip": "10.0.0.1", "prefix-length": 24}]},
            )
        ],
    ),
    (
        IF,
        [
            edit(
                "merge",
                f"{IF}=eth0/statistics",
                {"ietf-interfaces:statistics": {"in-octets": "12", "out-octets": 5}},
            )
        ],
    ),
    (
        f"{IF}/statistics/in-octets",
        [
            edit(
                "merge",
                f"{IF}=eth0/statistics",
                {"ietf-interfaces:statistics": {"in-octets": "0012"}},
            ),
            edit("merge", f"{IF}=eth1/statistics/in-octets", {"ietf-interfaces:in-octets": 7}),
        ],
    ),
]

# Answered natively wherever the reference answers (a test requiring the native answer):
# every feed edge, and every yang-patch edge but those the native feed leaves to Python
# (a key-leaf subscription, a subscription with a keyless list's positions).
NATIVE_TEXTS = {text for text, _ in FEED_EDGES} | {
    IF,
    f"{IF}/oper-status",
    f"{IF}[name='eth0']",
    f"{IF}/ietf-ip:ipv4/address",
    f"{IF}/statistics/in-octets",
    "/yk-test:top/flow",
    "/yk-test:top/site/rack",
    "/yk-test:top/codes",
}


@pytest.mark.parametrize(("text", "edits"), FEED_EDGES + EDGES + LEFT_TO_PYTHON + REFUSED)
@pytest.mark.parametrize("wrapper", ["envelope", "bare"])
def test_native_patch_feed_edges(
    decoder: Any,
    feeds: FeedCache,
    schema: SchemaContext,
    text: str,
    edits: list[dict[str, Any]],
    wrapper: str,
) -> None:
    """Each hand edge: where the native pass answers, the reference's headers byte for byte;
    where the reference refuses, None; and a native answer wherever the reference writes a
    header on the subscriptions the native feed covers."""
    found = feeds[text]
    raw = framed(wrapper, patch(7, edits))
    ns = schema.index.by_namespace
    answered = same(decoder, found, raw, ns)
    expected = found.reference(raw, ns)
    if text in NATIVE_TEXTS and isinstance(expected, tuple) and any(expected):
        assert answered == "native", (raw, expected)


# ----------------------------------------------------------------------------- the vectors


def test_native_patch_feed_vectors(decoder: Any, ietf_schema: SchemaContext) -> None:
    """Each public JSON key vector re-sent as a yang-patch (its data as one merge per
    top-level member, and each top-level member deleted): the native headers are the
    reference's, and the merge is answered natively wherever the reference has a header."""
    ns = ietf_schema.index.by_namespace
    answered = 0
    for vector, compiled, sub, data in json_key_vectors(ietf_schema):
        found = Feeds(compiled, ietf_schema)
        merges = [edit("merge", f"/{member}", {member: value}) for member, value in data.items()]
        deletes = [edit("delete", f"/{member}") for member in data]
        for edits in (merges, deletes):
            raw = framed("envelope", patch(sub, edits))
            got = same(decoder, found, raw, ns)
            expected = found.reference(raw, ns)
            if edits is merges and isinstance(expected, tuple) and any(expected):
                assert got == "native", (vector["id"], raw)
                answered += 1
    assert answered >= 2


# ------------------------------------------------------------------------------ the sample


def test_native_patch_feed_sample(decoder: Any, feeds: FeedCache, schema: SchemaContext) -> None:
    """Every JSON yang-patch of ``yangkey sample`` (merge/replace edits flipping oper-status,
    a delete, whatever the bad records hold) on the interface subscriptions: the native
    headers are the reference's, and answered natively wherever the reference has one."""
    records = generate(nodes=3, interfaces=4, rounds=3, seed=5).records
    patches = json_patches(records)
    assert len(patches) >= 9
    ns = schema.index.by_namespace
    answered = 0
    for text in (IF, f"{IF}/oper-status", f"{IF}/statistics/in-octets"):
        found = feeds[text]
        for raw in patches:
            got = same(decoder, found, raw, ns)
            expected = found.reference(raw, ns)
            if isinstance(expected, tuple) and any(expected):
                assert got == "native", raw
                answered += 1
    assert answered >= 9


@pytest.mark.parametrize(
    "knobs",
    [ProducerKnobs(instances=True), ProducerKnobs(instances=True, keys=False)],
    ids=["instances", "instances-no-keys"],
)
def test_native_patch_feed_builder(knobs: ProducerKnobs) -> None:
    """MessageBuilder.build with the instance feed on over the sample: the same messages
    (the feed's header included) and rejections with the native pass as without, and every
    JSON yang-patch the reference sends with a header keyed natively."""
    records = generate(nodes=3, interfaces=4, rounds=2, seed=3).records
    patches = json_patches(records)
    with_native, answered, builder = builder_outputs(patches, knobs, True)
    without, none, python_builder = builder_outputs(patches, knobs, False)
    assert none == 0
    assert with_native == without
    assert builder.feed_failures == python_builder.feed_failures
    fed = [
        raw
        for raw, messages in zip(patches, without, strict=True)
        if isinstance(messages, list)
        and any(name == HEADER_INSTANCES for m in messages for name, _ in m.headers)
    ]
    assert fed, "the sample's yang-patches have instance headers"
    assert answered >= len(fed), (answered, len(fed))


# -------------------------------------------------------------------------- generated edits


@st.composite
def notifications(draw: st.DrawFn, feeds: FeedCache) -> tuple[Feeds, bytes]:
    text = draw(st.sampled_from(SUBSCRIPTIONS))
    found = feeds[text]
    compiled = found.compiled
    tree = draw(st.composite(lambda d: TreeMaker(found.root, compiled).tree(d))())
    edits = [
        draw(tree_edit(tree, draw(st.sampled_from(compiled.branches))))
        for _ in range(draw(st.integers(1, 3)))
    ]
    extra = draw(st.sampled_from([None, "insert", "move"]))
    if extra is not None:
        moved = dict(edits[0], operation=extra)
        edits.append(moved)
    wrapper = draw(st.sampled_from(["envelope", "bare", "restconf"]))
    return found, framed(wrapper, patch(7, edits))


@SETTINGS
@given(data=st.data())
def test_native_patch_feed_generated(
    decoder: Any, feeds: FeedCache, schema: SchemaContext, data: Any
) -> None:
    """Edits drawn from the differential tests' generated trees over every differential
    subscription (targets at every step, with or without value, mutated): where the native
    pass answers, the reference's headers."""
    found, raw = data.draw(notifications(feeds))
    event(same(decoder, found, raw, schema.index.by_namespace))


def test_native_patch_feed_answers_most_generated(
    decoder: Any, feeds: FeedCache, schema: SchemaContext
) -> None:
    """No fallback in disguise: over the generated edits the native feed answers most of
    those the reference writes a header for."""
    counts = {"native": 0, "python": 0, "fed": 0}
    ns = schema.index.by_namespace

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(data=st.data())
    def run(data: Any) -> None:
        found, raw = data.draw(notifications(feeds))
        counts[same(decoder, found, raw, ns)] += 1
        expected = found.reference(raw, ns)
        counts["fed"] += isinstance(expected, tuple) and any(expected)

    run()
    assert counts["native"] >= counts["fed"] * 0.6, counts
