"""A real local JVM records the class-data archive at its exit, the check tells a whole
recording from a cut one, and the next JVM maps the archive (its /proc maps say so)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from yangkey.jvm import find_java
from yangkey.spark.runtime.classdata import (
    DYNAMIC_MAGIC,
    SETTLE_SECONDS,
    records_archives,
    verified,
)

pytestmark = pytest.mark.needs("spark")

SESSION = """
import json
from yangkey.spark.config import SparkRuntime
from yangkey.spark.runtime.session import build_session

session = build_session(SparkRuntime(master="local[1]", conf={"spark.ui.enabled": "false"}))
bean = session.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
with open(f"/proc/{bean.getPid()}/maps", encoding="utf-8") as maps:
    mapped = sorted({line.split()[-1] for line in maps if line.rstrip().endswith(".jsa")})
assert session.sparkContext.parallelize(range(10), 2).count() == 10
session.stop()
print(json.dumps({"arguments": [str(a) for a in bean.getInputArguments()], "mapped": mapped}))
"""


def _session(cache: Path) -> dict[str, list[str]]:
    environ = {**os.environ, "YANGKEY_CACHE": str(cache)}
    environ.pop("YANGKEY_SPARK_CDS", None)
    done = subprocess.run(
        [sys.executable, "-c", SESSION],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _written(path: Path, timeout: float = 120.0) -> None:
    """Until the JVM, which outlives the Python process, has written ``path`` whole."""
    deadline = time.monotonic() + timeout
    last = -1
    while time.monotonic() < deadline:
        size = path.stat().st_size if path.exists() else -1
        if size > 0 and size == last:
            return
        last = size
        time.sleep(2.0)
    pytest.fail(f"the JVM wrote no archive at {path}")


def test_a_local_jvm_records_the_archive_and_the_next_one_maps_it(tmp_path: Path) -> None:
    java = find_java()
    assert records_archives(java, tmp_path)  # this machine's HotSpot takes the options
    assert list(tmp_path.iterdir()) == []  # and its probe leaves nothing behind
    first = _session(tmp_path)
    (recording,) = [
        a.split("=", 1)[1] for a in first["arguments"] if a.startswith("-XX:ArchiveClassesAtExit=")
    ]
    path = Path(recording)
    assert path.parent == tmp_path / "spark-cds" and path.suffix == ".recording"
    assert not [m for m in first["mapped"] if m.startswith(str(tmp_path))]
    _written(path)
    assert int.from_bytes(path.read_bytes()[:4], "little") == DYNAMIC_MAGIC

    cut = tmp_path / "cut.recording"
    cut.write_bytes(path.read_bytes()[: -(1 << 20)])  # a dump killed before its end
    assert not verified(java, cut)
    cut.unlink()
    assert verified(java, path)

    settled = time.time() - SETTLE_SECONDS - 1
    os.utime(path, (settled, settled))
    second = _session(tmp_path)
    archive = str(path.with_name(path.name.split(".")[0] + ".jsa"))
    assert f"-XX:SharedArchiveFile={archive}" in second["arguments"]
    assert archive in second["mapped"]  # the JVM really maps it, not only names it
    assert not path.exists()
