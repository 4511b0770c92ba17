"""Issue 8.4: a command whose optional dependency is missing prints one ``error:`` line naming
the extra to install, and exits 1.

The CLI runs in a subprocess whose import system refuses the module, as an interpreter without
it would; the core-only CI step runs the same tests where the modules are really absent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from yangkey.cli.extras import missing_extra

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "subscriptions.yaml"

_RUN_WITHOUT = """\
import sys
blocked = set(sys.argv[1].split(","))

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Refuse())
for name in list(sys.modules):
    if name.partition(".")[0] in blocked:
        del sys.modules[name]
from yangkey.cli import main
sys.argv = ["yangkey", *sys.argv[2:]]
main()
"""


def run_without(modules: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _RUN_WITHOUT, modules, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("modules", "args", "extra"),
    [
        (
            "pyspark",
            (
                "produce",
                "--subscriptions",
                str(EXAMPLES),
                "--input",
                "in.jsonl",
                "--bootstrap",
                "127.0.0.1:9",
            ),
            "spark",
        ),
        ("pyspark", ("demo", "--workdir", "demo"), "spark"),
        ("pyspark,confluent_kafka,chdb", ("demo",), "spark"),
        (
            "confluent_kafka",
            (
                "ingest",
                "--subscriptions",
                str(EXAMPLES),
                "--bootstrap",
                "127.0.0.1:9",
                "--embedded",
                "ch",
            ),
            "clickhouse",  # the extra that brings all of ingest: Kafka client, chdb, pyarrow
        ),
        (
            "chdb",
            ("ddl", "apply", "--subscriptions", str(EXAMPLES), "--embedded", "ch"),
            "clickhouse",
        ),
    ],
    ids=["produce", "demo", "demo-bare-core", "ingest", "ddl-apply"],
)
def test_missing_extra_is_one_error_line(
    modules: str, args: tuple[str, ...], extra: str, tmp_path: Path
) -> None:
    result = run_without(modules, *args, cwd=tmp_path)
    lines = result.stderr.splitlines()
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: yangkey {args[0]}: "), lines[0]
    assert f"pip install 'yangkey[{extra}]'" in lines[0]
    if args[0] == "demo":
        assert list(tmp_path.iterdir()) == []  # failed before generating or starting anything


def test_core_commands_need_no_extra(tmp_path: Path) -> None:
    result = run_without(
        "pyspark,confluent_kafka,chdb,clickhouse_connect",
        "topic",
        "--xpath",
        "/ietf-system:system/clock",
        "--prefix",
        "netops",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "netops-sys-system-clock"


def test_a_missing_module_that_is_no_extra_is_a_bug() -> None:
    # Only the optional libraries are the user's install; anything else must stay loud.
    assert missing_extra(ModuleNotFoundError("x", name="yangson.parser"), "compile") is None
    error = missing_extra(ModuleNotFoundError("x", name="confluent_kafka.admin"), "kafka")
    assert error is not None
    assert error.message() == (
        "yangkey kafka: needs the Python package 'confluent_kafka', which is not installed: "
        "pip install 'yangkey[kafka]'"
    )


def test_a_too_old_package_is_named_with_both_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyspark 4.1 has no pyspark.sql.streaming.datasource: the user has pyspark, only too old
    a one, and is told so rather than "not installed"."""
    pytest.importorskip("pyspark")
    monkeypatch.setattr(
        "yangkey.cli.extras.installed_version",
        lambda dist: "4.1.4" if dist == "pyspark" else "1.0",
    )
    exc = ModuleNotFoundError("x", name="pyspark.sql.streaming.datasource")
    error = missing_extra(exc, "produce")
    assert error is not None
    assert error.message() == (
        "yangkey produce: pyspark 4.1.4 is installed, yangkey needs pyspark>=4.2,<5: "
        "pip install --upgrade 'yangkey[spark]'"
    )
    # an ImportError of a name (not a module) is the same story
    error = missing_extra(ImportError("cannot import name", name="pyspark.sql.datasource"), None)
    assert error is not None and "pyspark 4.1.4 is installed" in error.message()


def test_a_fitting_version_that_fails_to_import_a_name_is_a_bug(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("pyspark")
    monkeypatch.setattr("yangkey.cli.extras.installed_version", lambda dist: "4.3.0")
    assert missing_extra(ImportError("cannot import name", name="pyspark.sql"), "produce") is None


def test_every_requirement_is_read_from_the_package_metadata() -> None:
    from yangkey.cli.extras import requirements  # noqa: PLC0415

    wanted = requirements()
    assert wanted["pyspark"] == ">=4.2,<5" or set(wanted["pyspark"].split(",")) == {">=4.2", "<5"}
    assert "chdb" in wanted and "click" in wanted
