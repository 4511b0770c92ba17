"""The options of the driver JVM yangkey launches (the JVM itself: tests/integration)."""

from __future__ import annotations

from yangkey.spark.session import LOCAL_JIT, driver_java_options


def test_a_clusters_driver_keeps_the_default_jit() -> None:
    assert LOCAL_JIT in driver_java_options("WARN", local=True).split()
    cluster = driver_java_options("WARN", local=False).split()
    assert LOCAL_JIT not in cluster
    assert cluster and cluster[0].startswith("-Dlog4j2.configurationFile=file:")
