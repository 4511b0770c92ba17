"""Fixtures shared by every test directory.

``spark``: one local SparkSession for the whole session, started only when a test asks for
it (unit tests that do not use it never start a JVM). ``local[2,2]``: two cores, and two
attempts per task, so tests of task retries see Spark retry a failed task (plain
``local[2]`` fails the job on the first task failure). Tests using it are marked ``spark``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_TEST_MASTER = "local[2,2]"

# An exception that is not a YangkeyError is a bug: tests see it raised, never as a rejection
# (records.MessageBuilder; inherited by the CLI, Spark and demo processes tests start).
os.environ.setdefault("YANGKEY_STRICT", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session", autouse=True)
def _schema_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests build schemas from temporary module directories: keep their on-disk schema cache
    out of the user's (and never read a stale one from there)."""
    previous = os.environ.get("YANGKEY_CACHE_DIR")
    os.environ["YANGKEY_CACHE_DIR"] = str(tmp_path_factory.mktemp("schema-cache"))
    yield
    if previous is None:
        del os.environ["YANGKEY_CACHE_DIR"]
    else:
        os.environ["YANGKEY_CACHE_DIR"] = previous


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from yangkey.spark.job import JobConfig, build_session  # noqa: PLC0415 - lazy: no JVM

    session = build_session(
        JobConfig(
            subscriptions="",
            inputs=(),
            master=SPARK_TEST_MASTER,
            app_name="yangkey-tests",
            spark_conf={
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
