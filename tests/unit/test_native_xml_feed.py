"""Issue 33: the instance feed of XML push-updates on the native path
(``Decoder.keys_xml(..., with_instances=True)`` and ``Decoder.instances(..., ns_modules)``,
native/src/xmlfeed.rs and feed.rs; contract 6) against the Python reference
(:class:`yangkey.instances.InstanceFeed`'s header of the notification
:func:`yangkey.notifications.decode` decodes).

Where the native pass answers, each branch's ``yangkey-instances`` header is the reference's,
byte for byte (None exactly where the reference finds no instance); where it does not (None:
an XML yang-patch, a framing the fast reader leaves, an integer leaf holding ``prefix:name``
text, a converter that raises) the reference runs. Inputs: every public key vector (the JSON
ones re-sent as XML in each framing), hypothesis-generated data of the typed subscriptions
written as XML with odd prefixes and identities as ``prefix:name``, hand-written edges for
each value type (QNames with a default namespace, re-bound and undeclared prefixes, a prefix
of an unknown namespace), MessageBuilder and ``yangkey ingest`` over the sample's XML.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from native_helpers import EXAMPLES, builder_outputs, key_vectors
from test_core_differential import SUBSCRIPTIONS
from test_native_feed import TYPED, Feeds, FeedTreeMaker
from test_native_patch_feed import FEED_EDGES, NATIVE_TEXTS, FeedCache
from test_native_patch_keys import json_patches
from test_native_patch_native import EDGES, LEFT_TO_PYTHON, REFUSED
from test_native_patch_xml import as_xml, xml_change, xml_edit
from test_native_xml_keys import FRAMINGS, UNKNOWN_NS, XmlWriter, framed, module_namespaces

from yangkey import native
from yangkey.catalog import load_catalog
from yangkey.clickhouse.ingest.rows import QueueRow, add_instances
from yangkey.clickhouse.instances import CatalogFeeds
from yangkey.demo.sample import generate
from yangkey.messages import HEADER_INSTANCES
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

ROOT = Path(__file__).resolve().parents[2]
TYPED_YANG = ROOT / "tests" / "fixtures" / "yang-typed"
XFEED_YANG = ROOT / "tests" / "fixtures" / "yang-xmlfeed"
NS_TYPED = "urn:example:yangkey:yk-typed"
NS_X = "urn:example:yangkey:yk-xfeed"
NS_T = "urn:example:yangkey:yk-test"
BOXES = "/yk-xfeed:boxes/box"
SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def schema(fx_dir: str) -> SchemaContext:
    """The fixture modules, yk-typed, yk-xfeed and the IETF modules."""
    return SchemaContext.cached((fx_dir, str(TYPED_YANG), str(XFEED_YANG)))


@pytest.fixture(scope="module")
def feeds(schema: SchemaContext) -> dict[str, Feeds]:
    found: dict[str, Feeds] = {}
    for text in [*SUBSCRIPTIONS, *TYPED, BOXES]:
        compiled = compile_subscription(
            text, schema, keyless="position" if "sample" in text else "reject"
        )
        found[text] = Feeds(compiled, schema)
    return found


def same(decoder: Any, feeds: Feeds, raw: bytes, ns: dict[str, str]) -> str:
    """Whether the native headers of an XML document (``keys_xml``'s eighth item and
    ``instances``) are the reference's; ``native`` when ``keys_xml`` answered, else
    ``python``. The two entry points answer alike."""
    expected = feeds.reference(raw, ns)
    def route(*_: Any) -> tuple[Any, str, None]:
        return (feeds.walker, "pe1", None)

    keyed = decoder.keys_xml(raw, "t", ns, route, False, None, True)
    got = decoder.instances(raw, "t", feeds.walker, ns)
    if keyed is None:
        assert got is None, (raw, got, expected)
        return "python"
    assert len(keyed) == 8
    assert keyed[7] == expected, (raw, keyed[7], expected)
    assert got == expected, (raw, got, expected)
    # without the feed: the same keys (the tape is the whole tree with the feed on)
    plain = decoder.keys_xml(raw, "t", ns, route, True, None)
    if plain is not None:
        with_xpaths = decoder.keys_xml(raw, "t", ns, route, True, None, True)
        assert with_xpaths is not None and with_xpaths[:7] == plain
    return "native"


# ----------------------------------------------------------------------------- the vectors


def plain_xml(member: str, value: Any, parent: str | None, namespaces: dict[str, str]) -> str:
    """A JSON-shaped member as the XML a device sends: a module's namespace declared where the
    module changes, list entries as repeated elements, identities ``module:name`` written with
    a prefix declared for the module's namespace."""
    module, colon, local = member.rpartition(":")
    module = module if colon else parent or ""
    declare = f' xmlns="{namespaces[module]}"' if module != parent else ""
    out = []
    for item in value if type(value) is list else [value]:
        if type(item) is dict:
            body = "".join(plain_xml(m, v, module, namespaces) for m, v in item.items())
            out.append(f"<{local}{declare}>{body}</{local}>")
            continue
        text = "true" if item is True else "false" if item is False else str(item)
        prefix, colon, name = text.partition(":")
        qname = f' xmlns:q="{namespaces[prefix]}"' if colon and prefix in namespaces else ""
        text = f"q:{name}" if qname else text
        out.append(f"<{local}{declare}{qname}>{escape(text)}</{local}>")
    return "".join(out)


def vectors_as_xml(schema: SchemaContext) -> list[tuple[str, bytes, Feeds]]:
    """Every public key vector: an XML one as it is, a JSON one's datastore contents re-sent as
    XML in each framing; with the feeds of its subscription."""
    namespaces = module_namespaces(schema)
    found = []
    for vector, compiled in key_vectors(schema, ""):
        feeds = Feeds(compiled, schema)
        raw = vector["notification"]
        if raw.lstrip().startswith("<"):
            found.append((vector["id"], raw.encode(), feeds))
            continue
        stack, contents = [json.loads(raw)], None
        while stack and contents is None:
            item = stack.pop()
            if isinstance(item, dict):
                push = item.get("ietf-yang-push:push-update")
                contents = push.get("datastore-contents") if isinstance(push, dict) else None
                stack.extend(item.values())
        assert isinstance(contents, dict), vector["id"]
        xml = "".join(plain_xml(m, v, None, namespaces) for m, v in contents.items())
        for framing in sorted(set(FRAMINGS)):
            found.append((f"{vector['id']}:{framing}", framed(framing, xml, "pe1", 7), feeds))
    return found


def test_native_xml_feed_vectors(decoder: Any, ietf_schema: SchemaContext) -> None:
    """Every public key vector, XML as sent and JSON re-sent as XML in every framing: the
    native headers are the reference's, and the pass answers each (every framing the fast
    reader takes)."""
    ns = ietf_schema.index.by_namespace
    documents = vectors_as_xml(ietf_schema)
    assert len(documents) >= 8
    for name, raw, feeds in documents:
        assert same(decoder, feeds, raw, ns) == "native", name


# ----------------------------------------------------------------------- generated trees


def generated(draw: st.DrawFn, feeds: Feeds, schema: SchemaContext, comments: bool) -> bytes:
    tree = draw(st.composite(lambda d: FeedTreeMaker(feeds.root, feeds.compiled).tree(d))())
    contents = XmlWriter(draw, module_namespaces(schema), comments).contents(tree)
    return framed(draw(st.sampled_from(FRAMINGS)), contents, "pe1", 7)


@SETTINGS
@given(data=st.data())
def test_native_xml_feed_generated_notifications_agree(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext, data: Any
) -> None:
    """Schema-driven data (valid, junk and wrongly typed values, qualified members, single
    entries, unknown members and namespaces, nested lists, identities as ``prefix:name`` under
    any declared prefix, comments in text) as XML in every framing: where the native pass
    answers, its headers are the reference's."""
    subscription = feeds[data.draw(st.sampled_from([*SUBSCRIPTIONS, *TYPED, BOXES]))]
    raw = generated(data.draw, subscription, schema, True)
    event(same(decoder, subscription, raw, dict(schema.index.by_namespace)))


def test_native_xml_feed_answers_most_generated_notifications(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext
) -> None:
    """The native XML feed is no fallback in disguise: over generated XML (no comments: the
    fast reader leaves them) it answers most notifications whose feed the reference writes."""
    counts = {"native": 0, "python": 0, "fed": 0}
    ns = dict(schema.index.by_namespace)

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(data=st.data())
    def run(data: Any) -> None:
        subscription = feeds[data.draw(st.sampled_from([*SUBSCRIPTIONS, *TYPED, BOXES]))]
        raw = generated(data.draw, subscription, schema, False)
        counts[same(decoder, subscription, raw, ns)] += 1
        expected = subscription.reference(raw, ns)
        counts["fed"] += not isinstance(expected, str) and any(expected)

    run()
    assert counts["native"] >= 0.6 * counts["fed"] > 0, counts


# ----------------------------------------------------------------------------------- edges


def _thing(body: str, attrs: str = "") -> bytes:
    contents = f'<things xmlns="{NS_TYPED}"{attrs}><thing><id>7</id>{body}</thing></things>'
    return framed("netconf", contents, "pe1", 7)


def _box(*bodies: str, attrs: str = "") -> bytes:
    boxes = "".join(f"<box><id>{n}</id>{body}</box>" for n, body in enumerate(bodies, 1))
    return framed("telemetry", f'<boxes xmlns="{NS_X}"{attrs}>{boxes}</boxes>', "pe1", 7)


TYPED_EDGES: list[tuple[bytes, bool]] = [
    # strings: escapes as orjson writes them, character references, white space kept
    (_thing("<version>q&quot;\\&lt;&#233;/&#9;&#10;&#13; x </version>"), True),
    # integers stripped, decimal64 and enumeration through their converters
    (_thing("<big> -0042 </big><ratio>1.500</ratio><state>on</state><mixed>5</mixed>"), True),
    # identityref: unprefixed under a default namespace (no QName: the leaf's module)
    (_thing("<colour>red</colour>"), True),
    # identityref: a prefix bound on the element, on an ancestor, to the module's namespace
    (_thing(f'<colour xmlns:c="{NS_TYPED}">c:red</colour>'), True),
    (_thing("<colour>zz:red</colour>", f' xmlns:zz="{NS_TYPED}"'), True),
    # a prefix of an unknown namespace, an undeclared one, ``xml``: plain text, as written
    (_thing(f'<colour xmlns:u="{UNKNOWN_NS}">u:red</colour>'), True),
    (_thing("<colour>nope:red</colour>"), True),
    (_thing("<colour>xml:red</colour>"), True),
    (_thing("<colour>yk-typed:red</colour>"), True),
    # a string leaf and bits holding prefix:name text (QNameText to the converter: its text)
    (_thing(f'<version xmlns:v="{NS_T}">v:x</version><flags xmlns:v="{NS_T}">v:a</flags>'), True),
    (_thing("<flags> b  a </flags><marker/><seen>2026-01-01T00:00:00Z</seen>"), True),
    (_thing("<marker>anything</marker><addr>::1</addr>"), True),
    # leaf-list: one element, repeated, apart
    (_thing("<weights>1.0</weights>"), True),
    (_thing("<weights>1.0</weights><label>x</label><weights>0.50</weights>"), True),
    # containers: below, qualified, empty (carries nothing)
    (_thing(f'<deep><small> 8 </small></deep><d:deep xmlns:d="{NS_TYPED}"/>'), True),
    # a nested list as JSON text, a QName inside it as its text
    (
        _thing(f'<part><n>1</n><label xmlns:t="{NS_T}">t:b</label></part><part><n>2</n></part>'),
        True,
    ),
    # a member of an unknown namespace carried by its local name, as the reference does
    (_thing(f'<version xmlns="{UNKNOWN_NS}">v</version>'), True),
    # an integer leaf holding prefix:name text with the prefix bound: the reference's converter
    (_thing(f'<big xmlns:b="{NS_TYPED}">b:5</big>'), False),
    # elements where a leaf is expected; a value the converter refuses
    (_thing("<version><a>1</a></version>"), False),
    (_thing("<colour><a>red</a></colour>"), False),
    # bits given an element with children: the reference writes str() of its dict; not
    # mirrored (the pass hands a converter no element of an XML document)
    (_thing("<flags><a>x</a></flags>"), False),
    (_thing("<colour>red blue</colour>"), False),
    (_thing("<big>x</big><big>y</big>"), False),
]


@pytest.mark.parametrize(("raw", "answered"), TYPED_EDGES)
def test_native_xml_feed_typed_edges(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext, raw: bytes, answered: bool
) -> None:
    """Each value type of yk-typed written as XML: the reference's header where the native
    pass answers, and it answers exactly where expected."""
    outcome = same(decoder, feeds[TYPED[0]], raw, dict(schema.index.by_namespace))
    assert outcome == ("native" if answered else "python"), raw


QNAME_EDGES: list[tuple[bytes, bool]] = [
    # the same text, its prefix re-bound between entries: two identities (the converter's memo
    # is by text and module, not text alone)
    (
        _box(
            f'<kind xmlns:p="{NS_X}">p:round</kind>',
            f'<kind xmlns:p="{NS_TYPED}">p:round</kind>',
            f'<kind xmlns:p="{NS_X}">p:round</kind>',
            "<kind>p:round</kind>",
        ),
        True,
    ),
    # re-bound below the declaration in scope; default namespace re-bound (no prefix: no QName)
    (
        _box(
            f'<kind xmlns:p="{NS_TYPED}">p:square</kind><text>p:square</text>',
            attrs=f' xmlns:p="{NS_X}"',
        ),
        True,
    ),
    (_box(f'<kind xmlns="{NS_X}">square</kind>', f'<x:kind xmlns:x="{NS_X}">round</x:kind>'), True),
    # an identityref leaf-list and a union with identities, prefixed or not
    (
        _box(
            f'<kinds xmlns:a="{NS_X}">a:round</kinds><kinds>square</kinds>'
            f'<kinds xmlns:b="{NS_TYPED}">b:round</kinds>',
            f'<either xmlns:a="{NS_X}">a:round</either>',
            "<either>-5</either>",
            "<either>square</either>",
        ),
        True,
    ),
    # an identity of another module, the prefix on the list entry
    (_box("<colour>t:red</colour>", attrs=f' xmlns:t="{NS_TYPED}"'), True),
    # instance-identifier and strings: text as written
    (
        _box(
            f"<where xmlns:ykx=\"{NS_X}\">/ykx:boxes/ykx:box[ykx:id='1']</where>",
            f'<where xmlns:w="{NS_X}">w:boxes</where><text xmlns:w="{NS_X}">w:x</text>',
        ),
        True,
    ),
    # an integer leaf with prefix:name text: bound (QNameText) or not
    (_box(f'<count xmlns:c="{NS_X}">c:1</count>'), False),
    (_box("<count>c:1</count>"), True),
    # an identity the reference refuses
    (_box("<kind>a b</kind>"), False),
]


@pytest.mark.parametrize(("raw", "answered"), QNAME_EDGES)
def test_native_xml_feed_qname_edges(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext, raw: bytes, answered: bool
) -> None:
    """The QName-bearing types (RFC 7951 6.8/6.11 against RFC 7950 9.10.3): identities written
    with any prefix the document binds become ``module:name`` as the reference converts them,
    under default, re-bound, undeclared prefixes; what the reference refuses is left to it."""
    outcome = same(decoder, feeds[BOXES], raw, dict(schema.index.by_namespace))
    assert outcome == ("native" if answered else "python"), raw


def test_native_xml_feed_rebound_prefix_values(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext
) -> None:
    """The re-bound prefix's entries carry each their own identity (not the first one's)."""
    raw = QNAME_EDGES[0][0]
    found = decoder.instances(raw, "t", feeds[BOXES].walker, dict(schema.index.by_namespace))
    assert found is not None and found[0] is not None
    kinds = [row["kind"] for row in json.loads(found[0])]
    assert kinds == ["yk-xfeed:round", "yk-typed:round", "yk-xfeed:round", "p:round"], kinds


def test_native_xml_feed_leaves_the_rest_to_the_reference(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext
) -> None:
    """Contents as XML text, comments, malformed XML, no ``ns_modules`` for ``instances``,
    JSON for the XML entry: None (the reference answers); a yang-patch is answered with and
    without the feed."""
    ns = dict(schema.index.by_namespace)
    walker = feeds["/ietf-interfaces:interfaces/interface"].walker
    contents = '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">'
    contents += "<interface><name>eth0</name></interface></interfaces>"
    good = framed("netconf", contents, "pe1", 7)
    patch = (
        b'<push-change-update xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-push"><id>7</id>'
        b"<datastore-changes><yang-patch><patch-id>p</patch-id><edit><edit-id>1</edit-id>"
        b"<operation>delete</operation><target>/ietf-interfaces:interfaces/interface=eth0"
        b"</target></edit></yang-patch></datastore-changes></push-change-update>"
    )

    def route(*_: Any) -> tuple[Any, str, None]:
        return (walker, "pe1", None)

    assert decoder.keys_xml(good, "t", ns, route, False, None, True) is not None
    assert decoder.keys_xml(patch, "t", ns, route, False, None) is not None
    fed = decoder.keys_xml(patch, "t", ns, route, False, None, True)
    assert fed is not None and fed[7] == decoder.instances(patch, "t", walker, ns)
    assert decoder.instances(good, "t", walker) is None  # no ns_modules: XML is not read
    assert decoder.instances(patch, "t", walker) is None
    for raw in (
        framed("iosxe", escape(contents), "pe1", 7),
        good.replace(b"eth0", b"eth<!-- c -->0"),
        good[:-5],
        b'{"ietf-yang-push:push-update": {"id": 7, "datastore-contents": {}}}',
    ):
        assert decoder.keys_xml(raw, "t", ns, route, False, None, True) is None, raw
        assert decoder.instances(raw, "t", walker, ns) is None, raw


def test_native_xml_feed_contract() -> None:
    """Contract 6 on both sides: a module speaking another number is not used at all, so no
    caller asks a contract-5 module for the XML feed."""
    assert native.CONTRACT == yangkey_native.CONTRACT == 6


# --------------------------------------------------------------------- builder and ingest


def xml_push_updates(records: list[bytes]) -> list[bytes]:
    return [raw for raw in records if raw.startswith(b"<") and b"datastore-contents>" in raw]


@pytest.mark.parametrize(
    "knobs",
    [ProducerKnobs(instances=True), ProducerKnobs(instances=True, keys=False)],
    ids=["instances", "instances-no-keys"],
)
def test_native_xml_feed_builder_same_records(knobs: ProducerKnobs) -> None:
    """MessageBuilder.build with the instance feed on over every ``yangkey sample`` shape: the
    same messages (the feed headers included) and rejections with the native pass as
    without, and the XML pass answers most XML push-updates (none before contract 6)."""
    records = generate(nodes=3, interfaces=4, rounds=2, seed=3).records
    with_native, answered, builder = builder_outputs(records, knobs, True, xml=True)
    without, none, python_builder = builder_outputs(records, knobs, False, xml=True)
    assert none == 0
    assert with_native == without
    assert builder.feed_failures == python_builder.feed_failures
    fed_xml = [
        message
        for raw, messages in zip(records, without, strict=True)
        if raw.startswith(b"<") and isinstance(messages, list)
        for message in messages
        if any(name == HEADER_INSTANCES for name, _ in message.headers)
    ]
    assert fed_xml, "the sample's XML has instance headers"
    xml_push = xml_push_updates(records)
    assert xml_push and answered >= 0.8 * len(xml_push), (answered, len(xml_push))


def test_native_xml_feed_ingest_same_headers(fx_schema: SchemaContext) -> None:
    """``yangkey ingest``'s add_instances over every sample XML record (and its yang-patches
    sent as XML) of every typed topic: the header the native pass writes is the Python
    feed's, and it writes most of them."""
    catalog = load_catalog(EXAMPLES)
    records = generate(nodes=3, interfaces=4, rounds=2, seed=3).records
    patches = sample_xml_patches(fx_schema, records)
    records += patches
    builder = MessageBuilder(catalog, ProducerKnobs(instances=True), default_node="dflt")
    builder.native = False
    native_feeds, python_feeds = CatalogFeeds(catalog), CatalogFeeds(catalog)
    python_feeds.walkers = dict.fromkeys(python_feeds.branches)  # no native walker
    compared = 0
    for number, raw in enumerate(records):
        if not raw.startswith(b"<"):
            continue
        built = builder.build(raw, f"r:{number}")
        if not isinstance(built, list):
            continue
        for message in built:
            row = QueueRow(message.topic, 0, number, message.key, raw)
            got, expected = add_instances(native_feeds, row), add_instances(python_feeds, row)
            assert got == expected, (raw, got.headers, expected.headers)
            compared += got.headers != ()
    xml_push = xml_push_updates(records)
    assert compared > 0 and python_feeds.native_fed == 0 and patches
    assert native_feeds.failures == python_feeds.failures
    wanted = 0.8 * (len(xml_push) + len(patches))
    assert native_feeds.native_fed >= wanted, (native_feeds.native_fed, compared, wanted)


# --------------------------------------------------------------------------- XML yang-patch


@pytest.fixture(scope="module")
def patch_feeds(schema: SchemaContext) -> FeedCache:
    return FeedCache(schema)


@pytest.mark.parametrize(("text", "edits"), FEED_EDGES + EDGES + LEFT_TO_PYTHON + REFUSED)
@pytest.mark.parametrize("framing", ["netconf", "telemetry", "iosxe"])
def test_native_xml_feed_patch_edges(
    decoder: Any,
    patch_feeds: FeedCache,
    schema: SchemaContext,
    text: str,
    edits: list[dict[str, Any]],
    framing: str,
) -> None:
    """The JSON yang-patch feed's and key pass's hand edges sent as XML (each module's name
    declared as a prefix on the value: its identities are ``QNameText``): where the native
    pass answers, the reference's headers; answered wherever the reference writes a header
    on the subscriptions the native feed covers."""
    found = patch_feeds[text]
    body = "".join(xml_edit(edit, module_namespaces(schema)) for edit in edits)
    raw = xml_change(body, framing, 7)
    ns = dict(schema.index.by_namespace)
    answered = same(decoder, found, raw, ns)
    expected = found.reference(raw, ns)
    if text in NATIVE_TEXTS and isinstance(expected, tuple) and any(expected):
        assert answered == "native", (raw, expected)


def test_native_xml_feed_patch_rebound_prefix(
    decoder: Any, feeds: dict[str, Feeds], schema: SchemaContext
) -> None:
    """Edits whose values bind one prefix to two namespaces: each entry's identity is its
    own, as the reference converts it."""
    value = '<box xmlns="{ns}"><id>{n}</id><kind xmlns:p="{bound}">p:round</kind></box>'
    edits = "".join(
        f"<edit><edit-id>{n}</edit-id><operation>merge</operation>"
        f"<target>/yk-xfeed:boxes/box={n}</target>"
        f"<value>{value.format(ns=NS_X, n=n, bound=bound)}</value></edit>"
        for n, bound in ((1, NS_X), (2, NS_TYPED), (3, NS_X))
    )
    raw = xml_change(edits, "netconf", 7)
    assert same(decoder, feeds[BOXES], raw, dict(schema.index.by_namespace)) == "native"
    found = decoder.instances(raw, "t", feeds[BOXES].walker, dict(schema.index.by_namespace))
    assert found is not None and found[0] is not None
    kinds = [row["kind"] for row in json.loads(found[0])]
    assert kinds == ["yk-xfeed:round", "yk-typed:round", "yk-xfeed:round"], kinds


def sample_xml_patches(schema: SchemaContext, records: list[bytes]) -> list[bytes]:
    namespaces = module_namespaces(schema)
    return [
        xml
        for index, raw in enumerate(json_patches(records))
        if (xml := as_xml(raw, index, namespaces)) is not None
    ]


@pytest.mark.parametrize(
    "knobs",
    [ProducerKnobs(instances=True), ProducerKnobs(instances=True, keys=False)],
    ids=["instances", "instances-no-keys"],
)
def test_native_xml_feed_patch_builder(knobs: ProducerKnobs, fx_schema: SchemaContext) -> None:
    """MessageBuilder.build with the instance feed on over ``yangkey sample``'s yang-patches
    sent as XML: the same messages (the feed's header included) as without the native pass,
    and every one the reference sends with a header keyed natively."""
    records = generate(nodes=3, interfaces=4, rounds=3, seed=7).records
    patches = sample_xml_patches(fx_schema, records)
    assert len(patches) >= 9
    with_native, answered, builder = builder_outputs(patches, knobs, True, xml=True)
    without, none, python_builder = builder_outputs(patches, knobs, False, xml=True)
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
