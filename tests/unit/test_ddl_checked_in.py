"""ddl/ holds the generated DDL for examples/subscriptions.yaml; it must match the templates."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from yangkey.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mode", ["server", "embedded"])
def test_checked_in_ddl_is_current(tmp_path: Path, mode: str) -> None:
    # Run from the repository root so that the header names the file as the checked-in one does.
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(
            main,
            ["ddl", "generate", "--subscriptions", "examples/subscriptions.yaml",
             "--mode", mode, "-o", str(tmp_path)],
        )
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    fresh = (tmp_path / f"{mode}.sql").read_text()
    checked_in = (ROOT / "ddl" / f"{mode}.sql").read_text()
    assert fresh == checked_in, (
        f"ddl/{mode}.sql is out of date: run "
        "`yangkey ddl generate --subscriptions examples/subscriptions.yaml -o ddl/`"
    )
