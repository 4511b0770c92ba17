"""SPEC 2.3 — Phase 2: subscription XPath + schema -> templates, extractions, targets."""

from __future__ import annotations

import pytest

from yangkey.errors import FilterError, SchemaError, YangkeyError
from yangkey.templates import compile_subscription

IF = "/ietf-interfaces:interfaces/interface"
NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_IP = "urn:ietf:params:xml:ns:yang:ietf-ip"
NS_YKT = "urn:example:yangkey:yk-test"


def one(compiled):
    assert len(compiled.branches) == 1
    return compiled.branches[0]


# ------------------------------------------------------------------- IETF modules


def test_core_compile_list_open_key(ietf_schema) -> None:
    branch = one(compile_subscription(IF, ietf_schema))
    assert branch.template == f"{IF}[name='%s']"
    assert branch.extractions == (f"{IF}/name",)
    assert branch.target == "list"
    assert branch.schema_path == IF


def test_core_compile_choice_case_transparent(ietf_schema) -> None:
    # ietf-system clock: choice timezone { case timezone-name { leaf timezone-name } ... }
    branch = one(compile_subscription("/ietf-system:system/clock/timezone-name", ietf_schema))
    assert branch.template == "/ietf-system:system/clock/timezone-name"
    assert branch.target == "leaf"
    assert branch.extractions == ()


def test_core_compile_choice_name_in_path_is_unknown_step(ietf_schema) -> None:
    with pytest.raises(SchemaError) as info:
        compile_subscription("/ietf-system:system/clock/timezone/timezone-name", ietf_schema)
    assert "timezone" in info.value.reason
    assert "timezone-name" not in info.value.reason.split("under")[0]


def test_core_compile_augment_carries_module(ietf_schema) -> None:
    branch = one(compile_subscription(f"{IF}/ietf-ip:ipv4", ietf_schema))
    assert branch.template == f"{IF}[name='%s']/ietf-ip:ipv4"
    assert branch.target == "container"
    assert branch.schema_path == f"{IF}/ietf-ip:ipv4"


def test_core_compile_module_written_only_where_it_changes(ietf_schema) -> None:
    # Redundant qualifications in the subscription are dropped in the template.
    branch = one(compile_subscription(
        "/ietf-interfaces:interfaces/ietf-interfaces:interface/ietf-ip:ipv4/ietf-ip:address",
        ietf_schema,
    ))
    assert branch.template == f"{IF}[name='%s']/ietf-ip:ipv4/address[ip='%s']"
    assert branch.extractions == (f"{IF}/name", f"{IF}/ietf-ip:ipv4/address/ip")


def test_core_compile_ipv6_address_list(ietf_schema) -> None:
    branch = one(compile_subscription(f"{IF}/ietf-ip:ipv6/address", ietf_schema))
    assert branch.template == f"{IF}[name='%s']/ietf-ip:ipv6/address[ip='%s']"


@pytest.mark.parametrize(
    "xpath",
    [
        f"{IF}[name='eth0']",
        f"{IF}[ietf-interfaces:name='eth0']",
        f'{IF}[name="eth0"]',
        f"{IF}[ name = 'eth0' ]",
        f"{IF}[if:name='eth0']",
        f"{IF}[name=concat('eth','0')]",
    ],
)
def test_core_compile_pinned_key_normalised(ietf_schema, xpath: str) -> None:
    branch = one(compile_subscription(xpath, ietf_schema))
    assert branch.template == f"{IF}[name='eth0']"
    assert branch.extractions == ()


@pytest.mark.parametrize(
    ("literal", "requoted"),
    [
        ('"it\'s"', '"it\'s"'),
        ("'say \"x\"'", "'say \"x\"'"),
        ("concat('a',\"'\",'b\"c')", "concat('a',\"'\",'b\"c')"),
        ('"plain"', "'plain'"),
    ],
)
def test_core_compile_pinned_key_requoted(ietf_schema, literal: str, requoted: str) -> None:
    branch = one(compile_subscription(f"{IF}[name={literal}]", ietf_schema))
    assert branch.template == f"{IF}[name={requoted}]"


def test_core_compile_positional_predicate_is_open(ietf_schema) -> None:
    branch = one(compile_subscription(f"{IF}[3]", ietf_schema))
    assert branch.template == f"{IF}[name='%s']"
    assert branch.extractions == (f"{IF}/name",)


def test_core_compile_non_key_predicate_is_warning_not_template(ietf_schema) -> None:
    compiled = compile_subscription(f"{IF}[enabled='true']/oper-status", ietf_schema)
    branch = one(compiled)
    assert branch.template == f"{IF}[name='%s']/oper-status"
    assert "enabled" not in branch.template
    assert len(compiled.warnings) == 1
    assert "enabled" in compiled.warnings[0]


def test_core_compile_no_warnings_for_key_predicates(ietf_schema) -> None:
    assert compile_subscription(f"{IF}[name='eth0']", ietf_schema).warnings == ()


def test_core_compile_pinned_then_open_extraction_carries_pin(ietf_schema) -> None:
    branch = one(compile_subscription(f"{IF}[name='eth0']/ietf-ip:ipv4/address", ietf_schema))
    assert branch.template == f"{IF}[name='eth0']/ietf-ip:ipv4/address[ip='%s']"
    assert branch.extractions == (f"{IF}[name='eth0']/ietf-ip:ipv4/address/ip",)


def test_core_compile_leaf_list_target_open_and_pinned(ietf_schema) -> None:
    open_ = one(compile_subscription("/ietf-system:system/dns-resolver/search", ietf_schema))
    assert open_.template == "/ietf-system:system/dns-resolver/search[.='%s']"
    assert open_.target == "leaf-list"
    assert len(open_.extractions) == 1
    pinned = one(compile_subscription(
        "/ietf-system:system/dns-resolver/search[.=\"example.com\"]", ietf_schema))
    assert pinned.template == "/ietf-system:system/dns-resolver/search[.='example.com']"
    assert pinned.extractions == ()


def test_core_compile_leaf_and_container_targets_add_nothing(ietf_schema) -> None:
    leaf = one(compile_subscription(f"{IF}/oper-status", ietf_schema))
    assert leaf.template == f"{IF}[name='%s']/oper-status"
    assert leaf.target == "leaf"
    container = one(compile_subscription("/ietf-system:system/clock", ietf_schema))
    assert container.template == "/ietf-system:system/clock"
    assert container.target == "container"


def test_core_compile_unknown_node_names_first_unknown_step(ietf_schema) -> None:
    with pytest.raises(SchemaError) as info:
        compile_subscription(f"{IF}/nosuchnode/deeper", ietf_schema)
    assert "nosuchnode" in info.value.reason
    assert "deeper" not in info.value.reason
    assert info.value.position is not None
    assert info.value.position.column == len(IF) + 2


def test_core_compile_unknown_top_level_node(ietf_schema) -> None:
    with pytest.raises(SchemaError, match="interfacez"):
        compile_subscription("/ietf-interfaces:interfacez/interface", ietf_schema)


def test_core_compile_unknown_module(ietf_schema) -> None:
    with pytest.raises(YangkeyError, match="no-such-module"):
        compile_subscription("/no-such-module:thing", ietf_schema)


def test_core_compile_step_below_leaf_rejected(ietf_schema) -> None:
    with pytest.raises(SchemaError, match="oper-status"):
        compile_subscription(f"{IF}/oper-status/below", ietf_schema)


def test_core_compile_unqualified_first_step_error(ietf_schema) -> None:
    with pytest.raises(FilterError, match="interfaces"):
        compile_subscription("/interfaces/interface", ietf_schema)


def test_core_compile_xml_prefix_paths_with_namespace_map(ietf_schema) -> None:
    # Prefixes that are NOT the modules' own prefixes: only the map can resolve them.
    compiled = compile_subscription(
        "/a:interfaces/a:interface[a:name='eth0']/b:ipv4/b:address",
        ietf_schema,
        namespaces={"a": NS_IF, "b": NS_IP},
    )
    assert one(compiled).template == f"{IF}[name='eth0']/ietf-ip:ipv4/address[ip='%s']"


def test_core_compile_xml_prefix_unknown_without_map(ietf_schema) -> None:
    with pytest.raises(YangkeyError, match="zz"):
        compile_subscription("/zz:interfaces/zz:interface", ietf_schema)


def test_core_compile_union_branches_independent(ietf_schema) -> None:
    compiled = compile_subscription(
        f"{IF}[name='a|b'] | /ietf-system:system/clock|/ietf-hardware:hardware/component",
        ietf_schema,
    )
    assert [b.template for b in compiled.branches] == [
        f"{IF}[name='a|b']",
        "/ietf-system:system/clock",
        "/ietf-hardware:hardware/component[name='%s']",
    ]
    assert [b.target for b in compiled.branches] == ["list", "container", "list"]


def test_core_compile_one_bad_branch_fails_whole(ietf_schema) -> None:
    with pytest.raises(SchemaError, match="clockz"):
        compile_subscription(f"{IF} | /ietf-system:system/clockz", ietf_schema)


# ------------------------------------------------------------------- fixture modules


def test_core_compile_composite_key_in_key_statement_order(fx_schema) -> None:
    branch = one(compile_subscription("/yk-test:top/flow", fx_schema))
    assert branch.template == "/yk-test:top/flow[proto='%s'][port='%s'][enabled='%s']"
    assert branch.extractions == (
        "/yk-test:top/flow/proto", "/yk-test:top/flow/port", "/yk-test:top/flow/enabled",
    )


def test_core_compile_composite_key_partly_pinned(fx_schema) -> None:
    # Given in another order, with a prefix and a non-canonical integer.
    branch = one(compile_subscription(
        "/yk-test:top/flow[enabled='true'][ykt:port='0080']", fx_schema))
    assert branch.template == "/yk-test:top/flow[proto='%s'][port='80'][enabled='true']"
    assert branch.extractions == ("/yk-test:top/flow/proto",)


def test_core_compile_composite_key_fully_pinned(fx_schema) -> None:
    branch = one(compile_subscription(
        "/yk-test:top/flow[proto='yk-test:tcp' and port='443' and enabled='false']", fx_schema))
    assert branch.template == "/yk-test:top/flow[proto='yk-test:tcp'][port='443'][enabled='false']"
    assert branch.extractions == ()


def test_core_compile_pinned_identityref_without_module_gets_leaf_module(fx_schema) -> None:
    branch = one(compile_subscription("/yk-test:top/flow[proto='udp']", fx_schema))
    assert branch.template.startswith("/yk-test:top/flow[proto='yk-test:udp']")


def test_core_compile_pinned_identityref_xml_prefix_resolved(fx_schema) -> None:
    """With the prefix->namespace map known, ``p:tcp`` is the identity yk-test:tcp (canonical
    identityref is module:identity, SPEC 2.4): the template must say so, or no JSON/XML data
    (which always canonicalises to yk-test:tcp) can ever match the pinned key."""
    branch = one(compile_subscription(
        "/p:top/p:flow[p:proto='p:tcp']", fx_schema, namespaces={"p": NS_YKT}))
    assert branch.template == "/yk-test:top/flow[proto='yk-test:tcp'][port='%s'][enabled='%s']"


def test_core_compile_invalid_pinned_literal_is_subscription_error(fx_schema) -> None:
    """A pinned value the key type cannot hold is a fault of the subscription (filter/schema),
    not of a notification."""
    with pytest.raises(YangkeyError) as info:
        compile_subscription("/yk-test:top/flow[port='eighty']", fx_schema)
    assert "eighty" in str(info.value)
    assert isinstance(info.value, FilterError | SchemaError), type(info.value).__name__


def test_core_compile_nested_lists(fx_schema) -> None:
    branch = one(compile_subscription("/yk-test:top/site/rack", fx_schema))
    assert branch.template == "/yk-test:top/site[name='%s']/rack[id='%s']"
    assert branch.extractions == ("/yk-test:top/site/name", "/yk-test:top/site/rack/id")


def test_core_compile_nested_lists_outer_pinned(fx_schema) -> None:
    branch = one(compile_subscription("/yk-test:top/site[name='paris']/rack[007]", fx_schema))
    assert branch.template == "/yk-test:top/site[name='paris']/rack[id='%s']"


def test_core_compile_list_inside_case(fx_schema) -> None:
    branch = one(compile_subscription("/yk-test:top/item", fx_schema))
    assert branch.template == "/yk-test:top/item[n='%s']"
    assert branch.schema_path == "/yk-test:top/item"


def test_core_compile_augment_list_from_second_module(fx_schema) -> None:
    branch = one(compile_subscription("/yk-test:top/site/yk-aug:ports/port", fx_schema))
    assert branch.template == "/yk-test:top/site[name='%s']/yk-aug:ports/port[num='%s']"
    assert branch.extractions == (
        "/yk-test:top/site/name", "/yk-test:top/site/yk-aug:ports/port/num",
    )


def test_core_compile_keyless_list_rejected(fx_schema) -> None:
    with pytest.raises(SchemaError) as info:
        compile_subscription("/yk-test:top/sample", fx_schema)
    assert "sample" in info.value.reason
    assert "key" in info.value.reason


def test_core_compile_keyless_list_below_rejected(fx_schema) -> None:
    with pytest.raises(SchemaError, match="sample"):
        compile_subscription("/yk-test:top/sample/reading", fx_schema)


def test_core_compile_keyless_list_with_position_policy(fx_schema) -> None:
    branch = one(compile_subscription("/yk-test:top/sample", fx_schema, keyless="position"))
    assert branch.target == "list"
    assert branch.open_slots == 1


def test_core_compile_leaf_list_of_integers_pinned_canonical(fx_schema) -> None:
    branch = one(compile_subscription("/yk-test:top/codes[.='007']", fx_schema))
    assert branch.template == "/yk-test:top/codes[.='7']"


def test_core_compile_leaf_list_decimal_pinned_canonical(fx_schema) -> None:
    branch = one(compile_subscription("/yk-test:top/ratios[.='1.50']", fx_schema))
    assert branch.template == "/yk-test:top/ratios[.='1.5']"


def test_core_compile_pinned_ipv6_key_canonical(fx_schema) -> None:
    branch = one(compile_subscription("/yk-test:top/peer[addr='2001:DB8:0:0::0:1']", fx_schema))
    assert branch.template == "/yk-test:top/peer[addr='2001:db8::1']"


def test_core_compile_dot_predicate_on_list_rejected(fx_schema) -> None:
    with pytest.raises(YangkeyError):
        compile_subscription("/yk-test:top/site[.='x']", fx_schema)


def test_core_compile_predicate_on_unknown_leaf_rejected(fx_schema) -> None:
    with pytest.raises(YangkeyError, match="nosuch"):
        compile_subscription("/yk-test:top/site[nosuch='x']", fx_schema)
