"""Registry operations over a :class:`~yangkey.registry.replica.Replica` of the store topic
(seed 003): schemas, subjects and versions; compatibility levels and modes are
:mod:`yangkey.registry.settings`.

Reads are served from memory; the ones that can miss (an id, a subject version) read the log
once more before answering "not found", and the ones that list (subjects, versions, lookups)
read it first so that they are complete. When the store is away, memory answers all of them.
A registration in ``IMPORT`` mode carries its own ``id`` (and optionally ``version``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from yangkey.registry.errors import (
    RegistryError,
    invalid_version,
    not_permitted,
    schema_not_found,
    store_error,
    subject_not_found,
    version_not_found,
)
from yangkey.registry.schemabase import Parsed
from yangkey.registry.schematypes import formatted, incompatibilities, parse
from yangkey.registry.settings import READ_ONLY, Settings, check_subject, where
from yangkey.registry.store import (
    RecordKey,
    Reference,
    SchemaDef,
    fingerprint,
    id_key,
    id_value,
    schema_value,
)

MAX_VERSION = 2**31 - 1


def _wanted_number(request: dict[str, Any], name: str) -> int | None:
    """An ``id`` or ``version`` a registration carries (Confluent: absent, null or -1: none)."""
    value = request.get(name)
    if value is None or value in (-1, 0):
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_VERSION:
        raise RegistryError(422, 42201, f"Invalid schema: '{name}' must be a positive integer")
    return value


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


class Registry(Settings):
    # ------------------------------------------------------------------ plumbing

    def _referenced(self, ref: Reference) -> SchemaDef | None:
        """What a schema reference names (call with the lock held)."""
        state = self.store.subjects.get(ref.subject, {}).get(ref.version)
        return self.store.schemas.get(state.id) if state else None

    def _parse(self, request: dict[str, Any], *, normalize: bool) -> Parsed:
        with self.lock:
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
        """Register (or find) ``request``'s schema under ``subject``: POST .../versions.

        In ``IMPORT`` mode the request carries the ``id`` (and optionally the ``version``) to
        register it with, and no compatibility check is made."""
        check_subject(subject)
        wanted_id = _wanted_number(request, "id")
        wanted_version = _wanted_number(request, "version")
        self.refresh()
        parsed = self._parse(request, normalize=normalize)
        definition = parsed.definition

        def decide(seq: int) -> tuple[RecordKey, bytes] | None:
            store = self.store
            mode = self._register_mode(subject, wanted_id)
            existing = store.version_of(subject, definition)
            if existing and wanted_id in (None, store.ids.get(definition)):
                return None
            previous = [
                store.schemas[store.subjects[subject][v].id] for v in store.versions(subject)
            ]
            level = "NONE" if mode == "IMPORT" else store.compatibility(subject) or "BACKWARD"
            problems = incompatibilities(level, parsed, previous, self._referenced)
            if problems:
                raise RegistryError(
                    409,
                    409,
                    f"Schema being registered is incompatible with an earlier schema for "
                    f"subject '{subject}' ({level}): {'; '.join(problems[:5])}",
                )
            schema_id = wanted_id or store.id_for(definition)
            if wanted_id is not None:
                self._check_imported_id(wanted_id, definition)
            version = self._new_version(subject, wanted_version, imported=mode == "IMPORT")
            key = RecordKey("SCHEMA", subject, version, seq, self.node)
            return key, schema_value(subject, version, schema_id, definition, deleted=False)

        self.sequenced(decide, fresh=True)
        with self.lock:
            version = self.store.version_of(subject, definition)
            if not version:  # registered, then deleted by someone else before we looked
                raise store_error(f"the new version of '{subject}' disappeared")
            return self._registered(subject, version)

    def _register_mode(self, subject: str, wanted_id: int | None) -> str:
        """The subject's mode, if it takes this registration (Confluent's checkRegisterMode)."""
        mode = self.store.mode(subject) or "READWRITE"
        if mode in READ_ONLY:
            raise not_permitted(f"{where(subject)} is in read-only mode")
        if wanted_id is not None and mode != "IMPORT":
            raise not_permitted(f"{where(subject)} is not in import mode")
        if wanted_id is None and mode != "READWRITE":
            raise not_permitted(f"{where(subject)} is not in read-write mode")
        return mode

    def _check_imported_id(self, schema_id: int, definition: SchemaDef) -> None:
        """An id stands for one schema for ever, live or permanently deleted."""
        store = self.store
        holder = store.schemas.get(schema_id)
        retired = [d for d, i in store.retired.items() if i == schema_id]
        if (holder is not None and holder != definition) or (
            holder is None and retired and fingerprint(definition) not in retired
        ):
            raise not_permitted(
                f"Overwrite new schema with id {schema_id} in context . is not permitted."
            )

    def _new_version(self, subject: str, wanted: int | None, *, imported: bool) -> int:
        store = self.store
        following = max(store.versions(subject, deleted=True), default=0) + 1
        if wanted is None:
            return following
        if imported and wanted in store.subjects.get(subject, {}):
            raise not_permitted(f"Version {wanted} of subject '{subject}' already exists")
        if not imported and wanted != following:
            raise RegistryError(
                422, 42201, "Invalid schema: Version is not one more than previous version"
            )
        return wanted

    def lookup(
        self, subject: str, request: dict[str, Any], *, deleted: bool, normalize: bool = False
    ) -> Registered:
        """POST /subjects/{subject}: the version holding this schema (an unknown subject is
        40401 before the schema is even read, as Confluent and Karapace answer)."""
        self.refresh()
        if not self.store.versions(subject, deleted=deleted):
            raise subject_not_found(subject)
        definition = self._parse(request, normalize=normalize).definition
        with self.lock:
            if not self.store.versions(subject, deleted=deleted):
                raise subject_not_found(subject)
            version = self.store.version_of(subject, definition, deleted=deleted)
            if not version:
                raise schema_not_found()
            return self._registered(subject, version)

    def cached_schema(self, schema_id: int) -> SchemaDef | None:
        """From memory only, without waiting for anything (the HTTP fast path)."""
        return self.store.schemas.get(schema_id)

    def schema(self, schema_id: int) -> SchemaDef:
        definition = self.store.schemas.get(schema_id)
        if definition is None:
            self.refresh()  # another instance may have written it
            definition = self.store.schemas.get(schema_id)
        if definition is None:
            raise schema_not_found()
        return definition

    def formatted(self, definition: SchemaDef, fmt: str | None) -> str:
        """The schema text in ``?format=`` (``serialized``, ``resolved``; None: as stored)."""
        if not fmt:
            return definition.schema
        with self.lock:
            return formatted(definition, fmt, self._referenced)

    def schema_usages(self, schema_id: int, *, deleted: bool) -> list[tuple[str, int]]:
        self.refresh()
        with self.lock:
            if schema_id not in self.store.schemas:
                raise schema_not_found()
            return self.store.usages(schema_id, deleted=deleted)

    def schemas(
        self, *, prefix: str = "", deleted: bool = False, latest_only: bool = False
    ) -> list[Registered]:
        """GET /schemas: every subject version, by subject and version."""
        self.refresh()
        with self.lock:
            found = []
            for subject in self.store.subject_names(deleted=deleted):
                if subject.startswith(prefix):
                    numbers = self.store.versions(subject, deleted=deleted)
                    for number in numbers[-1:] if latest_only else numbers:
                        found.append(self._registered(subject, number))
            return found

    def check(
        self,
        subject: str,
        version: str | int,
        request: dict[str, Any],
        *,
        normalize: bool = False,
    ) -> list[str]:
        """POST /compatibility/...: why ``request`` may not follow ``version`` (or all).

        As Confluent: a version that does not exist is 40402 (``latest`` of no version, or
        all versions of a new subject: compatible)."""
        self.refresh()
        parsed = self._parse(request, normalize=normalize)
        with self.lock:
            live = self.store.versions(subject)
            level = self.store.compatibility(subject) or "BACKWARD"
            if version != "all":
                latest = str(version) in ("latest", "-1")
                number = live[-1] if latest and live else 0
                if not latest:
                    number = self._version_number(subject, version, deleted=False)
                    if number not in live:
                        raise version_not_found(subject, version)
                live = [number] if number else []
                level = level.removesuffix("_TRANSITIVE")
            elif level != "NONE" and not level.endswith("_TRANSITIVE"):
                level += "_TRANSITIVE"
            previous = [self.store.schemas[self.store.subjects[subject][v].id] for v in live]
            return incompatibilities(level, parsed, previous, self._referenced)

    # ------------------------------------------------------------------ subjects

    def subjects(self, *, deleted: bool = False, prefix: str = "") -> list[str]:
        self.refresh()
        with self.lock:
            return [s for s in self.store.subject_names(deleted=deleted) if s.startswith(prefix)]

    def versions(self, subject: str, *, deleted: bool = False) -> list[int]:
        self.refresh()
        with self.lock:
            versions = self.store.versions(subject, deleted=deleted)
        if not versions:
            raise subject_not_found(subject)
        return versions

    def cached_version(
        self, subject: str, version: str | int, *, deleted: bool = False
    ) -> Registered | None:
        """From memory only (the HTTP fast path); None: ask :meth:`version`."""
        with self.lock:
            states = self.store.subjects.get(subject)
            if not states:
                return None
            try:
                number = self._version_number(subject, version, deleted=deleted)
            except RegistryError:
                return None
            state = states.get(number)
            if state is None or (state.deleted and not deleted):
                return None
            return self._registered(subject, number)

    def version(self, subject: str, version: str | int, *, deleted: bool = False) -> Registered:
        found = self.cached_version(subject, version, deleted=deleted)
        if found is not None:
            return found
        self.refresh()  # another instance may have written it
        with self.lock:
            states = self.store.subjects.get(subject, {})
            if not [v for v, s in states.items() if deleted or not s.deleted]:
                raise subject_not_found(subject)
            number = self._version_number(subject, version, deleted=deleted)
            state = states.get(number)
            if state is not None and (deleted or not state.deleted):
                return self._registered(subject, number)
        raise version_not_found(subject, version)

    def referenced_by(self, subject: str, version: str | int) -> list[int]:
        self.refresh()
        with self.lock:
            number = self.version(subject, version).version
            return self.store.referenced_by(subject, number)

    def delete_version(self, subject: str, version: str | int, *, permanent: bool) -> int:
        self.refresh()
        with self.lock:
            if subject not in self.store.subjects:
                raise subject_not_found(subject)
            number = self._version_number(subject, version, deleted=permanent)
            state = self.store.subjects[subject].get(number)
            if state is None:
                raise version_not_found(subject, version)
            self._writable_subject(subject)
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
                404,
                40406,
                f"Subject '{subject}' Version {number} was soft deleted.Set permanent=true to "
                "delete permanently",
            )
        self._soft_delete(subject, number)
        return number

    def delete_subject(self, subject: str, *, permanent: bool) -> list[int]:
        self.refresh()
        with self.lock:
            every = self.store.versions(subject, deleted=True)
            live = self.store.versions(subject)
            if every:
                self._writable_subject(subject)
        if not every:
            raise subject_not_found(subject)
        if permanent:
            if live:
                raise RegistryError(
                    404,
                    40405,
                    f"Subject '{subject}' was not deleted first before being permanently deleted",
                )
            self._tombstone(subject, every, settings=True)
            return every
        if not live:
            raise RegistryError(
                404,
                40404,
                f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently",
            )
        for number in live:
            self._soft_delete(subject, number)
        return live

    def _soft_delete(self, subject: str, number: int) -> None:
        def decide(seq: int) -> tuple[RecordKey, bytes] | None:
            state = self.store.subjects.get(subject, {}).get(number)
            if state is None or state.deleted:
                return None  # someone else deleted it meanwhile: same outcome
            self._writable_subject(subject)
            definition = self.store.schemas[state.id]
            key = RecordKey("SCHEMA", subject, number, seq, self.node)
            return key, schema_value(subject, number, state.id, definition, deleted=True)

        self.sequenced(decide)

    def _tombstone(self, subject: str, numbers: list[int], *, settings: bool = False) -> None:
        """Permanent delete: tombstones for every key that wrote these versions (and the
        subject's config and mode). Not sequenced: two instances tombstoning the same keys
        both succeed (seed 003). First, an ``ID`` record for each id these versions hold, so
        that neither compaction nor a restart can give the id to another schema (item 5)."""
        with self.lock:
            states = self.store.subjects.get(subject, {})
            held = {states[n].id for n in numbers if n in states}
            records: list[tuple[bytes, bytes | None]] = [
                (id_key(i), id_value(self.store.schemas[i]))
                for i in sorted(held)
                if i in self.store.schemas
            ]
            keys = [k for n in numbers if n in states for k in states[n].keys]
            if settings:
                keys += self.store.config_keys.get(subject, [])
                keys += self.store.mode_keys.get(subject, [])
        records += [(key.encode(), None) for key in keys]
        self.unsequenced(records)
