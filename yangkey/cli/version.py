"""``yangkey --version``: the package's version and which decode path runs (the native fast
path or Python, :mod:`yangkey.native`)."""

from __future__ import annotations

import click

from yangkey.cli.declaration import Declaration


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import version  # noqa: PLC0415

    from yangkey.native import status  # noqa: PLC0415 (imports the notification model)

    click.echo(f"yangkey, version {version('yangkey')}\ndecode path: {status()}")
    ctx.exit()


VERSION = Declaration(
    ("--version",),
    "version",
    "Show the version and which decode path runs (native or python), then exit.",
    attrs={"is_flag": True, "expose_value": False, "is_eager": True, "callback": _print_version},
)
