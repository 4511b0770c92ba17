"""Per-subject settings of the registry: compatibility levels and modes (Confluent's
``/config`` and ``/mode``), and the subject names both accept.

Modes: ``READONLY`` (and ``READONLY_OVERRIDE``) refuse registrations, deletes and config
changes; ``IMPORT`` takes registrations that carry their own ``id`` (and ``version``) without
compatibility checks, for copying another registry; ``READWRITE`` (the default) the others.
"""

from __future__ import annotations

from yangkey.registry.errors import (
    RegistryError,
    invalid_compatibility,
    invalid_mode,
    invalid_subject,
    not_permitted,
    subject_not_found,
)
from yangkey.registry.replica import Replica
from yangkey.registry.store import (
    COMPATIBILITY_LEVELS,
    MODES,
    RecordKey,
    config_value,
    mode_value,
)

RESERVED_SUBJECTS = ("__GLOBAL", "__EMPTY")
READ_ONLY = ("READONLY", "READONLY_OVERRIDE")


def check_subject(subject: str) -> str:
    """Confluent's rule (``QualifiedSubject.isValidSubject``): Java's ISO control characters
    (U+0000-U+001F, U+007F-U+009F) and the reserved names are refused with 42208."""
    if subject in RESERVED_SUBJECTS or any(
        ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in subject
    ):
        raise invalid_subject(subject)
    return subject


def where(subject: str | None) -> str:
    return f"Subject {subject if subject is not None else '__GLOBAL'} in context ."


class Settings(Replica):
    """``/config`` and ``/mode``: each a value per subject (``None``: the global one), written
    as sequenced records; a subject's permanent delete tombstones its own."""

    def _writable_subject(self, subject: str | None) -> None:
        if self.store.mode(subject) in READ_ONLY:
            raise not_permitted(f"{where(subject)} is in read-only mode")

    # ------------------------------------------------------------------ config

    def compatibility(self, subject: str | None, *, fallback: bool) -> str:
        self.refresh()
        with self.lock:
            level = self.store.compatibility(subject, fallback=fallback)
        if level is None:
            raise RegistryError(
                404,
                40408,
                f"Subject '{subject}' does not have subject-level compatibility configured",
            )
        return level

    def set_compatibility(self, subject: str | None, level: object) -> str:
        if subject is not None:
            check_subject(subject)
        if not isinstance(level, str) or level.upper() not in COMPATIBILITY_LEVELS:
            raise invalid_compatibility(level)
        wanted = level.upper()

        def decide(seq: int) -> tuple[RecordKey, bytes] | None:
            self._writable_subject(subject)
            if self.store.config.get(subject) == wanted:
                return None
            return RecordKey("CONFIG", subject, None, seq, self.node), config_value(wanted)

        self.sequenced(decide)
        return wanted

    def delete_compatibility(self, subject: str | None) -> str:
        previous = self.compatibility(subject, fallback=subject is None)

        def decide(seq: int) -> tuple[RecordKey, bytes] | None:
            self._writable_subject(subject)
            if subject not in self.store.config:
                return None
            return RecordKey("CONFIG", subject, None, seq, self.node), config_value(None)

        self.sequenced(decide)
        return previous

    # ------------------------------------------------------------------ modes

    def mode(self, subject: str | None, *, fallback: bool) -> str:
        self.refresh()
        with self.lock:
            mode = self.store.mode(subject, fallback=fallback or subject is None)
        if mode is None:
            raise RegistryError(
                404, 40409, f"Subject '{subject}' does not have subject-level mode configured"
            )
        return mode

    def set_mode(self, subject: str | None, mode: object, *, force: bool = False) -> str:
        """PUT /mode[/{subject}]; entering ``IMPORT`` with live subjects needs ``force``."""
        if subject is not None:
            check_subject(subject)
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise invalid_mode(mode)
        wanted = mode.upper()

        def decide(seq: int) -> tuple[RecordKey, bytes] | None:
            store = self.store
            if store.modes.get(subject) == wanted:
                return None
            if wanted == "IMPORT" and store.mode(subject) != "IMPORT" and not force:
                existing = store.versions(subject) if subject else store.subject_names()
                if existing:
                    raise not_permitted("Cannot import since found existing subjects")
            return RecordKey("MODE", subject, None, seq, self.node), mode_value(wanted)

        self.sequenced(decide)
        return wanted

    def delete_mode(self, subject: str | None) -> str:
        """DELETE /mode[/{subject}]: back to the global mode (or the default); the old one."""
        self.refresh()
        with self.lock:
            previous = self.store.mode(subject, fallback=subject is None)
        if previous is None:
            raise subject_not_found(subject or "__GLOBAL")

        def decide(seq: int) -> tuple[RecordKey, bytes] | None:
            if subject not in self.store.modes:
                return None
            return RecordKey("MODE", subject, None, seq, self.node), mode_value(None)

        self.sequenced(decide)
        return previous
