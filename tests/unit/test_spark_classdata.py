"""Who records the local JVM's class-data archive, when a recording becomes the archive, and
the options each case gives (a real JVM records and maps one in tests/integration)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from yangkey.spark.runtime import classdata
from yangkey.spark.runtime.classdata import DYNAMIC_MAGIC, SETTLE_SECONDS, cds_options


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(classdata.CDS_ENV, raising=False)
    monkeypatch.setattr(classdata, "find_java", lambda: "/usr/bin/java")
    monkeypatch.setattr(classdata, "archive_key", lambda java: "k")
    monkeypatch.setattr(classdata, "records_archives", lambda java, directory: True)
    return tmp_path / "spark-cds"


def _recording(directory: Path, pid: int, age: float, magic: bool = True) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"k.{pid}.recording"
    head = DYNAMIC_MAGIC.to_bytes(4, "little") if magic else b"\0\0\0\0"
    path.write_bytes(head + b"archive")
    os.utime(path, (100.0 - age, 100.0 - age))
    return path


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_first_run_records_and_holds_the_claim(cache: Path) -> None:
    options = cds_options(cache, now=100.0)
    assert options == f"-XX:ArchiveClassesAtExit={cache}/k.{os.getpid()}.recording -Xlog:cds*=off"
    assert (cache / "k.claim").read_text() == str(os.getpid())
    # Another run while this one records (or its JVM has yet to write): no options at all.
    assert cds_options(cache, now=100.0) == ""


def test_a_claim_whose_process_ended_without_a_recording_is_taken_over(cache: Path) -> None:
    cache.mkdir(parents=True)
    (cache / "k.claim").write_text(str(_dead_pid()))
    assert "-XX:ArchiveClassesAtExit=" in cds_options(cache, now=100.0)


def test_a_settled_recording_that_checks_out_becomes_the_archive(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[Path] = []

    def verified(java: str, archive: Path) -> bool:
        checked.append(archive)
        return True

    monkeypatch.setattr(classdata, "verified", verified)
    cache.mkdir(parents=True)
    (cache / "k.claim").write_text(str(_dead_pid()))
    recording = _recording(cache, 4242, age=SETTLE_SECONDS + 1)
    options = cds_options(cache, now=100.0)
    assert checked == [recording]
    assert options == f"-XX:SharedArchiveFile={cache}/k.jsa -Xshare:auto -Xlog:cds*=off"
    assert sorted(p.name for p in cache.iterdir()) == ["k.jsa"]  # claim and recording gone


def test_a_recording_still_being_written_is_left_alone(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(classdata, "verified", lambda java, archive: pytest.fail("checked"))
    cache.mkdir(parents=True)
    (cache / "k.claim").write_text(str(_dead_pid()))
    recording = _recording(cache, 4242, age=SETTLE_SECONDS - 5)
    assert cds_options(cache, now=100.0) == ""  # neither used nor recorded again
    assert recording.exists()


def test_a_recording_that_fails_the_check_is_deleted_and_recorded_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(classdata, "verified", lambda java, archive: False)
    cache.mkdir(parents=True)
    (cache / "k.claim").write_text(str(_dead_pid()))
    recording = _recording(cache, 4242, age=SETTLE_SECONDS + 1)
    assert "-XX:ArchiveClassesAtExit=" in cds_options(cache, now=100.0)
    assert not recording.exists() and not (cache / "k.jsa").exists()


def test_no_magic_no_jvm_asked(tmp_path: Path) -> None:
    path = tmp_path / "cut.recording"
    path.write_bytes(b"\0" * 64)  # what a dump cut short before its header looks like
    assert not classdata.verified("/nonexistent/java", path)


def test_off_by_environment_and_quoted_paths(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(classdata.CDS_ENV, "0")
    assert cds_options(cache, now=100.0) == ""
    monkeypatch.setenv(classdata.CDS_ENV, "1")
    spaced = tmp_path / "my cache" / "spark-cds"
    options = cds_options(spaced, now=100.0)
    assert options.startswith(f'"-XX:ArchiveClassesAtExit={spaced}/k.')
    assert options.endswith('.recording" -Xlog:cds*=off')


def test_leftovers_of_other_keys_are_cleaned_up(cache: Path) -> None:
    cache.mkdir(parents=True)
    day = 86400.0
    now = 1_000 * day
    ages = {
        "old.jsa": 15 * day,  # another PySpark, unused for weeks: deleted
        "recent.jsa": 13 * day,  # another virtualenv still in use now and then: kept
        "gone.77.recording": 2 * day,  # a deleted virtualenv's recording: deleted
        "gone.claim": 2 * day,
        "fresh.78.recording": 60.0,  # another key's recording, not promoted yet: kept
    }
    for name, age in ages.items():
        (cache / name).write_bytes(b"x")
        os.utime(cache / name, (now - age, now - age))
    cds_options(cache, now=now)
    assert {p.name for p in cache.iterdir()} == {
        "recent.jsa",
        "fresh.78.recording",
        "k.claim",
    }


def test_a_jvm_that_refuses_the_options_is_not_asked_to_record(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def refuses(java: str, directory: Path) -> bool:
        asked.append(java)
        return False

    monkeypatch.setattr(classdata, "records_archives", refuses)
    assert cds_options(cache, now=100.0) == ""
    assert cds_options(cache, now=100.0) == ""
    assert asked == ["/usr/bin/java"]  # once: the answer is kept (for a day)
    assert {p.name for p in cache.iterdir()} == {"k.unsupported"}
