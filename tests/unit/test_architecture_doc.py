"""docs/architecture.md stays true: every module and template it names exists, and every
top-level (core) module and every subpackage has its place in the package map."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "yangkey"
NAMED = set(re.findall(r"`([\w/]+\.py|[\w/]+/|[\w]+\.sql\.j2)`", DOC))


def test_every_module_and_template_the_page_names_exists() -> None:
    under = {p.relative_to(PACKAGE).as_posix() + ("/" if p.is_dir() else "") for p in
             PACKAGE.rglob("*") if "__pycache__" not in p.parts}
    templates = {p.name for p in (ROOT / "sql_templates").glob("*.sql.j2")}
    missing = sorted(
        name
        for name in NAMED
        if not (
            (ROOT / name).exists()
            or name in templates
            # under yangkey/, by its path or by a tail of it (in a package's row)
            or any(u == name or u.endswith("/" + name) for u in under)
        )
    )
    assert missing == [], f"docs/architecture.md names what the code no longer has: {missing}"


def test_every_core_module_and_package_is_in_the_map() -> None:
    core = {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    packages = {f"yangkey/{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    unmapped = sorted((core | packages) - NAMED)
    assert unmapped == [], f"add these to the package map of docs/architecture.md: {unmapped}"
