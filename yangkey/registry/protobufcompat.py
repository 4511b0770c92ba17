"""Protobuf compatibility, with the rules of Confluent's registry (its ``ProtobufSchemaDiff``).

The old schema is the *original*, the new one the *update* (``BACKWARD``; the reverse for
``FORWARD``). Fields are matched by number across the whole message, oneof members included.
Incompatible:

* the package changes (``PACKAGE_CHANGED``); a message is removed (``MESSAGE_REMOVED``; a
  message may move or be reordered);
* a required field is added or removed (``REQUIRED_FIELD_ADDED``/``REQUIRED_FIELD_REMOVED``);
  a member of a oneof that still exists is removed (``ONEOF_FIELD_REMOVED``);
* fields that were independent end up in one oneof (``MULTIPLE_FIELDS_MOVED_TO_ONEOF``,
  ``FIELD_MOVED_TO_EXISTING_ONEOF``);
* a field's kind changes between scalar (enums count as scalars), message and map
  (``FIELD_KIND_CHANGED``); a scalar moves out of its wire-compatible group
  (``int32 int64 uint32 uint64 bool`` and enums; ``sint32 sint64``; ``string bytes``;
  ``fixed32 sfixed32``; ``fixed64 sfixed64``; ``float``; ``double``:
  ``FIELD_SCALAR_KIND_CHANGED``); a numeric field becomes or stops being repeated
  (``FIELD_NUMERIC_LABEL_CHANGED``);
* a message-typed field names another message (``FIELD_NAMED_TYPE_CHANGED``), or the same
  message changed incompatibly.

Compatible: adding or removing optional fields, enums and enum values, oneofs as a whole;
renaming fields; moving a field out of a oneof; ``string`` <-> ``bytes``, repeated or not.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import descriptor_pb2 as pb

from yangkey.registry.protodescriptor import SCALAR_NAMES

FDP = pb.FieldDescriptorProto

DESCRIPTIONS = {
    "PACKAGE_CHANGED": "The package at '{path}' in the {reader} schema does not match the package "
    "in the {writer} schema",
    "MESSAGE_REMOVED": "The {reader} schema is missing a message at path '{path}' in the {writer} "
    "schema",
    "REQUIRED_FIELD_ADDED": "The {reader} schema has a required field at path '{path}' that the "
    "{writer} schema does not have",
    "REQUIRED_FIELD_REMOVED": "The {reader} schema is missing a required field at path '{path}' "
    "in the {writer} schema",
    "ONEOF_FIELD_REMOVED": "The {reader} schema is missing a field of a oneof at path '{path}' in "
    "the {writer} schema",
    "MULTIPLE_FIELDS_MOVED_TO_ONEOF": "The oneof at path '{path}' in the {reader} schema holds "
    "fields that were independent in the {writer} schema",
    "FIELD_MOVED_TO_EXISTING_ONEOF": "The oneof at path '{path}' in the {reader} schema holds a "
    "field that was outside it in the {writer} schema",
    "FIELD_KIND_CHANGED": "The kind of a field at path '{path}' in the {reader} schema does not "
    "match its kind in the {writer} schema",
    "FIELD_SCALAR_KIND_CHANGED": "The scalar kind of a field at path '{path}' in the {reader} "
    "schema does not match its scalar kind in the {writer} schema",
    "FIELD_NUMERIC_LABEL_CHANGED": "The label of a numeric field at path '{path}' in the "
    "{reader} schema does not match its label in the {writer} schema",
    "FIELD_NAMED_TYPE_CHANGED": "The type of a field at path '{path}' in the {reader} schema "
    "does not match its type in the {writer} schema",
}

SCALAR_KINDS = {
    **dict.fromkeys(("int32", "int64", "uint32", "uint64", "bool"), "GENERAL_NUMBER"),
    **dict.fromkeys(("sint32", "sint64"), "SIGNED_NUMBER"),
    **dict.fromkeys(("string", "bytes"), "STRING_OR_BYTES"),
    **dict.fromkeys(("fixed32", "sfixed32"), "FIXED32"),
    **dict.fromkeys(("fixed64", "sfixed64"), "FIXED64"),
    "float": "FLOAT",
    "double": "DOUBLE",
}
NUMERIC = frozenset(("GENERAL_NUMBER", "SIGNED_NUMBER", "FIXED32", "FIXED64", "FLOAT", "DOUBLE"))


@dataclass(frozen=True)
class TypeInfo:
    full: str
    package: str
    kind: str  # "message" or "enum"
    proto: Any
    file: str

    @property
    def local(self) -> str:
        prefix = f"{self.package}." if self.package else ""
        return self.full.removeprefix(prefix)

    @property
    def is_map(self) -> bool:
        return self.kind == "message" and self.proto.options.map_entry


def _collect(schema: Any) -> dict[str, TypeInfo]:
    found: dict[str, TypeInfo] = {}
    for name, proto in schema.files.items():
        prefix = f".{proto.package}" if proto.package else ""

        def walk(
            messages: Any, enums: Any, scope: str, file: str = name, pkg: str = proto.package
        ) -> None:
            for message in messages:
                full = f"{scope}.{message.name}"
                found[full] = TypeInfo(full[1:], pkg, "message", message, file)
                walk(message.nested_type, message.enum_type, full)
            for enum in enums:
                full = f"{scope}.{enum.name}"
                found[full] = TypeInfo(full[1:], pkg, "enum", enum, file)

        walk(proto.message_type, proto.enum_type, prefix)
    return found


@dataclass
class _Context:
    original: dict[str, TypeInfo]
    update: dict[str, TypeInfo]
    original_files: dict[str, Any]
    update_files: dict[str, Any]
    problems: list[tuple[str, str]] = field(default_factory=list)
    visiting: set[tuple[str, str]] = field(default_factory=set)

    def add(self, kind: str, path: str) -> None:
        self.problems.append((kind, path))


def compare(original: Any, update: Any) -> list[str]:
    """Confluent's incompatible differences from ``original`` to ``update`` (ProtoSchemas)."""
    ctx = _Context(_collect(original), _collect(update), original.files, update.files)
    old, new = original.descriptor, update.descriptor
    if old.package != new.package:
        ctx.add("PACKAGE_CHANGED", "#/")
    _types(
        ctx,
        old.message_type,
        new.message_type,
        f".{old.package}" if old.package else "",
        f".{new.package}" if new.package else "",
        "#/",
    )
    return [
        f'{{errorType:"{kind}", description:"{DESCRIPTIONS[kind].replace("{path}", path)}"}}'
        for kind, path in dict.fromkeys(ctx.problems)
    ]


def _types(ctx: _Context, old: Any, new: Any, old_scope: str, new_scope: str, path: str) -> None:
    before = {m.name: m for m in old}
    after = {m.name: m for m in new}
    for name, message in before.items():
        if name not in after:
            if not message.options.map_entry:
                ctx.add("MESSAGE_REMOVED", f"{path}{name}")
            continue
        _message(
            ctx, message, after[name], f"{old_scope}.{name}", f"{new_scope}.{name}", f"{path}{name}"
        )


def _fields(message: Any) -> Iterator[tuple[Any, str | None]]:
    for member in message.field:
        real_oneof = member.HasField("oneof_index") and not member.proto3_optional
        yield member, message.oneof_decl[member.oneof_index].name if real_oneof else None


def _message(ctx: _Context, old: Any, new: Any, old_full: str, new_full: str, path: str) -> None:
    key = (old_full, new_full)
    if key in ctx.visiting:
        return
    ctx.visiting.add(key)
    try:
        _compare_message(ctx, old, new, old_full, new_full, path)
    finally:
        ctx.visiting.discard(key)
    _types(ctx, old.nested_type, new.nested_type, old_full, new_full, f"{path}/")


def _compare_message(
    ctx: _Context, old: Any, new: Any, old_full: str, new_full: str, path: str
) -> None:
    before = {f.number: (f, o) for f, o in _fields(old)}
    after = {f.number: (f, o) for f, o in _fields(new)}
    before_oneofs = {o for _, o in before.values() if o}
    after_oneofs = {o for _, o in after.values() if o}
    # A oneof deleted along with all its members is a compatible removal.
    deleted = {
        o
        for o in before_oneofs - after_oneofs
        if not any(n in after for n, (_, owner) in before.items() if owner == o)
    }
    for oneof in sorted(after_oneofs):
        origins: set[str] = set()
        moved_in = 0
        for number, (_, owner) in after.items():
            if owner != oneof or number not in before:
                continue
            previous = before[number][1]
            origins.add(f"oneof:{previous}" if previous else f"field:{number}")
            moved_in += previous is None
        if len(origins) > 1:
            kind = (
                "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
                if moved_in > 1
                else "FIELD_MOVED_TO_EXISTING_ONEOF"
            )
            ctx.add(kind, f"{path}/{oneof}")
    for number in sorted(set(before) | set(after)):
        if number not in after:
            field_, owner = before[number]
            if owner is not None:
                if owner not in deleted:
                    ctx.add("ONEOF_FIELD_REMOVED", f"{path}/{owner}/{number}")
            elif field_.label == FDP.LABEL_REQUIRED:
                ctx.add("REQUIRED_FIELD_REMOVED", f"{path}/{number}")
        elif number not in before:
            field_, owner = after[number]
            if owner is None and field_.label == FDP.LABEL_REQUIRED:
                ctx.add("REQUIRED_FIELD_ADDED", f"{path}/{number}")
        else:
            owner = after[number][1]
            where = f"{path}/{owner}/{number}" if owner else f"{path}/{number}"
            _field(ctx, before[number][0], after[number][0], where)


def _label(member: Any) -> str | None:
    if member.label == FDP.LABEL_REPEATED:
        return "REPEATED"
    if member.label == FDP.LABEL_REQUIRED:
        return "REQUIRED"
    return "OPTIONAL" if member.proto3_optional else None


def _kind(ctx_types: dict[str, TypeInfo], member: Any) -> tuple[str, str]:
    """("SCALAR", scalar kind) / ("MAP", entry name) / ("MESSAGE", full name)."""
    if member.type in SCALAR_NAMES:
        return "SCALAR", SCALAR_KINDS[SCALAR_NAMES[member.type]]
    info = ctx_types.get(member.type_name)
    if member.type == FDP.TYPE_ENUM or (info is not None and info.kind == "enum"):
        return "SCALAR", "GENERAL_NUMBER"
    if info is not None and info.is_map:
        return "MAP", member.type_name
    return "MESSAGE", member.type_name


def _field(ctx: _Context, old: Any, new: Any, path: str) -> None:
    _labels_and_types(ctx, _label(old), _label(new), old, new, path)


def _labels_and_types(
    ctx: _Context, old_label: str | None, new_label: str | None, old: Any, new: Any, path: str
) -> None:
    old_kind, old_detail = _kind(ctx.original, old)
    new_kind, new_detail = _kind(ctx.update, new)
    if old_kind != new_kind:
        ctx.add("FIELD_KIND_CHANGED", path)
    elif old_kind == "SCALAR":
        if old_detail != new_detail:
            ctx.add("FIELD_SCALAR_KIND_CHANGED", path)
        elif old_label and new_label and old_label != new_label and old_detail in NUMERIC:
            ctx.add("FIELD_NUMERIC_LABEL_CHANGED", path)
    elif old_kind == "MAP":
        old_entry = ctx.original[old_detail].proto
        new_entry = ctx.update[new_detail].proto
        for i in (0, 1):
            _labels_and_types(ctx, None, None, old_entry.field[i], new_entry.field[i], path)
    else:
        _message_types(ctx, old_detail, new_detail, path)


def _message_types(ctx: _Context, old_name: str, new_name: str, path: str) -> None:
    old_info, new_info = ctx.original.get(old_name), ctx.update.get(new_name)
    if old_info is None or new_info is None:
        if old_name != new_name:
            ctx.add("FIELD_NAMED_TYPE_CHANGED", path)
        return
    if old_info.local != new_info.local:
        ctx.add("FIELD_NAMED_TYPE_CHANGED", path)
        return
    same_file = (
        old_info.file in ctx.original_files
        and new_info.file in ctx.update_files
        and ctx.original_files[old_info.file] == ctx.update_files[new_info.file]
    )
    if same_file:
        return  # the same file on both sides (a reference kept): nothing changed there
    sub = _Context(
        ctx.original, ctx.update, ctx.original_files, ctx.update_files, visiting=ctx.visiting
    )
    _message(
        sub,
        old_info.proto,
        new_info.proto,
        f".{old_info.full}",
        f".{new_info.full}",
        f"#/{old_info.local.replace('.', '/')}",
    )
    if sub.problems:
        ctx.problems.extend(sub.problems)
        ctx.add("FIELD_NAMED_TYPE_CHANGED", path)
