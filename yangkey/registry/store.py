"""The registry's in-memory state, rebuilt by replaying the ``_schemas`` topic (seed 003).

Pure: no Kafka here. :meth:`Store.apply` is fed every record of the single-partition compacted
topic in offset order, and :mod:`yangkey.registry.registry` decides what to write.

Record keys are JSON objects ``{"keytype", "subject", "version", "seq", "node"}``:

* ``seq`` is the offset the writer expected its record to land at (the topic's end offset it
  had read up to). A record whose ``seq`` is not its own offset lost a race and is ignored by
  every reader, so all instances agree on one history: the first writer wins.
* ``node`` is the writer's id. Two racing writers produce the same ``seq``; with the node in
  the key their keys differ, so compaction cannot keep the loser's record in place of the
  winner's.
* Every valid record has a unique key (its offset is in it), so compaction removes nothing but
  tombstoned records. A permanent delete writes tombstones for every key that wrote the subject
  version (the registration and its soft deletes) and, for a whole subject, its config records,
  which is why the store remembers them.

Values: ``SCHEMA`` records carry ``{"subject", "version", "id", "schemaType", "schema",
"references", "deleted"}`` (a soft delete rewrites the version with ``deleted: true``);
``CONFIG`` records ``{"compatibilityLevel": level or null}`` and ``MODE`` records
``{"mode": mode or null}`` (``subject`` null: the global setting).

``ID`` records (key ``{"keytype": "ID", "id": n}``, value ``{"fingerprint": sha256}``) are
written before a permanent delete tombstones the last version holding an id. Their key names
the id alone, so compaction keeps one per id for ever: after the schema's own records are
compacted away, a replay still knows the id was used (it is never given to another schema)
and which definition it stood for (registering that schema again gets it back, as Confluent
does). They are not sequenced: two instances writing the same one write the same record.

Keys this store does not understand are counted in :attr:`Store.foreign`, so a topic shared
with another registry's records is noticed (``serve`` refuses it) without stopping a replay.
"""

from __future__ import annotations

import hashlib
from dataclasses import astuple, dataclass, field
from typing import Any, Literal

import orjson

KeyType = Literal["SCHEMA", "CONFIG", "MODE"]

COMPATIBILITY_LEVELS = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)
DEFAULT_COMPATIBILITY = "BACKWARD"
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
"""Confluent's modes (``FORWARD`` is Confluent Cloud's, not served here)."""
DEFAULT_MODE = "READWRITE"


@dataclass(frozen=True, slots=True)
class Reference:
    """A Confluent schema reference: the imported ``name`` is ``subject`` at ``version``."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True, slots=True)
class SchemaDef:
    """What an id stands for: equal definitions share one id across subjects."""

    schema_type: str
    schema: str
    references: tuple[Reference, ...] = ()


def fingerprint(definition: SchemaDef) -> str:
    """A digest of everything that makes two definitions equal (so: share an id)."""
    return hashlib.sha256(repr(astuple(definition)).encode()).hexdigest()


def id_key(schema_id: int) -> bytes:
    return orjson.dumps({"keytype": "ID", "id": schema_id})


def id_value(definition: SchemaDef) -> bytes:
    return orjson.dumps({"fingerprint": fingerprint(definition)})


@dataclass(frozen=True, slots=True)
class RecordKey:
    keytype: KeyType
    subject: str | None
    version: int | None
    seq: int
    node: str

    def encode(self) -> bytes:
        return orjson.dumps(
            {
                "keytype": self.keytype,
                "subject": self.subject,
                "version": self.version,
                "seq": self.seq,
                "node": self.node,
            }
        )

    @classmethod
    def decode(cls, raw: bytes | None) -> RecordKey | None:
        """The key, or None for bytes that are not one of ours."""
        if not raw:
            return None
        try:
            data = orjson.loads(raw)
            keytype = data["keytype"]
            subject = data["subject"]
            version = data["version"]
            seq = data["seq"]
            node = data["node"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return None
        if keytype not in ("SCHEMA", "CONFIG", "MODE") or not isinstance(seq, int):
            return None
        if not isinstance(node, str) or not (subject is None or isinstance(subject, str)):
            return None
        if keytype == "SCHEMA" and not (isinstance(subject, str) and isinstance(version, int)):
            return None
        return cls(keytype, subject, version if isinstance(version, int) else None, seq, node)

    @property
    def writer(self) -> tuple[int, str]:
        return (self.seq, self.node)


@dataclass(slots=True)
class VersionState:
    id: int
    deleted: bool
    origin: tuple[int, str]
    """(seq, node) of the record that registered this version."""
    keys: list[RecordKey] = field(default_factory=list)
    """Every key written for this version (registration first): a permanent delete
    tombstones them all."""


def schema_value(
    subject: str, version: int, schema_id: int, definition: SchemaDef, *, deleted: bool
) -> bytes:
    return orjson.dumps(
        {
            "subject": subject,
            "version": version,
            "id": schema_id,
            "schemaType": definition.schema_type,
            "schema": definition.schema,
            "references": [r.to_json() for r in definition.references],
            "deleted": deleted,
        }
    )


def config_value(level: str | None) -> bytes:
    return orjson.dumps({"compatibilityLevel": level})


def mode_value(mode: str | None) -> bytes:
    return orjson.dumps({"mode": mode})


def _id_record(raw_key: bytes) -> int | None:
    """The id an ``ID`` record's key names, else None (checked before the general decode:
    cheap, since every other key starts ``{"keytype":"SCHEMA"`` or the like)."""
    if not raw_key.startswith(b'{"keytype":"ID"'):
        return None
    try:
        schema_id = orjson.loads(raw_key).get("id")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return schema_id if isinstance(schema_id, int) and schema_id > 0 else None


class Store:
    """Subjects, versions, ids and compatibility levels as the topic says up to ``end``."""

    def __init__(self) -> None:
        self.schemas: dict[int, SchemaDef] = {}
        self.ids: dict[SchemaDef, int] = {}
        self.subjects: dict[str, dict[int, VersionState]] = {}
        self.config: dict[str | None, str] = {}
        self.config_keys: dict[str | None, list[RecordKey]] = {}
        """Keys of the valid config records per subject: a permanent delete tombstones them."""
        self.modes: dict[str | None, str] = {}
        self.mode_keys: dict[str | None, list[RecordKey]] = {}
        self.retired: dict[str, int] = {}
        """Ids whose versions were all permanently deleted, by :func:`fingerprint`."""
        self.next_id = 1
        self.end = 0
        """The next offset to read: every record before it has been applied."""
        self.ignored = 0
        """Records skipped: lost races (seq != offset) and keys of other writers."""
        self.foreign = 0
        """Records whose key is not ours at all (another registry's topic?)."""

    # ------------------------------------------------------------------ replay

    def apply(self, offset: int, raw_key: bytes | None, raw_value: bytes | None) -> None:
        """Apply one record of the topic; records must come in offset order (a record before
        :attr:`end` was applied already: a writer applies its own winning record at once, and
        the reader meets it again later)."""
        if offset < self.end:
            return
        self.end = offset + 1
        schema_id = _id_record(raw_key) if raw_key else None
        if schema_id is not None:
            self._apply_id(schema_id, raw_value)
            return
        key = RecordKey.decode(raw_key)
        if key is None:
            self.ignored += 1
            self.foreign += 1
            return
        if raw_value is None:
            # Tombstones recreate keys of earlier writes: no sequence check (seed 003).
            self._tombstone(key)
            return
        if key.seq != offset:
            self.ignored += 1
            return
        try:
            value = orjson.loads(raw_value)
            if key.keytype == "SCHEMA":
                self._apply_schema(key, value)
            elif key.keytype == "CONFIG":
                self._apply_config(key, value)
            else:
                self._apply_mode(key, value)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            self.ignored += 1

    def advance(self, end: int) -> None:
        """Records up to ``end`` were compacted away: the next write goes at ``end``."""
        self.end = max(self.end, end)

    def _apply_schema(self, key: RecordKey, value: dict[str, Any]) -> None:
        assert key.subject is not None and key.version is not None
        schema_id = int(value["id"])
        definition = SchemaDef(
            str(value.get("schemaType") or "AVRO"),
            str(value["schema"]),
            tuple(
                Reference(str(r["name"]), str(r["subject"]), int(r["version"]))
                for r in value.get("references") or ()
            ),
        )
        versions = self.subjects.setdefault(key.subject, {})
        state = versions.get(key.version)
        if state is None:
            state = VersionState(schema_id, bool(value.get("deleted")), key.writer)
            versions[key.version] = state
        else:
            state.deleted = bool(value.get("deleted"))
        state.keys.append(key)
        self.schemas.setdefault(schema_id, definition)
        self.ids.setdefault(definition, schema_id)
        self.next_id = max(self.next_id, schema_id + 1)

    def _apply_config(self, key: RecordKey, value: dict[str, Any]) -> None:
        level = value["compatibilityLevel"]
        if level is None:
            self.config.pop(key.subject, None)
        elif level in COMPATIBILITY_LEVELS:
            self.config[key.subject] = level
        else:
            raise ValueError(level)
        self.config_keys.setdefault(key.subject, []).append(key)

    def _apply_mode(self, key: RecordKey, value: dict[str, Any]) -> None:
        mode = value["mode"]
        if mode is None:
            self.modes.pop(key.subject, None)
        elif mode in MODES:
            self.modes[key.subject] = mode
        else:
            raise ValueError(mode)
        self.mode_keys.setdefault(key.subject, []).append(key)

    def _apply_id(self, schema_id: int, raw_value: bytes | None) -> None:
        self.next_id = max(self.next_id, schema_id + 1)
        try:
            digest = orjson.loads(raw_value or b"null")["fingerprint"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return
        if isinstance(digest, str):
            self.retired.setdefault(digest, schema_id)

    def _tombstone(self, key: RecordKey) -> None:
        if key.keytype in ("CONFIG", "MODE"):
            values, all_keys = (
                (self.config, self.config_keys)
                if key.keytype == "CONFIG"
                else (self.modes, self.mode_keys)
            )
            keys = [k for k in all_keys.get(key.subject, []) if k.writer != key.writer]
            all_keys[key.subject] = keys
            if not keys:  # every record of the subject's setting is gone: so is the setting
                values.pop(key.subject, None)
                all_keys.pop(key.subject, None)
            return
        if key.subject is None or key.version is None:
            return
        versions = self.subjects.get(key.subject)
        state = versions.get(key.version) if versions else None
        if versions is None or state is None:
            return
        state.keys = [k for k in state.keys if k.writer != key.writer]
        # Only the registration's own key removes the version: a late duplicate tombstone
        # of an older registration must not remove a version registered again since.
        if key.writer == state.origin:
            del versions[key.version]
            if not versions:
                del self.subjects[key.subject]
            self._forget_unused(state.id)

    def _forget_unused(self, schema_id: int) -> None:
        if any(s.id == schema_id for versions in self.subjects.values() for s in versions.values()):
            return
        definition = self.schemas.pop(schema_id, None)
        if definition is not None and self.ids.get(definition) == schema_id:
            del self.ids[definition]

    # ------------------------------------------------------------------ queries

    def versions(self, subject: str, *, deleted: bool = False) -> list[int]:
        versions = self.subjects.get(subject, {})
        return sorted(v for v, s in versions.items() if deleted or not s.deleted)

    def subject_names(self, *, deleted: bool = False) -> list[str]:
        return sorted(s for s in self.subjects if self.versions(s, deleted=deleted))

    def version_of(self, subject: str, definition: SchemaDef, *, deleted: bool = False) -> int:
        """The subject's version holding ``definition``, or 0."""
        schema_id = self.ids.get(definition)
        if schema_id is None:
            return 0
        for version, state in sorted(self.subjects.get(subject, {}).items()):
            if state.id == schema_id and (deleted or not state.deleted):
                return version
        return 0

    def compatibility(self, subject: str | None, *, fallback: bool = True) -> str | None:
        level = self.config.get(subject)
        if level is None and fallback:
            level = self.config.get(None, DEFAULT_COMPATIBILITY)
        return level

    def mode(self, subject: str | None, *, fallback: bool = True) -> str | None:
        mode = self.modes.get(subject)
        if mode is None and fallback:
            mode = self.modes.get(None, DEFAULT_MODE)
        return mode

    def id_for(self, definition: SchemaDef) -> int:
        """The id ``definition`` has, had before a permanent delete, or the next free one."""
        schema_id = self.ids.get(definition)
        if schema_id is None and self.retired:
            schema_id = self.retired.get(fingerprint(definition))
        return schema_id if schema_id is not None else self.next_id

    def usages(self, schema_id: int, *, deleted: bool = False) -> list[tuple[str, int]]:
        return sorted(
            (subject, version)
            for subject, versions in self.subjects.items()
            for version, state in versions.items()
            if state.id == schema_id and (deleted or not state.deleted)
        )

    def referenced_by(self, subject: str, version: int) -> list[int]:
        wanted = (subject, version)
        return sorted(
            schema_id
            for schema_id, definition in self.schemas.items()
            if any((r.subject, r.version) == wanted for r in definition.references)
            and self.usages(schema_id)
        )
