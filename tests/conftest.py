"""Fixtures shared by every test directory.

``spark``: one local SparkSession for the whole session, started only when a test asks for
it (unit tests that do not use it never start a JVM). ``local[2,2]``: two cores, and two
attempts per task, so tests of task retries see Spark retry a failed task (plain
``local[2]`` fails the job on the first task failure). Tests using it are marked ``spark``.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from yangkey.cli.extras import EXTRA_OF_MODULE

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
        # What the hooks below cannot see (an extra used in a subprocess): @needs("extra").
        for mark in item.iter_markers("needs"):
            absent = sorted(m for m in MISSING if EXTRA_OF_MODULE[m] in mark.args)
            if absent:
                reason = f"needs yangkey[{','.join(mark.args)}] ({', '.join(absent)} missing)"
                item.add_marker(pytest.mark.skip(reason=reason))


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
