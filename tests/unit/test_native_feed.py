"""Issue 33: the instance feed on the native path (``Decoder.keys(..., with_instances=True)``
and ``Decoder.instances``, native/src/feed.rs) against the Python reference
(:class:`yangkey.instances.InstanceFeed`'s header of the decoded notification).

Where the native pass answers, each branch's ``yangkey-instances`` header is the reference's,
byte for byte (and None exactly where the reference finds no instance); where it does not
(None: XML, yang-patch, a value its converters do not read, a converter that raises) the
reference runs. Inputs: every JSON public vector, every ``yangkey sample`` shape (through
MessageBuilder and ``yangkey ingest``'s CatalogFeeds), hypothesis-generated notifications over
subscriptions with typed leaves (integers, strings, booleans, decimals, identityrefs,
enumerations, bits, unions, empty, leaf-lists, nested lists, reserved names), and edges.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from native_helpers import EXAMPLES, builder_outputs, key_vectors
from test_core_differential import SUBSCRIPTIONS, TreeMaker
from yangson import datatype as dt
from yangson.schemanode import TerminalNode

from yangkey import native
from yangkey.catalog import load_catalog
from yangkey.clickhouse.ingest.rows import QueueRow, add_instances
from yangkey.clickhouse.instances import CatalogFeeds
from yangkey.compiled import CompiledSubscription
from yangkey.demo.sample import generate
from yangkey.errors import YangkeyError
from yangkey.instances import InstanceFeed, derive_leaves
from yangkey.messages import HEADER_INSTANCES
from yangkey.native_feed import feed_walker
from yangkey.notifications import decode as python_decode
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

ROOT = Path(__file__).resolve().parents[2]
TYPED_YANG = ROOT / "tests" / "fixtures" / "yang-typed"
TYPED = [
    "/yk-typed:things/thing",
    "/yk-typed:things/thing[state='on']",
    "/yk-typed:things/thing/deep",
    "/yk-typed:things/thing/weights",
    "/yk-typed:things/thing[id='7']/part",
    "/yk-typed:things/thing/marker",
    "/yk-typed:things/thing/part | /yk-typed:things/thing/deep",
]
SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
Headers = tuple[bytes | None, ...]


@pytest.fixture(scope="module")
def schema(fx_dir: str) -> SchemaContext:
    """The fixture modules, yk-typed and the IETF modules."""
    return SchemaContext.cached((fx_dir, str(TYPED_YANG)))


class Feeds:
    """A compiled subscription's instance feeds (one per branch, leaves against ``schema``)
    and their native walker."""

    def __init__(self, compiled: CompiledSubscription, schema: SchemaContext) -> None:
        self.compiled = compiled
        self.root = schema.schema_root(compiled.modules)
        self.feeds = [
            InstanceFeed(branch, derive_leaves(branch, schema, compiled.modules))
            for branch in compiled.branches
        ]
        self.walker = feed_walker(compiled.branches, self.feeds)
        assert self.walker is not None

    def __repr__(self) -> str:  # hypothesis prints the arguments of a failing example
        return f"<Feeds {self.compiled.xpath}>"

    def reference(self, raw: bytes, ns: dict[str, str]) -> Headers | str:
        """The Python feed's header per branch (None where it has no instance), or why the
        reference refuses the notification or its feed."""
        try:
            note = python_decode(raw, "t", ns)
            headers = [feed.header(note) for feed in self.feeds]
        except YangkeyError as exc:
            return f"error {exc.kind}"
        return tuple(None if header == b"[]" else header for header in headers)


@pytest.fixture(scope="module")
def feeds(schema: SchemaContext) -> dict[str, Feeds]:
    found: dict[str, Feeds] = {}
    for text in [*SUBSCRIPTIONS, *TYPED]:
        compiled = compile_subscription(
            text, schema, keyless="position" if "sample" in text else "reject"
        )
        found[text] = Feeds(compiled, schema)
    return found


def same(decoder: Any, feeds: Feeds, raw: bytes, ns: dict[str, str]) -> str:
    """Whether the native headers (``instances`` and ``keys``' eighth item) are the
    reference's; ``native`` when the pass answered, else ``python``."""
    got = decoder.instances(raw, "t", feeds.walker)
    keyed = decoder.keys(raw, "t", ns, lambda *_: (feeds.walker, "pe1", None), False, None, True)
    if got is None:
        return "python"
    assert keyed is not None and keyed[7] == got
    expected = feeds.reference(raw, ns)
    assert got == expected, (raw, got, expected)
    return "native"


def envelope(data: Any) -> bytes:
    return orjson.dumps(
        {
            "ietf-yp-notification:envelope": {
                "event-time": "2026-01-01T00:00:00Z",
                "hostname": "pe1",
                "contents": {"ietf-yang-push:push-update": {"id": 7, "datastore-contents": data}},
            }
        }
    )


# ----------------------------------------------------------------------------- the vectors


def test_native_feed_vectors(decoder: Any, ietf_schema: SchemaContext) -> None:
    """Every JSON public vector: the native header of each branch is the Python feed's."""
    ns = ietf_schema.index.by_namespace
    answered = 0
    for vector, compiled in key_vectors(ietf_schema, "{"):
        raw = vector["notification"].encode()
        outcome = same(decoder, Feeds(compiled, ietf_schema), raw, ns)
        answered += outcome == "native"
    assert answered >= 2


# ----------------------------------------------------------------------- generated trees

ENUMS = ["on", "off", "x y", ""]
BITS: list[Any] = ["a b", "  c   a ", "", "a\tb", 5]
EMPTY: list[Any] = [[None], None, "x"]
NESTED: list[Any] = [1.5, {"z": 1, "a": [None]}, [True, None, "é\n"], 2**40]


class FeedTreeMaker(TreeMaker):
    """TreeMaker drawing the whole subtree below each branch's target too (the feed reads
    every leaf of it), with values for enumerations, bits and empty leaves."""

    def __init__(self, root: Any, compiled: CompiledSubscription) -> None:
        super().__init__(root, compiled)
        targets = [
            tuple((step.module, step.name) for step in branch.steps)
            for branch in compiled.branches
        ]
        relevant = self.relevant

        class Below(set[tuple[tuple[str, str], ...]]):
            def __contains__(self, path: object) -> bool:
                return path in relevant or any(
                    isinstance(path, tuple) and path[: len(target)] == target
                    for target in targets
                )

        self.relevant = Below()

    def leaf(self, draw: st.DrawFn, node: TerminalNode, junk: bool = True) -> Any:
        datatype = node.type
        if isinstance(datatype, dt.EnumerationType):
            return draw(st.sampled_from(ENUMS))
        if isinstance(datatype, dt.BitsType):
            return draw(st.sampled_from(BITS))
        if isinstance(datatype, dt.EmptyType):
            return draw(st.sampled_from(EMPTY))
        if draw(st.integers(0, 60)) == 0:
            return draw(st.sampled_from(NESTED))
        # less junk than the key tests: one bad leaf anywhere below the target fails the feed
        return super().leaf(draw, node, junk and draw(st.integers(0, 3)) == 0)


def tree_of(draw: st.DrawFn, feeds: Feeds) -> Any:
    return draw(st.composite(lambda d: FeedTreeMaker(feeds.root, feeds.compiled).tree(d))())


@SETTINGS
@given(data=st.data())
def test_native_feed_generated_notifications_agree(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext, data: Any
) -> None:
    """Schema-driven data (valid, junk and wrongly typed values, qualified members, single
    entries, unknown members, nested lists with floats and nulls) over subscriptions with
    typed leaves: where the native pass answers, its headers are the reference's."""
    subscription = feeds[data.draw(st.sampled_from([*SUBSCRIPTIONS, *TYPED]))]
    event(same(decoder, subscription, envelope(tree_of(data.draw, subscription)), ns(schema)))


def ns(schema: SchemaContext) -> dict[str, str]:
    return dict(schema.index.by_namespace)


def test_native_feed_answers_most_generated_notifications(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext
) -> None:
    """The native feed is no fallback in disguise: over the generated trees it answers most
    notifications whose feed the reference writes."""
    counts = {"native": 0, "python": 0, "fed": 0}

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(data=st.data())
    def run(data: Any) -> None:
        subscription = feeds[data.draw(st.sampled_from([*SUBSCRIPTIONS, *TYPED]))]
        raw = envelope(tree_of(data.draw, subscription))
        counts[same(decoder, subscription, raw, ns(schema))] += 1
        expected = subscription.reference(raw, ns(schema))
        counts["fed"] += not isinstance(expected, str) and any(expected)

    run()
    assert counts["native"] >= 0.7 * counts["fed"] > 0, counts


# ----------------------------------------------------------------------------------- edges


def _thing(**leaves: Any) -> bytes:
    return envelope({"yk-typed:things": {"thing": [{"id": 7, **leaves}]}})


@pytest.mark.parametrize(
    ("leaves", "answered"),
    [
        ({"version": 'q"\\\x00\x1f\x7f\u2028é/\n\t\r\x08\x0c'}, True),
        ({"mixed": 5, "big": "-0042", "ratio": "1.500", "state": "on"}, True),
        ({"colour": "yk-typed:red", "flags": " b  a ", "marker": [None]}, True),
        ({"weights": ["1.0", 2, "0.50"], "deep": {"small": " 8 "}}, True),
        ({"weights": "3.5", "yk-typed:deep": {"yk-typed:small": -1}}, True),
        # the plain and the qualified member of one leaf: first place, last value (a dict)
        ({"label": "x", "big": 1, "yk-typed:big": 2, "seen": "2026-01-01T00:00:00Z"}, True),
        ({"part": [{"n": 1, "label": "b"}, {"label": "a", "n": "2", "x": [None]}]}, True),
        ({"part": {"n": 1}}, True),
        ({"part": [{"n": 1.5}]}, False),  # a float in a nested list: Python's repr
        ({"big": True}, False),  # the reference's converter raises: its feed failure
        ({"ratio": 1.5}, False),
    ],
)
def test_native_feed_edges(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext, leaves: Any, answered: bool
) -> None:
    """Escapes as orjson writes them, canonical texts, member order, the converters the
    pass calls in Python, and what it leaves to the reference."""
    assert same(decoder, feeds[TYPED[0]], _thing(**leaves), ns(schema)) == (
        "native" if answered else "python"
    )


THING = "yk-typed:things"
TOP = "yk-test:top"


@pytest.mark.parametrize(
    ("subscription", "data"),
    [
        ("/yk-test:top/codes", {TOP: {"codes": [5, "007", " 8", 5]}}),
        ("/yk-test:top/codes[.='5']", {TOP: {"codes": [5, "6", "+5"]}}),
        ("/yk-test:top/codes", {TOP: {"codes": "-0"}}),
        ("/yk-typed:things/thing/weights", {THING: {"thing": {"id": 1, "weights": ["1.0", "2"]}}}),
        ("/yk-typed:things/thing/marker", {THING: {"thing": [{"id": 2, "marker": [None]}]}}),
        ("/yk-test:top/site/rack", {TOP: {"site": [{"name": "a'b", "rack": [{"id": "09"}]}]}}),
        (
            "/yk-test:top/site[name='eth0']/yk-aug:ports",
            {TOP: {"site": [{"name": "eth0", "yk-aug:ports": {"port": [{"num": 8}]}}]}},
        ),
    ],
)
def test_native_feed_targets(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext, subscription: str, data: Any
) -> None:
    """Leaf and leaf-list targets (each value its own instance), pinned values, keys of the
    lists above, a container target: answered natively, the reference's headers."""
    assert same(decoder, feeds[subscription], envelope(data), ns(schema)) == "native"


def test_native_feed_leaves_other_framings_to_the_reference(
    decoder: Any, feeds: dict[str, Feeds]
) -> None:
    """XML and malformed JSON: None (the reference answers). A yang-patch is answered:
    test_native_patch_feed.py."""
    walker = feeds[TYPED[0]].walker
    xml = (
        b'<notification xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0">'
        b"<eventTime>2026-01-01T00:00:00Z</eventTime>"
        b'<push-update xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-push"><id>7</id>'
        b"<datastore-contents/></push-update></notification>"
    )
    for raw in (xml, b'{"a": 1, "a": 2}', b"{", _thing()[:-1], envelope({})):
        assert decoder.instances(raw, "t", walker) is None


# ---------------------------------------------------------------------------- the builder


@pytest.mark.parametrize(
    "knobs",
    [ProducerKnobs(instances=True), ProducerKnobs(instances=True, keys=False)],
    ids=["instances", "instances-no-keys"],
)
def test_native_feed_builder_same_records(knobs: ProducerKnobs) -> None:
    """MessageBuilder.build with the instance feed on over every ``yangkey sample`` shape:
    the same messages (topic, key, value, headers, the feed's included) and rejections with
    the native pass as without; and the pass answers most JSON push-updates (the coverage
    check: it fails if the feed is not on the native path)."""
    records = generate(nodes=3, interfaces=4, rounds=2, seed=3).records
    with_native, answered, builder = builder_outputs(records, knobs, True)
    without, none, python_builder = builder_outputs(records, knobs, False)
    assert none == 0
    assert with_native == without
    assert builder.feed_failures == python_builder.feed_failures
    fed = [
        message
        for messages in without
        if isinstance(messages, list)
        for message in messages
        if any(name == HEADER_INSTANCES for name, _ in message.headers)
    ]
    assert fed, "the sample has instance headers"
    json_push = [raw for raw in records if raw.lstrip().startswith(b"{") and b"push-update" in raw]
    assert answered >= 0.8 * len(json_push), (answered, len(json_push))


def test_native_feed_builder_off_with_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """YANGKEY_NATIVE=0: no native pass, no native feed walker."""
    records = generate(nodes=1, interfaces=2, rounds=1, seed=3).records
    monkeypatch.setenv(native.ENV_NATIVE, "0")
    native._load.cache_clear()
    try:
        outputs, answered, _ = builder_outputs(records, ProducerKnobs(instances=True), True)
        assert answered == 0 and outputs
        assert native.instances(records[0], "t", None) is None
        assert feed_walker((), ()) is None
    finally:
        monkeypatch.delenv(native.ENV_NATIVE)
        native._load.cache_clear()


# ---------------------------------------------------------------------------- yangkey ingest


def test_native_feed_ingest_same_headers() -> None:
    """``yangkey ingest``'s add_instances over every sample record of every typed topic: the
    header the native pass writes is the Python feed's, and it writes most of them."""
    catalog = load_catalog(EXAMPLES)
    records = generate(nodes=3, interfaces=4, rounds=2, seed=3).records
    builder = MessageBuilder(catalog, ProducerKnobs(instances=True), default_node="dflt")
    builder.native = False
    native_feeds, python_feeds = CatalogFeeds(catalog), CatalogFeeds(catalog)
    python_feeds.walkers = dict.fromkeys(python_feeds.branches)  # no native walker
    compared = 0
    for number, raw in enumerate(records):
        built = builder.build(raw, f"r:{number}")
        if not isinstance(built, list):
            continue
        for message in built:
            row = QueueRow(message.topic, 0, number, message.key, raw)
            got, expected = add_instances(native_feeds, row), add_instances(python_feeds, row)
            assert got == expected, (raw, got.headers, expected.headers)
            compared += got.headers != ()
    json_push = [raw for raw in records if raw.lstrip().startswith(b"{") and b"push-update" in raw]
    assert compared > 0 and python_feeds.native_fed == 0
    assert native_feeds.failures == python_feeds.failures
    assert native_feeds.native_fed >= 0.8 * len(json_push), (native_feeds.native_fed, compared)
