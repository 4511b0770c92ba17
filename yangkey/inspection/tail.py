"""``yangkey tail TOPIC``: read a topic's messages and show each with its key, headers and
value decoded, as kcat does.

A value is shown as what it is: JSON and XML pretty-printed (XML through the hardened parser,
:mod:`yangkey.xmlsafe`), a value in the Confluent wire format (byte 0, a 4-byte big-endian
schema id, the payload; what Confluent's serializers write) decoded by its schema from the
registry when one is given (JSON Schema and Avro; Protobuf is shown as bytes), other text as
text, anything else as escaped bytes.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from yangkey.errors import BrokerError, YangkeyError

MAGIC = 0


@dataclass
class Decoded:
    """A value as shown: its ``kind`` (json, xml, avro, text, bytes, empty), the decoded
    ``value`` (a JSON tree, or text) and the schema id of a framed value."""

    kind: str
    value: Any
    schema_id: int | None = None
    note: str = ""


class Schemas:
    """Schemas by id from a registry, fetched once each (None: no registry given)."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self._client: Any = None
        self._cache: dict[int, tuple[str, Any] | str] = {}

    def get(self, schema_id: int) -> tuple[str, Any] | str:
        """(schema type, parsed schema), or the reason it is not available."""
        if schema_id not in self._cache:
            self._cache[schema_id] = self._fetch(schema_id)
        return self._cache[schema_id]

    def _fetch(self, schema_id: int) -> tuple[str, Any] | str:
        if self.url is None:
            return "no --schema-registry given"
        from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: PLC0415

        from yangkey.registry.client import shown_url  # noqa: PLC0415

        if self._client is None:
            self._client = SchemaRegistryClient({"url": self.url})
        try:
            schema = self._client.get_schema(schema_id)
        except Exception as exc:  # the client raises several kinds: one line says it
            return f"schema {schema_id} not found in {shown_url(self.url)}: {exc}"
        kind = str(schema.schema_type or "AVRO").upper()
        if kind == "AVRO":
            import fastavro  # noqa: PLC0415

            return kind, fastavro.parse_schema(json.loads(schema.schema_str))
        return kind, schema.schema_str


def decode_value(raw: bytes | None, schemas: Schemas) -> Decoded:
    if raw is None:
        return Decoded("null", None)
    if not raw:
        return Decoded("empty", "")
    if raw[0] == MAGIC and len(raw) >= 5:
        schema_id = int.from_bytes(raw[1:5], "big")
        return _framed(raw[5:], schema_id, schemas)
    return _plain(raw)


def _plain(raw: bytes) -> Decoded:
    import orjson  # noqa: PLC0415

    try:
        return Decoded("json", orjson.loads(raw))
    except orjson.JSONDecodeError:
        pass
    if raw.lstrip()[:1] == b"<":
        pretty = _pretty_xml(raw)
        if pretty is not None:
            return Decoded("xml", pretty)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Decoded("bytes", _escaped(raw))
    if any(not (c.isprintable() or c in "\t\n\r") for c in text):
        return Decoded("bytes", _escaped(raw))
    return Decoded("text", text)


def _framed(payload: bytes, schema_id: int, schemas: Schemas) -> Decoded:
    found = schemas.get(schema_id)
    if isinstance(found, str):
        shown = _plain(payload)
        shown.schema_id, shown.note = schema_id, found
        return shown
    kind, schema = found
    if kind == "AVRO":
        import io  # noqa: PLC0415

        import fastavro  # noqa: PLC0415

        try:
            value = fastavro.schemaless_reader(io.BytesIO(payload), schema, None)
        except Exception as exc:  # a value that does not match its schema: show the bytes
            return Decoded("bytes", _escaped(payload), schema_id, f"not Avro of its schema: {exc}")
        return Decoded("avro", value, schema_id)
    if kind == "JSON":
        shown = _plain(payload)
        shown.schema_id = schema_id
        return shown
    return Decoded("bytes", _escaped(payload), schema_id, f"{kind.lower()} (shown as bytes)")


def _pretty_xml(raw: bytes) -> str | None:
    from lxml import etree  # noqa: PLC0415

    from yangkey.xmlsafe import parse_xml  # noqa: PLC0415

    try:
        root = parse_xml(raw, "value")
    except YangkeyError:
        return None
    etree.indent(root, space="  ")
    return str(etree.tostring(root, encoding="unicode"))


def _escaped(raw: bytes) -> str:
    """Bytes as text a terminal shows safely: printable ASCII as is, the rest ``\\xNN``."""
    return "".join(
        chr(b) if 0x20 <= b < 0x7F and b != 0x5C else ("\\\\" if b == 0x5C else f"\\x{b:02x}")
        for b in raw
    )


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "backslashreplace")


@dataclass
class Shown:
    """One message, ready to print."""

    topic: str
    partition: int
    offset: int
    timestamp: str | None
    key: str | None
    headers: list[tuple[str, str | None]] = field(default_factory=list)
    value: Decoded = field(default_factory=lambda: Decoded("null", None))

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "timestamp": self.timestamp,
            "key": self.key,
            "headers": [[name, value] for name, value in self.headers],
            "value": self.value.value,
            "value_format": self.value.kind,
        }
        if self.value.schema_id is not None:
            out["schema_id"] = self.value.schema_id
        if self.value.note:
            out["note"] = self.value.note
        return out

    def as_text(self) -> str:
        when = f"  {self.timestamp}" if self.timestamp else ""
        lines = [f"── {self.topic} [{self.partition}] @{self.offset}{when}"]
        key = "(none)" if self.key is None else self.key.replace("\n", "\\n")
        lines.append(f"key:     {key}")
        for index, (name, value) in enumerate(self.headers):
            label = "headers:" if index == 0 else ""
            lines.append(f"{label:<9}{name}={'' if value is None else value}")
        framed = ""
        if self.value.schema_id is not None:
            framed = f" (schema id {self.value.schema_id}"
            framed += f": {self.value.note})" if self.value.note else ")"
        elif self.value.note:
            framed = f" ({self.value.note})"
        body = self.value.value
        if self.value.kind in ("json", "avro"):
            body = json.dumps(body, indent=2, ensure_ascii=False, default=str)
        lines.append(f"value:   {self.value.kind}{framed}")
        if body not in (None, ""):
            lines.append(str(body))
        return "\n".join(lines)


def show(message: Any, schemas: Schemas) -> Shown:
    """A confluent-kafka ``Message`` as :class:`Shown`."""
    kind, millis = message.timestamp()
    stamp = None
    if kind != 0 and millis >= 0:  # TIMESTAMP_NOT_AVAILABLE is 0
        when = dt.datetime.fromtimestamp(millis / 1000, tz=dt.UTC)
        stamp = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return Shown(
        topic=str(message.topic()),
        partition=int(message.partition() or 0),
        offset=int(message.offset() or 0),
        timestamp=stamp,
        key=_text(message.key()),
        headers=[(name, _text(value)) for name, value in (message.headers() or [])],
        value=decode_value(message.value(), schemas),
    )


def read(
    bootstrap: str,
    topic: str,
    *,
    from_beginning: bool = False,
    count: int | None = None,
    exit_at_end: bool = False,
    should_stop: Callable[[], bool] | None = None,
    poll: float = 0.5,
) -> Iterator[Any]:
    """The topic's messages (confluent-kafka ``Message``), from its beginning or its end, all
    partitions; until ``count`` were read, or (``exit_at_end``) every partition is at its end.
    Reads committed messages only, as the pipeline's consumers do; joins no group (commits
    nothing)."""
    from confluent_kafka import (  # noqa: PLC0415
        OFFSET_BEGINNING,
        OFFSET_END,
        Consumer,
        KafkaError,
        KafkaException,
        TopicPartition,
    )

    from yangkey.kafka.config import consumer_config, kafka_reason  # noqa: PLC0415
    from yangkey.kafka.logs import logged  # noqa: PLC0415

    source = f"kafka://{bootstrap}/{topic}"
    config = consumer_config(
        bootstrap,
        f"yangkey-tail-{uuid.uuid4().hex[:12]}",
        {"enable.auto.commit": False, "enable.partition.eof": True},
    )
    consumer = Consumer(logged(config))
    try:
        try:
            metadata = consumer.list_topics(topic, timeout=10)
        except KafkaException as exc:
            raise BrokerError(f"cannot reach Kafka: {kafka_reason(exc)}", source=source) from None
        found = metadata.topics.get(topic)
        if found is None or found.error is not None or not found.partitions:
            raise BrokerError("no such topic (`yangkey kafka topics` lists them)", source=source)
        start = OFFSET_BEGINNING if from_beginning else OFFSET_END
        partitions = [TopicPartition(topic, p, start) for p in sorted(found.partitions)]
        consumer.assign(partitions)
        at_end: set[int] = set()
        seen = 0
        while count is None or seen < count:
            if should_stop is not None and should_stop():
                return
            message = consumer.poll(poll)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(int(message.partition() or 0))
                    if exit_at_end and len(at_end) == len(partitions):
                        return
                    continue
                if error.fatal():
                    raise BrokerError(f"consumer failed: {error.str()}", source=source)
                continue
            at_end.discard(int(message.partition() or 0))
            seen += 1
            yield message
    finally:
        consumer.close()
