"""``.proto`` syntax trees (``proto-schema-parser``) to ``FileDescriptorProto`` and back.

The registry takes Protobuf schemas both ways Confluent's does: as ``.proto`` text (Java serdes,
Kafka Connect, curl) and as a base64 ``FileDescriptorProto`` (``confluent_kafka``'s
``ProtobufSerializer``). Descriptors are what the ``protobuf`` runtime validates (every type
name resolved, numbers unique) and what ``?format=serialized`` returns, so text becomes a
descriptor here; a descriptor becomes a syntax tree again to be written as text.

Options: the standard ones (``java_package``, ``deprecated``, ``packed``, ``json_name``,
``default``, ``map_entry``...) are carried both ways. Custom options (``(my.option)``) stay in
the text but cannot be set on a descriptor without their extension's definition; they are left
out of the descriptor (the ``protobuf`` runtime does the same with options it does not know).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from google.protobuf import descriptor_pb2 as pb
from proto_schema_parser import ast

from yangkey.registry.errors import invalid_schema

FDP = pb.FieldDescriptorProto
SCALARS: dict[str, int] = {
    "double": FDP.TYPE_DOUBLE,
    "float": FDP.TYPE_FLOAT,
    "int64": FDP.TYPE_INT64,
    "uint64": FDP.TYPE_UINT64,
    "int32": FDP.TYPE_INT32,
    "fixed64": FDP.TYPE_FIXED64,
    "fixed32": FDP.TYPE_FIXED32,
    "bool": FDP.TYPE_BOOL,
    "string": FDP.TYPE_STRING,
    "bytes": FDP.TYPE_BYTES,
    "uint32": FDP.TYPE_UINT32,
    "sfixed32": FDP.TYPE_SFIXED32,
    "sfixed64": FDP.TYPE_SFIXED64,
    "sint32": FDP.TYPE_SINT32,
    "sint64": FDP.TYPE_SINT64,
}
SCALAR_NAMES = {number: name for name, number in SCALARS.items()}
MAX_FIELD = 536870911
LABELS = {
    ast.FieldCardinality.REPEATED: FDP.LABEL_REPEATED,
    ast.FieldCardinality.REQUIRED: FDP.LABEL_REQUIRED,
}


def camel(name: str, *, upper: bool) -> str:
    """protoc's ToCamelCase: the map entry's message name, a field's default json_name."""
    out: list[str] = []
    capital = upper
    for char in name:
        if char == "_":
            capital = True
        elif capital:
            out.append(char.upper())
            capital = False
        else:
            out.append(char)
    return "".join(out)


# ------------------------------------------------------------------ options


def _option_value(value: Any) -> Any:
    return value.name if isinstance(value, ast.Identifier) else value


def _set_options(target: Any, options: Iterable[ast.Option], where: str) -> None:
    """Standard options onto the descriptor's options message; custom ones are skipped."""
    for option in options:
        if option.name.startswith("("):
            continue
        field = target.DESCRIPTOR.fields_by_name.get(option.name)
        if field is None:
            raise invalid_schema(f"{where}: unknown option {option.name!r}")
        value = _option_value(option.value)
        try:
            if field.enum_type is not None and isinstance(value, str):
                value = field.enum_type.values_by_name[value].number
            setattr(target, option.name, value)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise invalid_schema(f"{where}: option {option.name} = {value!r}: {exc}") from None


def _ranges(ranges: Sequence[str], *, inclusive_end: bool) -> list[tuple[int, int]]:
    found = []
    for text in ranges:
        low, _, high = (part.strip() for part in text.partition(" to "))
        try:
            start = int(low, 0)
            end = MAX_FIELD if high == "max" else int(high or low, 0)
        except ValueError:
            raise invalid_schema(f"bad range {text!r}") from None
        found.append((start, end if inclusive_end else end + 1))
    return found


# ------------------------------------------------------------------ syntax tree -> descriptor


def to_descriptor(tree: ast.File, name: str) -> pb.FileDescriptorProto:
    """The descriptor of a parsed ``.proto`` file; type names are left as written (the
    descriptor pool resolves them, with the scoping rules of protoc)."""
    if tree.edition is not None:
        raise invalid_schema("Protobuf editions are not supported; use proto2 or proto3 syntax")
    proto = pb.FileDescriptorProto(name=name, syntax=tree.syntax or "proto2")
    for element in tree.file_elements:
        if isinstance(element, ast.Package):
            proto.package = element.name
        elif isinstance(element, ast.Import):
            if element.public:
                proto.public_dependency.append(len(proto.dependency))
            if element.weak:
                proto.weak_dependency.append(len(proto.dependency))
            proto.dependency.append(element.name)
        elif isinstance(element, ast.Option):
            _set_options(proto.options, [element], "file")
        elif isinstance(element, ast.Message):
            _message(proto.message_type.add(), element, proto.syntax)
        elif isinstance(element, ast.Enum):
            _enum(proto.enum_type.add(), element)
        elif isinstance(element, ast.Extension):
            _extension(proto.extension, proto.message_type, element, proto.syntax)
        elif isinstance(element, ast.Service):
            _service(proto.service.add(), element)
    return proto


def _message(proto: pb.DescriptorProto, tree: ast.Message, syntax: str) -> None:
    proto.name = tree.name
    for element in tree.elements:
        if isinstance(element, ast.Field | ast.Group):
            _field(proto, element, syntax, None)
        elif isinstance(element, ast.MapField):
            _map_field(proto, element)
        elif isinstance(element, ast.OneOf):
            index = len(proto.oneof_decl)
            oneof = proto.oneof_decl.add(name=element.name)
            for member in element.elements:
                if isinstance(member, ast.Field | ast.Group):
                    _field(proto, member, syntax, index)
                elif isinstance(member, ast.Option):
                    _set_options(oneof.options, [member], f"oneof {element.name}")
        elif isinstance(element, ast.Message):
            _message(proto.nested_type.add(), element, syntax)
        elif isinstance(element, ast.Enum):
            _enum(proto.enum_type.add(), element)
        elif isinstance(element, ast.Option):
            _set_options(proto.options, [element], f"message {tree.name}")
        elif isinstance(element, ast.Reserved):
            for start, end in _ranges(element.ranges, inclusive_end=False):
                proto.reserved_range.add(start=start, end=end)
            proto.reserved_name.extend(element.names)
        elif isinstance(element, ast.ExtensionRange):
            for start, end in _ranges(element.ranges, inclusive_end=False):
                proto.extension_range.add(start=start, end=end)
        elif isinstance(element, ast.Extension):
            _extension(proto.extension, proto.nested_type, element, syntax)
    # proto3 `optional`: each such field sits alone in a synthetic oneof, declared last.
    for field in proto.field:
        if field.proto3_optional:
            field.oneof_index = len(proto.oneof_decl)
            proto.oneof_decl.add(name=f"_{field.name}")


def _field(
    parent: pb.DescriptorProto,
    tree: ast.Field | ast.Group,
    syntax: str,
    oneof: int | None,
    fields: Any = None,
) -> Any:
    field = (parent.field if fields is None else fields).add(name=tree.name, number=tree.number)
    cardinality = tree.cardinality
    field.label = LABELS.get(cardinality, FDP.LABEL_OPTIONAL) if cardinality else FDP.LABEL_OPTIONAL
    if cardinality == ast.FieldCardinality.OPTIONAL and syntax == "proto3" and oneof is None:
        field.proto3_optional = True
    if oneof is not None:
        field.oneof_index = oneof
    if isinstance(tree, ast.Group):
        group = parent.nested_type.add()
        _message(group, ast.Message(name=tree.name, elements=tree.elements), syntax)
        field.name = tree.name.lower()
        field.type = FDP.TYPE_GROUP
        field.type_name = tree.name
        return field
    if tree.type in SCALARS:
        field.type = SCALARS[tree.type]
    else:
        field.type_name = tree.type
    options = []
    for option in tree.options:
        value = _option_value(option.value)
        if option.name == "default":
            field.default_value = str(value).lower() if isinstance(value, bool) else str(value)
        elif option.name == "json_name":
            field.json_name = str(value)
        else:
            options.append(option)
    _set_options(field.options, options, f"field {tree.name}")
    return field


def _map_field(parent: pb.DescriptorProto, tree: ast.MapField) -> None:
    entry = parent.nested_type.add(name=camel(tree.name, upper=True) + "Entry")
    entry.options.map_entry = True
    for name, number, kind in (("key", 1, tree.key_type), ("value", 2, tree.value_type)):
        member = entry.field.add(name=name, number=number, label=FDP.LABEL_OPTIONAL)
        if kind in SCALARS:
            member.type = SCALARS[kind]
        else:
            member.type_name = kind
    field = parent.field.add(name=tree.name, number=tree.number, label=FDP.LABEL_REPEATED)
    field.type_name = entry.name
    field.type = FDP.TYPE_MESSAGE
    _set_options(field.options, [o for o in tree.options if o.name != "json_name"], tree.name)


def _extension(fields: Any, nested: Any, tree: ast.Extension, syntax: str) -> None:
    holder = pb.DescriptorProto()
    for element in tree.elements:
        if isinstance(element, ast.Field | ast.Group):
            field = _field(holder, element, syntax, None, fields)
            field.extendee = tree.typeName
    nested.extend(holder.nested_type)


def _enum(proto: pb.EnumDescriptorProto, tree: ast.Enum) -> None:
    proto.name = tree.name
    for element in tree.elements:
        if isinstance(element, ast.EnumValue):
            value = proto.value.add(name=element.name, number=element.number)
            _set_options(value.options, element.options, f"enum value {element.name}")
        elif isinstance(element, ast.Option):
            _set_options(proto.options, [element], f"enum {tree.name}")
        elif isinstance(element, ast.EnumReserved):
            for start, end in _ranges(element.ranges, inclusive_end=True):
                proto.reserved_range.add(start=start, end=end)
            proto.reserved_name.extend(element.names)


def _service(proto: pb.ServiceDescriptorProto, tree: ast.Service) -> None:
    proto.name = tree.name
    for element in tree.elements:
        if isinstance(element, ast.Method):
            method = proto.method.add(
                name=element.name,
                input_type=element.input_type.type,
                output_type=element.output_type.type,
                client_streaming=element.input_type.stream,
                server_streaming=element.output_type.stream,
            )
            options = [o for o in element.elements if isinstance(o, ast.Option)]
            _set_options(method.options, options, f"rpc {element.name}")
        elif isinstance(element, ast.Option):
            _set_options(proto.options, [element], f"service {tree.name}")


# ------------------------------------------------------------------ descriptor -> syntax tree


def _options(message: Any) -> list[ast.Option]:
    found = []
    for field, raw in message.ListFields():
        if field.message_type is not None:
            continue  # uninterpreted options and nested option messages: not text-safe here
        value = raw
        if field.enum_type is not None:
            value = ast.Identifier(field.enum_type.values_by_number[raw].name)
        found.append(ast.Option(name=field.name, value=value))
    return found


def _type_name(field: Any) -> str:
    return SCALAR_NAMES.get(field.type) or field.type_name


def _default(field: Any) -> Any:
    text = field.default_value
    if field.type in (FDP.TYPE_STRING, FDP.TYPE_BYTES):
        return text
    if field.type == FDP.TYPE_ENUM:
        return ast.Identifier(text)
    if field.type == FDP.TYPE_BOOL:
        return text == "true"
    if field.type in (FDP.TYPE_DOUBLE, FDP.TYPE_FLOAT):
        return ast.Identifier(text) if text in ("inf", "-inf", "nan") else float(text)
    return int(text)


def _field_tree(field: Any, syntax: str) -> ast.Field:
    options = _options(field.options)
    if field.HasField("default_value"):
        options.insert(0, ast.Option(name="default", value=_default(field)))
    if field.HasField("json_name") and field.json_name != camel(field.name, upper=False):
        options.insert(0, ast.Option(name="json_name", value=field.json_name))
    if field.label == FDP.LABEL_REPEATED:
        cardinality: ast.FieldCardinality | None = ast.FieldCardinality.REPEATED
    elif field.label == FDP.LABEL_REQUIRED:
        cardinality = ast.FieldCardinality.REQUIRED
    elif syntax == "proto2" or field.proto3_optional:
        cardinality = ast.FieldCardinality.OPTIONAL
    else:
        cardinality = None
    return ast.Field(field.name, field.number, _type_name(field), cardinality, options)


def _range_text(start: int, end: int) -> str:
    if end >= MAX_FIELD:
        return f"{start} to max"
    return str(start) if start == end else f"{start} to {end}"


def _message_tree(proto: pb.DescriptorProto, syntax: str, *, sort: bool) -> ast.Message:
    entries = {n.name: n for n in proto.nested_type if n.options.map_entry}
    elements: list[Any] = _options(proto.options)
    oneofs: dict[int, ast.OneOf] = {}
    fields = sorted(proto.field, key=lambda f: f.number) if sort else list(proto.field)
    for field in fields:
        entry = entries.get(field.type_name.rsplit(".", 1)[-1])
        if entry is not None and field.label == FDP.LABEL_REPEATED:
            key, value = entry.field[0], entry.field[1]
            tree: Any = ast.MapField(
                field.name,
                field.number,
                _type_name(key),
                _type_name(value),
                _options(field.options),
            )
        else:
            tree = _field_tree(field, syntax)
        if field.HasField("oneof_index") and not field.proto3_optional:
            if field.oneof_index not in oneofs:
                oneofs[field.oneof_index] = ast.OneOf(proto.oneof_decl[field.oneof_index].name)
                elements.append(oneofs[field.oneof_index])
            oneofs[field.oneof_index].elements.append(tree)
        else:
            elements.append(tree)
    for nested in proto.nested_type:
        if not nested.options.map_entry:
            elements.append(_message_tree(nested, syntax, sort=sort))
    elements += [_enum_tree(e, sort=sort) for e in proto.enum_type]
    reserved = [_range_text(r.start, r.end - 1) for r in proto.reserved_range]
    if reserved:
        elements.append(ast.Reserved(ranges=reserved))
    if proto.reserved_name:
        elements.append(ast.Reserved(names=list(proto.reserved_name)))
    extensions = [_range_text(r.start, r.end - 1) for r in proto.extension_range]
    if extensions:
        elements.append(ast.ExtensionRange(ranges=extensions))
    return ast.Message(proto.name, elements)


def _enum_tree(proto: pb.EnumDescriptorProto, *, sort: bool) -> ast.Enum:
    elements: list[Any] = _options(proto.options)
    values = sorted(proto.value, key=lambda v: v.number) if sort else list(proto.value)
    elements += [ast.EnumValue(v.name, v.number, _options(v.options)) for v in values]
    reserved = [_range_text(r.start, r.end) for r in proto.reserved_range]
    if reserved:
        elements.append(ast.EnumReserved(ranges=reserved))
    if proto.reserved_name:
        elements.append(ast.EnumReserved(names=list(proto.reserved_name)))
    return ast.Enum(proto.name, elements)


def to_tree(proto: pb.FileDescriptorProto, *, sort: bool = False) -> ast.File:
    """The syntax tree of a descriptor (``sort``: fields and enum values by number)."""
    syntax = proto.syntax or "proto2"
    elements: list[Any] = []
    if proto.package:
        elements.append(ast.Package(proto.package))
    for index, dependency in enumerate(proto.dependency):
        public, weak = index in proto.public_dependency, index in proto.weak_dependency
        elements.append(ast.Import(dependency, weak=weak, public=public))
    elements += _options(proto.options)
    elements += [_message_tree(m, syntax, sort=sort) for m in proto.message_type]
    elements += [_enum_tree(e, sort=sort) for e in proto.enum_type]
    extendees: dict[str, ast.Extension] = {}
    for field in proto.extension:
        if field.extendee not in extendees:
            extendees[field.extendee] = ast.Extension(field.extendee)
            elements.append(extendees[field.extendee])
        extendees[field.extendee].elements.append(_field_tree(field, syntax))
    for service in proto.service:
        methods: list[Any] = _options(service.options)
        methods += [
            ast.Method(
                m.name,
                ast.MessageType(m.input_type, m.client_streaming),
                ast.MessageType(m.output_type, m.server_streaming),
                list(_options(m.options)),
            )
            for m in service.method
        ]
        elements.append(ast.Service(service.name, methods))
    return ast.File(syntax=syntax, file_elements=elements)
