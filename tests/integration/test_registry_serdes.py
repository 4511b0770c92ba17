"""The registry's Avro, Protobuf and JSON Schema types end to end: confluent_kafka's serializers
register (and reference) schemas in yangkey's registry, records go through the real broker, and
the deserializers read them back with the schemas they fetch from the registry."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from factories import unique_name
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from yangkey.kafka.config import TopicSpec, ensure_topics
from yangkey.kafka.log import KafkaLog, ensure_log_topic
from yangkey.registry.httpd import RegistryHTTPServer
from yangkey.registry.registry import Registry

pytestmark = pytest.mark.integration


@pytest.fixture
def registry_url(kafka_bootstrap: str) -> Iterator[str]:
    topic = unique_name("_schemas-serdes-")
    ensure_log_topic(kafka_bootstrap, topic)
    log = KafkaLog(kafka_bootstrap, topic)
    registry = Registry(log, "serdes")
    registry.sync()
    server = RegistryHTTPServer(registry, "127.0.0.1", 0)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
        log.close()


def round_trip(
    bootstrap: str,
    topic: str,
    serialize: Callable[[Any, SerializationContext], bytes | None],
    deserialize: Callable[[bytes, SerializationContext], Any],
    values: list[Any],
) -> list[Any]:
    """Produce ``values`` to ``topic`` through the broker and read them back."""
    ensure_topics(bootstrap, [TopicSpec(topic)])
    context = SerializationContext(topic, MessageField.VALUE)
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce(topic, value=serialize(value, context))
    assert producer.flush(30) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("g-"),
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    received: list[Any] = []
    try:
        for _ in range(60):
            message = consumer.poll(1.0)
            if message is None or message.error():
                if len(received) == len(values):
                    break
                continue
            payload = message.value()
            assert payload is not None
            received.append(deserialize(payload, context))
            if len(received) == len(values):
                break
    finally:
        consumer.close()
    return received


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


# ------------------------------------------------------------------ Avro

ADDRESS = {
    "type": "record",
    "name": "Address",
    "namespace": "com.acme",
    "fields": [{"name": "street", "type": "string"}, {"name": "zip", "type": "int"}],
}
USER = {
    "type": "record",
    "name": "User",
    "namespace": "com.acme",
    "fields": [
        {"name": "name", "type": "string"},
        {"name": "home", "type": "Address"},
        {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []},
    ],
}


def test_avro_with_a_reference_through_the_broker(
    kafka_bootstrap: str, registry_url: str, topic_name: str
) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    address_id = client.register_schema("com.acme.Address", Schema(json.dumps(ADDRESS), "AVRO"))
    reference = SchemaReference("com.acme.Address", "com.acme.Address", 1)
    user = Schema(json.dumps(USER), "AVRO", [reference])
    serializer = AvroSerializer(client, user)
    deserializer = AvroDeserializer(client)
    values = [
        {"name": "ada", "home": {"street": "1 Main St", "zip": 1000}, "tags": ["x"]},
        {"name": "bob", "home": {"street": "2 Side St", "zip": 2000}, "tags": []},
    ]
    assert round_trip(kafka_bootstrap, topic_name, serializer, deserializer, values) == values

    subject = f"{topic_name}-value"
    registered = client.get_latest_version(subject)
    assert registered.schema.schema_type == "AVRO"
    assert [(r.name, r.subject, r.version) for r in registered.schema.references] == [
        ("com.acme.Address", "com.acme.Address", 1)
    ]
    assert client.get_referenced_by("com.acme.Address", 1) == [registered.schema_id]
    assert address_id != registered.schema_id
    # Evolution: a new field with a default is BACKWARD compatible, one without is not.
    with_default = {
        **USER,
        "fields": [*USER["fields"], {"name": "age", "type": "int", "default": 0}],
    }
    assert client.test_compatibility(subject, Schema(json.dumps(with_default), "AVRO", [reference]))
    without = {**USER, "fields": [*USER["fields"], {"name": "age", "type": "int"}]}
    with pytest.raises(SchemaRegistryError) as caught:
        client.register_schema(subject, Schema(json.dumps(without), "AVRO", [reference]))
    assert caught.value.http_status_code == 409
    # The resolved format inlines the referenced record: a reader without references can use it.
    resolved = get(f"{registry_url}/schemas/ids/{registered.schema_id}?format=resolved")
    assert json.loads(resolved["schema"])["fields"][1]["type"]["name"] == "Address"


def test_avro_is_the_default_type_and_reformatting_keeps_the_id(registry_url: str) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    compact = client.register_schema("plain-avro", Schema(json.dumps(ADDRESS), "AVRO"))
    reordered = dict(reversed(list(ADDRESS.items())))
    spaced = json.dumps(reordered, indent=4)
    request = urllib.request.Request(
        f"{registry_url}/subjects/plain-avro/versions",
        data=json.dumps({"schema": spaced}).encode(),  # no schemaType: Avro
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert json.load(answer)["id"] == compact
    assert get(f"{registry_url}/schemas/types") == ["JSON", "PROTOBUF", "AVRO", "YANG"]


# ------------------------------------------------------------------ Protobuf


def protobuf_messages() -> tuple[type[Any], type[Any]]:
    """``acme/user.proto`` importing ``acme/address.proto``, built as protoc would."""
    pool = descriptor_pool.DescriptorPool()
    address = descriptor_pb2.FileDescriptorProto(
        name="acme/address.proto", package="acme", syntax="proto3"
    )
    message = address.message_type.add(name="Address")
    message.field.add(name="street", number=1, type=9, label=1)
    message.field.add(name="zip", number=2, type=5, label=1)
    user = descriptor_pb2.FileDescriptorProto(
        name="acme/user.proto", package="acme", syntax="proto3", dependency=["acme/address.proto"]
    )
    message = user.message_type.add(name="User")
    message.field.add(name="name", number=1, type=9, label=1)
    message.field.add(name="home", number=2, type=11, label=1, type_name=".acme.Address")
    message.field.add(name="scores", number=3, type=5, label=3)
    pool.Add(address)
    pool.Add(user)
    return (
        message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.User")),
        message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.Address")),
    )


def test_protobuf_with_an_import_through_the_broker(
    kafka_bootstrap: str, registry_url: str, topic_name: str
) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    user_class, address_class = protobuf_messages()
    serializer = ProtobufSerializer(user_class, client, {"use.deprecated.format": False})
    deserializer = ProtobufDeserializer(user_class, {"use.deprecated.format": False})
    values = [
        user_class(name="ada", home=address_class(street="1 Main St", zip=1000), scores=[3, 4]),
        user_class(name="bob", home=address_class(street="2 Side St", zip=2000)),
    ]
    received = round_trip(kafka_bootstrap, topic_name, serializer, deserializer, values)
    assert received == values

    # The serializer registered the import under its file name and referenced it.
    assert "acme/address.proto" in client.get_subjects()
    registered = client.get_latest_version(f"{topic_name}-value")
    assert registered.schema.schema_type == "PROTOBUF"
    assert [r.name for r in registered.schema.references] == ["acme/address.proto"]
    text = get(f"{registry_url}/schemas/ids/{registered.schema_id}")["schema"]
    assert 'import "acme/address.proto";' in text and "message User" in text
    # A field changing kind is refused, as Confluent's rules say.
    changed = text.replace("repeated int32 scores = 3;", "repeated string scores = 3;")
    assert changed != text
    refs = registered.schema.references
    assert not client.test_compatibility(f"{topic_name}-value", Schema(changed, "PROTOBUF", refs))


def test_protobuf_registered_as_text_is_read_by_the_python_serdes(
    kafka_bootstrap: str, registry_url: str, topic_name: str
) -> None:
    """What a Java producer registers (``.proto`` text) serves the Python deserializer, which
    asks for the schema as a serialized descriptor."""
    client = SchemaRegistryClient({"url": registry_url})
    client.register_schema(
        "acme/address.proto",
        Schema(
            'syntax = "proto3";\npackage acme;\n\n// where\nmessage Address {\n'
            "  string street = 1;\n  int32 zip = 2;\n}\n",
            "PROTOBUF",
        ),
    )
    text = (
        'syntax = "proto3";\npackage acme;\nimport "acme/address.proto";\n\n'
        "message User {\n  string name = 1;\n  Address home = 2;\n  repeated int32 scores = 3;\n}\n"
    )
    refs = [SchemaReference("acme/address.proto", "acme/address.proto", 1)]
    schema_id = client.register_schema(f"{topic_name}-value", Schema(text, "PROTOBUF", refs))
    stored = get(f"{registry_url}/schemas/ids/{schema_id}")["schema"]
    assert stored == text, "a text schema is stored as sent"
    user_class, address_class = protobuf_messages()
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    serializer = ProtobufSerializer(user_class, client, {**conf, "use.deprecated.format": False})
    deserializer = ProtobufDeserializer(user_class, {"use.deprecated.format": False})
    value = user_class(name="cy", home=address_class(street="3 Loop", zip=3), scores=[1])
    encoded = serializer(value, SerializationContext(topic_name, MessageField.VALUE))
    assert encoded is not None and int.from_bytes(encoded[1:5], "big") == schema_id
    assert round_trip(kafka_bootstrap, topic_name, serializer, deserializer, [value]) == [value]


# ------------------------------------------------------------------ JSON Schema


def test_json_schema_through_the_broker(
    kafka_bootstrap: str, registry_url: str, topic_name: str
) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": False,
        "properties": {"name": {"type": "string"}, "big": {"type": "integer", "maximum": 10**30}},
        "required": ["name"],
    }
    text = json.dumps(schema, indent=2)
    serializer = JSONSerializer(text, client)
    deserializer = JSONDeserializer(text, schema_registry_client=client)
    values = [{"name": "ada", "big": 7}, {"name": "bob"}]
    assert round_trip(kafka_bootstrap, topic_name, serializer, deserializer, values) == values
    stored = client.get_latest_version(f"{topic_name}-value").schema.schema_str
    assert stored == json.dumps(schema, separators=(",", ":")), "as sent, without whitespace"
    assert "1000000000000000000000000000000" in stored
    with pytest.raises(SchemaRegistryError) as caught:
        client.register_schema("bad-json", Schema('{"type": "invalid_type"}', "JSON"))
    assert (caught.value.http_status_code, caught.value.error_code) == (422, 42201)


def test_json_schema_with_a_reference_through_the_broker(
    kafka_bootstrap: str, registry_url: str, topic_name: str
) -> None:
    """The JSON serializer resolves ``$ref: "address.json"`` through the reference it names,
    fetched from the registry, and validates every record against the whole."""
    client = SchemaRegistryClient({"url": registry_url})
    address = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
        "required": ["street"],
    }
    client.register_schema("address-json", Schema(json.dumps(address), "JSON"))
    user = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"name": {"type": "string"}, "home": {"$ref": "address.json"}},
    }
    refs = [SchemaReference("address.json", "address-json", 1)]
    schema = Schema(json.dumps(user), "JSON", refs)
    serializer = JSONSerializer(schema, client)
    deserializer = JSONDeserializer(schema, schema_registry_client=client)
    values = [{"name": "ada", "home": {"street": "1 Main St", "zip": 1000}}]
    assert round_trip(kafka_bootstrap, topic_name, serializer, deserializer, values) == values
    context = SerializationContext(topic_name, MessageField.VALUE)
    with pytest.raises(Exception, match="street"):  # the referenced schema requires it
        serializer({"name": "bob", "home": {"zip": 1}}, context)
    registered = client.get_latest_version(f"{topic_name}-value")
    assert [r.name for r in registered.schema.references] == ["address.json"]
    # A narrower address in a new version of the reference makes the user schema incompatible.
    client.set_compatibility("address-json", "NONE")
    client.register_schema(
        "address-json",
        Schema(json.dumps({**address, "properties": {"street": {"type": "string"}}}), "JSON"),
    )
    newer = Schema(json.dumps(user), "JSON", [SchemaReference("address.json", "address-json", 2)])
    assert not client.test_compatibility(f"{topic_name}-value", newer)
