"""What every schema type implements (:class:`SchemaType`) and gives back (:class:`Parsed`).

The types live in their own modules (``avrotype``, ``protobuftype``, ``jsontype``,
``yangtype``); :mod:`yangkey.registry.schematypes` holds them and is what the registry calls.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from yangkey.registry.store import Reference, SchemaDef

Lookup = Callable[[Reference], SchemaDef | None]
"""The definition a reference names, or None when that subject version is not registered."""


@dataclass(frozen=True, eq=False)
class Parsed:
    """A schema the registry accepted: what to store, and the type's parsed form."""

    definition: SchemaDef
    native: Any
    dependencies: Mapping[str, Parsed] = field(default_factory=dict)
    """Referenced schemas by reference name, each with its own dependencies."""
    aliases: tuple[SchemaDef, ...] = ()
    """The same schema as earlier versions of this registry stored it: a registry whose topic
    holds one of these gives it the id it has, rather than a new one."""

    def closure(self) -> dict[str, Parsed]:
        """Every schema this one depends on, directly or not, by reference name."""
        found: dict[str, Parsed] = {}
        pending = list(self.dependencies.items())
        while pending:
            name, parsed = pending.pop()
            if name not in found:
                found[name] = parsed
                pending.extend(parsed.dependencies.items())
        return found


class SchemaType(ABC):
    """One schema type: parse its text, compare two schemas, render formats."""

    name: ClassVar[str]

    @abstractmethod
    def parse(self, text: str, dependencies: Mapping[str, Parsed], *, normalize: bool) -> Parsed:
        """Validate ``text`` (its references already parsed) and return its canonical form.

        Raises :class:`RegistryError` 42201 with the reason when the schema is invalid.
        """

    @abstractmethod
    def reads(self, reader: Parsed, writer: Parsed) -> list[str]:
        """Why data written with ``writer`` cannot be read with ``reader`` (empty: it can).

        Messages say ``{reader}`` and ``{writer}`` where the direction decides the word
        (``new``/``old``)."""

    def evolves(self, old: Parsed, new: Parsed) -> list[str]:
        """Rules on going from ``old`` to ``new`` whatever the level's direction (YANG: the
        same module, revisions only forward)."""
        return []

    def legacy_forms(self, text: str) -> list[str]:
        """Texts earlier versions of this registry stored this schema as (none by default)."""
        return []

    def raw(self, text: str) -> Any:
        """The bare schema of the ``.../schema`` endpoints: JSON types as the document."""
        return text

    def formatted(self, parsed: Parsed, fmt: str) -> str:
        """The schema text in format ``fmt``; unknown formats give the stored text (as
        Confluent does, for forward compatibility of formats)."""
        return parsed.definition.schema
