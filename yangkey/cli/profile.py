"""Profiles: the options a project repeats, written once in ``yangkey.yaml`` (like dbt's
``profiles.yml``).

.. code-block:: yaml

    profile: dev                  # used when neither --profile nor YANGKEY_PROFILE names one
    profiles:
      dev:
        subscriptions: subscriptions.yaml   # relative paths: from this file's directory
        bootstrap: 127.0.0.1:9092
        embedded: ./clickhouse
      prod:
        subscriptions: /etc/yangkey/subscriptions.yaml
        bootstrap: kafka-1:9092,kafka-2:9092
        clickhouse: https://yangkey@clickhouse:8443/telemetry
        schema_registry: http://registry:8081

The file is the one ``YANGKEY_PROFILES_FILE`` names, else the nearest ``yangkey.yaml`` in the
working directory or a parent, else the user's ``$XDG_CONFIG_HOME/yangkey/yangkey.yaml``
(:func:`profiles_path`). A profile's values become the defaults of the options of the same
name, below the command line and the environment (:mod:`yangkey.cli.options`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from yangkey.errors import ConfigError

FILE_NAME = "yangkey.yaml"
ENV_FILE = "YANGKEY_PROFILES_FILE"


class Profile(BaseModel):
    """One profile: each field is the default of the option of the same name."""

    model_config = ConfigDict(extra="forbid")

    subscriptions: str | None = None
    bootstrap: str | None = None
    clickhouse: str | None = None
    embedded: str | None = None
    database: str | None = None
    schema_registry: str | None = None
    yang_dir: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_target(self) -> Profile:
        if self.clickhouse is not None and self.embedded is not None:
            raise ValueError("give clickhouse or embedded, not both")
        return self


class ProfilesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    profile: str | None = None
    profiles: dict[str, Profile]


def user_profiles_path() -> Path:
    """The user-level file: ``$XDG_CONFIG_HOME/yangkey/yangkey.yaml`` (default
    ``~/.config/yangkey/yangkey.yaml``)."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "yangkey" / FILE_NAME


def profiles_path(cwd: Path | None = None) -> Path:
    """The profiles file in use: the one ``YANGKEY_PROFILES_FILE`` names, else the nearest
    ``yangkey.yaml`` in the working directory or one of its parents (as git finds its
    repository), else the user-level file (:func:`user_profiles_path`); when there is none,
    ``./yangkey.yaml`` (which does not exist), for messages."""
    named = os.environ.get(ENV_FILE)
    if named:
        return Path(named)
    here = (cwd or Path.cwd()).absolute()
    for directory in (here, *here.parents):
        candidate = directory / FILE_NAME
        if candidate.is_file():
            return candidate
    user = user_profiles_path()
    return user if user.is_file() else here / FILE_NAME


def _reason(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def load_profiles(path: Path) -> ProfilesFile:
    import yaml  # noqa: PLC0415 - only when a profile file exists

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"not valid YAML{where}: {problem}", source=str(path)) from None
    try:
        return ProfilesFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_reason(exc), source=str(path)) from None


def select(profiles: ProfilesFile, name: str | None, path: Path) -> Profile | None:
    """The named profile, else the file's ``profile:``, else the one called ``default``."""
    chosen = name or profiles.profile
    if chosen is None:
        return profiles.profiles.get("default")
    if chosen not in profiles.profiles:
        known = ", ".join(sorted(profiles.profiles)) or "none"
        raise ConfigError(f"no profile {chosen!r} (profiles: {known})", source=str(path))
    return profiles.profiles[chosen]


def _resolved(value: str, base: Path) -> str:
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def profile_defaults(name: str | None, options: Mapping[str, str]) -> dict[str, Any]:
    """The chosen profile's values for a command's ``options`` (long flag -> parameter name;
    a field ``schema_registry`` is the default of ``--schema-registry``); nothing when there
    is no profile file (an explicit ``name`` without a file is an error)."""
    path = profiles_path()
    if not path.is_file():
        if name:
            raise ConfigError(
                f"no {FILE_NAME} here, in a parent directory or at {user_profiles_path()} to "
                f"take profile {name!r} from",
                source=str(path),
            )
        return {}
    profile = select(load_profiles(path), name, path)
    if profile is None:
        return {}
    base = path.parent
    values: dict[str, Any] = profile.model_dump(exclude_none=True, exclude_defaults=True)
    for field in ("subscriptions", "embedded"):
        if field in values:
            values[field] = _resolved(values[field], base)
    if "yang_dir" in values:
        values["yang_dir"] = [_resolved(d, base) for d in profile.yang_dir]
    flags = {"--" + field.replace("_", "-"): value for field, value in values.items()}
    return {options[flag]: value for flag, value in flags.items() if flag in options}
