"""The on-disk schema cache, through real ``yangkey`` processes (a one-shot call is a process).

A warm call gives the same answer without importing yangson; an edited module (even one that
keeps its size and mtime) is seen; a corrupt or unwritable cache is ignored, never a crash;
``YANGKEY_SCHEMA_CACHE=off`` writes nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

MODULE = """module cache-test {
  yang-version 1.1;
  namespace "urn:example:cache-test";
  prefix ct;
  container c {
    list l {
      key k;
      leaf k { type string; }
      leaf v { type string; }
    }
  }
}
"""
XPATH = "/cache-test:c/l"
NOTIFICATION = (
    b'{"ietf-yp-notification:envelope": {"hostname": "r1", "contents": '
    b'{"ietf-yang-push:push-update": {"id": 5, "datastore-contents": '
    b'{"cache-test:c": {"l": [{"k": "a", "j": "b"}]}}}}}}'
)

# Runs the CLI in this process's interpreter and reports whether yangson was imported.
PROBE = """
import sys
from yangkey.cli import main
try:
    main(sys.argv[1:], prog_name="yangkey")
finally:
    print("yangson imported" if "yangson" in sys.modules else "yangson not imported",
          file=sys.stderr)
"""


def yangkey(cache: Path | None, *args: str, off: bool = False) -> subprocess.CompletedProcess[str]:
    ours = ("YANGKEY_CACHE", "YANGKEY_SCHEMA_CACHE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    if cache is not None:
        env["YANGKEY_SCHEMA_CACHE"] = str(cache)
    if off:
        env["YANGKEY_SCHEMA_CACHE"] = "off"
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.fixture
def yang_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "yang"
    directory.mkdir()
    (directory / "cache-test.yang").write_text(MODULE, encoding="utf-8")
    return directory


@pytest.fixture
def notification(tmp_path: Path) -> Path:
    path = tmp_path / "notification.json"
    path.write_bytes(NOTIFICATION)
    return path


def key_args(yang_dir: Path, notification: Path) -> list[str]:
    return ["key", "--yang-dir", str(yang_dir), "--xpath", XPATH, str(notification)]


def test_warm_call_gives_the_same_key_without_yangson(
    tmp_path: Path, yang_dir: Path, notification: Path
) -> None:
    cache = tmp_path / "cache"
    cold = yangkey(cache, *key_args(yang_dir, notification))
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout == "r1\n5\n/cache-test:c/l[k='a']"
    assert "yangson imported" in cold.stderr
    kinds = sorted(p.name.partition("-")[0] for p in cache.iterdir())
    assert kinds == ["compiled", "index", "model"]

    warm = yangkey(cache, *key_args(yang_dir, notification))
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout == cold.stdout
    assert "yangson not imported" in warm.stderr


def test_an_edited_module_is_seen_even_with_the_same_size_and_mtime(
    tmp_path: Path, yang_dir: Path, notification: Path
) -> None:
    cache = tmp_path / "cache"
    first = yangkey(cache, *key_args(yang_dir, notification))
    assert first.stdout.endswith("[k='a']"), first.stderr

    # Key leaf k -> j: same length, and the old mtime put back, so only the content differs.
    module = yang_dir / "cache-test.yang"
    stat = module.stat()
    module.write_text(
        MODULE.replace("key k;", "key j;").replace("leaf k {", "leaf j {"), encoding="utf-8"
    )
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert module.stat().st_size == stat.st_size

    second = yangkey(cache, *key_args(yang_dir, notification))
    assert second.returncode == 0, second.stderr
    assert second.stdout == "r1\n5\n/cache-test:c/l[j='b']"
    assert "yangson imported" in second.stderr  # rebuilt, not loaded


def test_a_corrupt_cache_is_rebuilt(tmp_path: Path, yang_dir: Path, notification: Path) -> None:
    cache = tmp_path / "cache"
    expected = yangkey(cache, *key_args(yang_dir, notification)).stdout
    for entry in cache.iterdir():
        entry.write_bytes(b"\x80\x05garbage")
    again = yangkey(cache, *key_args(yang_dir, notification))
    assert again.returncode == 0, again.stderr
    assert again.stdout == expected
    assert "Traceback" not in again.stderr
    # ... and rewritten: the next call loads it
    assert "yangson not imported" in yangkey(cache, *key_args(yang_dir, notification)).stderr


def test_an_unwritable_cache_location_is_ignored(
    tmp_path: Path, yang_dir: Path, notification: Path
) -> None:
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("x", encoding="utf-8")
    result = yangkey(not_a_directory / "cache", *key_args(yang_dir, notification))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "r1\n5\n/cache-test:c/l[k='a']"
    assert result.stderr.splitlines() == ["yangson imported"]


def test_cache_off_writes_nothing(tmp_path: Path, yang_dir: Path, notification: Path) -> None:
    cache = tmp_path / "cache"
    result = yangkey(cache, *key_args(yang_dir, notification), off=True)
    assert result.returncode == 0, result.stderr
    assert not cache.exists()
