"""The package's import graph, read from the source: every import counts, lazy ones inside
functions and ``if TYPE_CHECKING:`` ones too (a cycle through them is still one a reader has to
untangle, and an annotation names a module the reader has to know first)."""

from __future__ import annotations

import ast
import functools
import importlib
import re
from pathlib import Path

import pytest

import yangkey

PACKAGE = Path(__file__).resolve().parents[2] / "yangkey"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the yangkey modules it imports (``from yangkey.x import y`` counts as an
    import of ``yangkey.x.y`` when that is a module, else of ``yangkey.x``). A copy: tests
    may change it."""
    return {name: set(targets) for name, targets in _read_graph().items()}


@functools.cache  # the sources are read once a session
def _read_graph() -> dict[str, set[str]]:
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    child = f"{node.module}.{alias.name}"
                    targets.add(child if child in paths else node.module)
        graph[name] = {t for t in targets if t in paths and t not in (name, "yangkey")}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None for a DAG."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def test_find_cycle_sees_a_cycle_and_a_dag() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_lazy_and_from_imports() -> None:
    graph = import_graph()
    assert "yangkey.spark.job" in graph["yangkey.spark.commands"]
    assert "yangkey.errors" in graph["yangkey.spark.runtime.session"]
    assert "yangkey.clickhouse.ingest" in graph["yangkey.demo.pipeline"]  # inside a function
    assert "yangkey.modules" in graph["yangkey.missing"]  # under TYPE_CHECKING only


@pytest.mark.parametrize("package", ["yangkey.spark", "yangkey"])
def test_no_import_cycle(package: str) -> None:
    graph = {
        name: {t for t in targets if t.startswith(package)}
        for name, targets in import_graph().items()
        if name.startswith(package)
    }
    assert find_cycle(graph) is None


EDGES = (
    "yangkey.clickhouse",
    "yangkey.kafka",
    "yangkey.spark",
    "yangkey.registry",
    "yangkey.dashboards",
    "yangkey.report",
)
#: What drives the edges: the CLI's root and commands (its lazy table loads the edges'
#: commands), ``yangkey demo`` and ``yangkey doctor``/``tail`` (they look at every edge).
EDGE_DRIVERS = ("yangkey.cli", "yangkey.demo", "yangkey.inspection")
#: The CLI's support modules, which every command module (the edges' too) imports: the CLI
#: layer below its root. They ship with the core install.
CLI_SUPPORT = {
    "yangkey.cli.extras",
    "yangkey.cli.reporting",
    "yangkey.cli.profile",
    "yangkey.cli.output",
    "yangkey.cli.declaration",
    "yangkey.cli.options",
}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _is_edge_or_driver(module: str) -> bool:
    if module in CLI_SUPPORT:
        return False
    return any(_in(module, package) for package in (*EDGES, *EDGE_DRIVERS))


def test_nothing_outside_the_cli_imports_its_root_or_commands() -> None:
    # The CLI's lazy group imports the edge commands by name; an import of the root (or of a
    # core command) from one of them would be a loop that no import statement in the root shows.
    graph = import_graph()
    cli = {name for name in graph if _in(name, "yangkey.cli")}
    assert cli > CLI_SUPPORT
    importers = {
        name: sorted(targets & (cli - CLI_SUPPORT))
        for name, targets in graph.items()
        if not _in(name, "yangkey.cli")
    }
    assert {name: found for name, found in importers.items() if found} == {}


def test_the_cli_support_modules_import_only_each_other_and_the_core() -> None:
    graph = import_graph()
    for name in sorted(CLI_SUPPORT):
        above = {t for t in graph[name] if _is_edge_or_driver(t)}
        assert not above, f"{name} imports {sorted(above)}"


def test_the_core_imports_nothing_of_the_cli_or_the_demo() -> None:
    # The top-level modules are the core: keys, topics, the catalog, the producer's message
    # builder. The CLI and the demo sit above them.
    graph = import_graph()
    core = [name for name in graph if name.count(".") == 1 and not _is_edge_or_driver(name)]
    assert "yangkey.keys" in core
    offenders = {
        name: sorted(t for t in graph[name] if any(_in(t, p) for p in EDGE_DRIVERS))
        for name in core
    }
    assert {name: targets for name, targets in offenders.items() if targets} == {}


def test_core_modules_import_no_edge() -> None:
    # The core install (no extras) must work: a core module that imports an edge module, even
    # lazily, ties keys, topics and the producer to chdb / confluent-kafka / pyspark.
    graph = import_graph()
    core = [name for name in graph if not _is_edge_or_driver(name)]
    assert "yangkey.producer" in core
    assert "yangkey.instances" in core
    assert "yangkey.cli.options" in core  # the CLI's support modules ship with the core
    offenders = {
        name: sorted(t for t in graph[name] if any(_in(t, edge) for edge in EDGES)) for name in core
    }
    assert {name: targets for name, targets in offenders.items() if targets} == {}


def _listed(package: str) -> list[str]:
    """The module map of ``package``'s docstring: its direct children, in the order given."""
    doc = importlib.import_module(package).__doc__ or ""
    pattern = rf":mod:`({re.escape(package)}\.\w+)`"
    return list(dict.fromkeys(re.findall(pattern, doc)))


def _children(graph: dict[str, set[str]], package: str) -> list[str]:
    depth = package.count(".") + 1
    found = {name.split(".")[depth] for name in graph if name.startswith(package + ".")}
    return sorted(f"{package}.{child}" for child in found)


def _reading_order(graph: dict[str, set[str]], package: str) -> list[str]:
    """Every module under ``package`` in its map's order, a subpackage's in its own map's."""
    listed = _listed(package)
    assert sorted(listed) == _children(graph, package), f"{package}'s module map"
    order: list[str] = []
    for name in listed:
        order.extend(_reading_order(graph, name) if name + ".__init__" in _INITS else [name])
    return order


_INITS = {
    _module_name(path.parent) + ".__init__" for path in PACKAGE.rglob("__init__.py")
}


def out_of_order(graph: dict[str, set[str]], package: str) -> list[str]:
    """``module imports [...]`` for each module under ``package`` that imports a spark module
    listed after it (in the reading order of the whole of ``yangkey.spark``)."""
    spark = _reading_order(graph, "yangkey.spark")
    found = []
    for name in _reading_order(graph, package):
        before = set(spark[: spark.index(name)])
        later = {t for t in graph[name] if t.startswith("yangkey.spark.")} - before
        if later:
            found.append(f"{name} imports {sorted(later)}")
    return found


@pytest.mark.parametrize(
    "package",
    ["yangkey.spark", "yangkey.spark.source", "yangkey.spark.delivery", "yangkey.spark.runtime"],
)
def test_the_spark_module_maps_are_true(package: str) -> None:
    # The package docstrings are the newcomer's reading order: every module of yangkey.spark
    # (a subpackage's in its own docstring), each importing only the ones listed above it,
    # the subpackages included: source before the transform, delivery, the runtime and the
    # driver's orchestration.
    graph = import_graph()
    order = _reading_order(graph, package)
    modules = sorted(name for name in graph if name.startswith(package + "."))
    assert sorted(order) == sorted(m for m in modules if m + ".__init__" not in _INITS)
    assert out_of_order(graph, package) == []


def test_the_module_map_check_sees_an_import_against_the_order() -> None:
    graph = import_graph()
    graph["yangkey.spark.source.splitting"] = {"yangkey.spark.tasks"}
    assert out_of_order(graph, "yangkey.spark.source") == [
        "yangkey.spark.source.splitting imports ['yangkey.spark.tasks']"
    ]


def test_test_file_basenames_are_unique() -> None:
    # pytest imports test files by basename (rootdir conftest, no packages): a unit and an
    # integration file of one name stop the whole run at collection.
    tests = Path(__file__).resolve().parents[1]
    names = [path.name for path in tests.rglob("test_*.py")]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


@pytest.mark.parametrize("package", ["yangkey.cli", "yangkey.demo"])
def test_the_module_map_of_the_package_is_true(package: str) -> None:
    # As for yangkey.spark: the package docstring lists every module, each importing only the
    # ones listed above it.
    module = importlib.import_module(package)
    listed = re.findall(rf":mod:`({re.escape(package)}\.\w+)`", module.__doc__ or "")
    order = list(dict.fromkeys(listed))
    graph = import_graph()
    modules = sorted(name for name in graph if name.startswith(package + "."))
    assert sorted(order) == modules
    for position, name in enumerate(order):
        later = {t for t in graph[name] if t.startswith(package + ".")} - set(order[:position])
        assert not later, f"{name} imports {sorted(later)}, listed after it"


def test_the_core_module_map_is_true() -> None:
    # yangkey/__init__.py lists every top-level module, each importing only the ones listed
    # above it, and names every package.
    listed = re.findall(r":mod:`(yangkey\.\w+)`", yangkey.__doc__ or "")
    graph = import_graph()
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    modules = sorted(n for n in graph if n.count(".") == 1 and n.split(".")[1] not in packages)
    order = [name for name in dict.fromkeys(listed) if name.split(".")[1] not in packages]
    assert sorted(order) == modules
    assert {name.split(".")[1] for name in listed} >= packages - {"sql_templates", "examples"}
    for position, name in enumerate(order):
        later = {t for t in graph[name] if t in modules} - set(order[:position])
        assert not later, f"{name} imports {sorted(later)}, listed after it"


def _layer(module: str) -> str:
    """A module's place in the package graph: its top-level package (``yangkey`` for the
    core); the CLI's support modules are a layer of their own below the edges, and the CLI's
    root and commands together with each edge's ``commands`` module (what the CLI's lazy
    table loads) the command layer above them all."""
    if module in CLI_SUPPORT:
        return "cli support"
    parts = module.split(".")
    if _in(module, "yangkey.cli") or (len(parts) == 3 and parts[2] == "commands"):
        return "commands"
    if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1] / "__init__.py").exists()):
        return ".".join(parts[:2])
    return "yangkey"


def test_no_package_cycle() -> None:
    # Type-only imports count: kafka and registry once imported each other (the compacted
    # log lived in the registry and raised its errors).
    graph: dict[str, set[str]] = {}
    for name, targets in import_graph().items():
        graph.setdefault(_layer(name), set()).update(
            _layer(t) for t in targets if _layer(t) != _layer(name)
        )
    assert "yangkey.registry" not in graph["yangkey.kafka"]
    assert find_cycle(graph) is None
