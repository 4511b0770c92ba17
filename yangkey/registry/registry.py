"""Registry operations over a :class:`Store` and an append-only log (seed 003).

Writes are optimistic: read the log to its end, decide (allocate the id and version from the
local store), append a record whose ``seq`` is the end offset seen, and compare the offset it
landed at. Equal: it won and every instance will apply it. Different: another writer got there
first; read again and decide again (the retry may find the work already done). Within one
instance writes are serialised by a lock, so no rollback is ever needed.

Reads are served from memory; the ones that can miss (an id, a subject version) read the log
once more before answering "not found", and the ones that list (subjects, versions, lookups)
read it first so that they are complete.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from yangkey.registry.errors import (
    RegistryError,
    invalid_compatibility,
    invalid_version,
    schema_not_found,
    store_error,
    subject_not_found,
    version_not_found,
)
from yangkey.registry.schemabase import Parsed
from yangkey.registry.schematypes import formatted, incompatibilities, parse
from yangkey.registry.store import (
    COMPATIBILITY_LEVELS,
    RecordKey,
    Reference,
    SchemaDef,
    Store,
    config_value,
    schema_value,
)

MAX_VERSION = 2**31 - 1


class Log(Protocol):
    """The single-partition topic, as the registry needs it."""

    def read(self, store: Store) -> None:
        """Apply to ``store`` every record from ``store.end`` to the current end of the log."""

    def append(self, key: bytes, value: bytes | None) -> int:
        """Write one record and return the offset it landed at."""


@dataclass(frozen=True)
class Registered:
    subject: str
    version: int
    id: int
    definition: SchemaDef

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "subject": self.subject,
            "version": self.version,
            "id": self.id,
            "schema": self.definition.schema,
            "schemaType": self.definition.schema_type,
        }
        if self.definition.references:
            body["references"] = [r.to_json() for r in self.definition.references]
        return body


class Registry:
    def __init__(self, log: Log, node: str, *, max_attempts: int = 100) -> None:
        self.log = log
        self.node = node
        self.max_attempts = max_attempts
        self.store = Store()
        self.conflicts = 0
        """Writes that lost a race and were retried."""
        self._lock = threading.RLock()  # the store and the log reader
        self._write_lock = threading.Lock()

    # ------------------------------------------------------------------ plumbing

    def sync(self) -> None:
        with self._lock:
            self.log.read(self.store)

    def _sequenced(self, decide: Callable[[int], tuple[RecordKey, bytes] | None]) -> None:
        """Run ``decide(seq)`` on an up-to-date store and append its record until it wins."""
        with self._write_lock:
            for _ in range(self.max_attempts):
                with self._lock:
                    self.log.read(self.store)
                    decided = decide(self.store.end)
                if decided is None:
                    return
                key, value = decided
                if self.log.append(key.encode(), value) == key.seq:
                    self.sync()
                    return
                self.conflicts += 1
            raise store_error(f"gave up after {self.max_attempts} conflicting writes")

    def _referenced(self, ref: Reference) -> SchemaDef | None:
        """What a schema reference names (call with the lock held)."""
        state = self.store.subjects.get(ref.subject, {}).get(ref.version)
        return self.store.schemas.get(state.id) if state else None

    def _parse(self, request: dict[str, Any], *, normalize: bool) -> Parsed:
        with self._lock:
            parsed = parse(
                request.get("schemaType"),
                request.get("schema"),
                request.get("references"),
                lookup=self._referenced,
                normalize=normalize,
            )
            # The same schema as stored by an earlier version of this registry keeps its id.
            for alias in parsed.aliases:
                if parsed.definition not in self.store.ids and alias in self.store.ids:
                    return replace(parsed, definition=alias)
            return parsed

    def _version_number(self, subject: str, version: str | int, *, deleted: bool) -> int:
        live = self.store.versions(subject, deleted=deleted)
        if str(version) in ("latest", "-1"):
            if not live:
                if subject not in self.store.subjects:
                    raise subject_not_found(subject)
                raise version_not_found(subject, version)
            return live[-1]
        try:
            number = int(version)
        except ValueError:
            raise invalid_version(version) from None
        if not 1 <= number <= MAX_VERSION:
            raise invalid_version(version)
        return number

    def _registered(self, subject: str, version: int) -> Registered:
        state = self.store.subjects[subject][version]
        return Registered(subject, version, state.id, self.store.schemas[state.id])

    # ------------------------------------------------------------------ schemas

    def register(
        self, subject: str, request: dict[str, Any], *, normalize: bool = False
    ) -> Registered:
        """Register (or find) ``request``'s schema under ``subject``: POST .../versions."""
        self.sync()
        parsed = self._parse(request, normalize=normalize)
        definition = parsed.definition

        def decide(seq: int) -> tuple[RecordKey, bytes] | None:
            store = self.store
            if store.version_of(subject, definition):
                return None
            previous = [
                store.schemas[store.subjects[subject][v].id] for v in store.versions(subject)
            ]
            level = store.compatibility(subject) or "BACKWARD"
            problems = incompatibilities(level, parsed, previous, self._referenced)
            if problems:
                raise RegistryError(
                    409,
                    409,
                    f"Schema being registered is incompatible with an earlier schema for "
                    f"subject '{subject}' ({level}): {'; '.join(problems[:5])}",
                )
            schema_id = store.ids.get(definition, store.next_id)
            version = max(store.versions(subject, deleted=True), default=0) + 1
            key = RecordKey("SCHEMA", subject, version, seq, self.node)
            return key, schema_value(subject, version, schema_id, definition, deleted=False)

        self._sequenced(decide)
        with self._lock:
            version = self.store.version_of(subject, definition)
            if not version:  # registered, then deleted by someone else before we looked
                raise store_error(f"the new version of '{subject}' disappeared")
            return self._registered(subject, version)

    def lookup(
        self, subject: str, request: dict[str, Any], *, deleted: bool, normalize: bool = False
    ) -> Registered:
        """POST /subjects/{subject}: the version holding this schema."""
        self.sync()
        definition = self._parse(request, normalize=normalize).definition
        with self._lock:
            if not self.store.versions(subject, deleted=deleted):
                raise subject_not_found(subject)
            version = self.store.version_of(subject, definition, deleted=deleted)
            if not version:
                raise schema_not_found()
            return self._registered(subject, version)

    def schema(self, schema_id: int) -> SchemaDef:
        with self._lock:
            if schema_id not in self.store.schemas:
                self.log.read(self.store)  # another instance may have written it
            definition = self.store.schemas.get(schema_id)
        if definition is None:
            raise schema_not_found()
        return definition

    def formatted(self, definition: SchemaDef, fmt: str | None) -> str:
        """The schema text in ``?format=`` (``serialized``, ``resolved``; None: as stored)."""
        if not fmt:
            return definition.schema
        with self._lock:
            return formatted(definition, fmt, self._referenced)

    def schema_usages(self, schema_id: int, *, deleted: bool) -> list[tuple[str, int]]:
        self.sync()
        with self._lock:
            if schema_id not in self.store.schemas:
                raise schema_not_found()
            return self.store.usages(schema_id, deleted=deleted)

    def check(
        self,
        subject: str,
        version: str | int,
        request: dict[str, Any],
        *,
        normalize: bool = False,
    ) -> list[str]:
        """POST /compatibility/...: why ``request`` may not follow ``version`` (or all)."""
        self.sync()
        parsed = self._parse(request, normalize=normalize)
        with self._lock:
            live = self.store.versions(subject)
            level = self.store.compatibility(subject) or "BACKWARD"
            if version != "all":
                if not live:
                    raise subject_not_found(subject)
                number = self._version_number(subject, version, deleted=False)
                if number not in live:
                    raise version_not_found(subject, version)
                live = [number]
                level = level.removesuffix("_TRANSITIVE")
            elif level != "NONE" and not level.endswith("_TRANSITIVE"):
                level += "_TRANSITIVE"
            previous = [self.store.schemas[self.store.subjects[subject][v].id] for v in live]
            return incompatibilities(level, parsed, previous, self._referenced)

    # ------------------------------------------------------------------ subjects

    def subjects(self, *, deleted: bool = False, prefix: str = "") -> list[str]:
        self.sync()
        with self._lock:
            return [s for s in self.store.subject_names(deleted=deleted) if s.startswith(prefix)]

    def versions(self, subject: str, *, deleted: bool = False) -> list[int]:
        self.sync()
        with self._lock:
            versions = self.store.versions(subject, deleted=deleted)
        if not versions:
            raise subject_not_found(subject)
        return versions

    def version(self, subject: str, version: str | int, *, deleted: bool = False) -> Registered:
        for attempt in range(2):
            with self._lock:
                if attempt:
                    self.log.read(self.store)
                states = self.store.subjects.get(subject, {})
                if not [v for v, s in states.items() if deleted or not s.deleted]:
                    if attempt:
                        raise subject_not_found(subject)
                    continue
                number = self._version_number(subject, version, deleted=deleted)
                state = states.get(number)
                if state is not None and (deleted or not state.deleted):
                    return self._registered(subject, number)
        raise version_not_found(subject, version)

    def referenced_by(self, subject: str, version: str | int) -> list[int]:
        self.sync()
        with self._lock:
            number = self.version(subject, version).version
            return self.store.referenced_by(subject, number)

    def delete_version(self, subject: str, version: str | int, *, permanent: bool) -> int:
        self.sync()
        with self._lock:
            if subject not in self.store.subjects:
                raise subject_not_found(subject)
            number = self._version_number(subject, version, deleted=permanent)
            state = self.store.subjects[subject].get(number)
            if state is None:
                raise version_not_found(subject, version)
        if permanent:
            if not state.deleted:
                raise RegistryError(
                    404,
                    40407,
                    f"Subject '{subject}' Version {number} was not deleted first before being "
                    "permanently deleted",
                )
            self._tombstone(subject, [number])
            return number
        if state.deleted:
            raise RegistryError(
                404, 40406, f"Subject '{subject}' Version {number} was soft deleted."
            )
        self._soft_delete(subject, number)
        return number

    def delete_subject(self, subject: str, *, permanent: bool) -> list[int]:
        self.sync()
        with self._lock:
            every = self.store.versions(subject, deleted=True)
            live = self.store.versions(subject)
        if not every:
            raise subject_not_found(subject)
        if permanent:
            if live:
                raise RegistryError(
                    404,
                    40405,
                    f"Subject '{subject}' was not deleted first before being permanently deleted",
                )
            self._tombstone(subject, every, config=True)
            return every
        if not live:
            raise RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.")
        for number in live:
            self._soft_delete(subject, number)
        return live

    def _soft_delete(self, subject: str, number: int) -> None:
        def decide(seq: int) -> tuple[RecordKey, bytes] | None:
            state = self.store.subjects.get(subject, {}).get(number)
            if state is None or state.deleted:
                return None  # someone else deleted it meanwhile: same outcome
            definition = self.store.schemas[state.id]
            key = RecordKey("SCHEMA", subject, number, seq, self.node)
            return key, schema_value(subject, number, state.id, definition, deleted=True)

        self._sequenced(decide)

    def _tombstone(self, subject: str, numbers: list[int], *, config: bool = False) -> None:
        """Permanent delete: tombstones for every key that wrote these versions (and the
        subject's config). Not sequenced: two instances tombstoning the same keys both
        succeed (seed 003)."""
        with self._write_lock:
            with self._lock:
                states = self.store.subjects.get(subject, {})
                keys = [k for n in numbers if n in states for k in states[n].keys]
                if config:
                    keys += self.store.config_keys.get(subject, [])
            for key in keys:
                self.log.append(key.encode(), None)
            self.sync()

    # ------------------------------------------------------------------ config

    def compatibility(self, subject: str | None, *, fallback: bool) -> str:
        self.sync()
        with self._lock:
            level = self.store.compatibility(subject, fallback=fallback)
        if level is None:
            raise RegistryError(
                404,
                40408,
                f"Subject '{subject}' does not have subject-level compatibility configured",
            )
        return level

    def set_compatibility(self, subject: str | None, level: object) -> str:
        if not isinstance(level, str) or level.upper() not in COMPATIBILITY_LEVELS:
            raise invalid_compatibility(level)
        wanted = level.upper()

        def decide(seq: int) -> tuple[RecordKey, bytes] | None:
            if self.store.config.get(subject) == wanted:
                return None
            return RecordKey("CONFIG", subject, None, seq, self.node), config_value(wanted)

        self._sequenced(decide)
        return wanted

    def delete_compatibility(self, subject: str | None) -> str:
        previous = self.compatibility(subject, fallback=subject is None)

        def decide(seq: int) -> tuple[RecordKey, bytes] | None:
            if subject not in self.store.config:
                return None
            return RecordKey("CONFIG", subject, None, seq, self.node), config_value(None)

        self._sequenced(decide)
        return previous
