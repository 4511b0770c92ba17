"""How a CLI option is declared once and applied by every command that takes it (as
dbt-core's ``cli/params.py`` declares its options): a :class:`Declaration` holds the long name,
the short form, the destination, the environment variable (shown in ``--help``), the metavar,
the help text and the hidden aliases; a command applies it as it is (``@BOOTSTRAP``) or with its
own default, requirement or a note after the help (``@BOOTSTRAP.but(required=False, note=…)``),
never with another name or meaning. ``tests/unit/test_cli_names.py`` walks the command tree and
holds that.

An option that is a profile field (``yangkey.yaml``, :mod:`yangkey.cli.profile`) brings
``--profile`` along, whose values become the defaults of the command's options.

Imports nothing heavy: every command's ``--help`` goes through here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import click
from click.core import ParameterSource

F = TypeVar("F", bound=Callable[..., Any])

ENV_PROFILE = "YANGKEY_PROFILE"
PROFILE_META = "yangkey.profile"
PROFILE_USED = "yangkey.profile_used"

#: What a command may change of a declaration when it applies it.
_ADJUSTABLE = frozenset({"default", "required", "show_default", "type"})


def apply_all(function: F, *decorators: Callable[[F], F]) -> F:
    """``decorators`` listed top to bottom as in ``--help`` (decorators apply bottom-up)."""
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def bundled(
    name: str, build: Callable[..., Any], *decorators: Callable[[F], F]
) -> Callable[[F], F]:
    """Declare the options of ``decorators`` and hand the command one value in their place:
    ``build(**their values)`` as its parameter ``name`` (built before the command runs, so
    ``build`` only gathers values; what can fail belongs in the command)."""

    def decorate(function: F) -> F:
        dests: list[str] = []

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {dest: kwargs.pop(dest) for dest in dests}
            return function(*args, **kwargs, **{name: build(**values)})

        before = list(getattr(function, "__click_params__", []))
        # functools.wraps shared the function's list of click params: the wrapper gets its own.
        wrapper.__click_params__ = list(before)  # type: ignore[attr-defined]
        decorated = apply_all(wrapper, *decorators)  # type: ignore[arg-type]
        added = getattr(decorated, "__click_params__", [])[len(before) :]
        dests.extend(param.name for param in added if param.expose_value and param.name)
        return decorated  # type: ignore[return-value]

    return decorate


class SharedOption(click.Option):
    """A click option made from a :class:`Declaration`: it knows its declaration (the test of
    names compares them) and leaves the hidden aliases out of ``--help``."""

    def __init__(self, *args: Any, declaration: Declaration, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.declaration = declaration

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown = [flag for flag in self.opts if flag not in self.declaration.aliases]
        opts, self.opts = self.opts, shown
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = opts


@dataclass(frozen=True, eq=False)
class Declaration:
    """One option, declared once: apply it as a decorator, or :meth:`but` with a command's own
    default, requirement or note."""

    flags: tuple[str, ...]
    """The long name, then its short form if it has one."""
    dest: str
    help: str
    """What the option means; ``{what}`` is filled in by the command (see :meth:`but`)."""
    envvar: str | None = None
    metavar: str | None = None
    aliases: tuple[str, ...] = ()
    """Older spellings, still accepted, not shown in ``--help``."""
    profile: bool = False
    """A profile field (``yangkey.yaml``): a command that takes it also takes ``--profile``."""
    alias_of: str | None = None
    """For a hidden option that only stands for another one (``--json``): that one's name."""
    attrs: Mapping[str, Any] = field(default_factory=dict)
    """Everything else click is told (type, multiple, is_flag, callback, …)."""

    @property
    def name(self) -> str:
        return self.flags[0]

    def __call__(self, function: F) -> F:
        return self.but()(function)

    def but(
        self,
        *,
        note: str = "",
        what: str = "",
        short: bool = True,
        with_profile: bool = True,
        **attrs: Any,
    ) -> Callable[[F], F]:
        """This option with ``attrs`` (only default, required, show_default, type), ``note``
        after its help, ``what`` in its help's ``{what}``; ``short=False`` leaves the short
        form out (``-X`` is the setting of the command's main Kafka client only);
        ``with_profile=False`` brings no ``--profile`` (``yangkey demo`` takes none)."""
        wrong = sorted(set(attrs) - _ADJUSTABLE)
        if wrong:
            raise TypeError(f"{self.name}: a command cannot change {', '.join(wrong)}")
        text = self.help.replace("{what}", what)
        if note:
            text = f"{text} {note}"
        flags = self.flags if short else self.flags[:1]
        extra: dict[str, Any] = {**self.attrs, **attrs}
        if self.envvar is not None:
            extra.update(envvar=self.envvar, show_envvar=True)
        if self.metavar is not None:
            extra["metavar"] = self.metavar
        declaration = click.option(
            *flags, *self.aliases, self.dest, cls=SharedOption, declaration=self, help=text, **extra
        )

        def decorate(function: F) -> F:
            function = declaration(function)
            if self.profile and with_profile:
                function = profile_option(function)
            return function

        return decorate


# -------------------------------------------------------------------------------- profile


def _load_profile(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    from yangkey.cli.profile import profile_defaults  # noqa: PLC0415
    from yangkey.cli.reporting import fail  # noqa: PLC0415
    from yangkey.errors import YangkeyError  # noqa: PLC0415

    if isinstance(ctx.command, click.Group):
        # yangkey --profile NAME <command>: the command's own --profile reads it from meta.
        ctx.meta[PROFILE_META] = value
        if value:
            cmdline = ctx.get_parameter_source("profile") is ParameterSource.COMMANDLINE
            ctx.meta[PROFILE_USED] = (value, "--profile" if cmdline else ENV_PROFILE)
        return
    name = value
    if ctx.get_parameter_source("profile") is ParameterSource.COMMANDLINE:
        ctx.meta[PROFILE_USED] = (value, "--profile")
    else:
        name = ctx.meta.get(PROFILE_META) or value
        if PROFILE_USED not in ctx.meta:
            ctx.meta[PROFILE_USED] = (name, ENV_PROFILE if name else "")
    try:
        options = {
            flag: param.name
            for param in ctx.command.params
            if isinstance(param, click.Option) and param.name
            for flag in param.opts
            if flag.startswith("--")
            and not (isinstance(param, SharedOption) and flag in param.declaration.aliases)
        }
        defaults = profile_defaults(name, options)
    except YangkeyError as error:
        fail(error)
    if defaults:
        ctx.default_map = {**defaults, **(ctx.default_map or {})}


PROFILE = Declaration(
    ("--profile",),
    "profile",
    "Take defaults from this profile of yangkey.yaml (the nearest in this directory or a parent,"
    " else ~/.config/yangkey/yangkey.yaml; else its default profile).",
    envvar=ENV_PROFILE,
    metavar="NAME",
    attrs={"is_eager": True, "expose_value": False, "callback": _load_profile},
)


def profile_option(function: F) -> F:
    """``--profile NAME``: eager, so the profile's values are the defaults of the options
    processed after it. Once per command, however many profile fields bring it."""
    params = getattr(function, "__click_params__", [])
    if any(param.name == "profile" for param in params):
        return function
    return PROFILE(function)
