"""``PROTOBUF``: a ``.proto`` file (proto2 or proto3), as text or as a base64
``FileDescriptorProto`` (what ``confluent_kafka``'s ``ProtobufSerializer`` sends).

Text is parsed with ``proto-schema-parser``; either form becomes a descriptor that the
``protobuf`` runtime builds in a fresh descriptor pool with the file's imports, so an unknown
type, a duplicate field number or a missing import is refused as protoc would. Each import is
a reference of that name (``references: [{"name": "address.proto", ...}]``), except the
well-known files the runtime ships (``google/protobuf/*.proto``, and ``google/type/*.proto`` and
``confluent/*.proto`` when their packages are installed), which Confluent's serdes never
register.

Stored text: a text schema as sent (comments and all); a descriptor written as ``.proto`` text.
``normalize=true`` writes the descriptor's text with fields and enum values in number order.
``?format=serialized`` answers the base64 descriptor, which ``confluent_kafka``'s deserializer
asks for. Compatibility follows Confluent's Protobuf rules (:mod:`protobufcompat`).
"""

from __future__ import annotations

import base64
import binascii
import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yangkey.registry.errors import invalid_schema
from yangkey.registry.schemabase import Parsed, SchemaType
from yangkey.registry.store import SchemaDef

BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")
BUILTIN_PREFIXES = ("google/protobuf/", "google/type/", "confluent/")
MAIN = "schema.proto"


@dataclass(frozen=True)
class ProtoSchema:
    descriptor: Any
    """The file's ``FileDescriptorProto``, every type name resolved (``.pkg.Message``)."""
    files: dict[str, Any]
    """It and every file it imports (well-known ones included), by name."""


class _RaisingListener:
    """ANTLR reports syntax errors on stderr and recovers; the registry refuses them."""

    def syntaxError(
        self, recognizer: Any, symbol: Any, line: int, column: int, msg: str, e: Any
    ) -> None:
        raise invalid_schema(f"Protobuf syntax error at line {line}:{column}: {msg}")

    def reportAmbiguity(self, *args: Any) -> None:
        pass

    def reportAttemptingFullContext(self, *args: Any) -> None:
        pass

    def reportContextSensitivity(self, *args: Any) -> None:
        pass


def _listen(recognizer: Any) -> None:
    recognizer.removeErrorListeners()
    recognizer.addErrorListener(_RaisingListener())


def parse_text(text: str) -> Any:
    from proto_schema_parser import ast  # noqa: PLC0415
    from proto_schema_parser.parser import Parser  # noqa: PLC0415

    tree = Parser(setup_lexer=_listen, setup_parser=_listen).parse(text)
    return _without_comments(tree, ast)


def _without_comments(node: Any, ast: Any) -> Any:
    for name in ("file_elements", "elements"):
        children = getattr(node, name, None)
        if isinstance(children, list):
            kept = [c for c in children if not isinstance(c, ast.Comment)]
            setattr(node, name, [_without_comments(c, ast) for c in kept])
    return node


def _builtin(name: str) -> Any:
    """The descriptor of a well-known file, or None when it is not one (or not installed)."""
    from google.protobuf import descriptor_pb2  # noqa: PLC0415

    if not name.startswith(BUILTIN_PREFIXES) or not name.endswith(".proto"):
        return None
    module_name = name.removesuffix(".proto").replace("/", ".") + "_pb2"
    if name.startswith("confluent/"):
        module_name = "confluent_kafka.schema_registry." + module_name
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    proto = descriptor_pb2.FileDescriptorProto()
    module.DESCRIPTOR.CopyToProto(proto)
    return proto


def _decoded(text: str) -> Any:
    """The descriptor of a base64 schema, or None when ``text`` is not one."""
    from google.protobuf import descriptor_pb2  # noqa: PLC0415
    from google.protobuf.message import DecodeError  # noqa: PLC0415

    if not BASE64.fullmatch(text):
        return None
    try:
        raw = base64.b64decode("".join(text.split()), validate=True)
        proto = descriptor_pb2.FileDescriptorProto.FromString(raw)
    except (binascii.Error, DecodeError, ValueError):
        return None
    return proto if proto.message_type or proto.enum_type or proto.name else None


class ProtobufType(SchemaType):
    name = "PROTOBUF"

    def parse(self, text: str, dependencies: Mapping[str, Parsed], *, normalize: bool) -> Parsed:
        from google.protobuf import descriptor_pb2, descriptor_pool  # noqa: PLC0415
        from proto_schema_parser.generator import Generator  # noqa: PLC0415

        from yangkey.registry.protodescriptor import to_descriptor, to_tree  # noqa: PLC0415

        decoded = _decoded(text.strip())
        if decoded is not None:
            proto, body = decoded, None
        else:
            proto, body = to_descriptor(parse_text(text), MAIN), text.strip() + "\n"
        files: dict[str, Any] = {}
        pool = descriptor_pool.DescriptorPool()
        for name in proto.dependency:
            self._add(pool, name, dependencies, files, [])
        if proto.name in files or not proto.name:
            proto.name = MAIN
        try:
            pool.Add(proto)
            built = pool.FindFileByName(proto.name)
        except (TypeError, KeyError) as exc:
            raise invalid_schema(f"Protobuf: {exc}") from None
        resolved = descriptor_pb2.FileDescriptorProto()
        built.CopyToProto(resolved)
        files[resolved.name] = resolved
        if body is None or normalize:
            body = Generator().generate(to_tree(resolved if normalize else proto, sort=normalize))
        return Parsed(SchemaDef(self.name, body), ProtoSchema(resolved, files))

    def _add(
        self,
        pool: Any,
        name: str,
        dependencies: Mapping[str, Parsed],
        files: dict[str, Any],
        chain: list[str],
    ) -> None:
        """Add the file imported as ``name`` (and what it imports) to ``pool``."""
        if name in files:
            return
        if name in chain:
            raise invalid_schema(f"Protobuf imports go round in a circle: {' -> '.join(chain)}")
        parsed = dependencies.get(name)
        if parsed is not None:
            if parsed.definition.schema_type != self.name:
                raise invalid_schema(
                    f"reference {name!r} is a {parsed.definition.schema_type} schema"
                )
            proto = type(parsed.native.descriptor)()
            proto.CopyFrom(parsed.native.descriptor)
            proto.name = name
            inner = parsed.dependencies
        else:
            proto = _builtin(name)
            if proto is None:
                raise invalid_schema(f"import {name!r} has no reference of that name")
            inner = {}
        for sub in proto.dependency:
            self._add(pool, sub, {**dependencies, **inner}, files, [*chain, name])
        try:
            pool.Add(proto)
        except TypeError as exc:
            raise invalid_schema(f"Protobuf: {name}: {exc}") from None
        files[name] = proto

    def reads(self, reader: Parsed, writer: Parsed) -> list[str]:
        from yangkey.registry.protobufcompat import compare  # noqa: PLC0415

        return compare(writer.native, reader.native)

    def formatted(self, parsed: Parsed, fmt: str) -> str:
        if fmt == "serialized":
            raw = parsed.native.descriptor.SerializeToString()
            return base64.standard_b64encode(raw).decode("ascii")
        return parsed.definition.schema
