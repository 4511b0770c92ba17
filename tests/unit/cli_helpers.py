"""Running the CLI in-process and checking the bad-input contract, for the CLI tests."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from yangkey.cli import main


def run(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def assert_one_error(result: Result, *needles: str) -> str:
    """Exit 1, no traceback, exactly one stderr line ``error: …`` holding every needle."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"crashed with {result.exception!r}"
    )
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert "Traceback" not in result.output
    return lines[0]


def write(tmp_path: Path, name: str, content: str | bytes) -> str:
    """``content`` into ``tmp_path / name``; the path as the CLI takes it."""
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)
