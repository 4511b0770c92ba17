"""The ``fast`` marker (tests/conftest.py) that ``make unit`` selects: set from what a test
uses, and held true by failing a fast test that loads chdb.

One pytest run in a subprocess over a scratch directory holding this repository's
tests/conftest.py and a few tests, so that the run's own ``sys.modules`` starts clean.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"

SAMPLE = '''
import sys
import types

import pytest


@pytest.fixture
def chdb_conn():
    return None


def test_plain():
    assert True


def test_with_the_chdb_fixture(chdb_conn):
    assert chdb_conn is None


@pytest.mark.needs("spark")
def test_running_a_subprocess_with_an_extra():
    assert True


def test_pretending_to_load_chdb():
    sys.modules["chdb"] = types.ModuleType("chdb")
'''


def test_fast_is_what_uses_no_jvm_no_chdb_no_broker_and_is_checked(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST.read_text(encoding="utf-8"))
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    fast\n    chdb\n    spark\n    needs\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "fast", "-rA"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )
    out = run.stdout
    assert "PASSED test_sample.py::test_plain" in out, out
    assert "FAILED test_sample.py::test_pretending_to_load_chdb" in out, out
    assert "is marked fast but loaded chdb" in out, out
    assert "test_with_the_chdb_fixture" not in out  # deselected: not fast
    assert "test_running_a_subprocess_with_an_extra" not in out
    assert "1 failed, 1 passed, 2 deselected" in out, out
