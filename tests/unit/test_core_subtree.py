"""SPEC 2.2 — Phase 1: subtree filter (RFC 6241 section 6) to an XPath union."""

from __future__ import annotations

import pytest

from yangkey.errors import FilterError, InputError, YangkeyError
from yangkey.subtree import normalize_subtree
from yangkey.templates import compile_subscription

NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_IP = "urn:ietf:params:xml:ns:yang:ietf-ip"
NS_SYS = "urn:ietf:params:xml:ns:yang:ietf-system"
NS_HW = "urn:ietf:params:xml:ns:yang:ietf-hardware"
NS_YKT = "urn:example:yangkey:yk-test"
NS_YKA = "urn:example:yangkey:yk-aug"
NC_BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"

IFS = "/ietf-interfaces:interfaces/ietf-interfaces:interface"


@pytest.fixture(scope="module")
def index(ietf_schema):
    return ietf_schema.index


def norm(xml: str, index) -> str:
    return normalize_subtree(xml, index, "filter.xml")


def test_core_subtree_default_xmlns(index) -> None:
    xml = f'<interfaces xmlns="{NS_IF}"><interface/></interfaces>'
    assert norm(xml, index) == IFS


def test_core_subtree_prefixed_qnames_equal_default_xmlns(index) -> None:
    default = (
        f'<interfaces xmlns="{NS_IF}"><interface><name>eth0</name>'
        f'<ipv4 xmlns="{NS_IP}"><mtu/></ipv4></interface></interfaces>'
    )
    prefixed = (
        f'<if:interfaces xmlns:if="{NS_IF}" xmlns:ip="{NS_IP}"><if:interface>'
        "<if:name>eth0</if:name><ip:ipv4><ip:mtu/></ip:ipv4></if:interface></if:interfaces>"
    )
    expected = f"{IFS}[ietf-interfaces:name='eth0']/ietf-ip:ipv4/ietf-ip:mtu"
    assert norm(default, index) == expected
    assert norm(prefixed, index) == expected


def test_core_subtree_filter_wrapper_removed(index) -> None:
    inner = f'<system xmlns="{NS_SYS}"><clock/></system>'
    expected = "/ietf-system:system/ietf-system:clock"
    assert norm(inner, index) == expected
    assert norm(f"<filter>{inner}</filter>", index) == expected
    assert norm(f'<filter type="subtree">{inner}</filter>', index) == expected
    assert norm(f'<nc:filter xmlns:nc="{NC_BASE}" nc:type="subtree">{inner}</nc:filter>',
                index) == expected


def test_core_subtree_each_top_level_element_is_a_branch(index) -> None:
    xml = (
        f'<filter><system xmlns="{NS_SYS}"><clock/></system>'
        f'<hardware xmlns="{NS_HW}"><component/></hardware></filter>'
    )
    assert norm(xml, index) == (
        "/ietf-system:system/ietf-system:clock | /ietf-hardware:hardware/ietf-hardware:component"
    )


def test_core_subtree_whitespace_only_text_is_selection(index) -> None:
    xml = (
        f'<interfaces xmlns="{NS_IF}">\n  <interface>\n    <oper-status>  \n\t </oper-status>\n'
        "  </interface>\n</interfaces>"
    )
    assert norm(xml, index) == f"{IFS}/ietf-interfaces:oper-status"


def test_core_subtree_content_match_text_is_stripped(index) -> None:
    xml = (
        f'<interfaces xmlns="{NS_IF}"><interface><name>\n   eth0 \t\n</name>'
        "<oper-status/></interface></interfaces>"
    )
    assert norm(xml, index) == f"{IFS}[ietf-interfaces:name='eth0']/ietf-interfaces:oper-status"


def test_core_subtree_only_content_matches_end_branch(index) -> None:
    xml = f'<interfaces xmlns="{NS_IF}"><interface><name>eth0</name></interface></interfaces>'
    assert norm(xml, index) == f"{IFS}[ietf-interfaces:name='eth0']"


def test_core_subtree_multiple_content_matches_on_one_element(index) -> None:
    xml = (
        f'<interfaces xmlns="{NS_IF}"><interface><name>eth0</name><enabled>true</enabled>'
        "<description/><oper-status/></interface></interfaces>"
    )
    stem = f"{IFS}[ietf-interfaces:name='eth0'][ietf-interfaces:enabled='true']"
    assert norm(xml, index) == (
        f"{stem}/ietf-interfaces:description | {stem}/ietf-interfaces:oper-status"
    )


def test_core_subtree_nested_containment(index) -> None:
    xml = (
        f'<interfaces xmlns="{NS_IF}"><interface><name>eth0</name>'
        f'<ipv4 xmlns="{NS_IP}"><address><ip>10.0.0.1</ip><prefix-length/></address>'
        "<mtu/></ipv4></interface></interfaces>"
    )
    stem = f"{IFS}[ietf-interfaces:name='eth0']/ietf-ip:ipv4"
    assert norm(xml, index) == (
        f"{stem}/ietf-ip:address[ietf-ip:ip='10.0.0.1']/ietf-ip:prefix-length"
        f" | {stem}/ietf-ip:mtu"
    )


def test_core_subtree_duplicate_branches_removed_first_seen_order(index) -> None:
    xml = (
        f'<filter><system xmlns="{NS_SYS}"><clock/><ntp/><clock/></system>'
        f'<interfaces xmlns="{NS_IF}"><interface/></interfaces>'
        f'<system xmlns="{NS_SYS}"><ntp/></system></filter>'
    )
    assert norm(xml, index) == (
        "/ietf-system:system/ietf-system:clock | /ietf-system:system/ietf-system:ntp"
        f" | {IFS}"
    )


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("it's", '"it\'s"'),
        ('say "x"', "'say \"x\"'"),
        ("a'b\"c", "concat('a',\"'\",'b\"c')"),
        ("a &amp; b &lt;c&gt;", "'a & b <c>'"),
    ],
)
def test_core_subtree_content_match_quoting(index, text: str, literal: str) -> None:
    xml = f'<interfaces xmlns="{NS_IF}"><interface><name>{text}</name></interface></interfaces>'
    assert norm(xml, index) == f"{IFS}[ietf-interfaces:name={literal}]"


def test_core_subtree_content_match_from_other_module_names_it(fx_schema) -> None:
    xml = (
        f'<top xmlns="{NS_YKT}"><site><name>paris</name><ports xmlns="{NS_YKA}"><port>'
        "<num>8080</num></port></ports></site></top>"
    )
    assert normalize_subtree(xml, fx_schema.index) == (
        "/yk-test:top/yk-test:site[yk-test:name='paris']/yk-aug:ports/yk-aug:port[yk-aug:num='8080']"
    )


@pytest.mark.parametrize(
    "xml",
    [
        f'<interfaces xmlns="{NS_IF}"><interface name="eth0"/></interfaces>',
        f'<interfaces xmlns="{NS_IF}"><interface><name x="1">eth0</name></interface></interfaces>',
        f'<interfaces xmlns="{NS_IF}" xmlns:a="urn:a"><interface a:match="y"/></interfaces>',
        f'<interfaces xmlns="{NS_IF}" mode="all"><interface/></interfaces>',
    ],
)
def test_core_subtree_attribute_match_rejected(index, xml: str) -> None:
    with pytest.raises(FilterError, match=r"(?i)attribute"):
        norm(xml, index)


def test_core_subtree_unknown_namespace_named(index) -> None:
    xml = '<filter><widgets xmlns="urn:example:nowhere"><widget/></widgets></filter>'
    with pytest.raises(YangkeyError) as info:
        norm(xml, index)
    assert "urn:example:nowhere" in str(info.value)
    assert "filter.xml" in str(info.value)


def test_core_subtree_unknown_namespace_on_nested_element_named(index) -> None:
    xml = (f'<interfaces xmlns="{NS_IF}"><interface><x xmlns="urn:example:inner"/></interface>'
           "</interfaces>")
    with pytest.raises(YangkeyError, match="urn:example:inner"):
        norm(xml, index)


def test_core_subtree_missing_namespace_rejected(index) -> None:
    with pytest.raises(YangkeyError, match="interfaces"):
        norm("<interfaces><interface/></interfaces>", index)


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">
<interface><name>&lol4;</name></interface></interfaces>"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">
<interface><name>&xxe;</name></interface></interfaces>"""

EXTERNAL_DTD = """<?xml version="1.0"?>
<!DOCTYPE interfaces SYSTEM "http://127.0.0.1:1/evil.dtd">
<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"><interface/></interfaces>"""


@pytest.mark.parametrize("xml", [BILLION_LAUGHS, EXTERNAL_ENTITY, EXTERNAL_DTD],
                         ids=["billion-laughs", "external-entity", "external-dtd"])
def test_core_subtree_dtd_and_entities_rejected(index, xml: str) -> None:
    with pytest.raises(InputError) as info:
        norm(xml, index)
    assert "filter.xml" in str(info.value)
    assert "root:" not in str(info.value)  # /etc/passwd never leaks into an error


def test_core_subtree_undeclared_entity_rejected(index) -> None:
    xml = f'<interfaces xmlns="{NS_IF}"><interface><name>&foo;</name></interface></interfaces>'
    with pytest.raises(InputError):
        norm(xml, index)


@pytest.mark.parametrize("xml", ["<filter/>", '<filter type="subtree">  \n </filter>',
                                 f'<filter xmlns="{NC_BASE}"></filter>'])
def test_core_subtree_empty_filter_error(index, xml: str) -> None:
    with pytest.raises(FilterError, match=r"(?i)empty"):
        norm(xml, index)


@pytest.mark.parametrize("xml", ["", "   ", "<interfaces", "<a><b></a>", "not xml at all"])
def test_core_subtree_malformed_xml_is_input_error(index, xml: str) -> None:
    with pytest.raises(InputError) as info:
        norm(xml, index)
    assert "filter.xml" in str(info.value)


def test_core_subtree_top_level_content_match_rejected(index) -> None:
    with pytest.raises(FilterError):
        norm(f'<interfaces xmlns="{NS_IF}">eth0</interfaces>', index)


def test_core_subtree_comments_ignored(index) -> None:
    xml = f'<interfaces xmlns="{NS_IF}"><!-- all --><interface><!--x--></interface></interfaces>'
    assert norm(xml, index) == IFS


def test_core_subtree_accepts_bytes(index) -> None:
    xml = f'<interfaces xmlns="{NS_IF}"><interface><name>é</name></interface></interfaces>'
    assert norm(xml.encode("utf-8"), index) == f"{IFS}[ietf-interfaces:name='é']"


def test_core_subtree_compiles_to_same_template_as_xpath(ietf_schema) -> None:
    xml = (
        f'<interfaces xmlns="{NS_IF}"><interface><name>eth0</name>'
        f'<ipv4 xmlns="{NS_IP}"><address/></ipv4></interface></interfaces>'
    )
    from_subtree = compile_subscription(xml, ietf_schema, subtree=True)
    from_xpath = compile_subscription(
        "/ietf-interfaces:interfaces/interface[name='eth0']/ietf-ip:ipv4/address", ietf_schema
    )
    assert [b.template for b in from_subtree.branches] == [
        b.template for b in from_xpath.branches
    ]
    assert from_subtree.branches[0].template == (
        "/ietf-interfaces:interfaces/interface[name='eth0']/ietf-ip:ipv4/address[ip='%s']"
    )


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_core_subtree_dtd_rejected_in_any_encoding(index, encoding: str) -> None:
    """The no-DTD rule holds whatever the document encoding: a UTF-16 filter that declares a
    DTD (even one whose entities it never references) is refused like a UTF-8 one."""
    xml = (
        f'<?xml version="1.0" encoding="{encoding.upper()}"?>'
        '<!DOCTYPE interfaces [<!ENTITY a "x">]>'
        f'<interfaces xmlns="{NS_IF}"><interface><name>abc</name></interface></interfaces>'
    )
    with pytest.raises(InputError):
        norm(xml.encode(encoding), index)


def test_core_subtree_utf16_without_dtd_accepted(index) -> None:
    xml = (
        '<?xml version="1.0" encoding="UTF-16"?>'
        f'<interfaces xmlns="{NS_IF}"><interface><name>é</name></interface></interfaces>'
    )
    assert norm(xml.encode("utf-16"), index) == f"{IFS}[ietf-interfaces:name='é']"


def test_core_subtree_top_level_selection(index) -> None:
    assert norm(f'<interfaces xmlns="{NS_IF}">  \n </interfaces>', index) == (
        "/ietf-interfaces:interfaces"
    )
