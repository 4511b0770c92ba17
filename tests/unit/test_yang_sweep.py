"""Sweep: every IETF/IANA module that pyang ships compiles, keys and names topics.

For every module, the computed YANG library implementing that module is built; then for every
list, leaf-list and container that the module defines (its own trees and what it augments into
other modules' trees; choice and case are transparent; config and state alike):

* Phase 2 compiles the path to one branch;
* an instance is generated from the schema (one entry per list on the path, key values drawn
  from the key leaf types: identities derived from the identityref base, enum names, values in
  range, strings that pass the type's patterns when a probe does) and encoded in JSON (RFC 7951
  push-update in a YANG-Push envelope) and XML (NETCONF notification) with non-canonical XML
  spellings where the leaf type has a canonical form (``+07`` for 7, ``01.50`` for 1.5,
  uncompressed IPv6, an XML prefix for an identity);
* both derive the key: byte-identical, and equal to the template filled with the canonical
  values;
* a topic name is made (Kafka-legal, within 249 characters).

A path may instead fail with one of :data:`DOCUMENTED_FAILURES` (a clear error class the README
names). Anything else, including a traceback, fails the test. The counts are printed.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import orjson
import pytest
from yangson import datatype as dt
from yangson.schemadata import SchemaData
from yangson.schemanode import (
    AnyContentNode,
    InternalNode,
    LeafListNode,
    ListNode,
    NotificationNode,
    RpcActionNode,
    SchemaNode,
    TerminalNode,
)

from yangkey.compiled import Branch
from yangkey.errors import YangkeyError
from yangkey.keys import KeyDeriver
from yangkey.modules import ModuleIndex, default_search_path, pyang_module_dirs
from yangkey.notifications import decode
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription
from yangkey.topics import TopicNamer
from yangkey.xpath import quote

#: The modules whose keyed lists failed before the computed library implemented referenced
#: modules (issue 9).
ISSUE_MODULES = (
    "ietf-routing",
    "ietf-nat",
    "ietf-network-instance",
    "ietf-logical-network-element",
    "ietf-i2rs-rib",
    "ietf-mud",
    "ietf-access-control-list",
    "ietf-subscribed-notifications",
    "ietf-yang-push",
)
NC_NS = "urn:ietf:params:xml:ns:netconf:notification:1.0"
YP_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
NODE = "sweep-node"
SUBSCRIPTION = 7
TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")

#: error kind -> reason pattern -> why it is a documented, clear refusal.
DOCUMENTED_FAILURES: dict[tuple[str, str], str] = {
    ("schema", r"list \S+ has no key"): "keyless (config false) list: no predicate identifies "
    "its entries; subscribe to a parent or use --keyless position",
}

_IP_TYPEDEFS = {"ip-address", "ip-address-no-zone", "ipv6-address", "ipv6-address-no-zone"}
_IP_PREFIX_TYPEDEFS = {"ip-prefix", "ipv6-prefix"}
_STRING_PROBES = (
    "k1",
    "a",
    "1",
    "192.0.2.1",
    "192.0.2.0/24",
    "00:00:5e:00:53:01",
    "2026-01-01T00:00:00Z",
    "host.example.com",
    "/a",
    "0",
    "A1",
    "1.1",
    "aa:bb",
    "urn:a",
)


@dataclass
class Value:
    json: Any
    xml: str
    canon: str
    nsdecl: dict[str, str] = field(default_factory=dict)


class ValueMaker:
    def __init__(self, schema_data: SchemaData, index: ModuleIndex) -> None:
        self.schema_data = schema_data
        self.index = index

    def make(self, datatype: dt.DataType) -> Value:
        while isinstance(datatype, dt.LeafrefType):
            datatype = datatype.ref_type
        if isinstance(datatype, dt.UnionType):
            for member in datatype.types:
                value = self.make(member)
                # A union's value is compared as text (or as an IP address): no respelling.
                return Value(value.json, value.canon, value.canon, value.nsdecl)
        name = datatype.name
        if name in _IP_TYPEDEFS:
            return Value("2001:db8::1", "2001:0DB8:0:0:0:0:0:1", "2001:db8::1")
        if name in _IP_PREFIX_TYPEDEFS:
            return Value("2001:db8::/32", "2001:0db8:0000::/32", "2001:db8::/32")
        if isinstance(datatype, dt.IntegralType):
            number = self.integer(datatype)
            as_json: Any = (
                str(number) if isinstance(datatype, dt.Int64Type | dt.Uint64Type) else number
            )
            xml = f"+0{number}" if number >= 0 else str(number)
            return Value(as_json, xml, str(number))
        if isinstance(datatype, dt.Decimal64Type):
            number = next(
                (d for d in (Decimal("1.5"), Decimal(0)) if d in datatype), Decimal("1.5")
            )
            text = format(number.normalize(), "f")
            canon = text if "." in text else f"{text}.0"
            return Value(canon, f"0{canon}0", canon)
        if isinstance(datatype, dt.BooleanType):
            return Value(True, "true", "true")
        if isinstance(datatype, dt.EmptyType):
            return Value([None], "", "")
        if isinstance(datatype, dt.EnumerationType):
            label = next(iter(sorted(datatype.enum, key=datatype.enum.__getitem__)), "e")
            return Value(label, label, label)
        if isinstance(datatype, dt.BitsType):
            bit = next(iter(datatype.bit), "b")
            return Value(bit, bit, bit)
        if isinstance(datatype, dt.IdentityrefType):
            derived = sorted(self.schema_data.derived_from_all(datatype.bases))
            identity, module = derived[0] if derived else datatype.bases[0]
            namespace = self.index.get(module).namespace or ""
            return Value(
                f"{module}:{identity}", f"p0:{identity}", f"{module}:{identity}", {"p0": namespace}
            )
        if isinstance(datatype, dt.BinaryType):
            return Value("AQID", "AQID", "AQID")
        if isinstance(datatype, dt.StringType):
            text = next((s for s in _STRING_PROBES if s in datatype), "k1")
            return Value(text, text, text)
        text = "/k1"  # instance-identifier: the same text in both encodings
        return Value(text, text, text)

    @staticmethod
    def integer(datatype: dt.IntegralType) -> int:
        candidates = [7, 1, 0]
        if datatype.range is not None:
            candidates += [int(bound[0]) for bound in datatype.range.intervals]
        return next((n for n in candidates if n in datatype), 7)


@dataclass
class Path_:
    nodes: list[SchemaNode]

    def xpath(self) -> str:
        out: list[str] = []
        parent_ns: str | None = None
        for node in self.nodes:
            name, ns = node.qual_name
            out.append(f"/{name}" if ns == parent_ns else f"/{ns}:{name}")
            parent_ns = ns
        return "".join(out)


def _data_children(node: InternalNode) -> list[SchemaNode]:
    return [
        c
        for c in node.data_children()
        if not isinstance(c, RpcActionNode | NotificationNode | AnyContentNode)
    ]


def collect_paths(root: SchemaNode, module: str) -> list[Path_]:
    """Every container, list and leaf-list defined by ``module`` (in any tree)."""
    found: list[Path_] = []

    def walk(node: InternalNode, trail: list[SchemaNode]) -> None:
        for child in _data_children(node):
            here = [*trail, child]
            if isinstance(child, InternalNode | LeafListNode) and child.qual_name[1] == module:
                found.append(Path_(here))
            if isinstance(child, InternalNode):
                walk(child, here)

    assert isinstance(root, InternalNode)
    walk(root, [])
    return found


class Instance:
    """One instance along a schema path, as JSON and XML, with the canonical key values."""

    def __init__(self, path: Path_, values: ValueMaker, index: ModuleIndex) -> None:
        self.values = values
        self.index = index
        self.canon: list[str] = []
        self.json, self.xml = self.render(path.nodes, None)

    def ns(self, module: str) -> str:
        return self.index.get(module).namespace or ""

    def leaf(self, leaf: TerminalNode, parent_module: str | None) -> tuple[str, Any, str]:
        name, module = leaf.qual_name
        value = self.values.make(leaf.type)
        member = name if module == parent_module else f"{module}:{name}"
        attrs = "" if module == parent_module else f" xmlns={quoteattr(self.ns(module))}"
        attrs += "".join(f" xmlns:{p}={quoteattr(u)}" for p, u in value.nsdecl.items())
        return member, value, f"<{name}{attrs}>{escape(value.xml)}</{name}>"

    def filler(self, node: InternalNode, module: str) -> tuple[dict[str, Any], str]:
        """A non-key leaf under a target container or list entry, so that it is not empty."""
        for child in _data_children(node):
            if isinstance(child, TerminalNode) and not isinstance(child, LeafListNode):
                if isinstance(node, ListNode) and child.qual_name in {
                    (k[0], k[1]) for k in node.keys
                }:
                    continue
                member, value, xml = self.leaf(child, module)
                return {member: value.json}, xml
        return {}, ""

    def render(self, nodes: list[SchemaNode], parent_module: str | None) -> tuple[Any, str]:
        node = nodes[0]
        name, module = node.qual_name
        member = name if module == parent_module else f"{module}:{name}"
        open_tag = name if module == parent_module else f"{name} xmlns={quoteattr(self.ns(module))}"
        rest = nodes[1:]
        if isinstance(node, LeafListNode):
            value = self.values.make(node.type)
            self.canon.append(value.canon)
            decls = "".join(f" xmlns:{p}={quoteattr(u)}" for p, u in value.nsdecl.items())
            return {member: [value.json]}, f"<{open_tag}{decls}>{escape(value.xml)}</{name}>"
        assert isinstance(node, InternalNode)
        body: dict[str, Any] = {}
        xml = ""
        if isinstance(node, ListNode):
            if not node.keys:
                self.canon.append("1")  # keyless, --keyless position: the entry's position
            for key_name, key_module in node.keys:
                leaf = node.get_data_child(key_name, key_module)
                assert isinstance(leaf, TerminalNode)
                key_member, value, key_xml = self.leaf(leaf, module)
                body[key_member] = value.json
                xml += key_xml
                self.canon.append(value.canon)
        if rest:
            child_json, child_xml = self.render(rest, module)
            body.update(child_json)
            xml += child_xml
        else:
            extra_json, extra_xml = self.filler(node, module)
            body.update(extra_json)
            xml += extra_xml
        as_json: Any = [body] if isinstance(node, ListNode) else body
        return {member: as_json}, f"<{open_tag}>{xml}</{name}>"

    def notifications(self) -> tuple[bytes, bytes]:
        as_json = orjson.dumps(
            {
                "ietf-yp-notification:envelope": {
                    "event-time": "2026-01-01T00:00:00Z",
                    "hostname": NODE,
                    "contents": {
                        "ietf-yang-push:push-update": {
                            "id": SUBSCRIPTION,
                            "datastore-contents": self.json,
                        }
                    },
                }
            }
        )
        as_xml = (
            f'<notification xmlns="{NC_NS}"><eventTime>2026-01-01T00:00:00Z</eventTime>'
            f"<hostname>{NODE}</hostname>"
            f'<push-update xmlns="{YP_NS}"><id>{SUBSCRIPTION}</id><datastore-contents>'
            f"{self.xml}</datastore-contents></push-update></notification>"
        ).encode()
        return as_json, as_xml


def expected_xpath(branch: Branch, canon: list[str]) -> str:
    assert len(canon) == branch.open_slots, (branch.template, canon)
    return branch.pieces[0] + "".join(
        (value if positional else quote(value)) + piece
        for value, positional, piece in zip(
            canon, branch.positional, branch.pieces[1:], strict=True
        )
    )


def documented(error: YangkeyError) -> str | None:
    for (kind, pattern), why in DOCUMENTED_FAILURES.items():
        if error.kind == kind and re.search(pattern, error.reason):
            return why
    return None


@dataclass
class Tally:
    modules: int = 0
    modules_with_paths: int = 0
    tried: int = 0
    compiled: int = 0
    keyed: int = 0
    documented: Counter[str] = field(default_factory=Counter)
    compiled_by_module: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)


def sweep_module(module: str, search_path: tuple[str, ...], tally: Tally) -> None:
    context = SchemaContext(search_path)
    index = context.index
    try:
        model = context.data_model([module])
    except Exception as exc:
        tally.failures.append(f"{module}: schema: {type(exc).__name__}: {exc}")
        return
    paths = collect_paths(model.schema, module)
    tally.modules_with_paths += bool(paths)
    values = ValueMaker(model.schema_data, index)
    namer = TopicNamer()
    for path in paths:
        xpath = path.xpath()
        tally.tried += 1
        tally.kinds[type(path.nodes[-1]).__name__.removesuffix("Node").lower()] += 1
        refused = False
        try:
            compiled = compile_subscription(xpath, context)
        except YangkeyError as exc:
            why = documented(exc)
            if why is None:
                tally.failures.append(f"{xpath}: compile: {exc.message()}")
                continue
            tally.documented[why] += 1
            refused = True
            # The documented way out must work: key the keyless list by position.
            compiled = compile_subscription(xpath, context, keyless="position")
        except Exception as exc:
            tally.failures.append(f"{xpath}: compile: {type(exc).__name__}: {exc}")
            continue
        tally.compiled += not refused
        try:
            (branch,) = compiled.branches
            instance = Instance(path, values, index)
            want = expected_xpath(branch, instance.canon)
            as_json, as_xml = instance.notifications()
            deriver = KeyDeriver(compiled)
            keys = [
                deriver.derive(decode(raw, name, index.by_namespace)).key
                for raw, name in ((as_json, "json"), (as_xml, "xml"))
            ]
            expected = f"{NODE}\n{SUBSCRIPTION}\n{want}".encode()
            if keys != [expected, expected]:
                tally.failures.append(f"{xpath}: keys {keys!r} != {expected!r}")
                continue
            topic = namer.name(branch)
            if not TOPIC.fullmatch(topic):
                tally.failures.append(f"{xpath}: topic {topic!r}")
                continue
        except Exception as exc:
            tally.failures.append(f"{xpath}: key: {type(exc).__name__}: {exc}")
            continue
        tally.keyed += 1
        tally.compiled_by_module[module] += 1


def shipped_modules() -> list[str]:
    names: list[str] = []
    for directory in pyang_module_dirs():
        index = ModuleIndex.from_dirs((directory,))
        names += [m.name for m in index.modules.values() if m.kind == "module"]
    return sorted(set(names))


def test_every_shipped_module_compiles_keys_and_names_topics(
    capsys: pytest.CaptureFixture[str],
) -> None:
    modules = shipped_modules()
    assert len(modules) > 50, pyang_module_dirs()
    search_path = default_search_path()
    tally = Tally(modules=len(modules))
    for module in modules:
        sweep_module(module, search_path, tally)
    with capsys.disabled():
        print(
            f"\nYANG sweep: {tally.modules} modules ({tally.modules_with_paths} with data "
            f"nodes), {tally.tried} paths tried, {tally.compiled} compiled, {tally.keyed} keyed "
            f"(JSON = XML) with topics, {sum(tally.documented.values())} documented failures"
        )
        print("  paths by kind: " + ", ".join(f"{n} {k}" for k, n in sorted(tally.kinds.items())))
        for why, count in tally.documented.items():
            print(f"  documented: {count} x {why}")
        for failure in tally.failures[:40]:
            print(f"  FAIL {failure}")
        print(
            "  keyed per module: "
            + ", ".join(f"{m} {n}" for m, n in sorted(tally.compiled_by_module.items()))
        )
    assert not tally.failures, f"{len(tally.failures)} undocumented failures"
    # Every path keyed: those with a documented refusal through its documented way out.
    assert tally.keyed == tally.tried
    assert tally.compiled + sum(tally.documented.values()) == tally.tried
    # The modules the issue found failing are among those keyed.
    for module in ISSUE_MODULES:
        assert tally.compiled_by_module[module] > 0, module


def test_sweep_tells_a_documented_failure_from_an_undocumented_one() -> None:
    """The sweep's classifier accepts a keyless list and not an unknown node."""
    context = SchemaContext.cached()
    with pytest.raises(YangkeyError) as keyless:
        compile_subscription("/ietf-routing:routing-state/ribs/rib/routes/route", context)
    assert documented(keyless.value) is not None
    with pytest.raises(YangkeyError) as unknown:
        compile_subscription("/ietf-interfaces:interfaces/no-such-node", context)
    assert documented(unknown.value) is None
