"""``--help`` teaches: every leaf command shows examples and every option says what it does.

Walks the whole command tree through the LazyGroup, loading every edge command whose extra is
installed (a missing one is reported as skipped, naming it).
"""

from __future__ import annotations

import click
import pytest

from yangkey.cli import main


def _leaves(
    group: click.Group, ctx: click.Context, path: tuple[str, ...]
) -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if command.hidden:
            continue
        if isinstance(command, click.Group):
            found.extend(_leaves(command, click.Context(command, parent=ctx), (*path, name)))
        else:
            found.append((" ".join((*path, name)), command))
    return found


def _tree() -> list[tuple[str, click.Command]]:
    return _leaves(main, click.Context(main, info_name="yangkey"), ("yangkey",))


def _help(command: click.Command, name: str) -> str:
    with click.Context(command, info_name=name) as ctx:
        return command.get_help(ctx)


def test_every_leaf_command_has_examples_and_every_option_a_help_text() -> None:
    try:
        leaves = _tree()
    except ModuleNotFoundError as exc:  # an edge whose extra is missing (core-only install)
        pytest.skip(f"needs every extra: {exc}")
    assert len(leaves) >= 17
    problems: list[str] = []
    for name, command in leaves:
        text = _help(command, name)
        if "Example:" not in text and "Examples:" not in text:
            problems.append(f"{name}: no Examples section")
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden and not (param.help or ""):
                problems.append(f"{name} {param.opts[0]}: no help text")
        # an example names the command it is an example of
        if "Example" in text and name not in text.partition("Example")[2]:
            problems.append(f"{name}: the examples do not run `{name}`")
    assert not problems, "\n".join(problems)
