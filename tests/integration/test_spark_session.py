"""The JVM yangkey launches for a local master: the options it really started with."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from pyspark.sql import SparkSession

from yangkey.spark.runtime.session import LOCAL_JIT


def _jvm_arguments(session: SparkSession) -> list[str]:
    jvm: Any = getattr(session.sparkContext, "_jvm")  # noqa: B009 - private, untyped
    bean = jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    return [str(argument) for argument in bean.getInputArguments()]


def test_a_local_masters_jvm_compiles_with_c1_only_and_starts_quiet(spark: SparkSession) -> None:
    arguments = _jvm_arguments(spark)
    assert LOCAL_JIT in arguments
    assert any(a.startswith("-Dlog4j2.configurationFile=file:") for a in arguments), arguments



def test_a_local_session_starts_without_sparks_shell_chatter() -> None:
    script = (
        "from yangkey.spark.config import SparkRuntime\n"
        "from yangkey.spark.runtime.session import build_session\n"
        "session = build_session(SparkRuntime(master='local[1]',"
        " conf={'spark.ui.enabled': 'false'}))\n"
        "assert session.sparkContext.parallelize(range(3), 1).count() == 3\n"
        "session.stop()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "YANGKEY_SPARK_CDS": "0"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # A PySpark driver counts as a shell: without a level for its gateway's logger Spark
    # printed these two lines on every start of yangkey produce and yangkey demo.
    assert "Setting default log level" not in done.stderr
    assert "setLogLevel" not in done.stderr
