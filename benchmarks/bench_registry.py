"""Schema registry figures: ``yangkey registry serve`` processes on the embedded Kafka broker
(or ``--bootstrap``), driven over keep-alive HTTP connections (``http.client``):

* registrations/s of new subjects through one instance, one client (baseline measured in the
  same run: sequential acknowledged produces/s to a one-partition topic, the floor of a write);
* re-registrations, reads by id, latest versions, lookups and ``GET /subjects``, per second;
* reads by id from 4 clients at once;
* registrations from two instances at once;
* registrations/s by schema type (JSON Schema, Avro, Protobuf text): what parsing, validation
  and the canonical form cost per type;
* the server's RSS before and after growing to ``--subjects`` subjects (4 clients);
* a restart with all of them: spawn to URL printed (the replay included);
* with ``--auth``: reads by id/s with HTTP basic auth on every request.

Targets (issue 31): ~100 registrations/s for one client, >= 3,500 reads by id/s,
5,000 subjects <= 80 MB, restart <= 1.5 s. Being a subprocess, the server can be any version:
``PYTHONPATH=<other checkout> python benchmarks/bench_registry.py`` measures that one.

    python benchmarks/bench_registry.py [--count 200] [--subjects 5000] [--auth]
        [--types JSON,AVRO,PROTOBUF]
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from confluent_kafka import Producer

from yangkey.kafka.broker import EmbeddedKafka
from yangkey.kafka.config import TopicSpec, ensure_topics


class Client:
    """One keep-alive connection; ``call`` returns (status, parsed body)."""

    def __init__(self, url: str, auth: str | None = None) -> None:
        parts = urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        self.headers = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
        if auth:
            self.headers["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        try:
            self.connection.request(method, path, body=data, headers=self.headers)
            response = self.connection.getresponse()
        except (http.client.RemoteDisconnected, ConnectionError):
            # The server closed an idle keep-alive connection: open another.
            self.connection.close()
            self.connection.request(method, path, body=data, headers=self.headers)
            response = self.connection.getresponse()
        payload = response.read()
        return response.status, json.loads(payload) if payload else None

    def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, payload = self.call(method, path, body)
        if status != 200:
            raise SystemExit(f"{method} {path}: {status} {payload}")
        return payload


def schema(index: int) -> dict[str, Any]:
    body = {"type": "object", "properties": {f"m{index}": {"type": "string"}}}
    return {"schema": json.dumps(body), "schemaType": "JSON"}


TYPES = ("JSON", "AVRO", "PROTOBUF")


def typed_schema(kind: str, index: int) -> dict[str, Any]:
    """A small schema of ``kind`` with one string member, unique per ``index``."""
    if kind == "AVRO":
        body = {"type": "record", "name": f"R{index}", "fields": [{"name": "m", "type": "string"}]}
        return {"schema": json.dumps(body), "schemaType": "AVRO"}
    if kind == "PROTOBUF":
        text = f'syntax = "proto3";\nmessage R{index} {{ string m{index} = 1; }}\n'
        return {"schema": text, "schemaType": "PROTOBUF"}
    return schema(index)


class Server:
    def __init__(self, bootstrap: str, topic: str, extra: list[str]) -> None:
        started = time.perf_counter()
        command = [sys.executable, "-m", "yangkey.cli", "registry", "serve"]
        self.process = subprocess.Popen(
            [*command, "--bootstrap", bootstrap, "--port", "0", "--store-topic", topic, *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        self.startup = time.perf_counter() - started
        if not self.url.startswith("http"):
            self.stop()
            raise SystemExit(f"registry serve failed: {self.process.stderr}")

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="utf-8")
        kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
        return kb / 1024

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def rate(label: str, calls: int, work: Callable[[int], object], clients: int = 1) -> float:
    def run(first: int) -> None:
        for index in range(first, calls, clients):
            work(index)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    per_second = calls / (time.perf_counter() - started)
    print(f"{label}: {per_second:,.0f}/s ({calls} calls, {clients} client(s))")
    return per_second


def produce_floor(bootstrap: str, count: int) -> float:
    """Sequential acknowledged produces/s (idempotent, acks=all, linger 0) to a new topic."""
    topic = f"bench-floor-{uuid.uuid4().hex[:8]}"
    ensure_topics(bootstrap, [TopicSpec(topic, partitions=1, compaction=True)])
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 0,
        }
    )
    producer.produce(topic, b"warm-up", b"k")
    producer.flush(30)
    started = time.perf_counter()
    for index in range(count):
        producer.produce(topic, b"x" * 200, str(index).encode())
        producer.flush(30)
    return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--subjects", type=int, default=5000)
    parser.add_argument("--auth", action="store_true", help="also measure basic-auth reads")
    parser.add_argument(
        "--types", default=",".join(TYPES), help="schema types to time registrations of"
    )
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded one")
    args = parser.parse_args()
    broker = None if args.bootstrap else EmbeddedKafka().start()
    bootstrap = args.bootstrap or (broker.bootstrap if broker else "")
    topic = f"bench-schemas-{uuid.uuid4().hex[:8]}"
    running: list[Server] = []
    try:
        floor = produce_floor(bootstrap, args.count)
        print(f"baseline: {floor:,.0f} acknowledged produces/s (one at a time)")
        a = Server(bootstrap, topic, [])
        running.append(a)
        client = Client(a.url)
        count = args.count
        regs = rate(
            "register new subjects",
            count,
            lambda i: client.ok("POST", f"/subjects/s{i}-value/versions", schema(i)),
        )
        print(f"  = {regs / floor:.2f} x the produce baseline")
        rate(
            "re-register existing schemas",
            count,
            lambda i: client.ok(
                "POST", f"/subjects/s{i % count}-value/versions", schema(i % count)
            ),
        )
        ids = [client.ok("GET", f"/subjects/s{i}-value/versions/1")["id"] for i in range(count)]
        rate(
            "GET /schemas/ids/{id}",
            3000,
            lambda i: client.ok("GET", f"/schemas/ids/{ids[i % count]}"),
        )
        clients = [Client(a.url) for _ in range(4)]
        rate(
            "GET /schemas/ids/{id}",
            6000,
            lambda i: clients[i % 4].ok("GET", f"/schemas/ids/{ids[i % count]}"),
            clients=4,
        )
        rate(
            "GET /subjects/{s}/versions/latest",
            2000,
            lambda i: client.ok("GET", f"/subjects/s{i % count}-value/versions/latest"),
        )
        rate(
            "lookup POST /subjects/{s}",
            1000,
            lambda i: client.ok("POST", f"/subjects/s{i % count}-value", schema(i % count)),
        )
        rate("GET /subjects", 300, lambda i: client.ok("GET", "/subjects"))

        for kind in (k.strip().upper() for k in args.types.split(",") if k.strip()):
            rate(
                f"register new {kind} subjects",
                count,
                lambda i, kind=kind: client.ok(  # type: ignore[misc]
                    "POST",
                    f"/subjects/{kind.lower()}{i}-value/versions",
                    typed_schema(kind, 3 * 10**6 + i),
                ),
            )

        b = Server(bootstrap, topic, [])
        running.append(b)
        pair = [Client(a.url), Client(b.url)]
        rate(
            "two instances registering at once",
            count,
            lambda i: pair[i % 2].ok(
                "POST", f"/subjects/pair{i}-value/versions", schema(10**6 + i)
            ),
            clients=2,
        )
        b.stop()
        running.remove(b)

        before = a.rss_mb()
        grow = [Client(a.url) for _ in range(4)]
        base = len(client.ok("GET", "/subjects"))
        rate(
            f"bulk registration up to {args.subjects} subjects",
            args.subjects - base,
            lambda i: grow[i % 4].ok(
                "POST", f"/subjects/bulk{i}-value/versions", schema(2 * 10**6 + i)
            ),
            clients=4,
        )
        subjects = len(client.ok("GET", "/subjects"))
        print(f"server RSS {before:.0f} MB -> {a.rss_mb():.0f} MB with {subjects} subjects")
        a.stop()
        running.remove(a)

        again = Server(bootstrap, topic, [])
        running.append(again)
        assert len(Client(again.url).ok("GET", "/subjects")) == subjects
        print(f"restart with {subjects} subjects: URL printed after {again.startup:.2f}s")
        if args.auth:
            with tempfile.TemporaryDirectory() as scratch:
                users = Path(scratch) / "users"
                subprocess.run(
                    [
                        *(sys.executable, "-m", "yangkey.cli", "registry", "passwd"),
                        *("--users", str(users), "bench", "--role", "read", "--password-stdin"),
                    ],
                    input="s3cret\n",
                    text=True,
                    check=True,
                    capture_output=True,
                )
                guarded = Server(bootstrap, topic, ["--users", str(users)])
                running.append(guarded)
                authed = Client(guarded.url, "bench:s3cret")
                rate(
                    "GET /schemas/ids/{id} with basic auth",
                    3000,
                    lambda i: authed.ok("GET", f"/schemas/ids/{ids[i % count]}"),
                )
    finally:
        for server in running:
            server.stop()
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
