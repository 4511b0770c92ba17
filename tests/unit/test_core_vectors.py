"""Every public test vector (shared/vectors/public.jsonl), through the library API and the CLI.

The file is found relative to the repository (``../shared/vectors/public.jsonl``) or through
``$YANGKEY_VECTORS``; without it the tests are skipped with a reason, never silently passed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from yangkey.cli import main
from yangkey.keys import KeyDeriver
from yangkey.messages import MessageKey
from yangkey.notifications import decode
from yangkey.subtree import normalize_subtree
from yangkey.templates import compile_subscription
from yangkey.topics import TopicNamer

_DEFAULT = Path(__file__).resolve().parents[3] / "shared" / "vectors" / "public.jsonl"


def _vector_file() -> Path:
    override = os.environ.get("YANGKEY_VECTORS")
    return Path(override) if override else _DEFAULT


def _load() -> list[Any]:
    path = _vector_file()
    if not path.is_file():
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(
                    reason=f"public vectors not found at {path} (set YANGKEY_VECTORS)"
                ),
                id="vectors-missing",
            )
        ]
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        case = json.loads(line)
        cases.append(pytest.param(case, id=case.get("id", f"line-{number}")))
    return cases


CASES = _load()


def _of_kind(kind: str) -> list[Any]:
    selected = [c for c in CASES if c.values[0] is None or c.values[0]["kind"] == kind]
    if not selected:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no {kind} vectors"),
                             id=f"no-{kind}")]
    return selected


def test_core_vectors_file_has_every_kind() -> None:
    path = _vector_file()
    if not path.is_file():
        pytest.skip(f"public vectors not found at {path}")
    kinds = {json.loads(line)["kind"] for line in path.read_text().splitlines() if line.strip()}
    assert kinds == {"normalize", "compile", "key", "topic"}


def _compile(case: dict[str, Any], schema: Any) -> Any:
    if "subtree" in case:
        return compile_subscription(case["subtree"], schema, subtree=True)
    return compile_subscription(case["xpath"], schema)


def _filter_args(case: dict[str, Any], tmp_path: Path) -> list[str]:
    if "subtree" in case:
        path = tmp_path / "filter.xml"
        path.write_text(case["subtree"], encoding="utf-8")
        return ["--subtree", str(path)]
    return ["--xpath", case["xpath"]]


# ------------------------------------------------------------------------------ library API


@pytest.mark.parametrize("case", _of_kind("normalize"))
def test_core_vector_normalize_api(case: dict[str, Any], ietf_schema: Any) -> None:
    assert normalize_subtree(case["subtree"], ietf_schema.index) == case["expect"]


@pytest.mark.parametrize("case", _of_kind("compile"))
def test_core_vector_compile_api(case: dict[str, Any], ietf_schema: Any) -> None:
    compiled = _compile(case, ietf_schema)
    namer = TopicNamer(prefix=case.get("prefix"))
    got = [
        {
            "template": b.template,
            "extractions": list(b.extractions),
            "target": b.target,
            "topic": namer.name(b),
        }
        for b in compiled.branches
    ]
    assert got == case["expect"]["branches"]


@pytest.mark.parametrize("case", _of_kind("key"))
def test_core_vector_key_api(case: dict[str, Any], ietf_schema: Any) -> None:
    compiled = _compile(case, ietf_schema)
    note = decode(case["notification"], "vector", ietf_schema.index.by_namespace)
    derived = KeyDeriver(compiled).derive(note, default_node=case.get("node"))
    assert derived.key == case["expect"].encode("utf-8")
    assert not derived.key.endswith(b"\n")
    parsed = MessageKey.parse(derived.key)
    node, sub_id, xpaths = case["expect"].split("\n", 2)
    assert (parsed.node, parsed.subscription_id) == (node, int(sub_id))
    assert list(parsed.xpaths) == xpaths.split(" | ")


@pytest.mark.parametrize("case", _of_kind("topic"))
def test_core_vector_topic_api(case: dict[str, Any], ietf_schema: Any) -> None:
    compiled = _compile(case, ietf_schema)
    namer = TopicNamer(prefix=case.get("prefix"))
    assert [namer.name(b) for b in compiled.branches] == case["expect"]


# ------------------------------------------------------------------------------------ CLI


@pytest.mark.parametrize("case", _of_kind("normalize"))
def test_core_vector_normalize_cli(case: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "filter.xml"
    path.write_text(case["subtree"], encoding="utf-8")
    result = CliRunner().invoke(main, ["normalize", str(path)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == case["expect"] + "\n"


@pytest.mark.parametrize("case", _of_kind("compile"))
def test_core_vector_compile_cli(case: dict[str, Any], tmp_path: Path) -> None:
    args = ["compile", "--json", *_filter_args(case, tmp_path)]
    if case.get("prefix"):
        args += ["--prefix", case["prefix"]]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    document = orjson.loads(result.stdout)
    got = [
        {k: branch[k] for k in ("template", "extractions", "target", "topic")}
        for branch in document["branches"]
    ]
    assert got == case["expect"]["branches"]
    assert document["warnings"] == []


@pytest.mark.parametrize("case", _of_kind("key"))
def test_core_vector_key_cli(case: dict[str, Any], tmp_path: Path) -> None:
    notification = tmp_path / "notification.txt"
    notification.write_text(case["notification"], encoding="utf-8")
    args = ["key", *_filter_args(case, tmp_path)]
    if case.get("node"):
        args += ["--override-node", case["node"]]
    result = CliRunner().invoke(main, [*args, str(notification)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == case["expect"].encode("utf-8")


@pytest.mark.parametrize("case", _of_kind("key"))
def test_core_vector_key_cli_stdin(case: dict[str, Any], tmp_path: Path) -> None:
    args = ["key", *_filter_args(case, tmp_path)]
    if case.get("node"):
        args += ["--override-node", case["node"]]
    result = CliRunner().invoke(main, [*args, "-"], input=case["notification"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == case["expect"].encode("utf-8")


@pytest.mark.parametrize("case", _of_kind("topic"))
def test_core_vector_topic_cli(case: dict[str, Any], tmp_path: Path) -> None:
    args = ["topic", *_filter_args(case, tmp_path)]
    if case.get("prefix"):
        args += ["--prefix", case["prefix"]]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == case["expect"]
