"""The options of the driver JVM yangkey launches (the JVM itself: tests/integration)."""

from __future__ import annotations

import os
from pathlib import Path

from yangkey.spark.runtime import runlog
from yangkey.spark.runtime.session import LOCAL_JIT, driver_java_options


def test_a_clusters_driver_keeps_the_default_jit() -> None:
    assert LOCAL_JIT in driver_java_options("WARN", local=True).split()
    cluster = driver_java_options("WARN", local=False).split()
    assert LOCAL_JIT not in cluster
    assert cluster and cluster[0].startswith("-Dlog4j2.configurationFile=file:")


def test_a_run_with_a_log_file_sends_sparks_log_there(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    options = driver_java_options("ERROR", local=True, run_log=str(log)).split()
    assert f"-D{runlog.PROPERTY}={log}" in options
    (config,) = [o for o in options if o.startswith("-Dlog4j2.configurationFile=file:")]
    text = Path(config.split("file:", 1)[1]).read_text(encoding="utf-8")
    assert "appender.out.type = File" in text and f"${{sys:{runlog.PROPERTY}}}" in text
    assert "Console" not in text
    spaced = driver_java_options("ERROR", local=True, run_log=str(tmp_path / "a b.log"))
    assert runlog.PROPERTY not in spaced, "Spark splits the options on spaces: stderr instead"


def test_run_logs_are_named_after_the_run_and_the_newest_kept(tmp_path: Path) -> None:
    olds = [tmp_path / f"produce-20260101T0000{n:02d}-old{n}.log" for n in range(runlog.KEPT + 5)]
    for n, old in enumerate(olds):
        old.write_text("x", encoding="utf-8")
        os.utime(old, (n, n))
    log = runlog.new_run_log("b0123456789ab", tmp_path)
    assert log is not None and log.name.endswith("-b0123456789ab.log") and log.exists()
    kept = sorted(tmp_path.glob("produce-*.log"))
    assert len(kept) == runlog.KEPT and kept[0] == olds[6], "the newest 19 and the new one"
    assert runlog.where(log) == "", "an empty log is not worth naming"
    log.write_text("26/11/26 09:24:51 ERROR Executor: Exception in task 0.0", encoding="utf-8")
    assert runlog.where(log) == f"; details in {log}"
