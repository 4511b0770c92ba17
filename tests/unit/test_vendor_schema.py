"""Issue 30 (and issue 29 item 4): vendor module constructs never block a schema.

Each module here is written for the test and reproduces one construct of a public vendor model:

* ``vx-cos``: Junos ``junos-conf-class-of-service`` writes ``pattern "\\*";`` (YANG 1.0, a
  double-quoted string with an escape RFC 6020 does not define, which pyang keeps as written);
  plus a pattern no XSD-to-Python translation exists for;
* ``vx-vrouter``: 6WIND ``vrouter`` and Cisco IOS-XR unified models use ``text()`` in ``must``
  and ``when``, which yangson's XPath parser does not support; some expressions run to kB;
* ``vx-base``/``vx-ext``: OpenConfig ``openconfig-ap-interfaces`` augments
  ``…/ethernet/switched-vlan`` before the augment that creates ``switched-vlan``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from cli_helpers import run

from yangkey.keys import KeyDeriver
from yangkey.modules import default_search_path
from yangkey.notifications import decode
from yangkey.schema import SchemaContext
from yangkey.schema_build import ECHO_LIMIT
from yangkey.templates import compile_subscription

VX_COS = r"""
module vx-cos {
  namespace "urn:example:vx-cos";
  prefix vx-cos;
  revision 2024-01-01 { description "paraphrases junos-conf-class-of-service"; }
  container class-of-service {
    list scheduler-map {
      key name;
      leaf name {
        type union {
          type string { pattern "\*"; }
          type string { pattern "[a-z][a-z0-9-]*"; length "1..64"; }
        }
      }
      leaf label { type string { pattern '\p{IsNoSuchBlock}+'; } }
    }
    list code-point {
      key "value";
      leaf value { type string { pattern '\p{IsNoSuchBlock}+'; } }
    }
    list stream {
      key name;
      leaf name { type string; }
      leaf committed-information-rate {
        default "0x7FFFFFFF";
        type union {
          type string { pattern "<.*>|$.*"; }
          type uint32 { range "0 .. 2147483647"; }
        }
      }
    }
  }
}
"""

LONG_MUST = " or ".join(f"count(../../l3vrf/table-id[text()={n}]) = {n}" for n in range(80))

VX_VROUTER = f"""
module vx-vrouter {{
  yang-version 1.1;
  namespace "urn:example:vx-vrouter";
  prefix vr;
  grouping ospf-area {{
    list area {{ key id; leaf id {{ type uint32; }} }}
  }}
  container config {{
    list vrf {{
      key name;
      leaf name {{ type string; }}
      container l3vrf {{ leaf table-id {{ type uint32; }} }}
      list route {{
        key destination;
        leaf destination {{ type string; }}
        leaf table {{
          type uint32;
          must "count(../../l3vrf/table-id[text()=current()]) = 1";
        }}
      }}
      container ospf {{
        when "../l3vrf/table-id/text() = '1'";
        uses ospf-area;
      }}
      container rip {{
        uses ospf-area {{ when "../l3vrf/table-id/text() = '2'"; }}
      }}
      leaf checked {{ type string; must "not(../name = 'x') and string-length(.) > 0"; }}
      leaf long {{ type string; must "{LONG_MUST}"; }}
    }}
  }}
}}
"""

VX_BASE = """
module vx-base {
  namespace "urn:example:vx-base";
  prefix base;
  container access-points {
    list access-point { key hostname; leaf hostname { type string; } }
  }
}
"""

# The first two augments target nodes that later augments of the same module create.
VX_EXT = """
module vx-ext {
  namespace "urn:example:vx-ext";
  prefix ext;
  import vx-base { prefix base; }
  augment "/base:access-points/base:access-point/ext:ethernet/ext:switched-vlan" {
    list dot1x-vlan-map { key vlan-name; leaf vlan-name { type string; } }
  }
  augment "/base:access-points/base:access-point/ext:ethernet" {
    container switched-vlan { leaf native-vlan { type uint16; } }
  }
  augment "/base:access-points/base:access-point" {
    container ethernet { leaf mtu { type uint16; } }
  }
  augment "/base:access-points/base:access-point/ext:nowhere" {
    leaf lost { type string; }
  }
}
"""


# An old OpenConfig network-instance (as Huawei ships it): the typedef's leafref path is
# unprefixed, so it resolves in the module that uses the typedef (RFC 7950 section 6.4.1).
VX_NI = """
module vx-ni {
  namespace "urn:example:vx-ni";
  prefix ni;
  typedef network-instance-ref {
    type leafref { path "/network-instances/network-instance/name"; }
  }
  container network-instances {
    list network-instance { key name; leaf name { type string; } }
  }
}
"""

VX_GRPC = """
module vx-grpc {
  namespace "urn:example:vx-grpc";
  prefix grpc;
  import vx-ni { prefix ni; }
  container grpc-servers {
    list grpc-server {
      key "name";
      leaf name { type string; }
      leaf network-instance { type ni:network-instance-ref; }
    }
    list binding {
      key "instance";
      leaf instance { type ni:network-instance-ref; }
    }
  }
}
"""


@pytest.fixture(scope="module")
def vendor_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("vendor-yang")
    for name, text in {
        "vx-cos": VX_COS,
        "vx-vrouter": VX_VROUTER,
        "vx-base": VX_BASE,
        "vx-ext": VX_EXT,
        "vx-ni": VX_NI,
        "vx-grpc": VX_GRPC,
    }.items():
        (directory / f"{name}.yang").write_text(text, encoding="utf-8")
    return directory


@pytest.fixture(scope="module")
def schema(vendor_dir: Path) -> SchemaContext:
    return SchemaContext(default_search_path([str(vendor_dir)]))


def compile_json(vendor_dir: Path, xpath: str) -> dict[str, Any]:
    result = run("compile", "--json", "--yang-dir", str(vendor_dir), "--xpath", xpath)
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = orjson.loads(result.stdout)
    return document


def key_of(schema: SchemaContext, xpath: str, data: dict[str, Any]) -> bytes:
    compiled = compile_subscription(xpath, schema)
    envelope = {
        "ietf-yp-notification:envelope": {
            "event-time": "2026-11-20T10:00:00Z",
            "hostname": "r1",
            "contents": {"ietf-yang-push:push-update": {"id": 1, "datastore-contents": data}},
        }
    }
    note = decode(orjson.dumps(envelope), "n.json", schema.index.by_namespace)
    return KeyDeriver(compiled).derive(note).key


# --------------------------------------------------------------------------- patterns


def test_yang_1_0_escape_in_a_pattern_does_not_block_the_module(
    schema: SchemaContext, vendor_dir: Path
) -> None:
    """``pattern "\\*"`` is the regex ``\\*`` (a literal star), as pyang reads YANG 1.0."""
    document = compile_json(vendor_dir, "/vx-cos:class-of-service/scheduler-map")
    assert document["branches"][0]["template"] == (
        "/vx-cos:class-of-service/scheduler-map[name='%s']"
    )
    star = schema.data_model(["vx-cos"]).get_schema_node("/vx-cos:class-of-service/scheduler-map")
    member = star.get_child("name").type.types[0]
    assert [p.pattern for p in member.patterns] == ["\\*"]
    assert "*" in member and "a" not in member


def test_an_untranslatable_pattern_is_neutralised_with_one_warning_per_module(
    schema: SchemaContext, vendor_dir: Path
) -> None:
    document = compile_json(vendor_dir, "/vx-cos:class-of-service/code-point")
    assert document["branches"][0]["template"] == "/vx-cos:class-of-service/code-point[value='%s']"
    # two leaves use the pattern: one warning (the other is the default's)
    (warning,) = [w for w in document["warnings"] if "pattern(s)" in w]
    assert "module vx-cos" in warning
    assert "IsNoSuchBlock" in warning and "match every value" in warning
    assert [i for i in document["left_out"] if i["statement"] == "pattern"] == [
        {
            "module": "vx-cos",
            "statement": "pattern",
            "argument": "\\p{IsNoSuchBlock}+",
            "reason": "'IsNoSuchBlock' doesn't match any Unicode block",
        }
    ]
    # The neutral pattern accepts every value; the key is derived as sent.
    key = key_of(
        schema,
        "/vx-cos:class-of-service/code-point",
        {"vx-cos:class-of-service": {"code-point": [{"value": "ef"}]}},
    )
    assert key.endswith(b"/vx-cos:class-of-service/code-point[value='ef']")


def test_a_default_the_yang_engine_cannot_read_is_left_out(vendor_dir: Path) -> None:
    """Junos ``junos-conf-services``: a hexadecimal default (RFC 7950 section 9.2.1 allows it
    for integers) on a union of a string and a uint32; yangson refused the module."""
    document = compile_json(vendor_dir, "/vx-cos:class-of-service/stream")
    assert document["branches"][0]["template"] == "/vx-cos:class-of-service/stream[name='%s']"
    assert any(
        "default value(s) the YANG engine cannot read" in w and "0x7FFFFFFF" in w
        for w in document["warnings"]
    )
    assert {
        "module": "vx-cos",
        "statement": "default",
        "argument": "0x7FFFFFFF",
        "reason": "UnionType: 0x7FFFFFFF",
    } in document["left_out"]


# --------------------------------------------------------------------------- must / when


def test_text_in_must_and_when_is_left_out_and_named(vendor_dir: Path) -> None:
    document = compile_json(vendor_dir, "/vx-vrouter:config/vrf/route")
    assert document["branches"][0]["template"] == (
        "/vx-vrouter:config/vrf[name='%s']/route[destination='%s']"
    )
    (warning,) = document["warnings"]
    assert warning.startswith("module vx-vrouter: 4 must/when expression(s)")
    assert "text()" in warning and "keys never evaluate them" in warning
    statements = sorted((i["statement"], i["argument"][:40]) for i in document["left_out"])
    assert statements == [
        ("must", "count(../../l3vrf/table-id[text()=0]) = "),
        ("must", "count(../../l3vrf/table-id[text()=curren"),
        ("when", "../l3vrf/table-id/text() = '1'"),
        ("when", "../l3vrf/table-id/text() = '2'"),
    ]
    for item in document["left_out"]:
        assert item["module"] == "vx-vrouter"
        assert "NotSupported" in item["reason"] and "text()" in item["reason"]
        # the 6 kB expression is cut to a readable length, in the JSON and in the warning
        assert len(item["argument"]) <= ECHO_LIMIT and len(item["reason"]) <= ECHO_LIMIT
    assert len(LONG_MUST) > 3000 and len(warning) < 600


def test_a_node_whose_when_is_left_out_still_exists(vendor_dir: Path) -> None:
    """Leaving a ``when`` out never removes its node: the container with the when, and the
    grouping used under a ``uses`` with a when, are there."""
    for xpath, template in [
        (
            "/vx-vrouter:config/vrf/ospf/area",
            "/vx-vrouter:config/vrf[name='%s']/ospf/area[id='%s']",
        ),
        ("/vx-vrouter:config/vrf/rip/area", "/vx-vrouter:config/vrf[name='%s']/rip/area[id='%s']"),
    ]:
        assert compile_json(vendor_dir, xpath)["branches"][0]["template"] == template


def test_the_model_keeps_parseable_constraints_and_drops_the_others(
    schema: SchemaContext,
) -> None:
    model = schema.data_model(["vx-vrouter"])
    vrf = "/vx-vrouter:config/vrf"
    # "not(...)" and "string-length(.)": nested function arguments parse, the must stays
    checked = model.get_schema_node(f"{vrf}/checked")
    assert [str(m.expression) for m in checked.must] != []
    assert model.get_schema_node(f"{vrf}/route/table").must == []
    assert model.get_schema_node(f"{vrf}/long").must == []
    assert model.get_schema_node(f"{vrf}/ospf").when is None
    # the model pickles (the schema cache): no placeholder is left in it
    import pickle  # noqa: PLC0415

    assert pickle.loads(pickle.dumps(model)).get_schema_node(f"{vrf}/ospf") is not None


# --------------------------------------------------------------------------- augments


def test_an_augment_of_a_node_a_later_augment_creates_is_applied(
    schema: SchemaContext, vendor_dir: Path
) -> None:
    xpath = "/vx-base:access-points/access-point/vx-ext:ethernet/switched-vlan/dot1x-vlan-map"
    document = compile_json(vendor_dir, xpath)
    assert document["branches"][0]["template"] == (
        "/vx-base:access-points/access-point[hostname='%s']/vx-ext:ethernet/switched-vlan"
        "/dot1x-vlan-map[vlan-name='%s']"
    )
    # the one augment whose target never appears is reported, not silently dropped
    (warning,) = document["warnings"]
    assert "module vx-ext: 1 augment(s) found no target" in warning and "ext:nowhere" in warning
    assert document["left_out"] == [
        {
            "module": "vx-ext",
            "statement": "augment",
            "argument": "/base:access-points/base:access-point/ext:nowhere",
            "reason": "no such node in the schema",
        }
    ]


def test_a_leafref_path_naming_no_node_of_implemented_modules_makes_a_string(
    schema: SchemaContext, vendor_dir: Path
) -> None:
    document = compile_json(vendor_dir, "/vx-grpc:grpc-servers/binding")
    assert document["branches"][0]["template"] == "/vx-grpc:grpc-servers/binding[instance='%s']"
    (warning,) = document["warnings"]
    assert "module vx-grpc: 1 leafref path(s) name no node" in warning
    assert document["left_out"][0]["statement"] == "leafref"
    assert "/vx-grpc:network-instances" in document["left_out"][0]["argument"]
    key = key_of(
        schema,
        "/vx-grpc:grpc-servers/binding",
        {"vx-grpc:grpc-servers": {"binding": [{"instance": "DEFAULT"}]}},
    )
    assert key.endswith(b"/vx-grpc:grpc-servers/binding[instance='DEFAULT']")


def test_warnings_reach_the_table_output_too(vendor_dir: Path) -> None:
    result = run(
        "compile",
        "--yang-dir",
        str(vendor_dir),
        "--xpath",
        "/vx-base:access-points/access-point/vx-ext:ethernet",
    )
    assert result.exit_code == 0, result.stderr
    assert "augment(s) found no target" in result.output


# --------------------------------------------------------------------------- the module index

TRICKY_HEADER = """
// revision 1999-01-01 { }   a comment is no statement
module vx-tricky {
  yang-version 1.1;
  namespace "urn:example:vx-tricky";
  prefix "vxt";
  import ietf-inet-types { prefix inet; revision-date 2013-07-15; }
  /* import not-a-module { prefix x; } */
  include vx-tricky-sub;
  description "revision 2000-01-01 { in a string is no statement either";
  revision "2024-05-06" { description "the newest"; }
  revision 2023-01-01;
  feature body-feature;
  container c { if-feature body-feature; leaf l { type inet:ipv4-address; } }
}
"""


def test_the_index_reads_the_header_only_and_features_when_asked(tmp_path: Path) -> None:
    """The index stops reading a file after its first revision statement (the header, imports
    and includes come first); comments and strings that look like statements are not read as
    statements, and the features (in the body) are read when a library needs them."""
    from yangkey.modules import read_module_info  # noqa: PLC0415

    path = tmp_path / "vx-tricky.yang"
    path.write_text(TRICKY_HEADER, encoding="utf-8")
    info = read_module_info(path)
    assert info is not None
    assert (info.name, info.kind, info.prefix, info.namespace, info.revision) == (
        "vx-tricky",
        "module",
        "vxt",
        "urn:example:vx-tricky",
        "2024-05-06",
    )
    assert info.imports == ("ietf-inet-types",)
    assert info.includes == ("vx-tricky-sub",)
    assert info.features == ("body-feature",)
