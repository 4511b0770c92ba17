"""Issue 33: the native key pass of XML push-updates (``Decoder.keys_xml``: hardened parse,
the framings the reference reads, the datastore contents walked as the JSON-shaped tree the
reference converts them into, no data tree in Python) against the Python reference
(:func:`yangkey.notifications.decode`, with and without the derivation's selection, then
:meth:`yangkey.keys.KeyDeriver.derive`).

Where the native pass answers, subscription id, sequence number, event time, key, keys per
branch and XPaths are the reference's, byte for byte and type for type; where it does not
(None: JSON, yang-patch, contents written as XML text, any error, no instance) the reference
runs. Inputs: every XML public vector, every ``yangkey sample`` shape through MessageBuilder
and ``yangkey keys``, hypothesis-generated data of the differential tests' subscriptions
written as XML in every framing with odd prefixes, default and redundant namespace
declarations, unknown namespaces, ``prefix:name`` identities with the prefix declared or not,
comments inside leaf text, repeated elements apart; and hand-written edges.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import native_helpers
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from native_helpers import (
    builder_outputs,
    builders,
    cli_both_ways,
    reference,
    vectors_keyed,
)
from test_core_differential import SUBSCRIPTIONS, TreeMaker

from yangkey import native
from yangkey.demo.sample import generate
from yangkey.keys import KeyDeriver
from yangkey.producer import ProducerKnobs
from yangkey.schema import SchemaContext

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
NS_NC = "urn:ietf:params:xml:ns:netconf:notification:1.0"
NS_YP = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
NS_ENV = "urn:ietf:params:xml:ns:yang:ietf-yp-notification"
NS_TM = "urn:ietf:params:xml:ns:yang:ietf-telemetry-message"
NS_LEGACY_YP = "urn:ietf:params:xml:ns:yang:ietf-yang-push"  # IOS-XE's own framing
UNKNOWN_NS = "urn:example:not-in-any-module"
native_answer = partial(native_helpers.native_answer, entry="keys_xml")
same = partial(native_helpers.same, entry="keys_xml")


# ------------------------------------------------------------------- JSON tree -> XML text


class XmlWriter:
    """Writes a JSON-shaped tree (RFC 7951) as the XML a device might send for it: a module's
    namespace as the default or under a drawn prefix (declared where used, or again on a
    child), unknown modules in a namespace no module has, list entries as repeated elements
    (sometimes with another member between them), identities as ``prefix:name`` with the
    prefix declared, comments inside leaf text."""

    PREFIXES = ("a", "if", "ns0", "x-y", "_p", "yang", "p.q", "ianaift", "ykt")

    def __init__(self, draw: st.DrawFn, module_ns: dict[str, str], comments: bool = True) -> None:
        self.draw = draw
        self.module_ns = module_ns
        self.comments = comments
        """Comments inside leaf text (such documents are left to the reference)."""

    def ns(self, module: str) -> str:
        return self.module_ns.get(module, UNKNOWN_NS if module == "unknown-module" else "")

    def element(self, member: str, value: Any, parent_module: str | None) -> str:
        module, colon, local = member.rpartition(":")
        if not colon:
            module = parent_module or ""
        if not local or not local.replace("-", "a").replace("_", "a").replace(".", "a").isalnum():
            return ""  # no XML name (the walkers' marker of deleted nodes)
        ns = self.ns(module)
        style = self.draw(st.integers(0, 5))
        if module == parent_module and style > 1:
            open_tag, close_tag = local, local  # inherits the parent's default namespace
        elif style == 0 and ns:
            prefix = self.draw(st.sampled_from(self.PREFIXES))
            open_tag = f'{prefix}:{local} xmlns:{prefix}="{ns}"'
            close_tag = f"{prefix}:{local}"
        else:
            open_tag, close_tag = f'{local} xmlns="{ns}"', local
        items = value if type(value) is list else [value]
        out = []
        for item in items:
            out.append(f"<{open_tag}{self.body(item, module)}</{close_tag}>")
        return "".join(out)

    def body(self, value: Any, module: str) -> str:
        if type(value) is dict:
            members = list(value.items())
            return ">" + "".join(self.element(m, v, module) for m, v in members)
        if value is None or type(value) is list:
            return ">"
        if value is True or value is False:
            return ">" + ("true" if value else "false")
        text = str(value)
        prefix, colon, name = text.partition(":")
        declare = ""
        if colon and prefix in self.module_ns and self.draw(st.booleans()):
            # an identity written with an XML prefix declared for its module's namespace
            alias = self.draw(st.sampled_from(["x", "id", prefix, "ianaift"]))
            declare = f' xmlns:{alias}="{self.module_ns[prefix]}"'
            text = f"{alias}:{name}"
        safe = escape(text)
        if self.comments and len(safe) > 2 and self.draw(st.integers(0, 9)) == 0:
            safe = f"{safe[:1]}<!-- c -->{safe[1:]}"
        return f"{declare}>{safe}"

    def contents(self, tree: dict[str, Any]) -> str:
        return "".join(self.element(member, value, None) for member, value in tree.items())


def framed(framing: str, contents: str, node: str | None, sub: Any) -> bytes:
    """Contents in one of the XML framings the reference reads."""
    host = "" if node is None else f"<hostname>{escape(node)}</hostname>"
    push = (
        f'<push-update xmlns="{NS_YP}"><id>{sub}</id>'
        f"<datastore-contents>{contents}</datastore-contents></push-update>"
    )
    if framing == "netconf":
        return (
            f'<notification xmlns="{NS_NC}"><eventTime>2026-11-20T10:00:00Z</eventTime>'
            f"{host}<sequence-number>4</sequence-number>{push}</notification>"
        ).encode()
    if framing == "huawei":  # the legacy sequencing leaves
        name = "" if node is None else f"<sysName>{escape(node)}</sysName>"
        return (
            f'<notification xmlns="{NS_NC}"><eventTime>2026-11-20T10:00:00Z</eventTime>'
            f"{name}<sequenceNumber>9</sequenceNumber>{push}</notification>"
        ).encode()
    if framing == "iosxe":  # pre-RFC names: subscription-id, datastore-contents-xml
        return (
            f'<notification xmlns="{NS_NC}"><eventTime>2026-11-20T10:00:00.5Z</eventTime>'
            f'{host}<push-update xmlns="{NS_LEGACY_YP}"><subscription-id>{sub}</subscription-id>'
            f"<datastore-contents-xml>{contents}</datastore-contents-xml></push-update>"
            "</notification>"
        ).encode()
    if framing == "envelope":
        return (
            f'<envelope xmlns="{NS_ENV}"><event-time>2026-11-20T10:00:00Z</event-time>'
            f"{host}<sequence-number>7</sequence-number><contents>{push}</contents></envelope>"
        ).encode()
    if framing == "bare":
        return push.encode()
    if framing == "pretty":
        return (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<notification xmlns="{NS_NC}">\n  '
            f"<eventTime>2026-11-20T10:00:00Z</eventTime>\n  {host}\n  {push}\n</notification>\n"
        ).encode()
    assert framing == "telemetry"
    manifest = "" if node is None else f"<network-node-manifest><name>{escape(node)}</name>"
    manifest += "</network-node-manifest>" if node is not None else ""
    return (
        f'<message xmlns="{NS_TM}">{manifest}<telemetry-message-metadata>'
        "<node-export-timestamp>2026-11-20T10:00:01Z</node-export-timestamp>"
        f"<yang-push-subscription><id>{sub}</id></yang-push-subscription>"
        f"</telemetry-message-metadata><payload>{framed('netconf', contents, None, sub).decode()}"
        "</payload></message>"
    ).encode()


FRAMINGS = ["netconf", "netconf", "huawei", "iosxe", "envelope", "bare", "pretty", "telemetry"]


def module_namespaces(schema: SchemaContext) -> dict[str, str]:
    return {module: ns for ns, module in schema.index.by_namespace.items()}


# ----------------------------------------------------------------------------- the vectors


def test_native_xml_keys_vectors(decoder: Any, ietf_schema: SchemaContext) -> None:
    """Every XML key vector: keyed by the native pass, the reference's and the vector's key."""
    assert vectors_keyed(decoder, ietf_schema, "<", "keys_xml") >= 1


# ----------------------------------------------------------------------- generated trees


@SETTINGS
@given(data=st.data())
def test_native_xml_keys_generated_notifications_agree(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext, data: Any
) -> None:
    """Schema-driven data (valid, junk and wrongly typed values, qualified members, single
    entries, unknown members) written as XML in each framing, with node names and
    subscription ids plain, odd or missing."""
    text = data.draw(st.sampled_from(SUBSCRIPTIONS))
    deriver, root = derivers[text]
    tree = data.draw(st.composite(lambda draw: TreeMaker(root, deriver.compiled).tree(draw))())
    writer = XmlWriter(data.draw, module_namespaces(fx_schema))
    contents = writer.contents(tree)
    node = data.draw(st.sampled_from(["pe1"] * 6 + [None, " pe1", "pé", "a&b"]))
    sub = data.draw(st.sampled_from(["7"] * 5 + [" 7 ", "0", "-1", "", "4294967296", "x"]))
    default = data.draw(st.sampled_from([None, "dflt"]))
    raw = framed(data.draw(st.sampled_from(FRAMINGS)), contents, node, sub)
    event(same(decoder, deriver, raw, fx_schema.index.by_namespace, default))


def test_native_xml_keys_answer_most_generated_notifications(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """No fallback in disguise: over generated XML of every subscription, in every framing
    (no comments: left to the reference), the native pass answers most that have a key."""
    counts = {"native": 0, "python": 0, "keyed": 0}
    ns = fx_schema.index.by_namespace

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(data=st.data())
    def run(data: Any) -> None:
        deriver, root = derivers[data.draw(st.sampled_from(SUBSCRIPTIONS))]
        tree = data.draw(st.composite(lambda draw: TreeMaker(root, deriver.compiled).tree(draw))())
        contents = XmlWriter(data.draw, module_namespaces(fx_schema), False).contents(tree)
        raw = framed(data.draw(st.sampled_from(FRAMINGS)), contents, "pe1", 7)
        counts[same(decoder, deriver, raw, ns, None)] += 1
        counts["keyed"] += reference(deriver, raw, ns, None)[0] == "ok"

    run()
    # Over seeds the share is 0.59-1.0 (whole draws of a framing or subscription the reference
    # keeps); half is a floor no seed misses and no fallback in disguise reaches.
    assert counts["native"] >= counts["keyed"] * 0.5, counts


PIECES = [
    "<", ">", "&", ";", '"', "'", "=", " ", "/", ":", "x", "\r", "\t", "\x01", "]]>", "&amp;",
    "&#0;", "&#x41;", "&#xD800;", "&bogus;", "<!-- c -->", "<![CDATA[x]]>", "\ufffe", "é",
    ' xmlns:a="urn:a"', ' xmlns=""', ' a="1"', ' a="1" a="2"', ' xml:lang="en"', "<a/>",
    "</a>", "<?pi x?>", "a:", "<b:c>", " xmlns:b='urn:ietf:params:xml:ns:yang:iana-if-type'",
]


@SETTINGS
@given(data=st.data())
def test_native_xml_keys_mutated_documents_agree(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext, data: Any
) -> None:
    """Well-formed notifications with bytes inserted, dropped or repeated (markup, references,
    controls, declarations, duplicate attributes...): whatever the native reader takes, it
    reads as libxml2 does; a document libxml2 refuses is never keyed natively."""
    text = "/ietf-interfaces:interfaces/interface[type='iana-if-type:ethernetCsmacd']"
    deriver, _ = derivers[text]
    contents = _interfaces(
        f'<interface><name>e1</name><type xmlns:z="{NS_IANA}">z:ethernetCsmacd</type>'
        "</interface><interface><name>e&amp;2</name><type>iana-if-type:ethernetCsmacd</type>"
        "</interface>"
    )
    raw = framed(data.draw(st.sampled_from(["netconf", "envelope", "bare"])), contents, "pe1", 7)
    doc = raw.decode()
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(doc)))
        action = data.draw(st.sampled_from(["insert", "insert", "drop", "repeat"]))
        if action == "insert":
            doc = doc[:at] + data.draw(st.sampled_from(PIECES)) + doc[at:]
        else:
            end = min(len(doc), at + data.draw(st.integers(1, 12)))
            doc = doc[:at] + (doc[at:end] * 2 if action == "repeat" else "") + doc[end:]
    event(same(decoder, deriver, doc.encode(), fx_schema.index.by_namespace, None))


GOOD = (
    '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">'
    "<interface><name>e1</name><type>t</type></interface></interfaces>"
)
MALFORMED = [  # each refused by libxml2 (the reference's error), so never keyed natively
    GOOD.replace("</type>", "</typo>"),  # end tag of another name, same length
    GOOD.replace("</name>", "</nam>"),
    GOOD.replace("<name>", '<name a="1" a="2">'),  # an attribute twice
    GOOD.replace("<name>", '<name a="1"b="2">'),  # no space between attributes
    GOOD.replace("<name>", "<name a=1>"),
    GOOD.replace("<name>", '<name a="<">'),
    GOOD.replace("<name>", "<p:name>").replace("</name>", "</p:name>"),  # undeclared prefix
    GOOD.replace("<name>", "<:name>").replace("</name>", "</:name>"),  # empty prefix
    GOOD.replace("<name>", "<name>").replace("</name>", "</:name>"),
    GOOD.replace("<name>", '<name :a="1">'),
    GOOD.replace("<name>", '<name xmlns:p="">'),
    GOOD.replace("<name>", "<1name>").replace("</name>", "</1name>"),
    GOOD.replace("<type>t</type>", "<type/ >"),
    GOOD.replace("e1", "e\x01"),
    GOOD.replace("e1", "e]]>1"),
    GOOD.replace("e1", "e&bogus;"),
    GOOD.replace("e1", "e&#0;"),
    GOOD.replace("e1", "e&#xD800;"),
    GOOD.replace("e1", "e&amp"),
    GOOD.replace("e1", "e\ufffe"),
    # past the first sixteen bytes of a name or an attribute value (the reader's wide scans)
    GOOD.replace("<name>", '<name a="0123456789abcdef<">'),
    GOOD.replace("<name>", '<name a="0123456789abcdef\x01">'),
    GOOD.replace("<name>", '<name a="0123456789abcdef\ufffe">'),
    # an undeclared prefix ending past sixteen bytes
    GOOD.replace("name>", "q0123456789abcdef:name>"),
    GOOD.replace("<name>", "<name0123456789abcdef/x>"),
    GOOD.replace("<name>", "<name0123456789abcdef>").replace("</name>", "</name0123456789abcdeg>"),
    GOOD + "<x/>",  # a second root
    GOOD + "text",
]


@pytest.mark.parametrize("contents", MALFORMED)
@pytest.mark.parametrize("framing", ["netconf", "envelope", "bare", "telemetry"])
def test_native_xml_keys_refuse_what_libxml2_refuses(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    contents: str,
    framing: str,
) -> None:
    """Malformed documents (the reader's strictness, one rule each): the reference refuses
    them, the native pass leaves them to it (fast reader and full parser alike)."""
    deriver, _ = derivers["/ietf-interfaces:interfaces/interface"]
    ns = fx_schema.index.by_namespace
    good = framed(framing, GOOD, "pe1", 7)
    assert same(decoder, deriver, good, ns, "dflt") == "native"
    if contents.startswith(GOOD):  # after the root: at the document's end
        raw = good + contents[len(GOOD) :].encode()
    else:
        raw = framed(framing, contents, "pe1", 7)
    assert reference(deriver, raw, ns, "dflt")[0] == "error", raw
    assert native_answer(decoder, deriver, raw, ns, "dflt") is None, raw


# ------------------------------------------------------------------------ the hand edges

NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_IANA = "urn:ietf:params:xml:ns:yang:iana-if-type"
NS_T = "urn:example:yangkey:yk-test"
NS_AUG = "urn:example:yangkey:yk-aug"


def _interfaces(*entries: str, attrs: str = "") -> str:
    return f'<interfaces xmlns="{NS_IF}"{attrs}>' + "".join(entries) + "</interfaces>"


EDGES: list[tuple[str, str]] = [
    # quoting, entities, character references, CDATA, code-point order
    (
        "/ietf-interfaces:interfaces/interface",
        _interfaces(
            "<interface><name>a'b</name></interface>",
            "<interface><name>x | y</name></interface>",
            "<interface><name>a'&quot;b</name></interface>",
            "<interface><name>&#233;&#x20AC;&lt;&amp;</name></interface>",
            "<interface><name>B</name></interface><interface><name>b</name></interface>",
            "<interface><name>B</name></interface>",
        ),
    ),
    # whitespace kept as the reference keeps it (leaf text is not stripped)
    (
        "/ietf-interfaces:interfaces/interface",
        _interfaces("<interface><name> eth0\n</name></interface>"),
    ),
    # repeated list entries apart (another member between them), one entry alone
    (
        "/ietf-interfaces:interfaces/interface",
        _interfaces(
            "<interface><name>e1</name></interface><zz>1</zz>"
            "<interface><name>e2</name></interface>"
        ),
    ),
    # the key in a prefixed element of the same namespace, the list in a redundant default
    (
        "/ietf-interfaces:interfaces/interface",
        _interfaces(
            f'<interface xmlns="{NS_IF}"><i:name xmlns:i="{NS_IF}">q</i:name></interface>'
        ),
    ),
    # the key element in another namespace: qualified member, not the key
    (
        "/ietf-interfaces:interfaces/interface",
        _interfaces(f'<interface><name xmlns="{NS_T}">q</name></interface>'),
    ),
    # identityref filters: the prefix declared for iana-if-type under any name, or not declared
    (
        "/ietf-interfaces:interfaces/interface[type='iana-if-type:ethernetCsmacd']",
        _interfaces(
            f'<interface><name>e1</name><type xmlns:z="{NS_IANA}">z:ethernetCsmacd</type>'
            "</interface>",
            "<interface><name>e2</name><type>ianaift:ethernetCsmacd</type></interface>",
            f'<interface><name>e3</name><type xmlns:ianaift="{NS_T}">ianaift:ethernetCsmacd'
            "</type></interface>",
            "<interface><name>e4</name><type>iana-if-type:softwareLoopback</type></interface>",
        ),
    ),
    # identityref keys: prefix declared on the element, on an ancestor, for an unknown
    # namespace, YANG prefixes, no prefix
    (
        "/yk-test:top/flow",
        f'<top xmlns="{NS_T}" xmlns:t="{NS_T}" xmlns:u="{UNKNOWN_NS}">'
        "<flow><proto>t:tcp</proto><port>007</port><enabled>true</enabled></flow>"
        f'<flow><proto xmlns:w="{NS_AUG}">w:sctp</proto><port>+8</port>'
        "<enabled>false</enabled></flow>"
        "<flow><proto>u:tcp</proto><port>9</port><enabled>true</enabled></flow>"
        "<flow><proto>ykt:udp</proto><port>10</port><enabled>true</enabled></flow>"
        "<flow><proto>udp</proto><port> 11 </port><enabled> true</enabled></flow>"
        "</top>",
    ),
    # integers: zeros, signs, blanks; pinned values and filters
    (
        "/yk-test:top/flow[port='80'][enabled='true']",
        f'<top xmlns="{NS_T}"><flow><proto>tcp</proto><port>080</port><enabled>true</enabled>'
        "</flow><flow><proto>udp</proto><port>80</port><enabled>false</enabled></flow></top>",
    ),
    ("/yk-test:top/codes", f'<top xmlns="{NS_T}"><codes>5</codes><codes>007</codes></top>'),
    ("/yk-test:top/codes[.='5']", f'<top xmlns="{NS_T}"><codes>05</codes><codes>6</codes></top>'),
    # augmenting module: qualified members below
    (
        "/yk-test:top/site/yk-aug:ports/port",
        f'<top xmlns="{NS_T}"><site><name>s1</name><ports xmlns="{NS_AUG}"><port><num>8</num>'
        "</port><port><num>9</num></port></ports></site></top>",
    ),
    # a missing key (the reference raises), an entry with no children (text)
    (
        "/ietf-interfaces:interfaces/interface",
        _interfaces("<interface><name>a</name></interface><interface><type>x</type></interface>"),
    ),
    ("/ietf-interfaces:interfaces/interface", _interfaces("<interface/>")),
    # several branches
    (
        "/yk-test:top/flow | /yk-test:top/site/rack | /yk-test:top/codes",
        f'<top xmlns="{NS_T}"><codes>1</codes><site><name>s</name><rack><id>2</id></rack>'
        "</site><flow><proto>tcp</proto><port>3</port><enabled>true</enabled></flow></top>",
    ),
]


@pytest.mark.parametrize(("text", "contents"), EDGES)
@pytest.mark.parametrize("framing", ["netconf", "telemetry", "iosxe"])
def test_native_xml_keys_edges(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    text: str,
    contents: str,
    framing: str,
) -> None:
    deriver, _ = derivers[text]
    raw = framed(framing, contents, "pe1", 7)
    ns = fx_schema.index.by_namespace
    answered = same(decoder, deriver, raw, ns, None)
    assert answered == "native" or reference(deriver, raw, ns, None)[0] != "ok", raw


IOSXE_PUSH: list[tuple[str, str]] = [
    # (the push-update's children before its contents, its contents element)
    ("<subscription-id>7</subscription-id>", "datastore-contents"),
    ("<subscription-id> 7 </subscription-id>", "datastore-contents-xml"),
    ("<id>7</id><subscription-id>8</subscription-id>", "datastore-contents-xml"),  # id first
    ("<subscription-id>8</subscription-id><id>7</id>", "datastore-contents"),
    ("<subscription-id>abc</subscription-id>", "datastore-contents-xml"),  # refused
    ("<subscription-id></subscription-id>", "datastore-contents-xml"),  # refused
    ("<subscription-id>4294967296</subscription-id>", "datastore-contents-xml"),  # refused
    ("<subscription-id>7</subscription-id>" * 2, "datastore-contents"),  # refused twice
    ("", "datastore-contents-xml"),  # no id: refused
]


@pytest.mark.parametrize(("header", "holder"), IOSXE_PUSH)
@pytest.mark.parametrize("framing", ["netconf", "telemetry", "envelope", "bare"])
def test_native_xml_keys_iosxe_subscription_id(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    header: str,
    holder: str,
    framing: str,
) -> None:
    """IOS-XE's push-update (its subscription named by the pre-RFC 8639 ``subscription-id``
    where ``id`` is absent, its contents in ``datastore-contents-xml`` as elements, white
    space or text before the elements) in every framing: the fast reader's frame reads the
    id as xmlpatch.rs does (one helper) and keys it without the full parser, and the native
    answer is the reference's wherever the reference keys it. Contents as XML text stay the
    reference's."""
    deriver, _ = derivers["/ietf-interfaces:interfaces/interface"]
    ns = fx_schema.index.by_namespace
    contents = _interfaces("<interface><name>eth0</name></interface>")
    for inside in (contents, f"\n  {contents}\n", f"junk{contents}", "  \n"):
        push = (
            f'<push-update xmlns="{NS_LEGACY_YP}">{header}<{holder}>{inside}</{holder}>'
            "</push-update>"
        )
        raw = framed(framing, "", "pe1", 7).decode()
        raw = re.sub(f'<push-update xmlns="{NS_YP}">.*</push-update>', push, raw).encode()
        assert push.encode() in raw
        full_parses = decoder.full_parses
        answered = same(decoder, deriver, raw, ns, None)
        keyed = reference(deriver, raw, ns, None)[0] == "ok"
        assert answered == ("native" if keyed else "python"), raw
        # the fast reader's answer: the full parser (roxmltree) never read it
        assert decoder.full_parses == full_parses or not keyed, raw
    # XML text inside datastore-contents-xml is another document: the reference's
    as_text = framed("iosxe", escape(contents), "pe1", 7)
    assert reference(deriver, as_text, ns, None)[0] == "ok"
    full_parses = decoder.full_parses
    assert same(decoder, deriver, as_text, ns, None) == "python"
    assert decoder.full_parses == full_parses + 1


def _entry(name: str, attrs: str = "", type_text: str = "t:ethernetCsmacd") -> str:
    return f"<interface{attrs}><name>{name}</name><type>{type_text}</type></interface>"


DECLARED = f' xmlns:t="{NS_IANA}"'
REPEATED_MARKUP = [
    # the same declarations byte for byte, entry after entry (the reader's memo)
    [_entry(n, DECLARED) for n in "abcd"],
    # one byte apart: white space, quotes, another namespace for the same prefix, a second
    # declaration, the default namespace declared again
    [
        _entry("a", DECLARED),
        _entry("b", DECLARED + " "),
        _entry("c", f" xmlns:t='{NS_IANA}'"),
        _entry("d", ' xmlns:t="urn:example:other"'),
        _entry("e", DECLARED),
        _entry("f", DECLARED + f' xmlns:u="{NS_IANA}"'),
        _entry("g", f' xmlns="{NS_IF}"' + DECLARED),
        _entry("h", DECLARED),
    ],
    # a declaration the reference refuses, after the same one well formed
    [_entry("a", DECLARED), _entry("b", ' xmlns:t=""')],
    [_entry("a", DECLARED), _entry("b", DECLARED + DECLARED)],
    # self-closing tags with the same attributes as an open one, and the other way
    [_entry("a", DECLARED), f"<interface{DECLARED}/>", _entry("b", DECLARED)],
    # names that extend, shorten or prefix a name read before
    [
        _entry("a", DECLARED),
        f"<interface{DECLARED}><name>b</name><names>x</names><nam>y</nam>"
        "<type>t:ethernetCsmacd</type></interface>",
        f'<interface{DECLARED}><name>c</name><type xmlns:n="{NS_IANA}">n:ethernetCsmacd</type>'
        '<name xmlns="urn:example:other">z</name></interface>',
        f'<interface{DECLARED}><n:name xmlns:n="{NS_IF}">d</n:name>'
        "<type>t:ethernetCsmacd</type></interface>",
        f"<interface{DECLARED}><name >e</name><type\n>t:ethernetCsmacd</type></interface>",
        f"<interface{DECLARED}><name>f</name><oper-status>up</oper-status>"
        "<oper-statusx>1</oper-statusx><type>t:ethernetCsmacd</type></interface>",
    ],
]


def test_native_xml_keys_repeated_markup(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """The fast reader takes a start tag whose attributes repeat those of a tag read before,
    or whose name repeats one read before, without reading them again: entries whose
    declarations are the same, one byte apart, refused, self-closing; names that extend,
    shorten or prefix a name read before; and documents read one after the other, each
    keyed (where the reference keys it: natively) as the reference keys it."""
    text = "/ietf-interfaces:interfaces/interface[type='iana-if-type:ethernetCsmacd']"
    deriver, _ = derivers[text]
    ns = fx_schema.index.by_namespace
    # entries before each case: past the size from which the reader memoises (2 KB)
    pad = [_entry(f"p{n}", DECLARED) for n in range(16)]
    documents = [framed("netconf", _interfaces(*pad, *e), "pe1", 7) for e in REPEATED_MARKUP]
    assert min(len(raw) for raw in documents) >= 2048
    for raw in documents + documents[::-1]:
        answered = same(decoder, deriver, raw, ns, None)
        keyed = reference(deriver, raw, ns, None)[0] == "ok"
        assert answered == ("native" if keyed else "python"), raw


def _flow(proto: str, attrs: str = "", port: int = 1) -> str:
    return f"<flow{attrs}><proto>{proto}</proto><port>{port}</port><enabled>true</enabled></flow>"


P_AUG = f' xmlns:p="{NS_AUG}"'
P_T = f' xmlns:p="{NS_T}"'
# Where a prefix is in scope for an identityref key (``prefix:name`` text, resolved when a
# walk reads the leaf, from the declarations noted over the element's subtree): declared on
# the leaf, its list entry, the document's root, a sibling before (not in scope), an element
# closed before (self-closing, by ``</x >``), shadowed by an inner declaration and in
# scope again after it.
PREFIX_SCOPES: list[str] = [
    _flow("p:sctp").replace("<proto>", f"<proto{P_AUG}>") + _flow("p:sctp", port=2),
    _flow("p:sctp", P_AUG) + _flow("p:sctp", port=2),
    f"<top{P_T}>" + _flow("p:sctp", P_AUG) + _flow("p:tcp", port=2),
    f"<top{P_T}>" + _flow("p:tcp").replace("<proto>", f"<proto{P_AUG}>") + _flow("p:tcp", port=2),
    f"<x{P_AUG}/>" + _flow("p:sctp"),
    f"<x{P_AUG}></x >" + _flow("p:sctp"),
    f"<x{P_AUG}><y>1</y></x >" + _flow("p:sctp"),
    _flow("p:sctp", P_AUG).replace("</flow>", "</flow >") + _flow("p:sctp", port=2),
    f"<top{P_AUG}>" + _flow("p:tcp", P_T) + _flow("p:sctp", port=2),
]


@pytest.mark.parametrize("inside", PREFIX_SCOPES)
def test_native_xml_keys_prefix_scopes(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    inside: str,
) -> None:
    """An identityref key's prefix resolved in the scope the reference resolves it in (a
    prefix out of scope leaves the text as written): the native answer is the reference's,
    keyed natively where the reference keys."""
    deriver, _ = derivers["/yk-test:top/flow"]
    ns = fx_schema.index.by_namespace
    top = "" if inside.startswith("<top") else f'<top xmlns="{NS_T}">'
    contents = top + inside.replace("<top ", f'<top xmlns="{NS_T}" ') + "</top>"
    raw = framed("netconf", contents, "pe1", 7)
    answered = same(decoder, deriver, raw, ns, None)
    keyed = reference(deriver, raw, ns, None)[0] == "ok"
    assert answered == ("native" if keyed else "python"), raw


def test_native_xml_keys_qname_identity_keys(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """An identityref key written with an XML prefix (any name) of its module's namespace is
    the same instance as the module-qualified JSON value: the native pass hands the converter
    the reference's QNameText, not the text."""
    deriver, _ = derivers["/yk-test:top/flow"]
    raw = framed(
        "netconf",
        f'<top xmlns="{NS_T}"><flow xmlns:zz="{NS_AUG}"><proto>zz:sctp</proto><port>1</port>'
        "<enabled>true</enabled></flow></top>",
        "pe1",
        7,
    )
    assert same(decoder, deriver, raw, fx_schema.index.by_namespace, None) == "native"
    got = native_answer(decoder, deriver, raw, fx_schema.index.by_namespace, None)
    assert got is not None and b"proto='yk-aug:sctp'" in got[4], got


def test_native_xml_keys_leave_the_rest_to_the_reference(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """JSON, yang-patch, contents as XML text, comments, CDATA, processing instructions (the
    fast reader leaves them to the reference), a DTD, malformed XML, a repeated header, no
    instance: None."""
    deriver, _ = derivers["/ietf-interfaces:interfaces/interface"]
    ns = fx_schema.index.by_namespace
    contents = _interfaces("<interface><name>eth0</name></interface>")
    good = framed("netconf", contents, "pe1", 7)
    assert same(decoder, deriver, good, ns, None) == "native"
    patch = (
        f'<notification xmlns="{NS_NC}"><eventTime>2026-11-20T10:00:00Z</eventTime>'
        f'<push-change-update xmlns="{NS_YP}"><id>7</id><datastore-changes><yang-patch>'
        "<patch-id>p</patch-id><edit><edit-id>1</edit-id><operation>delete</operation>"
        f"<target>/ietf-interfaces:interfaces/interface=eth0</target></edit></yang-patch>"
        "</datastore-changes></push-change-update></notification>"
    ).encode()
    as_text = framed("iosxe", escape(contents), "pe1", 7)
    others = [
        patch,
        as_text,
        good.replace(b"eth0", b"eth<!-- c -->0"),
        good.replace(b"eth0", b"<![CDATA[eth0]]>"),
        good.replace(b"<eventTime>", b"<?pi x?><eventTime>"),
        b'<!DOCTYPE x [<!ENTITY e "eth0">]>' + good,
        good[:-5],
        good.replace(b"<eventTime>", b"<hostname>x</hostname><eventTime>")
        .replace(b"<sequence-number>", b"<hostname>y</hostname><sequence-number>"),
        framed("netconf", _interfaces(), "pe1", 7),
        b'{"ietf-yang-push:push-update": {"id": 7, "datastore-contents": {}}}',
    ]
    for raw in others:
        assert same(decoder, deriver, raw, ns, None) == "python", raw
        assert native.keys_xml(raw, "t", ns, lambda *_: None) is None


# ---------------------------------------------------------------------------- the builder


@pytest.mark.parametrize(
    "knobs",
    [None, ProducerKnobs(keys=False), ProducerKnobs(per_branch=False)],
    ids=["default", "no-keys", "single-topic"],
)
def test_native_xml_keys_builder_same_records(knobs: ProducerKnobs | None) -> None:
    """MessageBuilder.build over every ``yangkey sample`` shape: the same messages (topic,
    key, value, headers: the XML content type among them) and rejections with the native
    pass as without, and most XML push-updates keyed by it."""
    records = generate(nodes=3, interfaces=4, rounds=2, seed=3).records
    with_native, answered, _ = builder_outputs(records, knobs, True, xml=True)
    without, none, _ = builder_outputs(records, knobs, False, xml=True)
    assert none == 0
    assert with_native == without
    xml_push = [
        raw for raw in records if raw.startswith(b"<") and b"datastore-contents>" in raw
    ]
    assert xml_push and answered >= len(xml_push) * 0.8, (answered, len(xml_push))


def test_native_xml_keys_builder_routes_by_content_type() -> None:
    """The same subscription, node and data in JSON and XML: each message carries its own
    content type (the two memos of routes are apart)."""
    records = generate(nodes=2, interfaces=6, rounds=1, seed=3).records
    builder, reference = builders()
    for number, raw in enumerate(records + records):
        assert builder.build(raw, f"r:{number}") == reference.build(raw, f"r:{number}")
    assert len(builder._native_routes_xml) and len(builder._native_routes)


# ---------------------------------------------------------------------------- yangkey keys


def test_native_xml_keys_cli_same_lines(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``yangkey keys --subscriptions`` over every sample shape: the same lines, stderr and
    exit status with the native pass as without, most XML push-updates keyed by it."""
    records = generate(nodes=2, interfaces=3, rounds=2, seed=5).records
    lines = tmp_path / "sample.jsonl"
    lines.write_bytes(b"\n".join(records) + b"\n")
    results, answered = cli_both_ways(monkeypatch, "keys_xml", ["keys", str(lines)])
    xml_push = sum(raw.startswith(b"<") and b"datastore-contents>" in raw for raw in records)
    assert xml_push and answered[0] >= xml_push * 0.8, (answered, xml_push)
    assert answered[1] == 0
    assert results[0] == results[1]
