"""Differential property tests of Phase 3 (hypothesis).

* the generated walkers (:mod:`yangkey.keys`) against the interpreted reference
  (``reference_walker.py``), on schema-driven notifications over the fixture modules and
  ietf-interfaces: the same concrete XPaths per branch, or the same rejection class;
* every fast path against its general path: the one-branch push-update path of
  ``KeyDeriver.derive`` against ``KeyDeriver.instances``, the JSON envelope decoder against the
  general JSON decoder, and XML against JSON for the same data.

Anything raised that is not a ``YangkeyError`` propagates: it is a bug, never a rejection.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote as pct

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from lxml import etree
from reference_walker import reference_xpaths
from yangson import datatype as dt
from yangson.schemanode import (
    InternalNode,
    LeafListNode,
    ListNode,
    SchemaNode,
    TerminalNode,
)

from yangkey.compiled import CompiledSubscription
from yangkey.errors import EmptyUpdate, NoMatchError, NotificationError, YangkeyError
from yangkey.keys import KeyDeriver
from yangkey.messages import CONTENT_TYPE_JSON, CONTENT_TYPE_XML
from yangkey.notifications import (
    Edit,
    Notification,
    _json_notification,
    decode,
    parse_target,
)
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription
from yangkey.values import QNameText
from yangkey.xmlnotifications import _fast_push_update, _xml_notification
from yangkey.xmlsafe import parse_xml
from yangkey.xmltree import converter_for

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SUBSCRIPTIONS = [
    "/ietf-interfaces:interfaces/interface",
    "/ietf-interfaces:interfaces/interface[name='eth0']",
    "/ietf-interfaces:interfaces/interface[type='iana-if-type:ethernetCsmacd']",
    "/ietf-interfaces:interfaces/interface[enabled='true'][type='iana-if-type:ethernetCsmacd']",
    "/ietf-interfaces:interfaces/interface/ietf-ip:ipv4/address",
    "/ietf-interfaces:interfaces/interface[name='eth1']/ietf-ip:ipv4/address[ip='10.0.0.1']",
    "/ietf-interfaces:interfaces/interface/statistics/in-octets",
    "/ietf-interfaces:interfaces/interface/name",
    "/ietf-interfaces:interfaces/interface/higher-layer-if",
    "/yk-test:top/flow",
    "/yk-test:top/flow[proto='yk-test:tcp']",
    "/yk-test:top/flow[port='80'][enabled='true']",
    "/yk-test:top/flow[label='x | y']",
    "/yk-test:top/site/rack",
    "/yk-test:top/site[name=\"a'b\"]/rack[id='7']",
    "/yk-test:top/site/yk-aug:ports/port",
    "/yk-test:top/site[region='eu']/yk-aug:ports/port[num='8']",
    "/yk-test:top/site[name='eth0']/yk-aug:ports",
    "/yk-test:top/item",
    "/yk-test:top/codes",
    "/yk-test:top/codes[.='5']",
    "/yk-test:top/ratios",
    "/yk-test:top/peer",
    "/yk-test:top/sample",
    "/yk-test:a-b/c",
    "/yk-test:top/simple",
    "/yk-test:top/flow | /yk-test:top/site/rack | /yk-test:top/codes",
    "/yk-test:top/site/rack[id='7'] | /yk-test:top/site[name='eth0'] | /yk-test:a-b",
]

# Small pools, so that generated values hit pinned keys and filters, collide (duplicates) and
# need quoting; plus values no canonicalizer accepts.
STRINGS = ["eth0", "eth1", "a'b", 'q"x', "a'\"b", "x | y", "eu", "é€", "l\nf", "", "%s", "{v}"]
INTEGERS: list[Any] = [0, 5, 7, 8, 80, -3, 2**40, "007", "80", " 8", "+5"]
BOOLEANS: list[Any] = [True, False, "true", "false"]
IDENTITIES = [
    "yk-test:tcp",
    "yk-test:udp",
    "yk-aug:sctp",
    "tcp",
    "iana-if-type:ethernetCsmacd",
    "iana-if-type:softwareLoopback",
    # A YANG prefix where RFC 7951 wants the module name (resolved), one that names no
    # module (kept as written), and text that is no identity (refused).
    "ykt:tcp",
    "yka:sctp",
    "ianaift:ethernetCsmacd",
    "nosuch:tcp",
    "a:b:c",
]
DECIMALS: list[Any] = ["1.50", 1.5, "-0.00", 2, "1e2"]
IPS = ["10.0.0.1", "2001:db8::1", "2001:0DB8:0:0::1", "::1"]
IP_TYPEDEFS = {"ip-address", "ip-address-no-zone", "ipv6-address", "ipv6-address-no-zone"}
# Values some canonicalizer refuses (and that do no harm to a string).
INVALID: list[Any] = [None, {"x": 1}, [1, 2], [None], "x1", "yes", "abc", "zz::1"]
IF_PATH = "/ietf-interfaces:interfaces/interface"
NOISE_MEMBERS = ["\x00deleted", "zz", "yk-aug:zz", "unknown-module:name"]


def value_pool(datatype: dt.DataType) -> list[Any]:
    while isinstance(datatype, dt.LeafrefType):
        datatype = datatype.ref_type
    if datatype.name in IP_TYPEDEFS:
        return IPS
    if isinstance(datatype, dt.IntegralType):
        return INTEGERS
    if isinstance(datatype, dt.BooleanType):
        return BOOLEANS
    if isinstance(datatype, dt.IdentityrefType):
        return IDENTITIES
    if isinstance(datatype, dt.Decimal64Type):
        return DECIMALS
    return STRINGS


def member_name(node: SchemaNode, parent_module: str | None) -> str:
    return node.name if node.ns == parent_module else f"{node.ns}:{node.name}"


class TreeMaker:
    """Draws JSON-shaped data for the part of a schema the subscription's branches walk."""

    def __init__(self, root: SchemaNode, compiled: CompiledSubscription) -> None:
        self.root = root
        self.relevant: set[tuple[tuple[str, str], ...]] = set()
        for branch in compiled.branches:
            path: tuple[tuple[str, str], ...] = ()
            for step in branch.steps:
                path = (*path, (step.module, step.name))
                self.relevant.add(path)

    def leaf(self, draw: st.DrawFn, node: TerminalNode, junk: bool = True) -> Any:
        pool = value_pool(node.type)
        if junk and draw(st.integers(0, 25)) == 0:
            return draw(st.sampled_from(INVALID))
        return draw(st.sampled_from(pool))

    def object(
        self,
        draw: st.DrawFn,
        node: InternalNode,
        path: tuple[tuple[str, str], ...],
        keys: tuple[tuple[str, str], ...] = (),
    ) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for child in node.data_children():
            child_path = (*path, (child.ns, child.name))
            member = member_name(child, node.ns if path else None)
            if draw(st.integers(0, 30)) == 0:
                member = f"{child.ns}:{child.name}"  # redundantly qualified: lenient RFC 7951
            if isinstance(child, LeafListNode):
                if child_path in self.relevant or draw(st.integers(0, 3)) == 0:
                    values = draw(st.lists(st.sampled_from(value_pool(child.type)), max_size=3))
                    obj[member] = values[0] if len(values) == 1 and draw(st.booleans()) else values
            elif isinstance(child, TerminalNode):
                is_key = (child.name, child.ns) in keys
                odds = 25 if is_key else (1 if child_path in self.relevant else 3)
                if draw(st.integers(0, odds)) != 0:
                    obj[member] = self.leaf(draw, child)
            elif child_path in self.relevant and draw(st.integers(0, 5)) != 0:
                obj[member] = self.node(draw, child, child_path)
        if draw(st.integers(0, 15)) == 0:
            # Members no schema node has, one of them the walkers' own marker of deleted nodes.
            obj[draw(st.sampled_from(NOISE_MEMBERS))] = draw(st.sampled_from([True, "x", {}]))
        return obj

    def node(self, draw: st.DrawFn, node: SchemaNode, path: tuple[tuple[str, str], ...]) -> Any:
        if draw(st.integers(0, 25)) == 0:
            return draw(st.sampled_from(["junk", 3, []]))
        assert isinstance(node, InternalNode)
        if isinstance(node, ListNode):
            keys = tuple(node.keys)
            entries: list[Any] = [
                self.object(draw, node, path, keys) for _ in range(draw(st.integers(0, 3)))
            ]
            if draw(st.integers(0, 20)) == 0:
                entries.append(draw(st.sampled_from(["junk", 4, None])))
            if len(entries) == 1 and draw(st.booleans()):
                return entries[0]  # a single entry, as XML decodes it
            return entries
        return self.object(draw, node, path)

    def tree(self, draw: st.DrawFn) -> dict[str, Any]:
        assert isinstance(self.root, InternalNode)
        return self.object(draw, self.root, ())


class Compiled(dict[str, tuple[CompiledSubscription, SchemaNode]]):
    def __init__(self, prefixes: dict[str, str]) -> None:
        super().__init__()
        self.prefixes = prefixes
        """The search path's unique YANG prefixes (Phase 2's, for the reference walker)."""

    def __repr__(self) -> str:  # hypothesis prints the arguments of a failing example
        return "<compiled SUBSCRIPTIONS>"


@pytest.fixture(scope="module")
def compiled_all(fx_schema: SchemaContext) -> Compiled:
    result = Compiled(fx_schema.index.unique_prefixes)
    for text in SUBSCRIPTIONS:
        compiled = compile_subscription(
            text, fx_schema, keyless="position" if "sample" in text else "reject"
        )
        result[text] = (compiled, fx_schema.schema_root(compiled.modules))
    return result


Outcome = tuple[str, Any]


def outcome(function: Callable[[], Any]) -> Outcome:
    try:
        return ("ok", function())
    except NoMatchError as exc:
        # The reference tells an empty update from the rest; why there is no instance (shape,
        # filtered out, nothing on the path) is test_core_diagnosis's.
        return ("rejected", EmptyUpdate if isinstance(exc, EmptyUpdate) else NoMatchError)
    except YangkeyError as exc:  # anything else is a bug and fails the test
        return ("rejected", type(exc))


def generated(deriver: KeyDeriver, note: Notification) -> Outcome:
    return outcome(lambda: deriver.derive(note).branch_xpaths)


def push_update(data: dict[str, Any]) -> Notification:
    return Notification("generated", CONTENT_TYPE_JSON, "push-update", "n", 1, data=data)


# ------------------------------------------------------------------ walker vs reference


@SETTINGS
@given(data=st.data())
def test_core_diff_walker_matches_reference_push_update(compiled_all, data) -> None:
    compiled, root = compiled_all[data.draw(st.sampled_from(SUBSCRIPTIONS))]
    tree = data.draw(st.composite(lambda draw: TreeMaker(root, compiled).tree(draw))())
    note = push_update(tree)
    deriver = KeyDeriver(compiled)
    expected = outcome(lambda: reference_xpaths(compiled, root, note, compiled_all.prefixes))
    event(f"{expected[0]} {len(compiled.branches)} branch(es)")
    assert generated(deriver, note) == expected, (compiled.xpath, tree)
    if (
        expected[0] == "ok"
        and len(compiled.branches) == 1
        and expected[1][0] != (compiled.branches[0].template,)
    ):
        # The one-branch fast path of derive() against the general per-branch path.
        (found,) = deriver.instances(note)
        assert tuple(sorted(set(found))) == expected[1][0]


def edit_strategy(compiled: CompiledSubscription, root: SchemaNode) -> st.SearchStrategy[Edit]:
    @st.composite
    def draw_edit(draw: st.DrawFn) -> Edit:
        branch = draw(st.sampled_from(compiled.branches))
        steps = branch.steps
        depth = draw(st.integers(1, len(steps) + 1))
        node: SchemaNode = root
        text = ""
        parent_module: str | None = None
        target_keys: dict[str, str] = {}
        for step in steps[:depth]:
            target_keys = {}  # of the last step, which the value's entry must repeat
            assert isinstance(node, InternalNode)
            child = node.get_data_child(step.name, step.module)
            assert child is not None
            node = child
            text += "/" + (
                step.name if step.module == parent_module else f"{step.module}:{step.name}"
            )
            parent_module = step.module
            if isinstance(node, ListNode) and node.keys and draw(st.integers(0, 12)):
                for key_name, key_module in node.keys:
                    leaf = node.get_data_child(key_name, key_module)
                    assert isinstance(leaf, TerminalNode)
                    value = draw(st.sampled_from(value_pool(leaf.type)))
                    target_keys[key_name] = (
                        str(value).lower() if isinstance(value, bool) else str(value)
                    )
                text += "=" + ",".join(pct(v, safe="") for v in target_keys.values())
            elif isinstance(node, LeafListNode) and draw(st.booleans()):
                text += "=" + pct(str(draw(st.sampled_from(value_pool(node.type)))), safe="")
        if depth > len(steps):
            text += "/deeper"
        operation = draw(st.sampled_from(["delete", "remove", "merge", "replace", "create"]))
        value = None
        if operation not in ("delete", "remove") and depth <= len(steps):
            maker = TreeMaker(root, compiled)
            path = tuple((step.module, step.name) for step in steps[:depth])
            parent = node.parent
            assert isinstance(parent, InternalNode)
            member = member_name(node, parent.ns if depth > 1 else None)
            if isinstance(node, TerminalNode):
                content: Any = maker.leaf(draw, node)
            else:
                content = maker.node(draw, node, path)
            for entry in content if isinstance(content, list) else [content]:
                if isinstance(entry, dict) and isinstance(node, ListNode):
                    # The value's entry is the target's (RFC 8072): the same key values.
                    entry.update((k, v) for k, v in target_keys.items() if k in entry)
            value = {member: content}
        return Edit("e", operation, parse_target(text, "generated"), value)

    return draw_edit()


@SETTINGS
@given(data=st.data())
def test_core_diff_walker_matches_reference_yang_patch(compiled_all, data) -> None:
    compiled, root = compiled_all[data.draw(st.sampled_from(SUBSCRIPTIONS))]
    edits = data.draw(st.lists(edit_strategy(compiled, root), min_size=1, max_size=3))
    note = Notification(
        "generated", CONTENT_TYPE_JSON, "push-change-update", "n", 1, edits=tuple(edits)
    )
    expected = outcome(lambda: reference_xpaths(compiled, root, note, compiled_all.prefixes))
    assert generated(KeyDeriver(compiled), note) == expected, (compiled.xpath, edits)


@SETTINGS
@given(data=st.data())
def test_core_diff_edit_cache_matches_reference(compiled_all, data) -> None:
    """One deriver across notifications, as a pipeline keeps it: edits whose targets it has
    seen (with other values, from the small value pools) come from its per-target cache, and
    still match the reference, rejections included."""
    compiled, root = compiled_all[data.draw(st.sampled_from(SUBSCRIPTIONS))]
    deriver = KeyDeriver(compiled)
    batches = data.draw(
        st.lists(
            st.lists(edit_strategy(compiled, root), min_size=1, max_size=3), min_size=2, max_size=4
        )
    )
    for edits in [*batches, [edit for batch in batches for edit in batch]]:
        note = Notification(
            "generated", CONTENT_TYPE_JSON, "push-change-update", "n", 1, edits=tuple(edits)
        )
        expected = outcome(
            lambda note=note: reference_xpaths(compiled, root, note, compiled_all.prefixes)
        )
        assert generated(deriver, note) == expected, (compiled.xpath, edits)
    event(f"cached targets {sum(len(plan.found) for plan in deriver.plans) > 0}")


# ------------------------------------------------------------------ XML vs JSON


def xml_expressible(value: Any) -> Any:
    """The tree without what XML cannot say apart: members no schema node has (no XML name for
    "\\u0000deleted"), null members (absent), empty arrays (no element at all), and empty
    objects (``<entry/>`` decodes as an empty leaf), and JSON numbers that are not integers
    (RFC 7951 wants decimal64 as a string and JSON refuses floats; XML text is never a float)."""
    if type(value) is float:
        return str(value)
    if isinstance(value, dict):
        kept = {}
        for member, child in value.items():
            kept_child = xml_expressible(child)
            if member not in NOISE_MEMBERS and kept_child not in (None, {}, []):
                kept[member] = kept_child
        return kept
    if isinstance(value, list):
        return [child for item in value if (child := xml_expressible(item)) != {}]
    return value


class XmlWriter:
    """The XML encoding of a JSON-shaped tree (RFC 7950 section 7), the schema naming the
    namespaces and which leaves are identityrefs."""

    def __init__(self, schema: SchemaContext) -> None:
        self.schema = schema
        self.prefixes: dict[str, str] = {}

    def namespace(self, module: str) -> str:
        return self.schema.index.modules[module].namespace

    def text(self, node: SchemaNode, value: Any) -> str:
        if value is True or value is False:
            return "true" if value else "false"
        text = str(value)
        datatype = getattr(node, "type", None)
        module, colon, name = text.partition(":")
        if (
            isinstance(datatype, dt.IdentityrefType)
            and colon
            and module in self.schema.index.modules
        ):
            prefix = self.prefixes.setdefault(module, f"p{len(self.prefixes)}")
            return f"{prefix}:{name}"
        return text

    def element(self, parent: etree._Element, node: SchemaNode, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, list) and isinstance(node, (ListNode, LeafListNode)):
            for item in value:
                self.element(parent, node, item)
            return
        if isinstance(value, list) and isinstance(node, TerminalNode) and value != [None]:
            for item in value:  # a leaf given an array: repeated elements, an array again
                self.element(parent, node, item)
            return
        element = etree.SubElement(parent, f"{{{self.namespace(node.ns)}}}{node.name}")
        if isinstance(value, dict):
            self.members(element, node, value)
        elif value != [None]:
            element.text = self.text(node, value)

    def members(self, element: etree._Element, node: SchemaNode, obj: dict[str, Any]) -> None:
        for member, value in obj.items():
            module, colon, name = member.partition(":")
            if not colon:
                module, name = node.ns, member
            child = node.get_data_child(name, module) if isinstance(node, InternalNode) else None
            if child is None:  # an object where a leaf belongs ({"x": 1} of INVALID)
                sub = etree.SubElement(element, f"{{{self.namespace(node.ns)}}}{member}")
                sub.text = str(value)
                continue
            self.element(element, child, value)

    def document(self, root: SchemaNode, tree: dict[str, Any]) -> str:
        self.members(etree.Element("holder"), root, tree)  # learns the identity prefixes
        nsmap = {prefix: self.namespace(module) for module, prefix in self.prefixes.items()}
        holder = etree.Element("holder", nsmap=nsmap)  # type: ignore[arg-type]
        self.members(holder, root, tree)
        # Each top-level element is written with the declarations in scope.
        return "".join(etree.tostring(child, encoding="unicode") for child in holder)


@SETTINGS
@given(data=st.data())
def test_core_diff_xml_matches_json(compiled_all, fx_schema, notif, data) -> None:
    text = data.draw(st.sampled_from(SUBSCRIPTIONS))
    compiled, root = compiled_all[text]
    tree = xml_expressible(
        data.draw(st.composite(lambda draw: TreeMaker(root, compiled).tree(draw))())
    )
    ns_modules = fx_schema.index.by_namespace
    deriver = KeyDeriver(compiled)
    xml = notif.envelope_xml(XmlWriter(fx_schema).document(root, tree), hostname="n", sub_id=1)
    from_json = outcome(
        lambda: (
            deriver.derive(
                decode(notif.envelope(tree, hostname="n", sub_id=1), "j", ns_modules)
            ).key
        )
    )
    from_xml = outcome(lambda: deriver.derive(decode(xml, "x", ns_modules)).key)
    assert from_xml == from_json, (text, tree, xml)


@SETTINGS
@given(data=st.data())
def test_core_diff_xml_pruned_matches_full(compiled_all, fx_schema, notif, data) -> None:
    """XML contents converted only along what the walkers read (``decode``'s ``wanted``, as
    MessageBuilder decodes) against the full conversion: the same XPaths per branch, or the
    same rejection."""
    text = data.draw(st.sampled_from(SUBSCRIPTIONS))
    compiled, root = compiled_all[text]
    tree = xml_expressible(
        data.draw(st.composite(lambda draw: TreeMaker(root, compiled).tree(draw))())
    )
    ns_modules = fx_schema.index.by_namespace
    deriver = KeyDeriver(compiled)
    xml = notif.envelope_xml(XmlWriter(fx_schema).document(root, tree), hostname="n", sub_id=1)
    full = outcome(lambda: deriver.derive(decode(xml, "x", ns_modules)).branch_xpaths)
    pruned = outcome(
        lambda: deriver.derive(decode(xml, "x", ns_modules, lambda _: deriver.wanted)).branch_xpaths
    )
    event(f"pruned {pruned[0]}")
    assert pruned == full, (text, tree, xml)


def test_core_xml_pruned_leaves_out_what_no_walker_reads(ietf_schema, notif) -> None:
    """The pruned conversion does leave members out (else the test above proves nothing),
    and keeps the ones a filter compares."""
    xml = notif.envelope_xml(
        '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"'
        ' xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type"><interface><name>eth0</name>'
        "<type>ianaift:ethernetCsmacd</type><enabled>true</enabled></interface></interfaces>"
    )
    ns_modules = ietf_schema.index.by_namespace
    for text, kept in [
        (IF_PATH, {"name"}),
        (f"{IF_PATH}[type='iana-if-type:ethernetCsmacd']", {"name", "type"}),
        (f"{IF_PATH}/name | {IF_PATH}/enabled", {"name", "enabled"}),
    ]:
        deriver = KeyDeriver(compile_subscription(text, ietf_schema))
        note = decode(xml, "x", ns_modules, lambda _, d=deriver: d.wanted)
        entry = note.data["ietf-interfaces:interfaces"]["interface"]
        assert set(entry) == kept, text
        assert deriver.derive(note).key == deriver.derive(decode(xml, "x", ns_modules)).key


def test_core_xml_pruned_passes_over_wanted_tags_off_the_path(ietf_schema, notif) -> None:
    """The pruned conversion asks lxml for every tag the walkers read at any depth: one found
    under a member no walker reads (a ``name`` in ``statistics``, an ``interface`` in an
    unknown container) is passed over, as the full conversion's walk never sees it there."""
    xml = notif.envelope_xml(
        '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">'
        "<interface><name>eth0</name><statistics><name>bad</name></statistics>"
        "<x><interface><name>eth9</name></interface></x></interface>"
        "<interface><statistics><name>bad</name></statistics><name>eth1</name></interface>"
        "</interfaces>"
    )
    ns_modules = ietf_schema.index.by_namespace
    deriver = KeyDeriver(compile_subscription(IF_PATH, ietf_schema))
    note = decode(xml, "x", ns_modules, lambda _: deriver.wanted)
    assert note.data == {
        "ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}, {"name": "eth1"}]}
    }
    full = deriver.derive(decode(xml, "x", ns_modules))
    assert deriver.derive(note) == full
    assert full.xpaths == (f"{IF_PATH}[name='eth0']", f"{IF_PATH}[name='eth1']")
    # the walk over every element (small documents) passes over the same ones
    conv = converter_for(ns_modules)
    trie, every = conv.trie(deriver.wanted)
    contents = parse_xml(xml, "x").find(".//{*}datastore-contents")
    assert contents is not None
    assert conv.pruned(contents, trie, ()) == conv.pruned(contents, trie, every) == note.data


# ------------------------------------------------------- XML wrapper fast path vs general

XML_NAMESPACES = {
    "notification": "urn:ietf:params:xml:ns:netconf:notification:1.0",
    "envelope": "urn:ietf:params:xml:ns:yang:ietf-yp-notification",
    "push": "urn:ietf:params:xml:ns:yang:ietf-yang-push",
    "message": "urn:ietf:params:xml:ns:yang:ietf-telemetry-message",
}
XML_TEXTS = ["", " ", "7", " 7\n", "07", "-1", "4294967295", "4294967296", "x", "\u0661\u0660",
             " r1", "a\tb", "<x/>", "<x>1</x>"]  # fmt: skip
XML_DATA = (
    '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"'
    ' xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type"><interface><name>eth0</name>'
    "<type>ianaift:ethernetCsmacd</type><mtu>1500</mtu></interface>"
    "<interface><name>eth1</name></interface></interfaces>"
)


@st.composite
def xml_wrapped(draw: st.DrawFn) -> str:
    """XML push-updates (and a few push-change-updates) bare, in a NETCONF notification, an
    envelope, both, or a telemetry message: mostly well formed (so that the fast path takes
    them), each field sometimes missing, twice, out of range, in another namespace, or out of
    order, and sometimes next to elements no reader expects."""

    def rarely() -> bool:
        return draw(st.integers(0, 9)) == 0

    def field(name: str, good: list[str]) -> list[str]:
        roll = draw(st.integers(0, 9))
        if roll == 0:
            return []
        text = draw(st.sampled_from(good if roll > 2 else XML_TEXTS))
        element = f"<{name}>{text}</{name}>"
        if rarely():
            element = f'<o:{name} xmlns:o="urn:other">{text}</o:{name}>'
        return [element, element] if roll == 1 else [element]

    def wrap(tag: str, namespace: str, fields: list[str], inner: str) -> str:
        children = [*fields, inner]
        if rarely():
            children.append("<extra/>")
        order = draw(st.permutations(children)) if rarely() else children
        return f'<{tag} xmlns="{namespace}">{"".join(order)}</{tag}>'

    if rarely():
        edit = f"<edit><edit-id>1</edit-id><operation>delete</operation><target>{IF_PATH}=eth0</target></edit>"  # noqa: E501
        body = f"<datastore-changes><yang-patch>{edit}</yang-patch></datastore-changes>"
        kind = "push-change-update"
    else:
        data = draw(st.sampled_from([XML_DATA, "", "<x:thing xmlns:x='urn:other'/>"]))
        body = "" if rarely() else f"<datastore-contents>{data}</datastore-contents>"
        kind = "push-update"
    inner = wrap(kind, XML_NAMESPACES["push"], field("id", ["1042", "0"]), body)
    shape = draw(st.sampled_from(["bare", "notification", "envelope", "both", "message"]))
    if shape in ("notification", "both", "message"):
        fields = [
            *field("eventTime", ["2026-11-20T10:00:00Z", " 2026-11-20T10:00:00Z "]),
            *field("hostname", ["r1", "r2"]),
            *field("sequence-number", ["7", "0"]),
        ]
        inner = wrap("notification", XML_NAMESPACES["notification"], fields, inner)
    if shape in ("envelope", "both"):
        fields = [
            *field("event-time", ["2026-11-20T10:00:00Z"]),
            *field("hostname", ["r1", ""]),
            *field("sequence-number", ["7", "4294967295"]),
        ]
        contents = "<contents/>" if rarely() else f"<contents>{inner}</contents>"
        inner = wrap("envelope", XML_NAMESPACES["envelope"], fields, contents)
    if shape == "message":
        manifest = "<network-node-manifest><name>m1</name></network-node-manifest>"
        payload = f"<payload>{inner}</payload>"
        inner = wrap("message", XML_NAMESPACES["message"], [manifest], payload)
    return inner


def xml_outcome(function: Callable[[], Notification]) -> Any:
    """The notification, or the rejection with its message (the fast path must not change
    which error a document gets)."""
    try:
        note = function()
    except YangkeyError as exc:
        return ("rejected", type(exc), str(exc))
    return ("ok", note, qnames(note.data))


def qnames(value: Any) -> Any:
    """``value`` with each QNameText shown with its module form (it equals its plain text)."""
    if isinstance(value, dict):
        return {member: qnames(child) for member, child in value.items()}
    if isinstance(value, list):
        return [qnames(child) for child in value]
    return (value, value.module_value) if isinstance(value, QNameText) else value


@SETTINGS
@given(document=xml_wrapped())
def test_core_diff_xml_wrapper_fast_path_matches_general(ietf_schema, document) -> None:
    """decode of an XML notification (the wrapper fast path first) against the general
    recursive path alone, with the full conversion and with the walkers' pruned one."""
    ns_modules = ietf_schema.index.by_namespace
    deriver = KeyDeriver(compile_subscription(IF_PATH, ietf_schema))
    raw = document.encode()
    for wanted in (None, lambda _: deriver.wanted):
        general = xml_outcome(
            lambda wanted=wanted: _xml_notification(
                parse_xml(raw, "n.xml"),
                "n.xml",
                Notification("n.xml", CONTENT_TYPE_XML, "push-update"),
                converter_for(ns_modules),
                wanted,
            )
        )
        assert xml_outcome(lambda wanted=wanted: decode(raw, "n.xml", ns_modules, wanted)) == (
            general
        ), document
    taken = _fast_push_update(parse_xml(raw, "n.xml"), "n.xml", converter_for(ns_modules), None)
    event(f"fast path taken {taken is not None}")


def test_core_xml_fast_path_takes_the_usual_wrappers(ietf_schema, notif) -> None:
    """The wrappers producers send are decoded by the fast path (else the test above compares
    the general path with itself), and the answer is the general path's."""
    ns_modules = ietf_schema.index.by_namespace
    conv = converter_for(ns_modules)
    push = notif.netconf_xml(XML_DATA).split("<eventTime>")[1].split("</eventTime>")[1]
    for document in (
        notif.netconf_xml(XML_DATA),
        notif.envelope_xml(XML_DATA),
        push.removesuffix("</notification>"),
    ):
        root = parse_xml(document, "n.xml")
        fast = _fast_push_update(root, "n.xml", conv, None)
        assert fast is not None, document
        general = _xml_notification(
            root, "n.xml", Notification("n.xml", CONTENT_TYPE_XML, "push-update"), conv
        )
        assert fast == general
        assert qnames(fast.data) == qnames(general.data)
        assert fast.data["ietf-interfaces:interfaces"]["interface"][0]["type"].module_value == (
            "iana-if-type:ethernetCsmacd"
        )
    # and passes a telemetry message on, whole, to the general path
    root = parse_xml(notif.telemetry_xml(XML_DATA), "n.xml")
    assert _fast_push_update(root, "n.xml", conv, None) is None


# ------------------------------------------------------------- envelope fast path vs general

FIELD_VALUES: list[Any] = [None, "", "r1", "a\nb", 7, -1, 2**32, True, "7", 1.5, {}, []]


@st.composite
def envelope_documents(draw: st.DrawFn) -> Any:
    """Envelopes around push-update and push-change-update, mostly well formed (so that the
    fast path takes them), each field sometimes missing, badly typed or out of range, and
    sometimes joined by members the fast path does not expect."""

    def field(document: dict[str, Any], member: str, good: list[Any]) -> None:
        roll = draw(st.integers(0, 9))
        if roll == 0:
            return  # missing
        document[member] = draw(st.sampled_from(good if roll > 2 else FIELD_VALUES))

    def rarely() -> bool:
        return draw(st.integers(0, 9)) == 0

    push: dict[str, Any] = {}
    field(push, "id", [0, 1042, 2**32 - 1, 2**32, -1])
    if draw(st.booleans()):
        interfaces = {"ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}]}}
        field(push, "datastore-contents", [interfaces, {}])
        kind = "ietf-yang-push:push-update"
    else:
        edit = {"edit-id": "1", "operation": "delete", "target": f"{IF_PATH}=eth0"}
        field(
            push,
            "datastore-changes",
            [
                {"yang-patch": {"edit": [edit]}},
                {"ietf-yang-patch:yang-patch": {"edit": [edit]}},
                {"yang-patch": {"edit": "x"}},
            ],
        )
        kind = "ietf-yang-push:push-change-update"
    contents: dict[str, Any] = {kind.split(":")[1] if rarely() else kind: push}
    if rarely():
        contents["other:thing"] = {}
    envelope: dict[str, Any] = {}
    field(envelope, "event-time", ["2026-11-20T10:00:00Z"])
    field(envelope, "hostname", ["r1", ""])
    field(envelope, "sequence-number", [0, 7, 2**64 - 1])
    envelope["contents"] = [] if rarely() else contents
    document: dict[str, Any] = {
        "x:envelope" if rarely() else "ietf-yp-notification:envelope": envelope
    }
    if rarely():
        document["extra"] = 1
    return document


@SETTINGS
@given(document=envelope_documents())
def test_core_diff_envelope_fast_path_matches_general(ietf_schema, document) -> None:
    raw = orjson.dumps(document)
    fast = outcome(lambda: decode(raw, "n.json", ietf_schema.index.by_namespace))
    general = outcome(
        lambda: _json_notification(
            orjson.loads(raw), "n.json", Notification("n.json", CONTENT_TYPE_JSON, "push-update")
        )
    )
    assert fast == general


@SETTINGS
@given(document=envelope_documents())
def test_core_diff_decode_hot_path_matches_any_spelling(ietf_schema, document) -> None:
    """decode's hot path (compact bytes, checked for duplicate members by orjson's rewrite)
    against the other spellings of the same document, which the slow duplicate check reads: the
    same notification or the same rejection; and a member given twice is refused by both."""
    ns_modules = ietf_schema.index.by_namespace
    compact = orjson.dumps(document)
    spaced = json.dumps(document, indent=1, ensure_ascii=True).encode()
    expected = outcome(lambda: decode(compact, "n.json", ns_modules))
    for other in (spaced, b" " + compact, compact.decode()):
        assert outcome(lambda raw=other: decode(raw, "n.json", ns_modules)) == expected
    first = orjson.dumps(dict([next(iter(document.items()))]))[1:-1]
    for twice in (b"{" + first + b"," + compact[1:], b"{ " + first + b" ,\n" + spaced[1:]):
        with pytest.raises(YangkeyError, match="more than once"):
            decode(twice, "n.json", ns_modules)


def test_core_edit_cache_still_checks_value_keys(ietf_schema) -> None:
    """A target seen before comes from the cache, but a value naming another entry than the
    target is refused all the same (as the first time, when the tree is built)."""
    deriver = KeyDeriver(compile_subscription(IF_PATH, ietf_schema))
    target = parse_target(f"{IF_PATH}=eth0", "t")

    def note(name: str) -> Notification:
        value = {"ietf-interfaces:interface": [{"name": name, "mtu": 1500}]}
        edit = Edit("e", "merge", target, value)
        return Notification("t", CONTENT_TYPE_JSON, "push-change-update", "n", 1, edits=(edit,))

    assert deriver.derive(note("eth0")).xpaths == (f"{IF_PATH}[name='eth0']",)
    assert deriver.plans[0].found  # the target is cached now
    assert deriver.derive(note("eth0")).xpaths == (f"{IF_PATH}[name='eth0']",)
    with pytest.raises(YangkeyError, match="the target names 'eth0'"):
        deriver.derive(note("eth9"))


def test_core_edit_value_with_several_entries_is_refused_cold_and_warm(ietf_schema) -> None:
    """RFC 8072: an edit whose target names one list entry carries that entry. Two entries
    were merged into one, so a member in both (here the same leaf-list, once module-qualified)
    was decided by whichever a reader took: hypothesis found the generated walker and the
    reference disagreeing on it. Both refuse now, first seen and from the cache."""
    subscription = f"{IF_PATH}/higher-layer-if"
    compiled = compile_subscription(subscription, ietf_schema)
    root = ietf_schema.schema_root(compiled.modules)
    target = parse_target(f"{IF_PATH}=eth0", "t")

    def note(*entries: dict[str, Any]) -> Notification:
        edit = Edit("e", "merge", target, {"ietf-interfaces:interface": list(entries)})
        return Notification("t", CONTENT_TYPE_JSON, "push-change-update", "n", 1, edits=(edit,))

    split = note({"higher-layer-if": []}, {"ietf-interfaces:higher-layer-if": ["eth0"]})
    assert outcome(lambda: reference_xpaths(compiled, root, split)) == (
        "rejected", NotificationError)
    assert generated(KeyDeriver(compiled), split) == ("rejected", NotificationError)
    with pytest.raises(NotificationError, match="holds 2 entries of list ietf-interfaces:int"):
        KeyDeriver(compiled).derive(split)

    one = note({"name": "eth0", "higher-layer-if": ["eth1"]}, "not an entry")
    expected = (f"{IF_PATH}[name='eth0']/higher-layer-if[.='eth1']",)
    assert outcome(lambda: reference_xpaths(compiled, root, one)) == ("ok", (expected,))

    # The cache: a branch ending in the list the target names.
    warm = KeyDeriver(compile_subscription(IF_PATH, ietf_schema))
    assert warm.derive(note({"name": "eth0"})).xpaths == (f"{IF_PATH}[name='eth0']",)
    assert warm.plans[0].found  # the target is cached now
    with pytest.raises(NotificationError, match="holds 2 entries"):
        warm.derive(note({"name": "eth0"}, {"name": "eth0", "mtu": 9000}))
