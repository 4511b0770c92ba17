"""Issue 33: XML yang-patch keys natively (RFC 8641 section 3.10's push-change-update with
RFC 8072 edits in XML; native/src/xmlpatch.rs feeding native/src/patchwalk.rs) against the
Python reference (xmlnotifications.py's ``_xml_notification``: each edit's target and
operation the element's text stripped, its value ``XmlConverter.members`` of the value
element's children; then patch.py as for JSON).

``Decoder.keys_xml`` keys a push-change-update the fast XML reader takes (a NETCONF
notification, an envelope, a bare one, a telemetry message's payload, Huawei's legacy
sequencing leaves, IOS-XE's ``subscription-id``); where it answers, its answer is the
reference's byte for byte (``same`` with ``keys_xml``); a field the reference reads given
twice, an edit without target or operation and whatever patchwalk.rs leaves to the reference
answer None, and the reference answers or words the error.
Inputs: test_native_patch_native.py's JSON edges, refusals and left-to-Python cases with
their values written as XML (every member an element, every module a prefix declared on
the value so ``module:name`` text is a ``prefix:name``), XML-only edges (the reference's
single entry decoded as an object, whitespace around the target, ``<value/>``, an edit
element in another namespace, a target with a child element, fields given twice), and
``yangkey sample``'s JSON yang-patches re-sent as XML through MessageBuilder.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import json
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import pytest
from native_helpers import builder_outputs, builders, native_answer, reference, same
from test_native_patch_keys import json_patches
from test_native_patch_native import EDGES, LEFT_TO_PYTHON, REFUSED
from test_native_xml_keys import NS_ENV, NS_NC, NS_TM, NS_YP
from test_native_xml_keys import framed as xml_framed

from yangkey.demo.sample import generate
from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IF = "/ietf-interfaces:interfaces/interface"
NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_PATCH = "urn:ietf:params:xml:ns:yang:ietf-yang-patch"
FRAMINGS = ["netconf", "envelope", "bare", "pretty", "telemetry", "huawei", "iosxe"]


def xml_change(edits: str, framing: str = "netconf", sub: Any = 1042, node: str = "pe1") -> bytes:
    """A push-change-update carrying ``edits`` (XML text) in one of test_native_xml_keys.py's
    framings (``iosxe``: a NETCONF notification whose push-change-update names its
    subscription by the pre-RFC 8639 ``subscription-id``)."""
    legacy = framing == "iosxe"
    id_leaf = f"<subscription-id>{sub}</subscription-id>" if legacy else f"<id>{sub}</id>"
    body = (
        f'<push-change-update xmlns="{NS_YP}">{id_leaf}<datastore-changes>'
        f'<yang-patch xmlns="{NS_PATCH}"><patch-id>p</patch-id>{edits}</yang-patch>'
        "</datastore-changes></push-change-update>"
    )
    update = xml_framed("netconf" if legacy else framing, "", node, sub).decode()
    push = (
        f'<push-update xmlns="{NS_YP}"><id>{sub}</id>'
        "<datastore-contents></datastore-contents></push-update>"
    )
    assert push in update, update
    return update.replace(push, body).encode()


def members_xml(value: Any, namespaces: dict[str, str], parent: str | None) -> str:
    """A JSON-shaped tree as XML elements (RFC 7950 section 7): a member qualified where its
    module changes gets that module's namespace, an array repeated elements."""
    if not isinstance(value, dict):
        return escape(text_of(value))
    out = []
    for member, child in value.items():
        module, colon, name = member.partition(":")
        if not colon:
            module, name = parent or "", member
        declare = f" xmlns={quoteattr(namespaces.get(module, 'urn:x'))}" if module != parent else ""
        for item in child if isinstance(child, list) else [child]:
            if item is None:
                out.append(f"<{name}{declare}/>")
            else:
                inner = members_xml(item, namespaces, module) if isinstance(item, dict) else None
                text = escape(text_of(item)) if inner is None else inner
                out.append(f"<{name}{declare}>{text}</{name}>")
    return "".join(out)


def text_of(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


def xml_edit(edit: Any, namespaces: dict[str, str]) -> str:
    """test_native_patch_native.py's JSON edit as an XML ``<edit>``; every module's name
    declared as a prefix on the value (its ``module:name`` leaves become ``prefix:name``)."""
    if not isinstance(edit, dict):
        return f"<edit>{escape(text_of(edit))}</edit>"
    fields = [f"<edit-id>{escape(str(edit.get('edit-id', 'e')))}</edit-id>"]
    for name in ("operation", "target"):
        if name in edit:
            fields.append(f"<{name}>{escape(text_of(edit[name]))}</{name}>")
    if "value" in edit:
        used = {text.partition(":")[0] for text in strings(edit["value"])}
        prefixes = "".join(
            f" xmlns:{module}={quoteattr(namespaces[module])}"
            for module in sorted(used & namespaces.keys())
        )
        fields.append(f"<value{prefixes}>{members_xml(edit['value'], namespaces, None)}</value>")
    return f"<edit>{''.join(fields)}</edit>"


def strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [text for child in value.values() for text in strings(child)]
    if isinstance(value, list):
        return [text for child in value for text in strings(child)]
    return [value] if isinstance(value, str) else []


def module_namespaces(schema: SchemaContext) -> dict[str, str]:
    return {module: ns for ns, module in schema.index.by_namespace.items()}


def deriver_of(text: str, schema: SchemaContext) -> KeyDeriver:
    keyless = "position" if "sample" in text else "reject"
    return KeyDeriver(compile_subscription(text, schema, keyless=keyless))


# ------------------------------------------------------------------ the edges, as XML


@pytest.mark.parametrize(("text", "edits"), EDGES + LEFT_TO_PYTHON + REFUSED)
@pytest.mark.parametrize("framing", FRAMINGS)
def test_native_patch_xml_edges(
    decoder: Any, fx_schema: SchemaContext, text: str, edits: list[Any], framing: str
) -> None:
    """test_native_patch_native.py's edges, refusals and left-to-Python cases as XML, in each
    framing: where the native pass answers, the reference's answer (full and pruned decode);
    every edge the reference keys is keyed natively in every framing (the telemetry message,
    Huawei's and IOS-XE's leaves too), the reference's refusals by the reference."""
    deriver = deriver_of(text, fx_schema)
    ns = fx_schema.index.by_namespace
    namespaces = module_namespaces(fx_schema)
    raw = xml_change("".join(xml_edit(e, namespaces) for e in edits), framing)
    answered = same(decoder, deriver, raw, ns, "dflt", "keys_xml")
    want = reference(deriver, raw, ns, "dflt")
    if want[0] != "ok" or (text, edits) in LEFT_TO_PYTHON:
        assert answered == "python", raw
    else:
        assert answered == "native", raw


def test_native_patch_xml_edges_mostly_native(decoder: Any, fx_schema: SchemaContext) -> None:
    """The JSON edges as XML in a NETCONF notification: nearly all keyed natively (the feature
    removed, none would be)."""
    ns = fx_schema.index.by_namespace
    namespaces = module_namespaces(fx_schema)
    keyed, native_keyed = 0, 0
    for text, edits in EDGES:
        deriver = deriver_of(text, fx_schema)
        raw = xml_change("".join(xml_edit(e, namespaces) for e in edits))
        if reference(deriver, raw, ns, "dflt")[0] != "ok":
            continue
        keyed += 1
        native_keyed += same(decoder, deriver, raw, ns, "dflt", "keys_xml") == "native"
    assert keyed >= 25, keyed
    assert native_keyed >= keyed - 2, (native_keyed, keyed)


def entry(name: str, extra: str = "") -> str:
    return f'<interface xmlns="{NS_IF}"><name>{name}</name>{extra}</interface>'


XML_EDGES: list[tuple[str, str, str]] = [
    # (subscription, edits, who answers when the reference keys it)
    # the reference's quirk: a single entry decodes to an object, two to an array
    (IF, f"<edit><operation>merge</operation><target>{IF}=eth0</target>"
     f"<value>{entry('eth0')}</value></edit>", "native"),
    (IF, f"<edit><operation>merge</operation><target>{IF}=eth0</target>"
     f"<value>{entry('eth0')}{entry('eth0')}</value></edit>", "python"),
    # members no walk reads (left out of the tape): an entry of them only is still an entry
    (IF, f"<edit><operation>merge</operation><target>{IF}=eth0</target><value>"
     f'<interface xmlns="{NS_IF}"><description>d</description><enabled>true</enabled>'
     "</interface></value></edit>", "native"),
    (IF, f"<edit><operation>merge</operation><target>{IF}=eth0</target><value>{entry('eth0')}"
     f'<interface xmlns="{NS_IF}"><description>d</description></interface></value></edit>',
     "python"),
    # whitespace around the target and operation (stripped as the reference strips)
    (IF, f"<edit><operation>\n  delete \n</operation><target>\n  {IF}=eth0\t</target></edit>",
     "native"),
    # an empty value, a value of text only: {}
    (IF, f"<edit><operation>merge</operation><target>{IF}=eth0</target><value/></edit>",
     "native"),
    (IF, f"<edit><operation>merge</operation><target>{IF}=eth0</target><value>x</value></edit>",
     "native"),
    # a key the value gives differently: the reference refuses it
    (IF, f"<edit><operation>merge</operation><target>{IF}=eth0</target>"
     f"<value>{entry('eth9')}</value></edit>", "python"),
    # an identityref value as prefix:name, a filter reading it
    (f"{IF}[type='iana-if-type:ethernetCsmacd']",
     f"<edit><operation>merge</operation><target>{IF}=eth0</target><value>"
     + entry("eth0", '<type xmlns:ift="urn:ietf:params:xml:ns:yang:iana-if-type">'
             "ift:ethernetCsmacd</type>")
     + f"</value></edit><edit><operation>merge</operation><target>{IF}=eth1</target><value>"
     + entry("eth1", '<type xmlns:ift="urn:ietf:params:xml:ns:yang:iana-if-type">'
             "ift:other</type>")
     + "</value></edit>", "native"),
    # an edit element in another namespace (read by local name), other children skipped
    (IF, f'<e:edit xmlns:e="urn:other"><operation>delete</operation><target>{IF}=a</target>'
     "</e:edit><comment>c</comment>", "native"),
    # entities in the target
    (IF, f"<edit><operation>delete</operation><target>{IF}=a&amp;b&#x2F;c</target></edit>",
     "native"),
    # left to the reference: a target with a child element, a field twice, none
    (IF, f"<edit><operation>delete</operation><target>{IF}=a<x/></target></edit>", "python"),
    (IF, f"<edit><operation>delete</operation><target>{IF}=a</target>"
     f"<target>{IF}=b</target></edit>", "python"),
    (IF, f"<edit><edit-id>1</edit-id><edit-id>2</edit-id><operation>delete</operation>"
     f"<target>{IF}=a</target></edit>", "python"),
    (IF, "<edit><operation>delete</operation></edit>", "python"),
    (IF, f"<edit><operation>nope</operation><target>{IF}=a</target></edit>", "python"),
    (IF, "", "python"),
]


@pytest.mark.parametrize(("text", "edits", "who"), XML_EDGES)
@pytest.mark.parametrize("framing", ["netconf", "envelope", "bare", "telemetry", "iosxe"])
def test_native_patch_xml_only_edges(
    decoder: Any, fx_schema: SchemaContext, text: str, edits: str, who: str, framing: str
) -> None:
    """What only XML can say: the native answer is the reference's, and comes from the side
    named (a refusal of the reference always from the reference)."""
    deriver = deriver_of(text, fx_schema)
    ns = fx_schema.index.by_namespace
    raw = xml_change(edits, framing)
    answered = same(decoder, deriver, raw, ns, "dflt", "keys_xml")
    if reference(deriver, raw, ns, "dflt")[0] == "ok":
        assert answered == who, raw
    else:
        assert answered == "python" and who == "python", raw


LONG = "eth0-a-name-longer-than-sixteen-bytes"
FILTERS = {
    "description": "d", "type": "iana-if-type:other", "enabled": "true",
    "link-up-down-trap-enable": "enabled", "admin-status": "up", "oper-status": "up",
    "if-index": "7", "phys-address": "00:11", "speed": "1",
}
MANY = IF + "".join(f"[{leaf}='{value}']" for leaf, value in FILTERS.items())
LEAVES = "".join(
    f"<{leaf}>{value.replace('iana-if-type:', 'ift:')}</{leaf}>" for leaf, value in FILTERS.items()
).replace("<type>", '<type xmlns:ift="urn:ietf:params:xml:ns:yang:iana-if-type">')
IFT = 'xmlns:ift="urn:ietf:params:xml:ns:yang:iana-if-type"'


def long_edit(value: str, name: str = LONG) -> str:
    return (
        f"<edit><operation>merge</operation><target>{IF}={name}</target>"
        f"<value>{value}</value></edit>"
    )


# The fast reader's text scan (sixteen bytes at a time, a leaf closed right after its text):
# what it stops at past the first sixteen bytes, and a leaf's end tag that is not the plain
# ``</name>``.
READER_EDGES: list[tuple[str, str, str]] = [
    (IF, long_edit(entry(LONG)), "native"),
    # a leaf's end tag with white space before its '>', or another name: the slow way
    (IF, long_edit(f'<interface xmlns="{NS_IF}"><name>{LONG}</name ></interface>'), "native"),
    (IF, long_edit(f'<interface xmlns="{NS_IF}"><name>{LONG}</nam></interface>'), "python"),
    (IF, long_edit(f'<interface xmlns="{NS_IF}"><name>{LONG}</namex></interface>'), "python"),
    # references, ']', ']]>', controls, tab and line feed past the first sixteen bytes
    (IF, long_edit(entry(LONG.replace("-bytes", "&amp;bytes")), LONG.replace("-bytes", "%26bytes")),
     "native"),
    (IF, long_edit(entry(LONG + "]x"), LONG + "]x"), "native"),
    (IF, long_edit(entry(LONG + "]]>x")), "python"),
    (IF, long_edit(entry(LONG + "\x01")), "python"),
    (IF, long_edit(entry(LONG + "\uFFFE")), "python"),
    (IF, long_edit(entry(LONG + "\t\nx")), "python"),  # the key differs: refused
    (IF, long_edit(entry(LONG + "\r\nx")), "python"),
    # an operation and a target ending (or starting) with Unicode white space: stripped
    (IF, f"<edit><operation>delete\u00a0</operation><target>\u2003{IF}=a\u0085</target>"
     "</edit>", "native"),
    (IF, f"<edit><operation>\u001fdelete</operation><target>{IF}=a\u001c</target></edit>",
     "python"),  # controls: not XML
    # more members read than the tape's few-members way takes (the general way then), a
    # name read twice (an array), entries in another namespace's list, nested
    (MANY, long_edit(entry(LONG, LEAVES)), "native"),
    (MANY, long_edit(entry(LONG, LEAVES.replace("</speed>", "</speed><speed>2</speed>"))),
     "python"),
    (IF, long_edit(entry(LONG, "<description>a</description><description>b</description>")),
     "native"),
    (f"{IF}[type='iana-if-type:other']",
     long_edit(entry(LONG, f"<type {IFT}>ift:other</type><type {IFT}>ift:other</type>")),
     "python"),
    (f"{IF}[enabled='true']", long_edit(entry(LONG, "<enabled>true</enabled>" * 2)), "python"),
    (IF, long_edit(entry(LONG, f'<x:interface xmlns:x="{NS_IF}"><name>n</name></x:interface>'
                               '<i xmlns="urn:other"><name>m</name><i><name>k</name></i></i>')),
     "native"),
    (f"{IF}/name", long_edit(entry(LONG).replace("<name>", "<name>") + entry(LONG)), "python"),
    # a comment, CDATA, a processing instruction in a value's leaf
    (IF, long_edit(entry(LONG + "<!-- c -->")), "python"),
    (IF, long_edit(entry(LONG + "<![CDATA[x]]>")), "python"),
    (IF, long_edit(entry(LONG + "<?pi x?>")), "python"),
    # prefix:name text: the ':' past the first sixteen bytes, a prefix declared on the leaf
    # itself; a text starting as no name does (a path) and one with a space are no
    # prefix:name (the filter then refuses the edit: "python")
    (f"{IF}[type='iana-if-type:a-long-identity-name-here']",
     long_edit(entry(LONG, f"<type {IFT}>ift:a-long-identity-name-here</type>")), "native"),
    (f"{IF}[type='iana-if-type:other']",
     long_edit(entry(LONG, f"<type {IFT}>ift:a-long-identity-name-here</type>")), "python"),
    (f"{IF}[type='iana-if-type:other']",
     long_edit(entry(LONG, f"<type {IFT.replace('ift', 'a-prefix-of-twenty-bytes')}>"
                           "a-prefix-of-twenty-bytes:other</type>")), "native"),
    (f"{IF}[type='iana-if-type:x']",
     long_edit(entry(LONG, f"<type {IFT}>/ift:x</type>")), "python"),
    (f"{IF}[type='iana-if-type:x']",
     long_edit(entry(LONG, f"<type {IFT}>ift:x y</type>")), "python"),
    (f"{IF}[type='iana-if-type:x-past-sixteen-bytes']",
     long_edit(entry(LONG, f"<type {IFT}>ift:x-past-sixteen-bytes</type >")), "native"),
]


@pytest.mark.parametrize(("text", "edits", "who"), READER_EDGES)
@pytest.mark.parametrize("framing", ["netconf", "pretty", "telemetry"])
def test_native_patch_xml_reader_edges(
    decoder: Any, fx_schema: SchemaContext, text: str, edits: str, who: str, framing: str
) -> None:
    """The fast reader's text scan and leaf ends: the native answer is the reference's, from
    the side named; markup the reader does not take (or refuses) left to the reference."""
    deriver = deriver_of(text, fx_schema)
    ns = fx_schema.index.by_namespace
    raw = xml_change(edits, framing)
    answered = same(decoder, deriver, raw, ns, "dflt", "keys_xml")
    if reference(deriver, raw, ns, "dflt")[0] == "ok":
        assert answered == who, raw
    else:
        assert answered == "python" and who == "python", raw


# What the reader's text scan stops at (sixteen bytes at a time from the text's start, the
# document's last bytes one at a time), slid across the blocks' ends: in the key leaf's text
# ``x`` * offset, the markup, ``y`` * 3; and who answers where the reference keys it.
SLID: list[tuple[str, str, str]] = [
    ("&amp;", "%26", "native"),
    ("&#x2F;", "%2F", "native"),
    ("]", "]", "native"),
    (":", ":", "native"),
    ("]]>", "", "python"),  # not XML: the reference refuses it
    ("\x01", "", "python"),
    ("\t", "", "python"),  # the key differs from the target's: refused
    ("<!--c-->", "", "python"),  # a comment, CDATA, a PI: the reader leaves them
    ("<![CDATA[c]]>", "", "python"),
    ("<?p x?>", "", "python"),
    ("&bad;", "", "python"),  # an entity: refused
]


@pytest.mark.parametrize(("markup", "in_target", "who"), SLID)
def test_native_patch_xml_text_scan_blocks(
    decoder: Any, fx_schema: SchemaContext, markup: str, in_target: str, who: str
) -> None:
    """A byte the text scan must stop at, at every offset around the first three sixteen-byte
    blocks of a leaf's text (and, with the text at the document's end, in its last bytes):
    the native answer is the reference's, from the side named."""
    deriver = deriver_of(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    for offset in range(50):
        name = "x" * offset + markup + "yyy"
        target = "x" * offset + (in_target or "q") + "yyy"
        edit = (
            f"<edit><operation>merge</operation><target>{IF}={target}</target>"
            f"<value>{entry(name)}</value></edit>"
        )
        raw = xml_change(edit)
        answered = same(decoder, deriver, raw, ns, "dflt", "keys_xml")
        if reference(deriver, raw, ns, "dflt")[0] == "ok":
            assert answered == who, raw
        else:
            assert answered == "python" and who == "python", raw


# An edit's children told by name (xmlpatch.rs reads them by length first): names as long
# as a field's, longer or shorter, fields in any order, given twice.
FIELD_EDGES: list[tuple[str, str]] = [
    (f"<edit><target>{IF}=a</target><operation>delete</operation></edit>", "native"),
    (f"<edit><value/><target>{IF}=a</target><edit-id>1</edit-id><operation>merge</operation>"
     "</edit>", "native"),
    (f"<edit><targex>x</targex><operation>delete</operation><target>{IF}=a</target>"
     "<operatiox>x</operatiox><valux/><edit-ix/><edit-i/><values/><targets/></edit>", "native"),
    (f"<edit><operation>delete</operation><target>{IF}=a</target><tArget>x</tArget>"
     "<Operation>x</Operation><VALUE/></edit>", "native"),
    (f"<edit><operation>delete</operation><targe>{IF}=a</targe></edit>", "python"),
    (f"<edit><operations>delete</operations><target>{IF}=a</target></edit>", "python"),
    (f"<edit><operation>merge</operation><target>{IF}=a</target><value>{entry('a')}</value>"
     f"<value>{entry('a')}</value></edit>", "python"),
    (f"<edit><operation>delete</operation><operation>delete</operation>"
     f"<target>{IF}=a</target></edit>", "python"),
]


@pytest.mark.parametrize(("edits", "who"), FIELD_EDGES)
def test_native_patch_xml_edit_fields(
    decoder: Any, fx_schema: SchemaContext, edits: str, who: str
) -> None:
    """An edit's target, operation, value and edit-id among other children: the native answer
    is the reference's, from the side named (a field given twice: the reference's)."""
    deriver = deriver_of(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    raw = xml_change(edits)
    answered = same(decoder, deriver, raw, ns, "dflt", "keys_xml")
    if reference(deriver, raw, ns, "dflt")[0] == "ok":
        assert answered == who, raw
    else:
        assert answered == "python" and who == "python", raw


# The default namespace in scope after an element that declares another: a container's
# (restored at its end tag), a leaf's closed right after its text, a self-closing one's,
# nested twice. The value's key leaf gives ``b`` for the target's ``a``: in the entry's
# namespace the reference refuses the edit; in another one it is no key, and the edit is
# keyed (natively). A default left wrong would turn one into the other.
OTHER = 'xmlns="urn:example:other"'
DEFAULTS: list[tuple[str, str]] = [
    (f"<x {OTHER}><y>1</y></x><name>b</name>", "python"),
    (f"<x {OTHER}><y><z>1</z></y><w/></x><name>b</name>", "python"),
    (f"<description {OTHER}>d</description><name>b</name>", "python"),
    (f"<x {OTHER}/><name>b</name>", "python"),
    (f'<x {OTHER}><y xmlns="{NS_IF}"><z>1</z></y><w>2</w></x><name>b</name>', "python"),
    (f'<x {OTHER}><y xmlns="{NS_IF}"><z>1</z></y><name>b</name></x>', "native"),
    (f'<x {OTHER}><name xmlns="{NS_IF}">b</name></x>', "native"),
    (f"<name {OTHER}>b</name>", "native"),
    (f"<name {OTHER}>b</name><x {OTHER}><y>1</y></x><name>b</name>", "python"),
]


@pytest.mark.parametrize(("inside", "who"), DEFAULTS)
def test_native_patch_xml_default_namespace_restored(
    decoder: Any, fx_schema: SchemaContext, inside: str, who: str
) -> None:
    """Members after an element that declares another default namespace are in the entry's
    (the reader keeps the default in scope as elements open and close): the reference's
    answer, from the side named."""
    deriver = deriver_of(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    value = f'<interface xmlns="{NS_IF}">{inside}</interface>'
    raw = xml_change(
        f"<edit><operation>merge</operation><target>{IF}=a</target><value>{value}</value></edit>"
    )
    assert same(decoder, deriver, raw, ns, "dflt", "keys_xml") == who, raw


# Edits whose values' members differ from the edit before only in their namespace or one
# letter (the tape builder remembers the last qualified member it decided on): the last
# edit's entry gives the key ``x`` for the target's ``a``, which the reference refuses, and
# would not if the entry were left out as the member before it was.
NOT_READ = [
    '<interface xmlns="urn:example:other"><name>b</name></interface>',
    f'<interfacf xmlns="{NS_IF}"><name>b</name></interfacf>',
    f'<interfac xmlns="{NS_IF}"><name>b</name></interfac>',
    f'<interfaces xmlns="{NS_IF}"><name>b</name></interfaces>',
]


@pytest.mark.parametrize("before", NOT_READ)
def test_native_patch_xml_members_decided_apart(
    decoder: Any, fx_schema: SchemaContext, before: str
) -> None:
    """A value's member after one of another namespace or name: read as the reference reads
    it (the edit after refused by the reference, natively too), and the edit before keyed
    natively alone."""
    deriver = deriver_of(IF, fx_schema)
    ns = fx_schema.index.by_namespace

    def edit(target: str, value: str) -> str:
        return (
            f"<edit><operation>merge</operation><target>{IF}={target}</target>"
            f"<value>{value}</value></edit>"
        )

    alone = xml_change(edit("b", before) * 2)
    assert same(decoder, deriver, alone, ns, "dflt", "keys_xml") == "native", alone
    raw = xml_change(edit("b", before) + edit("a", entry("x")))
    assert same(decoder, deriver, raw, ns, "dflt", "keys_xml") == "python", raw
    assert reference(deriver, raw, ns, "dflt")[0] != "ok", raw


@pytest.mark.parametrize("where", [10, 100, 1000])
def test_native_patch_xml_not_ascii(decoder: Any, fx_schema: SchemaContext, where: int) -> None:
    """A document with a character past ASCII (at its start, middle or end: the reader's
    ASCII check goes sixteen and sixty-four bytes at a time) is read as UTF-8 (keyed
    natively); a byte that is no UTF-8 is the reference's error."""
    deriver = deriver_of(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    names = [f"e{i}-" + "x" * 39 for i in range(where // 100 + 1)]
    edits = "".join(long_edit(entry(name + "é"), name + "%C3%A9") for name in names)
    raw = xml_change(edits)
    assert b"\xc3\xa9" in raw
    assert same(decoder, deriver, raw, ns, "dflt", "keys_xml") == "native"
    ascii_raw = xml_change(long_edit(entry(LONG)))
    for doc in (raw, ascii_raw):
        # in a text, near the start, the middle, the end (the last bytes past the blocks)
        for near in (min(where, len(doc) - 30), len(doc) - 10):
            at = doc.index(b">", near) + 1  # text or tail, not inside a name
            bad = doc[:at] + b"\xff" + doc[at:]
            assert reference(deriver, bad, ns, "dflt")[0] == "error"
            assert native_answer(decoder, deriver, bad, ns, "dflt", "keys_xml") is None


def test_native_patch_xml_datastore_changes_twice(decoder: Any, fx_schema: SchemaContext) -> None:
    """A push-change-update whose yang-patch is given twice: the reference refuses it (which
    one would a reader take?); the native pass leaves it to it."""
    deriver = deriver_of(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    edit = f"<edit><operation>delete</operation><target>{IF}=a</target></edit>"
    raw = xml_change(edit).replace(b"</yang-patch>", b"</yang-patch><yang-patch/>", 1)
    assert reference(deriver, raw, ns, "dflt")[0] == "error"
    assert native_answer(decoder, deriver, raw, ns, "dflt", "keys_xml") is None


# ------------------------------------------------------------------- the framings' fields

EDIT = f"<edit><edit-id>e</edit-id><operation>delete</operation><target>{IF}=a</target></edit>"


def change_body(id_leaves: str = "<id>1042</id>") -> str:
    return (
        f'<push-change-update xmlns="{NS_YP}">{id_leaves}<datastore-changes>'
        f'<yang-patch xmlns="{NS_PATCH}"><patch-id>p</patch-id>{EDIT}</yang-patch>'
        "</datastore-changes></push-change-update>"
    )


def telemetry(inner: str, head: str = "", meta: str = "", ns: str = NS_TM) -> str:
    """A telemetry message: ``head`` before its metadata (a manifest), ``meta`` inside it."""
    return (
        f'<message xmlns="{ns}">{head}<telemetry-message-metadata>{meta}'
        f"</telemetry-message-metadata><payload>{inner}</payload></message>"
    )


def manifest(name: str) -> str:
    return f"<network-node-manifest><name>{name}</name></network-node-manifest>"


def netconf(inner: str, head: str) -> str:
    return f'<notification xmlns="{NS_NC}">{head}{inner}</notification>'


def envelope(inner: str, head: str) -> str:
    return f'<envelope xmlns="{NS_ENV}">{head}<contents>{inner}</contents></envelope>'


TS = "<node-export-timestamp> 2026-11-20T10:00:01Z </node-export-timestamp>"
TIME = "<eventTime>2026-11-20T10:00:00Z</eventTime>"
FRAMED_FIELDS = [
    # the manifest's node, the notification's time over the export timestamp
    telemetry(netconf(change_body(), TIME), manifest("tm-node"), TS),
    # an empty eventTime keeps the export timestamp; the hostname over the manifest's name
    telemetry(
        netconf(change_body(), "<eventTime/><hostname>nc-node</hostname>"), manifest("tm"), TS
    ),
    # an empty export timestamp is the event time ("", not None) when nothing inside has one
    telemetry(
        envelope(change_body(), "<hostname>e</hostname><sequence-number>5</sequence-number>"),
        meta="<node-export-timestamp></node-export-timestamp>",
    ),
    # no metadata: no event time; a manifest without a name: the default node
    telemetry(netconf(change_body(), ""), "<network-node-manifest/>"),
    # a telemetry message inside one: the outer manifest's node stays, the inner's is unread
    telemetry(telemetry(netconf(change_body(), ""), manifest("inner"), TS), manifest("outer")),
    # the subscription metadata read for its refusals only
    telemetry(
        netconf(change_body(), TIME),
        manifest("n"),
        TS + "<yang-push-subscription><id>1042</id><xpath-filter>/a</xpath-filter>"
        "</yang-push-subscription>",
    ),
    telemetry(
        netconf(change_body(), TIME),
        manifest("n"),
        "<yang-push-subscription><xpath-filter>/a</xpath-filter><xpath-filter>/b</xpath-filter>"
        "</yang-push-subscription>",
    ),
    telemetry(netconf(change_body(), TIME), manifest("n"), TS + TS),  # a field twice
    telemetry(netconf(change_body(), TIME), manifest("bad name "), TS),  # the reference's refusal
    telemetry(netconf(change_body(), TIME), ns="urn:example:not-telemetry"),  # not the message
    f'<message xmlns="{NS_TM}"><payload/></message>',  # no payload
    # Huawei: hostname over sysName, sequence-number over sequenceNumber, each read only then
    netconf(change_body(), TIME + "<hostname>h</hostname><sysName>s</sysName>"),
    netconf(change_body(), TIME + "<hostname></hostname><sysName>s</sysName>"),
    netconf(change_body(), TIME + "<sysName>s</sysName><sequenceNumber>9</sequenceNumber>"),
    netconf(
        change_body(),
        "<sysName>s</sysName><sequence-number>3</sequence-number><sequenceNumber>9</sequenceNumber>",
    ),
    netconf(change_body(), "<hostname>h</hostname><sysName> s</sysName>"),  # sysName unread
    netconf(change_body(), "<sysName> s</sysName>"),  # the reference's refusal
    netconf(change_body(), "<sysName>s</sysName><sequenceNumber>x</sequenceNumber>"),  # refused
    netconf(change_body(), "<sysName>s</sysName><sequenceNumber></sequenceNumber>"),  # refused
    # IOS-XE: subscription-id where id is absent
    netconf(change_body("<subscription-id> 1042 </subscription-id>"), "<hostname>x</hostname>"),
    netconf(change_body("<id>1042</id><subscription-id>7</subscription-id>"), ""),
    netconf(change_body("<subscription-id>abc</subscription-id>"), ""),  # the reference's refusal
    netconf(change_body("<subscription-id/>"), ""),  # refused
    # nested framings: each level over the one outside it
    envelope(
        netconf(change_body(), "<eventTime>T2</eventTime><sequenceNumber>2</sequenceNumber>"),
        "<event-time>T1</event-time><hostname>e</hostname><sequence-number>1</sequence-number>",
    ),
    envelope(
        envelope(change_body(), "<event-time></event-time>"),
        "<event-time>T1</event-time><sequence-number>1</sequence-number>",
    ),
]


@pytest.mark.parametrize("document", FRAMED_FIELDS)
def test_native_patch_xml_framing_fields(
    decoder: Any, fx_schema: SchemaContext, document: str
) -> None:
    """The telemetry message, Huawei's and IOS-XE's leaves and nested framings as the reference
    reads them (which field is read when, "" and None apart, each level over the one outside):
    keyed natively where the reference keys, with its answer; its refusals left to it."""
    deriver = deriver_of(IF, fx_schema)
    ns = fx_schema.index.by_namespace
    raw = document.encode()
    answered = same(decoder, deriver, raw, ns, "dflt", "keys_xml")
    assert answered == ("native" if reference(deriver, raw, ns, "dflt")[0] == "ok" else "python")


# ------------------------------------------------------------------------------ the sample


def as_xml(raw: bytes, index: int, namespaces: dict[str, str]) -> bytes | None:
    """A JSON yang-patch of ``yangkey sample`` (envelope or telemetry message) re-sent as XML:
    a NETCONF notification or an envelope by turns, its node, edits and values kept."""
    try:
        document = json.loads(raw)
    except ValueError:
        return None
    stack, node, body = [document], None, None
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            node = item.get("hostname", node)
            manifest = item.get("network-node-manifest")
            node = manifest.get("name", node) if isinstance(manifest, dict) else node
            body = item.get("ietf-yang-push:push-change-update", body)
            stack.extend(item.values())
    if not isinstance(body, dict) or not isinstance(node, str):
        return None
    try:
        edits = body["datastore-changes"]["yang-patch"]["edit"]
        text = "".join(xml_edit(edit, namespaces) for edit in edits)
    except (KeyError, TypeError):
        return None
    return xml_change(text, ["netconf", "envelope"][index % 2], body.get("id"), node)


def test_native_patch_xml_builder_records_and_coverage(fx_schema: SchemaContext) -> None:
    """MessageBuilder over ``yangkey sample``'s mix with its JSON yang-patches also sent as
    XML: the same messages and rejections with the native pass as without, and every XML
    yang-patch keyed natively (the feature removed, none would be)."""
    records = generate(nodes=3, interfaces=4, rounds=3, seed=7).records
    namespaces = module_namespaces(fx_schema)
    patches = [
        xml
        for index, raw in enumerate(json_patches(records))
        if (xml := as_xml(raw, index, namespaces)) is not None
    ]
    assert len(patches) >= 9
    builder, reference_builder = builders()
    for number, raw in enumerate(patches):
        assert builder.build(raw, f"p:{number}") == reference_builder.build(raw, f"p:{number}")
    assert builder.native_keyed >= 0.9 * len(patches), (builder.native_keyed, len(patches))
    mix = records + patches
    with_native, answered, _ = builder_outputs(mix, None, True, xml=True)
    without, none, _ = builder_outputs(mix, None, False, xml=True)
    assert none == 0
    assert with_native == without
    xml_push = [raw for raw in records if raw[:1] == b"<"]
    assert answered >= 0.9 * len(patches) + 0.8 * len(xml_push), (answered, len(patches))
