"""The JVM yangkey launches for a local master: the options it really started with."""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession

from yangkey.spark.session import LOCAL_JIT


def _jvm_arguments(session: SparkSession) -> list[str]:
    jvm: Any = getattr(session.sparkContext, "_jvm")  # noqa: B009 - private, untyped
    bean = jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    return [str(argument) for argument in bean.getInputArguments()]


def test_a_local_masters_jvm_compiles_with_c1_only_and_starts_quiet(spark: SparkSession) -> None:
    arguments = _jvm_arguments(spark)
    assert LOCAL_JIT in arguments
    assert any(a.startswith("-Dlog4j2.configurationFile=file:") for a in arguments), arguments

