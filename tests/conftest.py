"""Fixtures shared by every test directory.

``spark``: one local SparkSession for the whole session, started only when a test asks for
it (unit tests that do not use it never start a JVM). ``local[2,2]``: two cores, and two
attempts per task, so tests of task retries see Spark retry a failed task (plain
``local[2]`` fails the job on the first task failure). Tests using it are marked ``spark``.

Markers set here, from what a test uses (``make unit`` runs ``-m fast``):

* ``spark``: uses the ``spark`` fixture (a JVM);
* ``chdb``: uses a chdb fixture (:data:`CHDB_FIXTURES`), or its module imports ``chdb`` or
  says ``pytestmark = pytest.mark.chdb`` (a test running ``--embedded`` commands in-process);
* ``fast``: none of these, not ``integration``/``cluster`` (a broker), no ``needs`` (a
  subprocess with an extra), not ``slow`` (set by hand on a test that waits on purpose). A
  ``fast`` test that loads chdb or starts Spark anyway fails, saying so: the marker stays
  true.
"""

from __future__ import annotations

import ast
import atexit
import functools
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from yangkey.cli.extras import EXTRA_OF_MODULE

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from yangkey.clickhouse.connection import ChdbConnection

SPARK_TEST_MASTER = "local[2,2]"

# An exception that is not a YangkeyError is a bug: tests see it raised, never as a rejection
# (producer.MessageBuilder; inherited by the CLI, Spark and demo processes tests start).
os.environ.setdefault("YANGKEY_STRICT", "1")

# `yangkey kafka start` records brokers per user ($XDG_STATE_HOME/yangkey): tests (and the
# processes they start) record theirs in a directory of their own, never the user's.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="yangkey-test-state-")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], True)

# Optional dependencies absent from this environment (`pip install yangkey[test]` has none):
# a test that needs one is skipped, naming the extra, instead of failing. With every extra
# installed (make install) this set is empty and nothing is skipped.
MISSING = {m for m in EXTRA_OF_MODULE if importlib.util.find_spec(m) is None}


def _missing_extra(text: str) -> str | None:
    for module in sorted(MISSING):
        if f"No module named '{module}" in text:
            return f"needs yangkey[{EXTRA_OF_MODULE[module]}] ({module} is not installed)"
    return None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    report = yield
    if MISSING and report.failed and isinstance(collector, pytest.Module):
        reason = _missing_extra(str(report.longrepr))
        if reason is not None:
            report.outcome = "skipped"
            report.longrepr = (str(collector.path), 0, f"Skipped: {reason}")
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if MISSING and report.failed and call.excinfo is not None:
        error = call.excinfo.value
        if isinstance(error, ModuleNotFoundError):
            reason = _missing_extra(str(error))
            if reason is not None:
                report.outcome = "skipped"
                report.longrepr = (str(item.path), 0, f"Skipped: {reason}")
    return report


CHDB_FIXTURES = frozenset({"chdb_conn", "conn"})
"""Fixtures that open an embedded ClickHouse: :func:`chdb_conn` and its short name in
``tests/unit/conftest.py``."""

SLOW_MARKS = ("spark", "chdb", "integration", "cluster", "needs", "slow")
"""A test with one of these marks is not ``fast``: a JVM, chdb, a broker, a subprocess with
an extra, or ``slow`` (set by hand: it waits on purpose, for a timeout or a retry)."""


@functools.cache
def _imports_chdb(path: Path) -> bool:
    """Whether a test module imports ``chdb`` (or ``pytest.importorskip("chdb")``s it)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "chdb" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "chdb":
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "importorskip"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "chdb"
        ):
            return True
    return False


_INTEGRATION = Path(__file__).parent.resolve() / "integration"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # This runs before pytest's own -m selection, and may run before the integration
    # conftest's hook: what that one marks (a broker) is seen here by path and fixture.
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        broker = _INTEGRATION in Path(item.path).resolve().parents or bool(
            fixtures & {"kafka_broker", "kafka_bootstrap", "kafka_cluster"}
        )
        if "spark" in fixtures:
            item.add_marker(pytest.mark.spark)
        if fixtures & CHDB_FIXTURES or _imports_chdb(Path(item.path)):
            item.add_marker(pytest.mark.chdb)
        # What the hooks below cannot see (an extra used in a subprocess): @needs("extra").
        for mark in item.iter_markers("needs"):
            absent = sorted(m for m in MISSING if EXTRA_OF_MODULE[m] in mark.args)
            if absent:
                reason = f"needs yangkey[{','.join(mark.args)}] ({', '.join(absent)} missing)"
                item.add_marker(pytest.mark.skip(reason=reason))
        if not broker and not any(item.get_closest_marker(mark) for mark in SLOW_MARKS):
            item.add_marker(pytest.mark.fast)


def _spark_running() -> bool:
    context = getattr(sys.modules.get("pyspark.context"), "SparkContext", None)
    return getattr(context, "_active_spark_context", None) is not None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """A ``fast`` test must not load chdb nor start Spark: seen when it is the first to."""
    if item.get_closest_marker("fast") is None:
        return (yield)
    had_chdb, had_spark = "chdb" in sys.modules, _spark_running()
    result = yield
    if not had_chdb and "chdb" in sys.modules:
        pytest.fail(
            f"{item.nodeid} is marked fast but loaded chdb: use the chdb fixture, or mark "
            "its module with pytestmark = pytest.mark.chdb",
            pytrace=False,
        )
    if not had_spark and _spark_running():
        pytest.fail(
            f"{item.nodeid} is marked fast but started Spark: use the spark fixture",
            pytrace=False,
        )
    return result


@pytest.fixture(scope="session", autouse=True)
def _schema_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests build schemas from temporary module directories: keep their on-disk schema cache
    out of the user's (and never read a stale one from there)."""
    previous = os.environ.get("YANGKEY_SCHEMA_CACHE")
    os.environ["YANGKEY_SCHEMA_CACHE"] = str(tmp_path_factory.mktemp("schema-cache"))
    yield
    if previous is None:
        del os.environ["YANGKEY_SCHEMA_CACHE"]
    else:
        os.environ["YANGKEY_SCHEMA_CACHE"] = previous


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from yangkey.spark.config import SparkRuntime  # noqa: PLC0415 - lazy: no JVM
    from yangkey.spark.runtime.session import build_session  # noqa: PLC0415

    session = build_session(
        SparkRuntime(
            master=SPARK_TEST_MASTER,
            app_name="yangkey-tests",
            conf={
                "spark.ui.enabled": "false",
                "spark.sql.shuffle.partitions": "2",
                "spark.default.parallelism": "2",
            },
        )
    )
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="module")
def chdb_conn() -> Iterator[ChdbConnection]:
    """An embedded ClickHouse (chdb) in a temporary directory, one per test module: chdb holds
    one data path per process, so a module's is closed before the next module opens its own.
    Tests share it by using databases of their own. Imported here, not at the top, so that a
    core-only install still collects this conftest."""
    from yangkey.clickhouse.connection import ChdbConnection  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="yangkey-test-chdb-") as path:
        connection = ChdbConnection(path)
        try:
            yield connection
        finally:
            connection.close()
