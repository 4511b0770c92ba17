"""The Jinja environment over the packaged SQL templates (``yangkey.sql_templates``): every
value reaches the SQL through a filter that quotes it (``ident``, ``literal``, ``qualified``,
``setting``). The wire contract of :mod:`yangkey.messages` (column sets, header names, error
kinds, the key's line separator) is in every template's globals: the templates never restate
it."""

from __future__ import annotations

import importlib.resources

import jinja2

from yangkey import messages
from yangkey.clickhouse.identifiers import qualified, quote_identifier, quote_literal


def _setting_value(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return quote_literal(str(value))


_ENVIRONMENT: jinja2.Environment | None = None


def environment() -> jinja2.Environment:
    """The Jinja environment over the packaged templates (``yangkey.sql_templates``)."""
    global _ENVIRONMENT  # noqa: PLW0603 - one lazily built environment per process
    if _ENVIRONMENT is None:
        env = jinja2.Environment(
            loader=jinja2.FunctionLoader(_load_template),
            autoescape=False,  # SQL, not HTML: values go through the ident/literal filters
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
        )
        env.filters["ident"] = quote_identifier
        env.filters["literal"] = quote_literal
        env.filters["qualified"] = qualified
        env.filters["setting"] = _setting_value
        env.globals.update(wire_globals())
        _ENVIRONMENT = env
    return _ENVIRONMENT


def wire_globals() -> dict[str, object]:
    """The wire contract as the templates see it (lists: a template concatenates them)."""
    return {
        **{name: list(columns) for name, columns in messages.COLUMN_SETS.items()},
        "VERSION_COLUMN": messages.VERSION_COLUMN,
        "headers": dict(messages.HEADERS),
        "kinds": messages.sql_kinds(),
        "key_line_separator": messages.KEY_LINE_SEPARATOR,
    }


def _load_template(name: str) -> str:
    resource = importlib.resources.files("yangkey.sql_templates").joinpath(name)
    try:
        return resource.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise jinja2.TemplateNotFound(name) from None


def template_names() -> list[str]:
    """Every packaged ``*.sql.j2`` template."""
    root = importlib.resources.files("yangkey.sql_templates")
    return sorted(item.name for item in root.iterdir() if item.name.endswith(".sql.j2"))
