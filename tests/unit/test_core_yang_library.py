"""``--yang-library`` (an explicit RFC 7895 library) and ``catalog show`` through the CLI.

An explicit library with ietf-interfaces, ietf-ip and their imports compiles to exactly the
templates and topics of the computed module set; its features are honoured (a node under an
``if-feature`` exists only when the library lists the feature); a bad library file is one
``error:`` line naming the file, exit 1. ``catalog show --json`` lists every subscription and
topic of examples/subscriptions.yaml; a broken subscriptions file is one ``error:`` line with
the file name and the line.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from cli_helpers import assert_one_error, run

from yangkey.schema import SchemaContext

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "subscriptions.yaml"

IF = "/ietf-interfaces:interfaces/interface"
ADDRESS = f"{IF}/ietf-ip:ipv4/address"
#: ietf-ip: ``choice subnet { case netmask { if-feature ipv4-non-contiguous-netmasks; … } }``
NETMASK = f"{ADDRESS}/netmask"
NETMASK_FEATURE = "ipv4-non-contiguous-netmasks"
IMPLEMENTED = ("ietf-interfaces", "ietf-ip")
IMPORTED = ("ietf-inet-types", "ietf-yang-types")


def library(features: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """An RFC 7895 ``modules-state`` for ietf-interfaces and ietf-ip (implemented) and their
    imports; revisions and namespaces are those of the modules on the search path.

    ``features``: module -> the features to list; a module not named lists no ``feature``.
    """
    index = SchemaContext.cached().index

    def entry(name: str, conformance: str) -> dict[str, Any]:
        info = index.get(name)
        item: dict[str, Any] = {
            "name": name,
            "revision": info.revision or "",
            "namespace": info.namespace,
            "conformance-type": conformance,
        }
        if features is not None and name in features:
            item["feature"] = features[name]
        return item

    modules = [entry(name, "implement") for name in IMPLEMENTED]
    modules += [entry(name, "import") for name in IMPORTED]
    return {"ietf-yang-library:modules-state": {"module-set-id": "test-1", "module": modules}}


def write(tmp_path: Path, name: str, content: str | bytes | dict[str, Any]) -> str:
    path = tmp_path / name
    if isinstance(content, dict):
        path.write_text(json.dumps(content), encoding="utf-8")
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


def compile_json(*args: str) -> dict[str, Any]:
    result = run("compile", "--json", *args)
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = orjson.loads(result.stdout)
    return document


# --------------------------------------------------------------------------- --yang-library


@pytest.mark.parametrize(
    "features",
    [
        pytest.param(None, id="no-feature-lists"),
        pytest.param({"ietf-ip": [NETMASK_FEATURE]}, id="with-netmask-feature"),
        pytest.param({"ietf-interfaces": [], "ietf-ip": []}, id="empty-feature-lists"),
    ],
)
@pytest.mark.parametrize("xpath", [IF, ADDRESS])
def test_explicit_library_gives_the_same_template(
    tmp_path: Path, features: dict[str, list[str]] | None, xpath: str
) -> None:
    path = write(tmp_path, "library.json", library(features))
    computed = compile_json("--xpath", xpath)
    explicit = compile_json("--yang-library", path, "--xpath", xpath)
    assert explicit == computed
    (branch,) = explicit["branches"]
    if xpath == ADDRESS:
        assert branch["template"] == f"{IF}[name='%s']/ietf-ip:ipv4/address[ip='%s']"
        assert branch["topic"] == "if-interfaces-interface-ip-ipv4-address"
    else:
        assert branch["template"] == f"{IF}[name='%s']"


def test_explicit_library_features_are_honoured(tmp_path: Path) -> None:
    """The library is really used: a node behind ``if-feature`` exists only with the feature
    (the computed module set turns every feature on)."""
    with_feature = write(tmp_path, "with.json", library({"ietf-ip": [NETMASK_FEATURE]}))
    without = write(tmp_path, "without.json", library({"ietf-ip": []}))

    computed = compile_json("--xpath", NETMASK)
    assert compile_json("--yang-library", with_feature, "--xpath", NETMASK) == computed
    assert computed["branches"][0]["target"] == "leaf"

    result = run("compile", "--json", "--yang-library", without, "--xpath", NETMASK)
    assert_one_error(result, "netmask")


def test_explicit_library_on_the_other_commands(tmp_path: Path) -> None:
    path = write(tmp_path, "library.json", library({"ietf-ip": [NETMASK_FEATURE]}))
    result = run("topic", "--yang-library", path, "--xpath", ADDRESS, "--prefix", "netops")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "netops-if-interfaces-interface-ip-ipv4-address\n"


def _bad_revision() -> dict[str, Any]:
    document = library()
    document["ietf-yang-library:modules-state"]["module"][0]["revision"] = "1999-01-01"
    return document


def _missing_import() -> dict[str, Any]:
    document = library()
    modules = document["ietf-yang-library:modules-state"]["module"]
    document["ietf-yang-library:modules-state"]["module"] = modules[: len(IMPLEMENTED)]
    return document


def _nameless_module() -> dict[str, Any]:
    document = library()
    del document["ietf-yang-library:modules-state"]["module"][0]["name"]
    return document


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        pytest.param("{not json", "invalid YANG library", id="not-json"),
        pytest.param("", "invalid YANG library", id="empty"),
        pytest.param(b"\xff\xfe\x00", "invalid YANG library", id="not-utf8"),
        pytest.param({"modules": []}, "modules-state", id="no-modules-state"),
        pytest.param(_bad_revision(), "1999-01-01", id="unknown-revision"),
        pytest.param(_missing_import(), "ietf-yang-types", id="import-missing"),
        pytest.param(_nameless_module(), "name", id="module-without-name"),
    ],
)
def test_invalid_library_is_one_error_line(
    tmp_path: Path, content: str | bytes | dict[str, Any], reason: str
) -> None:
    path = write(tmp_path, "my-library.json", content)
    result = run("compile", "--json", "--yang-library", path, "--xpath", IF)
    assert_one_error(result, "my-library.json", reason)


def test_missing_library_file_is_one_error_line(tmp_path: Path) -> None:
    path = str(tmp_path / "nowhere.json")
    result = run("compile", "--yang-library", path, "--xpath", IF)
    assert_one_error(result, "nowhere.json", "cannot read")


@pytest.mark.parametrize(
    "content",
    [
        pytest.param([1, 2], id="top-level-array"),
        pytest.param({"ietf-yang-library:modules-state": []}, id="modules-state-array"),
        pytest.param({"ietf-yang-library:modules-state": {"module": 5}}, id="module-number"),
    ],
)
def test_library_of_the_wrong_shape_is_one_error_line(tmp_path: Path, content: Any) -> None:
    path = tmp_path / "shape.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    result = run("compile", "--yang-library", str(path), "--xpath", IF)
    assert_one_error(result, "shape.json", "invalid YANG library")


# --------------------------------------------------------------------------- catalog show


def test_catalog_show_json_lists_every_subscription_and_topic() -> None:
    result = run("catalog", "show", "--subscriptions", str(EXAMPLE), "--json")
    assert result.exit_code == 0, result.stderr
    document = orjson.loads(result.stdout)
    source = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))

    # every subscription of the file, in file order, one branch each here
    rows = document["subscriptions"]
    assert [row["subscription_id"] for row in rows] == [s["id"] for s in source["subscriptions"]]
    by_id = {row["subscription_id"]: row for row in rows}
    for subscription in source["subscriptions"]:
        row = by_id[subscription["id"]]
        assert row["type"] == subscription["type"]
        assert row["compaction"] is bool(subscription.get("compaction", False))
        assert row["topic"].startswith(f"{source['organisation_prefix']}-")
        if "xpath" in subscription:
            # the same template and (unprefixed) topic as `yangkey compile`
            (branch,) = compile_json("--xpath", subscription["xpath"])["branches"]
            assert row["template"] == branch["template"]
            assert row["extractions"] == branch["extractions"]
            assert row["topic"].endswith(f"-{branch['topic']}")
    assert by_id[1042]["topic"] == "netops-current-state-if-interfaces-interface"
    assert by_id[3001]["template"] == "/ietf-hardware:hardware/component[name='%s']/serial-num"
    assert by_id[2001]["topic"] == "netops-stats-sys-system-clock"
    assert by_id[2002]["target"] == "leaf-list"

    # every topic, once, with the subscriptions that write it and their settings
    topics = {topic["name"]: topic for topic in document["topics"]}
    assert len(topics) == len(document["topics"])
    assert set(topics) == {row["topic"] for row in rows}
    for row in rows:
        topic = topics[row["topic"]]
        assert row["subscription_id"] in topic["subscription_ids"]
        assert topic["compaction"] is row["compaction"]
        assert topic["partitions"] == source["defaults"]["partitions"]
    days = 86_400
    assert topics[by_id[1043]["topic"]]["retention_seconds"] == 2 * days
    assert topics[by_id[2001]["topic"]]["retention_seconds"] == 30 * days
    assert topics[by_id[1100]["topic"]]["retention_seconds"] == 7 * days
    assert document["warnings"] == []


def _line_of(message: str) -> int:
    match = re.search(r"\bline (\d+)\b", message)
    assert match, f"no line number in {message!r}"
    return int(match.group(1))


def test_catalog_show_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "broken-subs.yaml",
        "organisation_prefix: netops\n"
        "subscriptions:\n"
        "  - id: 1042\n"
        "    xpath: /a: b: c\n"  # line 4: a mapping value where a scalar belongs
        "    type: periodic\n",
    )
    line = assert_one_error(
        run("catalog", "show", "--subscriptions", path, "--json"),
        "broken-subs.yaml",
        "invalid YAML",
    )
    assert _line_of(line) == 4


def test_catalog_show_invalid_field_names_file_field_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "broken-subs.yaml",
        "subscriptions:\n"
        "  - id: 1\n"
        "    xpath: /ietf-interfaces:interfaces/interface\n"
        "    type: periodic\n"
        "  - id: 2\n"  # line 5: the subscription holding the bad field
        "    xpath: /ietf-system:system/clock\n"
        "    type: sometimes\n",  # line 7: the bad field
    )
    line = assert_one_error(
        run("catalog", "show", "--subscriptions", path, "--json"),
        "broken-subs.yaml",
        "subscriptions.1.type",
    )
    # the line of the entry holding the field (what config.py reports), or of the field itself
    assert _line_of(line) in (5, 7)


def test_catalog_show_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "broken-subs.yaml",
        "subscriptions:\n"
        "  - id: 9\n"
        "    xpath: /ietf-interfaces:interfaces/interface\n"
        "    type: periodic\n"
        "  - id: 9\n"
        "    xpath: /ietf-system:system/clock\n"
        "    type: periodic\n",
    )
    line = assert_one_error(
        run("catalog", "show", "--subscriptions", path), "broken-subs.yaml", "declared twice"
    )
    assert _line_of(line) == 5
    assert "first at line 2" in line


def test_catalog_show_uncompilable_subscription_names_file_and_subscription(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "broken-subs.yaml",
        "subscriptions:\n"
        "  - id: 1\n"
        "    xpath: /ietf-interfaces:interfaces/interface\n"
        "    type: periodic\n"
        "  - id: 7\n"
        "    xpath: /ietf-interfaces:interfaces/no-such-node\n"
        "    type: periodic\n",
    )
    assert_one_error(
        run("catalog", "show", "--subscriptions", path, "--json", "--strict"),
        "broken-subs.yaml",
        "subscription 7",
        "no-such-node",
    )


# --------------------------------------------------------------------------- computed library

LIBRARY_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-library"


def conformance(modules: list[str]) -> dict[str, str]:
    document = SchemaContext.cached().library(modules)
    return {
        m["name"]: m["conformance-type"]
        for m in document["ietf-yang-library:modules-state"]["module"]
    }


@pytest.mark.parametrize(
    ("xpath", "template"),
    [
        pytest.param(
            "/ietf-routing:routing/control-plane-protocols/control-plane-protocol",
            "/ietf-routing:routing/control-plane-protocols/control-plane-protocol"
            "[type='%s'][name='%s']",
            id="ietf-routing",
        ),
        pytest.param(
            "/ietf-access-control-list:acls/acl/aces/ace",
            "/ietf-access-control-list:acls/acl[name='%s']/aces/ace[name='%s']",
            id="ietf-access-control-list",
        ),
        pytest.param(
            "/ietf-access-control-list:acls/attachment-points/interface",
            "/ietf-access-control-list:acls/attachment-points/interface[interface-id='%s']",
            id="acl-leafref-key-into-ietf-interfaces",
        ),
    ],
)
def test_the_issue_subscriptions_compile(xpath: str, template: str) -> None:
    (branch,) = compile_json("--xpath", xpath)["branches"]
    assert branch["template"] == template


def test_a_module_whose_data_nodes_are_referenced_is_implemented() -> None:
    # ietf-routing: leafref "/if:interfaces/if:interface/if:name" (if:interface-ref)
    assert conformance(["ietf-routing"]) == {
        "ietf-routing": "implement",
        "ietf-interfaces": "implement",
        "ietf-yang-types": "import",
    }
    # ietf-ip: augment "/if:interfaces/if:interface"
    assert conformance(["ietf-ip"])["ietf-interfaces"] == "implement"


def test_import_only_stays_where_no_data_node_is_referenced() -> None:
    assert conformance(["ietf-interfaces"]) == {
        "ietf-interfaces": "implement",
        "ietf-yang-types": "import",
    }
    # types and identities only: inet-types, yang-types, ethertypes, packet-fields' groupings
    acl = conformance(["ietf-access-control-list"])
    for module in ("ietf-inet-types", "ietf-yang-types", "ietf-ethertypes", "ietf-packet-fields"):
        assert acl[module] == "import", module


REFERRING = """module ref-a {
  yang-version 1.1;
  namespace "urn:example:ref-a";
  prefix a;
  import ref-leafref { prefix l; }
  import ref-must { prefix m; }
  import ref-when { prefix w; }
  import ref-augment { prefix g; }
  import ref-identity { prefix i; }
  container top {
    list item {
      key id;
      leaf id { type leafref { path "/l:things/l:thing/l:name"; } }
      leaf limit { type uint8; must ". <= /m:limits/m:max"; }
      leaf kind {
        type identityref { base i:kind; }
        when "/w:mode/w:on = 'true' and derived-from(., 'i:kind')";
      }
    }
  }
  augment "/g:extended" { leaf added { type string; } }
}
"""
REFERENCED = {
    "ref-leafref": "container things { list thing { key name; leaf name { type string; } } }",
    "ref-must": "container limits { leaf max { type uint8; } }",
    "ref-when": "container mode { leaf on { type boolean; } }",
    "ref-augment": "container extended { leaf x { type string; } }",
    "ref-identity": "identity kind; container unused { leaf y { type string; } }",
}


def referring_modules(directory: Path) -> None:
    (directory / "ref-a.yang").write_text(REFERRING, encoding="utf-8")
    for name, body in REFERENCED.items():
        (directory / f"{name}.yang").write_text(
            f'module {name} {{ yang-version 1.1; namespace "urn:example:{name}"; '
            f"prefix {name.split('-')[1][:3]}; {body} }}",
            encoding="utf-8",
        )


def test_leafref_must_when_and_augment_targets_are_implemented_identities_are_not(
    tmp_path: Path,
) -> None:
    referring_modules(tmp_path)
    context = SchemaContext((str(tmp_path), *SchemaContext.cached().search_path))
    document = context.library(["ref-a"])
    kinds = {
        m["name"]: m["conformance-type"]
        for m in document["ietf-yang-library:modules-state"]["module"]
    }
    assert kinds == {
        "ref-a": "implement",
        "ref-leafref": "implement",
        "ref-must": "implement",
        "ref-when": "implement",
        "ref-augment": "implement",
        "ref-identity": "import",  # only an identity, also named in a quoted literal
    }
    result = run("compile", "--json", "--yang-dir", str(tmp_path), "--xpath", "/ref-a:top/item")
    assert result.exit_code == 0, result.stderr
    assert orjson.loads(result.stdout)["branches"][0]["template"] == "/ref-a:top/item[id='%s']"
    result = run(
        "topic", "--yang-dir", str(tmp_path), "--xpath", "/ref-augment:extended/ref-a:added"
    )
    assert result.exit_code == 0, result.stderr


def test_an_explicit_library_missing_a_referenced_module_names_it(tmp_path: Path) -> None:
    """--yang-library is used as given: ietf-routing with ietf-interfaces import-only fails,
    naming ietf-interfaces."""
    index = SchemaContext.cached().index

    def entry(name: str, conformance: str) -> dict[str, Any]:
        info = index.get(name)
        return {
            "name": name,
            "revision": info.revision or "",
            "namespace": info.namespace,
            "conformance-type": conformance,
        }

    modules = [
        entry("ietf-routing", "implement"),
        entry("ietf-interfaces", "import"),
        entry("ietf-yang-types", "import"),
    ]
    document = {"ietf-yang-library:modules-state": {"module-set-id": "x", "module": modules}}
    path = write(tmp_path, "routing-library.json", document)
    xpath = "/ietf-routing:routing/ribs/rib"
    result = run("compile", "--yang-library", path, "--xpath", xpath)
    assert_one_error(result, "routing-library.json", "ietf-interfaces", "not implemented")

    modules[1]["conformance-type"] = "implement"
    fixed = write(tmp_path, "fixed.json", document)
    assert compile_json("--yang-library", fixed, "--xpath", xpath) == compile_json("--xpath", xpath)


# --------------------------------------------------------------------------- library formats


def rfc8525(features: dict[str, list[str]] | None = None) -> dict[str, Any]:
    state = library(features)["ietf-yang-library:modules-state"]
    implemented = [
        {k: v for k, v in m.items() if k != "conformance-type"}
        for m in state["module"]
        if m["conformance-type"] == "implement"
    ]
    imported = [
        {k: v for k, v in m.items() if k not in ("conformance-type", "feature")}
        for m in state["module"]
        if m["conformance-type"] == "import"
    ]
    return {
        "ietf-yang-library:yang-library": {
            "module-set": [{"name": "all", "module": implemented, "import-only-module": imported}],
            "schema": [{"name": "s", "module-set": ["all"]}],
            "content-id": "c-1",
        }
    }


def to_xml(name: str, value: Any, namespace: str | None = None) -> str:
    attrs = f' xmlns="{namespace}"' if namespace else ""
    if isinstance(value, dict):
        inner = "".join(to_xml(k, v) for k, v in value.items())
        return f"<{name}{attrs}>{inner}</{name}>"
    if isinstance(value, list):
        return "".join(to_xml(name, item, namespace) for item in value)
    return f"<{name}{attrs}>{value}</{name}>"


def as_xml(document: dict[str, Any]) -> str:
    ((top, content),) = document.items()
    return to_xml(top.partition(":")[2], content, LIBRARY_NS)


@pytest.mark.parametrize(
    ("name", "make"),
    [
        pytest.param("lib.json", rfc8525, id="rfc8525-json"),
        pytest.param("lib.xml", lambda f: as_xml(rfc8525(f)), id="rfc8525-xml"),
        pytest.param("lib.xml", lambda f: as_xml(library(f)), id="rfc7895-xml"),
    ],
)
def test_rfc8525_and_xml_libraries_give_the_same_templates(
    tmp_path: Path, name: str, make: Any
) -> None:
    with_feature = write(tmp_path, name, make({"ietf-ip": [NETMASK_FEATURE]}))
    for xpath in (IF, ADDRESS, NETMASK):
        assert compile_json("--yang-library", with_feature, "--xpath", xpath) == compile_json(
            "--xpath", xpath
        )
    # its features are honoured: without the feature, no netmask
    without = write(tmp_path, f"without-{name}", make({"ietf-ip": []}))
    result = run("compile", "--yang-library", without, "--xpath", NETMASK)
    assert_one_error(result, "netmask", f"if-feature ietf-ip:{NETMASK_FEATURE}")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        pytest.param("<modules-state/>", "modules-state", id="xml-no-namespace"),
        pytest.param(f'<yang-library xmlns="{LIBRARY_NS}"/>', "module-set", id="8525-empty"),
        pytest.param("<a><b>", "invalid YANG library", id="xml-malformed"),
        pytest.param(
            '<!DOCTYPE x [<!ENTITY e "e">]><modules-state/>', "invalid YANG library", id="dtd"
        ),
        pytest.param(
            {"ietf-yang-library:yang-library": {"module-set": [{"module": [{}]}]}},
            "name",
            id="8525-nameless-module",
        ),
    ],
)
def test_invalid_xml_or_8525_library_is_one_error_line(
    tmp_path: Path, content: str | dict[str, Any], reason: str
) -> None:
    path = write(tmp_path, "bad-library.xml", content)
    result = run("compile", "--yang-library", path, "--xpath", IF)
    assert_one_error(result, "bad-library.xml", reason)


# --------------------------------------------------------------------------- features


def test_features_default_to_all_on() -> None:
    assert compile_json("--xpath", NETMASK)["branches"][0]["target"] == "leaf"


@pytest.mark.parametrize(
    "features",
    [
        pytest.param(("ietf-ip:",), id="none"),
        pytest.param(("ietf-ip:ipv6-privacy-autoconf",), id="another-feature"),
        pytest.param(("ietf-interfaces:", "ietf-ip:ipv6-privacy-autoconf"), id="repeated"),
    ],
)
def test_a_node_under_a_disabled_feature_is_a_clear_compile_error(
    features: tuple[str, ...],
) -> None:
    args = [item for feature in features for item in ("--features", feature)]
    result = run("compile", *args, "--xpath", NETMASK)
    assert_one_error(result, "netmask", f"if-feature ietf-ip:{NETMASK_FEATURE}", "--features")
    # the rest of the module is there
    assert compile_json(*args, "--xpath", ADDRESS)["branches"][0]["target"] == "list"


def test_enabled_feature_compiles() -> None:
    result = compile_json("--features", f"ietf-ip:{NETMASK_FEATURE}", "--xpath", NETMASK)
    assert result == compile_json("--xpath", NETMASK)


@pytest.mark.parametrize(
    ("feature", "needles"),
    [
        pytest.param("ietf-ip:bogus", ("no feature 'bogus'", NETMASK_FEATURE), id="unknown"),
        pytest.param("ietf-system:ntp", ("ietf-system", "not in the YANG library"), id="module"),
    ],
)
def test_unknown_feature_or_module_is_one_error_line(
    feature: str, needles: tuple[str, ...]
) -> None:
    result = run("compile", "--features", feature, "--xpath", NETMASK)
    assert_one_error(result, "features", *needles)


def test_malformed_features_option_is_a_usage_error() -> None:
    result = run("compile", "--features", "no-colon", "--xpath", NETMASK)
    assert result.exit_code == 2
    assert "MODULE:FEATURE" in result.stderr


def test_features_in_the_subscriptions_file(tmp_path: Path) -> None:
    def subscriptions(features: str) -> str:
        return write(
            tmp_path,
            "subs.yaml",
            f"features:\n  ietf-ip: [{features}]\n"
            "subscriptions:\n  - id: 1\n"
            f"    xpath: {NETMASK}\n",
        )

    enabled = run("catalog", "show", "--json", "--subscriptions", subscriptions(NETMASK_FEATURE))
    assert enabled.exit_code == 0, enabled.stderr
    (row,) = orjson.loads(enabled.stdout)["subscriptions"]
    assert row["target"] == "leaf"

    disabled = run("catalog", "show", "--subscriptions", subscriptions("ipv6-privacy-autoconf"))
    assert_one_error(
        disabled, "subs.yaml", "subscription 1", f"if-feature ietf-ip:{NETMASK_FEATURE}"
    )


@pytest.mark.parametrize("seed", ["1", "2"])
def test_augments_between_submodules_do_not_depend_on_the_hash_seed(seed: str) -> None:
    """ietf-snmp-tls and ietf-snmp-ssh augment nodes that other ietf-snmp submodules define;
    yangson took submodules from a set, so one or the other was dropped depending on
    PYTHONHASHSEED (seed 1 lost target/tls, seed 2 engine/listen/ssh)."""
    env = {**os.environ, "PYTHONHASHSEED": seed, "YANGKEY_SCHEMA_CACHE": "off"}
    for xpath, topic in (
        ("/ietf-snmp:snmp/target/tls", "snmp-snmp-target-tls"),
        ("/ietf-snmp:snmp/engine/listen/ssh", "snmp-snmp-engine-listen-ssh"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "yangkey.cli", "topic", "--xpath", xpath],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == f"{topic}\n"
