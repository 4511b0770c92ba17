"""The module index from module headers alone (no directory needed), and the one owner of
"compile a subscription" (:func:`yangkey.compiler.compile_filter`): the catalog's subscriptions,
learned ones and ``yangkey key`` share its disk cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from yangkey.catalog import build_catalog
from yangkey.compiler import compile_filter
from yangkey.config import parse_subscriptions
from yangkey.modules import ModuleIndex, ModuleInfo, read_module_info
from yangkey.schema import SchemaContext

MODULE = """module mc-test {
  yang-version 1.1;
  namespace "urn:example:mc-test";
  prefix mc;
  revision 2026-01-01;
  identity base;
  container c {
    list l {
      key k;
      leaf k { type string; }
      leaf v { type string; }
    }
  }
}
"""


def info(name: str, prefix: str, *, identities: bool = False, path: str = "x.yang") -> ModuleInfo:
    return ModuleInfo(
        name=name,
        kind="module",
        path=Path(path),
        revision=None,
        namespace=f"urn:example:{name}",
        prefix=prefix,
        imports=(),
        includes=(),
        identities=identities,
    )


def test_an_index_is_built_from_module_infos_and_the_first_of_a_name_wins() -> None:
    index = ModuleIndex([info("a", "pa", path="1.yang"), info("a", "pa", path="2.yang")])
    assert index.get("a").path == Path("1.yang")
    assert index.by_namespace == {"urn:example:a": "a"}
    assert index.search_path == ()


def test_a_unique_prefix_of_a_module_with_identities_reads_identityrefs() -> None:
    index = ModuleIndex(
        [info("ids", "ianaift", identities=True), info("x", "dup"), info("y", "dup")]
    )
    assert index.unique_prefixes == {"ianaift": "ids"}
    assert index.by_prefix["dup"] == ["x", "y"]


def test_from_dirs_reads_the_headers(tmp_path: Path) -> None:
    (tmp_path / "mc-test@2026-01-01.yang").write_text(MODULE)
    index = ModuleIndex.from_dirs((str(tmp_path),))
    assert index.search_path == (str(tmp_path),)
    assert index.get("mc-test") == read_module_info(tmp_path / "mc-test@2026-01-01.yang")
    assert index.get("mc-test").revision == "2026-01-01"


@pytest.fixture
def schema_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "yang").mkdir()
    (tmp_path / "yang" / "mc-test.yang").write_text(MODULE)
    monkeypatch.setenv("YANGKEY_SCHEMA_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _compiled_entries(root: Path) -> list[Path]:
    return sorted((root / "cache").glob("compiled-*.pickle"))


def test_compile_filter_stores_and_reuses_a_compilation(schema_dir: Path) -> None:
    schema = SchemaContext((str(schema_dir / "yang"),))
    first = compile_filter("/mc-test:c/l", schema)
    (entry,) = _compiled_entries(schema_dir)
    again = compile_filter("/mc-test:c/l", schema)
    assert again == first and again is not first  # loaded from the entry, not rebuilt
    assert _compiled_entries(schema_dir) == [entry]
    compile_filter("/mc-test:c/l", schema, source="another caller")
    assert len(_compiled_entries(schema_dir)) == 2  # the source is in the key


def test_the_catalog_compiles_through_the_same_cache(schema_dir: Path) -> None:
    text = """
learn: true
subscriptions:
  - id: 7
    xpath: /mc-test:c/l
"""
    file = parse_subscriptions(text, "subs.yaml")
    catalog = build_catalog(file, yang_dirs=(str(schema_dir / "yang"),))
    assert len(_compiled_entries(schema_dir)) == 1
    learned = catalog.learn(9, {"xpath-filter": "/mc-test:c/l"}, "test", None)
    assert learned.compiled.branches[0].schema_path == "/mc-test:c/l"
    assert len(_compiled_entries(schema_dir)) == 2
