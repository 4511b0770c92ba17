"""Issue 30 item 3: ``if-feature "not X"`` (Nokia SR Linux) and what a feature choice removes.

``vx-features``/``vx-system`` paraphrase SR Linux: ``system/ntp``, a ``logging`` grouping used
under an augment and the TCAM tables are guarded by ``not`` features of a features module.
Without a YANG library or ``--features`` the features are undecided and every such node exists;
deciding them (``--features``, ``features:``, a device's library) removes some, and compiling
a removed node names the ``if-feature`` and the setting that brings it back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from cli_helpers import assert_one_error, run, write

from yangkey import features
from yangkey.errors import SchemaError

VX_FEATURES = """
module vx-features {
  namespace "urn:example:vx-features";
  prefix vxf;
  feature platform-imgmt;
  feature fpcx;
  feature ntp-extras { if-feature "not fpcx"; }
}
"""

VX_SYSTEM = """
module vx-system {
  yang-version 1.1;
  namespace "urn:example:vx-system";
  prefix vxs;
  import vx-features { prefix vxf; }
  grouping logging-top {
    container logging {
      list console { key facility; leaf facility { type string; } }
    }
  }
  container system {
    container ntp {
      if-feature "not vxf:platform-imgmt";
      list server { key address; leaf address { type string; } }
    }
    container tcam {
      if-feature "vxf:fpcx and not vxf:platform-imgmt";
      list entry { key id; leaf id { type uint8; } }
    }
    leaf name { type string; }
    list session {
      if-feature "vxf:fpcx";
      key "slot port";
      leaf slot { type uint8; }
      leaf port { type uint16; }
    }
    list session {
      if-feature "not vxf:fpcx";
      key "id";
      leaf id { type string; }
    }
  }
  augment "/vxs:system" {
    uses logging-top { if-feature "not vxf:platform-imgmt"; }
  }
}
"""

NTP = "/vx-system:system/ntp/server"
TCAM = "/vx-system:system/tcam/entry"
LOGGING = "/vx-system:system/logging/console"


@pytest.fixture(scope="module")
def yang_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    directory = tmp_path_factory.mktemp("features-yang")
    (directory / "vx-features.yang").write_text(VX_FEATURES, encoding="utf-8")
    (directory / "vx-system.yang").write_text(VX_SYSTEM, encoding="utf-8")
    return str(directory)


def template(yang_dir: str, xpath: str, *args: str) -> str:
    result = run("compile", "--json", "--yang-dir", yang_dir, *args, "--xpath", xpath)
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = orjson.loads(result.stdout)
    return str(document["branches"][0]["template"])


@pytest.mark.parametrize("xpath", [NTP, TCAM, LOGGING])
def test_undecided_features_keep_every_node_a_feature_choice_can_bring(
    yang_dir: str, xpath: str
) -> None:
    """The default: no library, no --features. ``not X`` nodes exist (they vanished when every
    feature counted as on), and so does the feature with an ``if-feature "not fpcx"``
    prerequisite (with every feature on, yangson refused the whole library)."""
    assert "%s" in template(yang_dir, xpath)


@pytest.mark.parametrize("xpath", [NTP, LOGGING])
def test_a_node_removed_by_a_not_feature_names_it_and_the_setting(
    yang_dir: str, xpath: str
) -> None:
    result = run(
        "compile",
        "--yang-dir",
        yang_dir,
        "--features",
        "vx-features:platform-imgmt,fpcx",
        "--xpath",
        xpath,
    )
    assert_one_error(
        result,
        'if-feature "not vxf:platform-imgmt"',
        "vx-features:platform-imgmt is on",
        "--features",
        "leave vx-features out of --features",
    )


def test_an_expression_names_every_feature_it_depends_on(yang_dir: str) -> None:
    result = run("compile", "--yang-dir", yang_dir, "--features", "vx-features:", "--xpath", TCAM)
    assert_one_error(
        result,
        'if-feature "vxf:fpcx and not vxf:platform-imgmt"',
        "vx-features:fpcx is off",
        "vx-features:platform-imgmt is off",
    )
    # the other choice brings ntp back
    assert "%s" in template(yang_dir, NTP, "--features", "vx-features:")


def test_a_device_library_decides(yang_dir: str, tmp_path: Path) -> None:
    """A device's YANG library is the truth: a feature it lists is on, one it omits is off."""

    def library(enabled: list[str]) -> str:
        modules = [
            {
                "name": "vx-system",
                "revision": "",
                "namespace": "urn:example:vx-system",
                "conformance-type": "implement",
            },
            {
                "name": "vx-features",
                "revision": "",
                "namespace": "urn:example:vx-features",
                "conformance-type": "import",
                "feature": enabled,
            },
        ]
        document = {"ietf-yang-library:modules-state": {"module-set-id": "1", "module": modules}}
        return write(tmp_path, f"lib-{len(enabled)}.json", json.dumps(document))

    imgmt = library(["platform-imgmt"])
    result = run("compile", "--yang-dir", yang_dir, "--yang-library", imgmt, "--xpath", NTP)
    assert_one_error(result, 'if-feature "not vxf:platform-imgmt"', "the YANG library")
    assert "%s" in template(yang_dir, NTP, "--yang-library", library([]))
    result = run("compile", "--yang-dir", yang_dir, "--yang-library", library([]), "--xpath", TCAM)
    assert_one_error(result, "vx-features:fpcx is off", "the YANG library")


def test_features_in_the_subscriptions_file_decide_too(yang_dir: str, tmp_path: Path) -> None:
    subscriptions = write(
        tmp_path,
        "subs.yaml",
        f"defaults: {{yang_dirs: [{yang_dir}]}}\n"
        "features:\n  vx-features: [platform-imgmt]\n"
        f"subscriptions:\n  - id: 1\n    xpath: {NTP}\n",
    )
    result = run("catalog", "show", "--subscriptions", subscriptions)
    assert_one_error(result, "subscription 1", 'if-feature "not vxf:platform-imgmt"')


def test_alternatives_that_undecided_features_both_keep_are_reported(yang_dir: str) -> None:
    """``if-feature X`` and ``if-feature "not X"`` define ``session`` twice, with different
    keys: undecided, both stay and the first is used, with a warning; decided, one is left."""
    result = run(
        "compile", "--json", "--yang-dir", yang_dir, "--xpath", "/vx-system:system/session"
    )
    assert result.exit_code == 0, result.stderr
    document = orjson.loads(result.stdout)
    assert document["branches"][0]["template"].endswith("session[slot='%s'][port='%s']")
    (warning,) = document["warnings"]
    assert "defined more than once under if-feature alternatives" in warning
    assert "/vx-system:system/session" in warning and "--features" in warning
    without_fpcx = template(yang_dir, "/vx-system:system/session", "--features", "vx-features:")
    assert without_fpcx.endswith("session[id='%s']")


# --------------------------------------------------------------------------- the logic


@pytest.mark.parametrize(
    ("expression", "values", "expected"),
    [
        ("a", {"a": None}, None),
        ("not a", {"a": None}, None),
        ("not a", {"a": True}, False),
        ("a and not b", {"a": True, "b": None}, None),
        ("a and not b", {"a": False, "b": None}, False),
        ("a or b", {"a": True, "b": None}, True),
        ("a or b", {"a": False, "b": False}, False),
        ("not (a or p:b)", {"a": False, "b": False}, True),
        ("a or b and c", {"a": False, "b": True, "c": False}, False),
        ("not not a", {"a": True}, True),
    ],
)
def test_kleene_evaluation(
    expression: str, values: dict[str, bool | None], expected: bool | None
) -> None:
    parsed = features.parse(expression)
    assert features.evaluate(parsed, lambda _prefix, name: values[name]) is expected


@pytest.mark.parametrize("bad", ["", "a and", "(a", "a b", "and a", "a )"])
def test_a_malformed_if_feature_is_a_schema_error(bad: str) -> None:
    with pytest.raises(SchemaError, match="invalid if-feature expression"):
        features.parse(bad)
