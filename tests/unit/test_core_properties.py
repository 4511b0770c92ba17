"""Property tests (hypothesis): key round trip, order invariance, JSON/XML parity."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote as pct

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from lxml import etree

from yangkey.messages import MessageKey
from yangkey.subtree import normalize_subtree
from yangkey.xpath import parse_path, parse_union, quote

IF = "/ietf-interfaces:interfaces/interface"
NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_YKT = "urn:example:yangkey:yk-test"
NS_YKA = "urn:example:yangkey:yk-aug"

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

# Arbitrary text for key values: quotes, pipes, LF, brackets, non-ASCII, all welcome.
any_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20
)
tricky_text = st.text(alphabet="ab '\"|\n[]()é,=/", max_size=12)
# Node names: printable (str.isprintable: no control, format or separator characters but the
# space), no space at either end; anything else is refused (test_core_badinput.py).
node_names = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Cf", "Co", "Cn", "Zl", "Zp", "Zs"),
        whitelist_characters=" ",
    ),
    min_size=1,
    max_size=30,
).filter(lambda name: name == name.strip())
# XML 1.0 cannot carry most control characters, and XML normalises CR; names stay printable.
SAFE = "abcXYZ019 '\"|/-_.:<>&éß€{}%s\\\\"
safe_names = st.text(alphabet=SAFE, min_size=1, max_size=12)


def xpath_for(name: str, value: str) -> str:
    return f"/m:{name}/list[key={quote(value)}]"


@SETTINGS
@given(
    node=node_names,
    sub_id=st.integers(min_value=0, max_value=2**32 - 1),
    values=st.lists(st.one_of(any_text, tricky_text), min_size=1, max_size=6),
    step=st.sampled_from(["a", "if-x", "b.c_d"]),
)
def test_core_prop_compose_parse_round_trip(node: str, sub_id: int, values: list[str],
                                            step: str) -> None:
    xpaths = [xpath_for(step, v) for v in values]
    key = MessageKey.of(node, sub_id, xpaths).encode()
    assert not key.endswith(b"\n")  # every xpath ends with "]": no LF is ever appended
    parsed = MessageKey.parse(key)
    assert parsed.node == node
    assert parsed.subscription_id == sub_id
    assert list(parsed.xpaths) == sorted(set(xpaths))
    assert MessageKey.of(parsed.node, parsed.subscription_id, parsed.xpaths).encode() == key


@SETTINGS
@given(value=st.one_of(any_text, tricky_text))
def test_core_prop_quote_parses_back(value: str) -> None:
    (predicate,) = parse_path(f"/m:list[k={quote(value)}]").steps[0].predicates
    assert predicate.value == value


@SETTINGS
@given(values=st.lists(st.one_of(any_text, tricky_text), min_size=1, max_size=5))
def test_core_prop_union_split_respects_quoted_values(values: list[str]) -> None:
    xpaths = [xpath_for("a", v) for v in values]
    paths = parse_union(" | ".join(xpaths))
    assert [p.steps[1].predicates[0].value for p in paths] == values


@SETTINGS
@given(value=st.text(alphabet=SAFE + "\t ", min_size=1, max_size=15))
def test_core_prop_subtree_content_match_value(ietf_schema, value: str) -> None:
    assume(value.strip())
    root = etree.Element(f"{{{NS_IF}}}interfaces", nsmap={None: NS_IF})
    entry = etree.SubElement(root, f"{{{NS_IF}}}interface")
    etree.SubElement(entry, f"{{{NS_IF}}}name").text = value
    xml = etree.tostring(root, encoding="unicode")
    union = normalize_subtree(xml, ietf_schema.index)
    assert union == (
        f"/ietf-interfaces:interfaces/ietf-interfaces:interface"
        f"[ietf-interfaces:name={quote(value.strip())}]"
    )


# --------------------------------------------------------------------- order invariance


@SETTINGS
@given(data=st.data(), names=st.lists(safe_names, min_size=1, max_size=8, unique=True))
def test_core_prop_key_invariant_under_instance_order(ietf, notif, data, names) -> None:
    shuffled = data.draw(st.permutations(names))
    first = ietf.key(IF, notif.envelope(notif.interfaces_json(names)))
    second = ietf.key(IF, notif.envelope(notif.interfaces_json(list(shuffled))))
    assert first == second
    assert len(MessageKey.parse(first).xpaths) == len(names)


@SETTINGS
@given(
    data=st.data(),
    sites=st.dictionaries(safe_names, st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4,
                                               unique=True), min_size=1, max_size=4),
)
def test_core_prop_nested_key_invariant_under_order(fx, notif, data, sites) -> None:
    assume(any(sites.values()))

    def document(order: list[str], shuffle: bool) -> str:
        entries = []
        for name in order:
            racks = list(sites[name])
            if shuffle:
                racks = data.draw(st.permutations(racks))
            entries.append({"name": name, "rack": [{"id": str(r)} for r in racks]})
        return notif.envelope({"yk-test:top": {"site": entries}})

    ordered = fx.key("/yk-test:top/site/rack", document(list(sites), False))
    shuffled = fx.key("/yk-test:top/site/rack",
                      document(list(data.draw(st.permutations(list(sites)))), True))
    assert ordered == shuffled
    assert len(MessageKey.parse(ordered).xpaths) == sum(len(v) for v in sites.values())


# ------------------------------------------------------------------------- JSON/XML parity


@SETTINGS
@given(names=st.lists(safe_names, min_size=1, max_size=8, unique=True),
       data=st.data())
def test_core_prop_json_xml_parity_interfaces(ietf, notif, names, data) -> None:
    xml_order = list(data.draw(st.permutations(names)))
    js = notif.envelope(notif.interfaces_json(names), hostname="n", sub_id=3)
    xml = notif.envelope_xml(notif.interfaces_xml(xml_order), hostname="n", sub_id=3)
    key_json = ietf.key(IF, js)
    key_xml = ietf.key(IF, xml)
    assert key_json == key_xml
    assert set(MessageKey.parse(key_json).xpaths) == {f"{IF}[name={quote(n)}]" for n in names}


flows = st.lists(
    st.tuples(
        st.sampled_from(["tcp", "udp", "sctp"]),
        st.integers(min_value=0, max_value=2**32 - 1),
        st.booleans(),
    ),
    min_size=1, max_size=6, unique=True,
)


@SETTINGS
@given(entries=flows, zeros=st.integers(min_value=0, max_value=3), data=st.data())
def test_core_prop_json_xml_parity_composite_keys(fx, notif, entries, zeros, data) -> None:
    def json_proto(p: str) -> str:
        return "yk-aug:sctp" if p == "sctp" else f"yk-test:{p}"

    def xml_proto(p: str) -> str:
        return "a:sctp" if p == "sctp" else data.draw(st.sampled_from([p, f"t:{p}"]))

    js = notif.envelope({"yk-test:top": {"flow": [
        {"proto": json_proto(p), "port": n, "enabled": e} for p, n, e in entries]}})
    body: list[Any] = []
    for p, n, e in data.draw(st.permutations(entries)):
        body.append(
            f"<flow><enabled>{str(e).lower()}</enabled><port>{'0' * zeros}{n}</port>"
            f"<proto>{xml_proto(p)}</proto></flow>"
        )
    xml = notif.envelope_xml(
        f'<top xmlns="{NS_YKT}" xmlns:t="{NS_YKT}" xmlns:a="{NS_YKA}">{"".join(body)}</top>')
    key_json = fx.key("/yk-test:top/flow", js)
    assert key_json == fx.key("/yk-test:top/flow", xml)
    for xpath in MessageKey.parse(key_json).xpaths:
        assert xpath.startswith("/yk-test:top/flow[proto='yk-")
        assert "port='0" not in xpath or "port='0']" in xpath


@SETTINGS
@given(values=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=6, unique=True))
def test_core_prop_json_xml_parity_leaf_list(fx, notif, values) -> None:
    js = notif.envelope({"yk-test:top": {"codes": values}})
    xml = notif.envelope_xml(
        f'<top xmlns="{NS_YKT}">'
        + "".join(f"<codes>{'-' if v < 0 else ''}00{abs(v)}</codes>" for v in reversed(values))
        + "</top>"
    )
    key = fx.key("/yk-test:top/codes", js)
    assert key == fx.key("/yk-test:top/codes", xml)
    assert set(MessageKey.parse(key).xpaths) == {f"/yk-test:top/codes[.='{v}']" for v in values}


@SETTINGS
@given(names=st.lists(safe_names, min_size=1, max_size=5, unique=True))
def test_core_prop_patch_delete_matches_push_update(ietf, notif, names) -> None:
    """A delete edit names the same instance a push-update entry with that key would."""
    edits = [
        {"edit-id": str(i), "operation": "delete",
         "target": f"/ietf-interfaces:interfaces/interface={pct(n, safe='')}"}
        for i, n in enumerate(names)
    ]
    change = notif.change_envelope(edits, hostname="n", sub_id=4)
    update = notif.envelope(notif.interfaces_json(names), hostname="n", sub_id=4)
    assert ietf.key(IF, change) == ietf.key(IF, update)
