"""The wire contract has one owner, :mod:`yangkey.messages`: each of its concepts (the key
format, the header names, the ClickHouse column sets, the error kinds) is defined there once,
and nothing else in the package or the SQL templates restates it."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import get_args

import pytest

from yangkey import errors, messages
from yangkey.clickhouse.ddl import DdlOptions, render_ddl
from yangkey.clickhouse.tables import ERRORS_TABLE, topic_tables
from yangkey.clickhouse.templating import template_names, wire_globals
from yangkey.topics import TopicSpec

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "yangkey"
TEMPLATES = ROOT / "sql_templates"
OWNER = PACKAGE / "messages.py"


@functools.cache  # parsed once a session: the tests only read the trees
def _modules() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8")) for path in PACKAGE.rglob("*.py")}


def _string_constants(tree: ast.AST) -> set[str]:
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def _defined_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level (assignments, functions, classes)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


# -- the concepts and their one definition ---------------------------------------------------

#: concept -> (owner module, the names that define it there)
CONCEPTS = {
    "message key": (OWNER, {"MessageKey", "encode_key", "KEY_LINE_SEPARATOR", "XPATH_SEPARATOR"}),
    "header names": (OWNER, {"HEADERS", *(n for n in vars(messages) if n.startswith("HEADER_"))}),
    "headers builder": (
        OWNER,
        {
            "Headers",
            "subscription_headers",
            "notification_headers",
            "schema_id_headers",
            "instances_headers",
            "error_headers",
            "truncated_headers",
            "header_bytes",
        },
    ),
    "column sets": (OWNER, {"COLUMN_SETS", "VERSION_COLUMN", *messages.COLUMN_SETS}),
    "error kinds": (PACKAGE / "errors.py", {"ErrorKind", "ERROR_KINDS"}),
    "error kinds on the wire": (
        OWNER,
        {"REJECTION_KINDS", "INGEST_KINDS", "REJECTED_PREFIX", "UNKNOWN_REJECTION", "sql_kinds"},
    ),
}


@pytest.mark.parametrize("concept", sorted(CONCEPTS))
def test_each_concept_is_defined_once_in_its_owner(concept: str) -> None:
    owner, names = CONCEPTS[concept]
    modules = _modules()
    assert names <= _defined_names(modules[owner]), names - _defined_names(modules[owner])
    elsewhere = {
        str(path.relative_to(ROOT)): sorted(names & _defined_names(tree))
        for path, tree in modules.items()
        if path != owner and names & _defined_names(tree)
    }
    assert elsewhere == {}


def test_no_other_module_writes_a_header_name() -> None:
    names = set(messages.HEADERS.values())
    assert len(names) == len(messages.HEADERS)
    assert {v for k, v in vars(messages).items() if k.startswith("HEADER_")} == names
    writers = {
        str(path.relative_to(ROOT)): sorted(names & _string_constants(tree))
        for path, tree in _modules().items()
        if path != OWNER and names & _string_constants(tree)
    }
    assert writers == {}


def _composes_a_key(node: ast.JoinedStr) -> bool:
    """An f-string ``{a}\\n{b}\\n{c}`` or ``{a}\\n{b}\\n``: a key or a key prefix written by
    hand."""
    parts = [
        "LF" if isinstance(v, ast.Constant) and v.value == "\n" else type(v).__name__
        for v in node.values
    ]
    prefix = ["FormattedValue", "LF", "FormattedValue", "LF"]
    return parts in (prefix, [*prefix, "FormattedValue"])


def test_no_other_module_composes_a_key() -> None:
    composers = sorted(
        str(path.relative_to(ROOT))
        for path, tree in _modules().items()
        if path != OWNER
        and any(_composes_a_key(n) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr))
    )
    assert composers == []


def test_the_key_detector_sees_a_hand_written_key() -> None:
    for text, composes in [
        ('f"{node}\\n{sub}\\n{x}"', True),
        ('f"{node}\\n{sub}\\n"', True),
        ('f"{a}\\n{b}\\n{c}\\n{d}\\n"', False),
    ]:
        (expr,) = ast.parse(text).body
        assert isinstance(expr, ast.Expr) and isinstance(expr.value, ast.JoinedStr)
        assert _composes_a_key(expr.value) is composes, text


def test_key_round_trip_and_prefix() -> None:
    key = messages.MessageKey.of("pe1", 7, ["/m:b", "/m:a", "/m:b"])
    assert key.xpaths == ("/m:a", "/m:b")
    encoded = key.encode()
    assert messages.MessageKey.parse(encoded) == key
    assert encoded.decode().startswith(messages.MessageKey.prefix("pe1", 7))
    assert encoded.decode().startswith(messages.MessageKey.prefix("pe1"))
    assert not messages.MessageKey.prefix("pe1").startswith(messages.MessageKey.prefix("pe10"))


# -- the SQL templates take the contract, they do not restate it ---------------------------


def _template_texts() -> dict[str, str]:
    return {name: (TEMPLATES / name).read_text(encoding="utf-8") for name in template_names()}


def test_templates_set_no_column_set_and_write_no_header_or_kind() -> None:
    header_literals = {f"'{name}'" for name in messages.HEADERS.values()}
    kind_literals = {f"'{kind}'" for kind in errors.ERROR_KINDS} | {
        f"'{messages.REJECTED_PREFIX}"
    }
    for name, text in _template_texts().items():
        assert not re.search(r"{%-?\s*set\s+\w*COLUMNS?\b", text), name
        assert not {lit for lit in header_literals | kind_literals if lit in text}, name


def test_templates_name_only_column_sets_the_owner_hands_in() -> None:
    used = set()
    for text in _template_texts().values():
        used.update(re.findall(r"\b([A-Z_]+_COLUMNS?)\b", text))
    assert used <= set(wire_globals())
    assert {"ROW_COLUMNS", "ERROR_COLUMNS", "QUEUE_VIRTUAL_COLUMNS"} <= used


def _columns_of(sql: str) -> list[str]:
    """The column names of a CREATE TABLE, in order (before ENGINE; indexes left out)."""
    body = sql[sql.index("(") + 1 : sql.index("\n)")]
    return [
        line.strip().split(" ")[0].strip("`")
        for line in body.splitlines()
        if line.strip() and not line.strip().startswith("INDEX")
    ]


def _names(columns: tuple[messages.Column, ...]) -> list[str]:
    return [column[0] for column in columns]


@pytest.mark.parametrize("mode", ["server", "embedded"])
def test_rendered_tables_have_the_owners_columns(mode: str) -> None:
    spec = TopicSpec(name="t-columns", schema_path="/m:a", subscription_ids=(1,))
    statements = {s.name: s.sql for s in render_ddl((spec,), DdlOptions(mode=mode))}
    names = topic_tables(spec.name, "yangkey")
    queue = _columns_of(statements[f"yangkey.{names.queue}"])
    if mode == "embedded":
        assert queue == _names(messages.QUEUE_COLUMNS)
    else:  # the Kafka engine's virtual columns are not declared
        assert queue == _names(messages.QUEUE_VALUE_COLUMNS)
    rows = _names(messages.ROW_COLUMNS)
    assert _columns_of(statements[f"yangkey.{names.history}"]) == [*rows, "ingested_at"]
    version = messages.VERSION_COLUMN[0]
    assert _columns_of(statements[f"yangkey.{names.current}"]) == [*rows, version, "ingested_at"]
    parsed = [*rows, version, *_names(messages.PARSE_COLUMNS)]
    assert _columns_of(statements[f"yangkey.{names.parsed}"]) == parsed
    errors_table = _columns_of(statements[f"yangkey.{ERRORS_TABLE}"])
    assert errors_table == [*_names(messages.ERROR_COLUMNS), "received_at"]


def test_the_ingest_bridge_writes_the_queue_columns() -> None:
    # pyarrow comes with yangkey[clickhouse]: imported here, so the core install runs the rest
    from yangkey.clickhouse.ingest.arrow import QUEUE_COLUMN_NAMES  # noqa: PLC0415

    assert [name.strip("`") for name in QUEUE_COLUMN_NAMES] == _names(messages.QUEUE_COLUMNS)


# -- error kinds ---------------------------------------------------------------------------


def test_every_wire_kind_is_an_error_kind() -> None:
    kinds = set(get_args(errors.ErrorKind))
    assert kinds == set(errors.ERROR_KINDS)
    assert set(messages.REJECTION_KINDS) <= kinds and set(messages.INGEST_KINDS) <= kinds
    assert set(messages.sql_kinds()) - {"rejected", "unknown"} <= kinds
