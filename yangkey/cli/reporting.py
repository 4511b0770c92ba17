"""The one place a :class:`~yangkey.errors.YangkeyError` becomes what the user sees: one
``error:`` line on stderr (on a terminal, the offending text with a caret under it) and exit
status 1, never a traceback. Every command module imports it; it imports nothing of the CLI
root."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from yangkey.errors import YangkeyError

if TYPE_CHECKING:
    from yangkey.catalog import Catalog

F = TypeVar("F", bound=Callable[..., Any])


def fail(error: YangkeyError, note: str = "") -> NoReturn:
    """Report ``error`` (``note`` appended to its line) and exit 1."""
    click.echo(f"error: {error.message()}{note}", err=True)
    if sys.stderr.isatty():
        snippet = error.snippet()
        if snippet:
            click.echo(snippet, err=True)
    sys.exit(1)


def reports_errors(function: F) -> F:
    """Turn a YangkeyError into one ``error:`` line and exit status 1, never a traceback."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except YangkeyError as error:
            fail(error)

    return wrapper  # type: ignore[return-value]


def load_catalog(
    path: str, yang_dirs: Sequence[str], *, strict: bool, compile_warnings: bool = True
) -> Catalog:
    """:func:`yangkey.catalog.load_catalog` for a command: each subscription skipped and each
    warning of the file, and (``compile_warnings``) of each compiled subscription, is one
    ``warning:`` line on stderr."""
    from yangkey.catalog import load_catalog as load  # noqa: PLC0415

    catalog = load(path, yang_dirs=tuple(yang_dirs), strict=strict)
    shown = catalog.warnings
    if not compile_warnings:
        shown = (*(s.message() for s in catalog.skipped), *catalog.file.warnings)
    for warning in shown:
        click.echo(f"warning: {warning}", err=True)
    return catalog


def skipped_summary(catalog: Catalog) -> str:
    """``2 of 9 subscriptions skipped (…)`` for a command's summary; "" when none was."""
    skipped = len(catalog.skipped)
    if not skipped:
        return ""
    total = skipped + len(catalog.entries)
    return (
        f"{skipped} of {total} subscription{'s' if total != 1 else ''} skipped (they do not "
        "compile; their notifications are dead-lettered; --strict stops instead)"
    )
