"""Schema registry figures on the embedded Kafka broker (or ``--bootstrap``), through
``confluent_kafka.schema_registry.SchemaRegistryClient``:

* registrations/s of new subjects through one instance;
* the same with two instances writing at once (first writer wins, the loser retries), with the
  number of retried writes;
* ``GET /schemas/ids/{id}`` (served from memory) and ``GET /subjects`` (reads the topic end
  first) latency;
* registrations/s by schema type (JSON Schema, Avro, Protobuf text): what parsing, validation
  and the canonical form cost per type;
* ``GET /schemas/ids/{id}`` over one keep-alive connection (reads/s);
* after ``--bulk`` more subjects, replay time and the memory a new instance takes for them.

    python benchmarks/bench_registry.py [--count 200] [--bulk 5000] [--bootstrap HOST:PORT]
"""

from __future__ import annotations

import argparse
import http.client
import json
import resource
import threading
import time
import urllib.request
import uuid

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from yangkey.kafka.broker import EmbeddedKafka
from yangkey.registry.kafkalog import KafkaLog, ensure_log_topic
from yangkey.registry.registry import Registry
from yangkey.registry.server import RegistryHTTPServer


def schema(index: int) -> Schema:
    body = {"type": "object", "properties": {f"m{index}": {"type": "string"}}}
    return Schema(json.dumps(body), "JSON")


def register_many(url: str, first: int, count: int) -> None:
    client = SchemaRegistryClient({"url": url})
    for index in range(first, first + count):
        client.register_schema(f"s{index}-value", schema(index))


def typed_schema(kind: str, index: int) -> Schema:
    """A small schema of ``kind`` with one string member, unique per ``index``."""
    if kind == "AVRO":
        body = {"type": "record", "name": f"R{index}", "fields": [{"name": "m", "type": "string"}]}
        return Schema(json.dumps(body), "AVRO")
    if kind == "PROTOBUF":
        return Schema(f'syntax = "proto3";\nmessage R{index} {{ string m{index} = 1; }}\n', kind)
    return schema(index)


def register_typed(url: str, kind: str, first: int, count: int) -> float:
    """Registrations/s of new ``kind`` subjects through one client."""
    client = SchemaRegistryClient({"url": url})
    started = time.perf_counter()
    for index in range(first, first + count):
        client.register_schema(f"{kind.lower()}{index}-value", typed_schema(kind, index))
    return count / (time.perf_counter() - started)


def reads_per_second(url: str, ids: list[int], calls: int) -> float:
    """``GET /schemas/ids/{id}`` over one keep-alive connection, as a serde's client does."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port))
    started = time.perf_counter()
    for call in range(calls):
        connection.request("GET", f"/schemas/ids/{ids[call % len(ids)]}")
        connection.getresponse().read()
    elapsed = time.perf_counter() - started
    connection.close()
    return calls / elapsed


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


TYPES = ("JSON", "AVRO", "PROTOBUF")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--bulk", type=int, default=5000, help="more subjects before the replay")
    parser.add_argument(
        "--types", default=",".join(TYPES), help="schema types to time registrations of"
    )
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded one")
    args = parser.parse_args()
    broker = None if args.bootstrap else EmbeddedKafka().start()
    bootstrap = args.bootstrap or (broker.bootstrap if broker else "")
    topic = f"bench-schemas-{uuid.uuid4().hex[:8]}"
    running: list[tuple[RegistryHTTPServer, KafkaLog]] = []

    def instance(node: str) -> tuple[Registry, str]:
        log = KafkaLog(bootstrap, topic)
        registry = Registry(log, node)
        registry.sync()
        server = RegistryHTTPServer(registry, "127.0.0.1", 0)
        server.start()
        running.append((server, log))
        return registry, server.url

    try:
        ensure_log_topic(bootstrap, topic)
        count = args.count
        a, url_a = instance("A")
        started = time.perf_counter()
        register_many(url_a, 0, count)
        elapsed = time.perf_counter() - started
        print(f"one instance: {count} registrations in {elapsed:.2f}s ({count / elapsed:.0f}/s)")

        b, url_b = instance("B")
        threads = [
            threading.Thread(target=register_many, args=(url, first, count // 2))
            for url, first in ((url_a, 10_000), (url_b, 20_000))
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        print(
            f"two instances at once: {count} registrations in {elapsed:.2f}s "
            f"({count / elapsed:.0f}/s), writes retried after losing a race: "
            f"A {a.conflicts}, B {b.conflicts}"
        )

        ids = sorted(b.store.schemas)
        for path, calls in (("/schemas/ids/{id}", 1000), ("/subjects", 200)):
            started = time.perf_counter()
            for call in range(calls):
                target = path.format(id=ids[call % len(ids)])
                with urllib.request.urlopen(f"{url_b}{target}") as response:
                    response.read()
            elapsed = time.perf_counter() - started
            print(f"GET {path}: {1000 * elapsed / calls:.2f} ms each")

        kinds = [k.strip().upper() for k in args.types.split(",") if k.strip()]
        rates = {kind: register_typed(url_a, kind, 30_000, count) for kind in kinds}
        print(
            "registrations/s by type, one client: "
            + ", ".join(f"{kind} {rate:.0f}" for kind, rate in rates.items())
        )
        print(f"GET /schemas/ids/{{id}} keep-alive: {reads_per_second(url_b, ids, 3000):.0f}/s")

        threads = [
            threading.Thread(target=register_many, args=(url, first, args.bulk // 4))
            for url, first in (
                (url_a, 100_000),
                (url_a, 200_000),
                (url_b, 300_000),
                (url_b, 400_000),
            )
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        before = rss_mb()
        started = time.perf_counter()
        c, _ = instance("C")
        elapsed = time.perf_counter() - started
        subjects = len(c.store.subjects)
        print(
            f"a new instance replayed {c.store.end} records ({subjects} subjects) in "
            f"{elapsed:.2f}s, taking {rss_mb() - before:.1f} MB (process RSS {rss_mb():.0f} MB)"
        )
    finally:
        for server, log in running:
            server.stop()
            log.close()
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
