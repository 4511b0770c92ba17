"""The Python API (issue 34.8): ``yangkey.__all__``, ``__version__``, lazy imports, and the
README's "Use from Python" example run as written, printing what the README says it prints."""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run

import yangkey

README = Path(__file__).resolve().parents[2] / "README.md"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("\n## Use from Python\n", 1)[1].split("\n## ", 1)[0]


def test_every_public_name_resolves_and_says_what_it_is() -> None:
    assert yangkey.__version__ == importlib.metadata.version("yangkey")
    assert len(yangkey.__all__) == len(set(yangkey.__all__)) >= 12
    assert set(yangkey.__all__) == {"__version__", *yangkey._API}
    for name in yangkey.__all__:
        value = getattr(yangkey, name)
        if name != "__version__":
            assert value.__module__.startswith("yangkey."), name
            assert (value.__doc__ or "").strip(), f"yangkey.{name} has no docstring"
    assert set(yangkey.__all__) <= set(dir(yangkey))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        yangkey.nothing  # type: ignore[attr-defined]  # noqa: B018


def test_import_yangkey_loads_no_library_until_a_name_is_used() -> None:
    probe = (
        "import sys, yangkey\n"
        "heavy = ('yangson', 'lxml', 'pydantic', 'confluent_kafka', 'chdb', 'pyspark', 'jinja2')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "yangkey.MessageKey\n"
        "print('yangkey.messages' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out == ["[]", "True"]


def test_the_readme_example_runs_and_prints_what_the_readme_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = _section()
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    shown = re.search(r"prints\n\n```text\n(.*?)```", section, re.DOTALL)
    assert code and shown
    monkeypatch.chdir(tmp_path)
    assert run("init").exit_code == 0
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.group(1), "README.md", "exec"), {})
    assert printed.getvalue() == shown.group(1)
