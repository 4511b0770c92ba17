"""The one place a :class:`~yangkey.errors.YangkeyError` becomes what the user sees: one
``error:`` line on stderr (on a terminal, the offending text with a caret under it) and exit
status 1, never a traceback. Every command module imports it; none imports the CLI."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from yangkey.errors import YangkeyError

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
