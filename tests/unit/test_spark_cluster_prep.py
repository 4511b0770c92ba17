"""--ship-env packing and caching, the executor preflight, local input paths on a cluster.

The packing tests pack a tiny throwaway virtualenv (``python -m venv --without-pip``) with a
fake editable yangkey and fake Spark jars, so they run in seconds; the real venv is packed by
tests/integration/test_spark_cluster.py.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyspark.sql import SparkSession

from yangkey.errors import ConfigError, InputError
from yangkey.spark.commands import produce
from yangkey.spark.config import JobConfig
from yangkey.spark.runtime import ship_env
from yangkey.spark.runtime.executors import (
    check_executors,
    is_local_master,
    local_input_warnings,
)
from yangkey.spark.source.files import plan_files


@pytest.fixture(scope="module")
def tiny_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prefix = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    site = next(prefix.glob("lib/python*/site-packages"))
    # What `pip install -e .` leaves (PEP 660 finder style) and what pyspark brings.
    (site / "__editable__.yangkey-0.1.0.pth").write_text(
        "import __editable___yangkey_0_1_0_finder; __editable___yangkey_0_1_0_finder.install()"
    )
    (site / "__editable___yangkey_0_1_0_finder.py").write_text("MAPPING = {}\n")
    dist = site / "yangkey-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: yangkey\nVersion: 0.1.0\n")
    (dist / "direct_url.json").write_text('{"dir_info": {"editable": true}, "url": "file:///x"}')
    (site / "pyspark" / "jars").mkdir(parents=True)
    (site / "pyspark" / "__init__.py").write_text("")
    (site / "pyspark" / "jars" / "spark-core.jar").write_bytes(b"jar")
    (site / "chdb").mkdir()
    (site / "chdb" / "__init__.py").write_text("")
    chdb = site / "chdb-4.4.0.dist-info"
    chdb.mkdir()
    (chdb / "METADATA").write_text("Metadata-Version: 2.1\nName: chdb\nVersion: 4.4.0\n")
    (chdb / "RECORD").write_text("chdb/__init__.py,,\nchdb-4.4.0.dist-info/METADATA,,\n")
    return prefix


def _members(archive: Path) -> set[str]:
    with tarfile.open(archive) as tar:
        return set(tar.getnames())


def test_pack_ships_the_venv_without_editable_finder_spark_jars_or_chdb(
    tiny_venv: Path, tmp_path: Path
) -> None:
    shipped = ship_env.ship_running_env(cache_dir=tmp_path, prefix=tiny_venv)
    names = _members(shipped.archive)
    assert "bin/python" in names
    assert "pyvenv.cfg" in names
    assert any(name.endswith("site-packages/pyspark/__init__.py") for name in names)
    assert not any("pyspark/jars" in name for name in names)
    assert not any("__editable__" in name for name in names)
    assert not any("chdb" in name for name in names)
    assert any(name.endswith("yangkey-0.1.0.dist-info/METADATA") for name in names)
    # bin/python stays a link to the base interpreter (venv-pack's documented behaviour).
    with tarfile.open(shipped.archive) as tar:
        python = tar.getmember("bin/python")
    assert python.issym()
    assert shipped.spark_conf() == {"spark.archives": f"{shipped.archive.as_uri()}#environment"}
    assert shipped.spark_conf("hdfs:///x.zip#x")["spark.archives"].startswith("hdfs:///x.zip#x,")


def test_editable_yangkey_code_goes_in_a_zip_with_mapped_subpackages(
    tiny_venv: Path, tmp_path: Path
) -> None:
    shipped = ship_env.ship_running_env(cache_dir=tmp_path, prefix=tiny_venv)
    assert shipped.code is not None
    names = set(zipfile.ZipFile(shipped.code).namelist())
    assert "yangkey/__init__.py" in names
    assert "yangkey/spark/runtime/ship_env.py" in names
    assert "yangkey/sql_templates/history_table.sql.j2" in names  # package-dir mapped
    assert not any("__pycache__" in name for name in names)


def test_archive_is_cached_by_content_and_replaced_when_packages_change(
    tiny_venv: Path, tmp_path: Path
) -> None:
    first = ship_env.ship_running_env(cache_dir=tmp_path, prefix=tiny_venv)
    again = ship_env.ship_running_env(cache_dir=tmp_path, prefix=tiny_venv)
    assert not first.reused
    assert again.reused
    assert again.archive == first.archive
    site = next(tiny_venv.glob("lib/python*/site-packages"))
    added = site / "extra_pkg-1.0.dist-info"
    added.mkdir()
    (added / "METADATA").write_text("Metadata-Version: 2.1\nName: extra-pkg\nVersion: 1.0\n")
    try:
        changed = ship_env.ship_running_env(cache_dir=tmp_path, prefix=tiny_venv)
    finally:
        (added / "METADATA").unlink()
        added.rmdir()
    assert not changed.reused
    assert changed.archive != first.archive
    assert not first.archive.exists(), "the older archive of the same venv is removed"
    assert [p.name for p in tmp_path.glob("venv-*.tar.gz")] == [changed.archive.name]


def test_other_editable_distributions_are_refused(tiny_venv: Path, tmp_path: Path) -> None:
    site = next(tiny_venv.glob("lib/python*/site-packages"))
    other = site / "mylib-2.0.dist-info"
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: mylib\nVersion: 2.0\n")
    (other / "direct_url.json").write_text('{"dir_info": {"editable": true}, "url": "file:///y"}')
    try:
        with pytest.raises(ConfigError, match="editable installs cannot be shipped: mylib"):
            ship_env.ship_running_env(cache_dir=tmp_path, prefix=tiny_venv)
    finally:
        for path in other.iterdir():
            path.unlink()
        other.rmdir()


def test_not_a_virtualenv_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "prefix", sys.base_prefix)
    with pytest.raises(ConfigError, match="not from a virtualenv"):
        ship_env.running_venv()


@pytest.mark.parametrize(
    ("master", "gateway", "expected"),
    [
        ("local[*]", False, True),
        ("local", False, True),
        ("spark://h:7077", False, False),
        ("yarn", False, False),
        (None, False, True),
        (None, True, None),
    ],
)
def test_is_local_master(
    master: str | None, gateway: bool, expected: bool | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if gateway:
        monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")
    else:
        monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert is_local_master(master) is expected


def test_local_inputs_on_a_cluster_master_warn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    inputs = ("in.jsonl", "file:///data/x", "kafka://raw")
    cluster = JobConfig.of(subscriptions="s", inputs=inputs, master="spark://h:7077", dry_run=True)
    (warning,) = local_input_warnings(cluster)
    assert warning.startswith("in.jsonl, file:///data/x: local input on a cluster master")
    assert "same absolute path" in warning
    assert local_input_warnings(JobConfig.of(subscriptions="s", inputs=inputs, dry_run=True)) == []
    remote = JobConfig.of(subscriptions="s", inputs=("hdfs:///raw",), master="yarn", dry_run=True)
    assert local_input_warnings(remote) == []


def test_relative_input_paths_are_resolved_on_the_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "in.jsonl").write_bytes(b'{"a": 1}\n')
    monkeypatch.chdir(tmp_path)
    (file_range,) = plan_files("in.jsonl", 1 << 20, "auto")
    assert file_range.path == str(tmp_path / "in.jsonl")
    with pytest.raises(InputError, match=r"missing\.jsonl: no such file or directory"):
        plan_files("missing.jsonl", 1 << 20, "auto")


def test_executor_probe_reports_its_interpreter(spark: SparkSession) -> None:
    # Which interpreter local workers run is build_session's business (issue 8); the probe
    # reports whichever it is.
    report = check_executors(spark, shipped=False, module="json")
    assert report["error"] == ""
    assert Path(report["python"]).is_absolute()
    assert Path(report["python"]).name.startswith("python")


def test_executor_probe_names_what_is_missing_and_what_to_do(spark: SparkSession) -> None:
    with pytest.raises(ConfigError) as raised:
        check_executors(spark, shipped=False, module="yangkey_not_there.job")
    message = raised.value.message()
    assert message.startswith("spark executors (local[2,2]): ")
    assert "cannot import yangkey_not_there (ModuleNotFoundError" in message
    assert "--ship-env" in message and "PYSPARK_PYTHON" in message


def test_ship_env_refuses_streaming_from_kafka_as_a_usage_error_in_one_line(
    tmp_path: Path,
) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "subscriptions.yaml"
    result = CliRunner().invoke(
        produce,
        [
            *("--subscriptions", str(example), "--input", "kafka://raw", "--dry-run"),
            *("--bootstrap", "127.0.0.1:9"),
            *("--stream", "--checkpoint", str(tmp_path / "ck")),
            *("--master", "spark://127.0.0.1:7077", "--ship-env"),
        ],
    )
    assert result.exit_code == 2  # a combination of options that makes no run
    error = result.output.strip().splitlines()[-1]  # under click's usage lines, unwrapped
    assert error.startswith("Error: --ship-env cannot serve --stream from kafka://")
    assert error.endswith("set PYSPARK_PYTHON instead")


def test_executor_probe_fails_fast_when_python_cannot_start(spark: SparkSession) -> None:
    context = spark.sparkContext
    saved = context.pythonExec
    context.pythonExec = "/nonexistent/bin/python"
    try:
        with pytest.raises(ConfigError) as raised:
            check_executors(spark, shipped=True)
    finally:
        context.pythonExec = saved
    message = raised.value.message()
    assert 'the probe task failed: java.io.IOException: Cannot run program "/nonexistent' in message
    assert "Job aborted" not in message
    assert "the shipped environment does not work there" in message
    assert "\n" not in message
