"""The registry's HTTP server (issue 31, items 2, 3 and the API parts of 9) on loopback, over
an in-memory log: content negotiation as Karapace tests it, Confluent JSON for every refusal,
body limits, chunked bodies, malformed framing, slow clients, basic auth and roles, TLS."""

from __future__ import annotations

import base64
import datetime
import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from registry_memory import MemoryLog

from yangkey.registry.auth import Users, needed_role, write_user
from yangkey.registry.httpd import TLS, RegistryHTTPServer
from yangkey.registry.registry import Registry

SCHEMA = {"schema": '{"type": "string"}', "schemaType": "JSON"}
V1 = "application/vnd.schemaregistry.v1+json"


def start(**options: Any) -> RegistryHTTPServer:
    server = RegistryHTTPServer(Registry(MemoryLog(), "A"), "127.0.0.1", 0, **options)
    server.start()
    return server


@pytest.fixture
def server() -> Iterator[RegistryHTTPServer]:
    running = start(client_timeout=1.0, max_body=64 * 1024)
    try:
        yield running
    finally:
        running.stop()


def port(server: RegistryHTTPServer) -> int:
    return int(server.socket.getsockname()[1])


def call(
    server: RegistryHTTPServer,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any, http.client.HTTPResponse]:
    connection = http.client.HTTPConnection("127.0.0.1", port(server), timeout=10)
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    connection.request(method, path, body=data, headers=headers or {})
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, json.loads(payload) if payload else None, response


def raw(server: RegistryHTTPServer, request: bytes, *, wait: float = 5.0) -> bytes:
    """Send bytes as they are; everything the server answers until it closes or ``wait``."""
    with socket.create_connection(("127.0.0.1", port(server))) as sock:
        sock.sendall(request)
        sock.settimeout(wait)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            pass
        return received


def responses(data: bytes) -> list[tuple[int, Any]]:
    """(status, JSON body) of each response in a byte stream (Content-Length framed)."""
    found = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        found.append((status, json.loads(rest[:length]) if length else None))
        data = rest[length:]
    return found


# ------------------------------------------------------------------ negotiation


def test_content_negotiation_as_karapace_tests_it(server: RegistryHTTPServer) -> None:
    def answer(accept: str | None = None) -> tuple[int, str]:
        status, _, response = call(server, "GET", "/subjects", headers={"Accept": accept or ""})
        return status, response.headers["Content-Type"]

    assert answer() == (200, V1)
    assert answer("application/json") == (200, "application/json")
    assert answer("application/vnd.schemaregistry.v2+json")[0] == 406
    assert answer("text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2") == (200, V1)
    weighted = (
        "application/vnd.schemaregistry.v2+json; q=0.1, application/vnd.schemaregistry+json; q=0.9"
    )
    assert answer(weighted) == (200, "application/vnd.schemaregistry+json")
    assert answer("application/*") == (200, V1)
    assert answer("text/*")[0] == 406
    assert answer("*/does_not_matter") == (200, V1)
    assert answer("*") == (200, V1)
    assert answer("application/octet-stream")[0] == 406
    status, body, _ = call(
        server, "GET", "/subjects", headers={"Accept": "application/vnd.schemaregistry.v2+json"}
    )
    assert body == {"error_code": 406, "message": "HTTP 406 Not Acceptable"}

    def put(content_type: str, data: bytes) -> tuple[int, Any, str]:
        status, body, response = call(
            server, "PUT", "/config", data, headers={"Content-Type": content_type}
        )
        return status, body, response.headers["Content-Type"]

    assert put("text/html", b'{"compatibility": "NONE"}') == (
        415,
        {"error_code": 415, "message": "HTTP 415 Unsupported Media Type"},
        V1,
    )
    assert put("application/octet-stream", b'{"compatibility": "FULL"}')[:2] == (
        200,
        {"compatibility": "FULL"},
    )
    assert put(f"{V1}; charset=utf-8", b'{"compatibility": "NONE"}')[:2] == (
        200,
        {"compatibility": "NONE"},
    )
    utf16 = '{"compatibility": "BACKWARD"}'.encode("utf-16")
    assert put(f"{V1}; charset=utf-16", utf16)[:2] == (200, {"compatibility": "BACKWARD"})
    for header in ("Content-Type", "content-type", "coNTEnt-tYPe"):
        status, _, _ = call(
            server, "POST", "/subjects/unknown", b"{}", headers={header: "application/json"}
        )
        assert status == 404


def test_every_refusal_is_confluent_json(server: RegistryHTTPServer) -> None:
    assert call(server, "GET", "/nothing/here")[:2] == (
        404,
        {"error_code": 404, "message": "HTTP 404 Not Found"},
    )
    status, body, response = call(server, "PATCH", "/subjects")
    assert (status, body["error_code"]) == (405, 405)
    assert set(response.headers["Allow"].split(", ")) == {"GET", "HEAD"}
    status, body, response = call(server, "OPTIONS", "/config")
    assert (status, body["error_code"]) == (405, 405)
    assert set(response.headers["Allow"].split(", ")) == {"GET", "HEAD", "PUT", "DELETE"}
    status, body, response = call(server, "HEAD", "/subjects")
    assert (status, body, response.headers["Content-Type"]) == (200, None, V1)
    assert call(server, "HEAD", "/nowhere")[0] == 404
    assert call(server, "GET", "/schemas/ids/invalid")[:2] == (
        404,
        {"error_code": 404, "message": "HTTP 404 Not Found"},
    )
    assert call(server, "POST", "/subjects/x/versions", b"{not json")[0] == 400


def test_subject_names_in_paths(server: RegistryHTTPServer) -> None:
    assert call(server, "POST", "/subjects/a%0Ab/versions", SCHEMA)[:2] == (
        422,
        {"error_code": 42208, "message": "The specified subject 'a\nb' is not a valid."},
    )
    assert call(server, "PUT", "/config/__GLOBAL", {"compatibility": "NONE"})[1]["error_code"] == (
        42208
    )
    # Invalid UTF-8 is refused: %FF and %FE would both decode to U+FFFD.
    assert call(server, "POST", "/subjects/u-%FF/versions", SCHEMA)[1]["error_code"] == 42208
    assert call(server, "GET", "/subjects/u-%FE/versions")[0] == 422
    # So is a % that starts no escape: kept as sent, u-% would alias u-%25.
    for malformed in ("u-%", "u-%G1", "u-%4"):
        message = f"The specified subject '{malformed}' is not a valid."
        assert call(server, "POST", f"/subjects/{malformed}/versions", SCHEMA)[:2] == (
            422,
            {"error_code": 42208, "message": message},
        )
        assert call(server, "GET", f"/subjects/{malformed}/versions")[1]["error_code"] == 42208
    assert call(server, "GET", "/schemas/ids/1%G1")[0] == 404
    assert call(server, "GET", "/subjects/u-%25/versions")[1]["error_code"] == 40401, "valid"
    # %2F stays in the name: no route is reached through it.
    status, body, _ = call(server, "POST", "/subjects/..%2F..%2Fconfig/versions", SCHEMA)
    assert (status, body["subject"]) == (200, "../../config")
    assert call(server, "GET", "/subjects")[1] == ["../../config"]
    assert call(server, "GET", "/subjects/..%2F..%2Fconfig/versions")[1] == [1]
    # Non-ASCII names are sent escaped; raw bytes in a request line are malformed HTTP.
    assert call(server, "POST", "/subjects/%C3%BC/versions", SCHEMA)[1]["subject"] == "ü"
    sent_raw = raw(server, "GET /subjects/ü/versions HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert [status for status, _ in responses(sent_raw)] == [400]


def test_api_additions(server: RegistryHTTPServer) -> None:
    first = call(server, "POST", "/subjects/s1/versions", SCHEMA)[1]["id"]
    other = {"schema": '{"type": "integer"}', "schemaType": "JSON"}
    call(server, "POST", "/subjects/s2/versions", SCHEMA)
    call(server, "PUT", "/config/s2", {"compatibility": "NONE"})
    call(server, "POST", "/subjects/s2/versions", other)
    assert call(server, "GET", "/contexts")[1] == ["."]
    assert [(s["subject"], s["version"]) for s in call(server, "GET", "/schemas")[1]] == [
        ("s1", 1),
        ("s2", 1),
        ("s2", 2),
    ]
    latest = call(server, "GET", "/schemas?latestOnly=true&subjectPrefix=s2")[1]
    assert [(s["subject"], s["version"]) for s in latest] == [("s2", 2)]
    body = call(server, "GET", f"/schemas/ids/{first}?includeSubjects=true")[1]
    assert body["subjects"] == ["s1", "s2"]
    assert call(server, "PUT", "/config", {"compatibilityLevel": "FULL"})[1] == {
        "compatibility": "FULL"
    }
    assert call(server, "GET", "/config")[1] == {"compatibilityLevel": "FULL"}
    assert call(server, "PUT", "/mode", {"mode": "READONLY"})[1] == {"mode": "READONLY"}
    assert call(server, "POST", "/subjects/s3/versions", SCHEMA)[:2] == (
        422,
        {"error_code": 42205, "message": "Subject s3 in context . is in read-only mode"},
    )
    assert call(server, "GET", "/mode/s3?defaultToGlobal=true")[1] == {"mode": "READONLY"}
    assert call(server, "PUT", "/mode", {"mode": "READWRITE"})[0] == 200
    # Re-registering after a hard delete gives the same id again.
    call(server, "DELETE", "/subjects/s1")
    call(server, "DELETE", "/subjects/s1?permanent=true")
    call(server, "DELETE", "/subjects/s2")
    call(server, "DELETE", "/subjects/s2?permanent=true")
    assert call(server, "GET", f"/schemas/ids/{first}")[0] == 404
    assert call(server, "POST", "/subjects/s1/versions", SCHEMA)[1]["id"] == first


# ------------------------------------------------------------------ bodies and framing


def test_a_body_over_the_limit_is_413_unread(server: RegistryHTTPServer) -> None:
    # Announced: refused before a byte of it is read (the rest is never sent here).
    announced = raw(
        server,
        b"POST /subjects/big/versions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n",
    )
    assert responses(announced) == [
        (
            413,
            {
                "error_code": 42209,
                "message": "the request body is 100000000 bytes; the limit is 65536",
            },
        )
    ]
    # Chunked, no length announced: refused once the limit is crossed.
    chunk = b"a" * 40000
    chunked = b"".join(
        (
            b"POST /subjects/big/versions HTTP/1.1\r\nHost: x\r\n",
            b"Transfer-Encoding: chunked\r\n\r\n",
            *(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(3)),
            b"0\r\n\r\n",
        )
    )
    assert [status for status, _ in responses(raw(server, chunked))] == [413]


def test_chunked_bodies_are_read_and_keep_alive_stays_in_step(server: RegistryHTTPServer) -> None:
    body = json.dumps(SCHEMA).encode()
    request = b"".join(
        (
            b"POST /subjects/chunked/versions HTTP/1.1\r\nHost: x\r\n",
            b"Transfer-Encoding: chunked\r\n\r\n",
            b"%x\r\n%s\r\n" % (10, body[:10]),
            b"%x\r\n%s\r\n" % (len(body) - 10, body[10:]),
            b"0\r\n\r\n",
            b"GET /subjects HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
    )
    answered = responses(raw(server, request))
    assert [status for status, _ in answered] == [200, 200]
    assert answered[0][1]["subject"] == "chunked"
    assert answered[1][1] == ["chunked"]


@pytest.mark.parametrize("length", [b"abc", b"-1", b"1, 2"])
def test_a_bad_content_length_is_a_json_400(server: RegistryHTTPServer, length: bytes) -> None:
    request = b"POST /subjects/b7/versions HTTP/1.1\r\nHost: x\r\nContent-Length: %s\r\n\r\n{}"
    answered = responses(raw(server, request % length))
    assert len(answered) == 1 and answered[0][0] == 400
    assert answered[0][1]["error_code"] == 400


@pytest.mark.slow
def test_slow_clients_are_cut_off(server: RegistryHTTPServer) -> None:
    started = time.monotonic()
    # Headers never finished (slowloris), then a body that stops halfway.
    late_headers = raw(server, b"GET /subjects HTTP/1.1\r\nHost: x\r\n", wait=10)
    assert responses(late_headers) == [
        (408, {"error_code": 408, "message": "the request headers did not arrive within 1s"})
    ]
    half_body = raw(
        server,
        b"POST /subjects/x/versions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{",
        wait=10,
    )
    assert [status for status, _ in responses(half_body)] == [408]
    assert time.monotonic() - started < 9, "each was dropped after about a second"
    oversized = raw(server, b"GET /subjects HTTP/1.1\r\nX-Pad: " + b"a" * 70000 + b"\r\n\r\n")
    assert [status for status, _ in responses(oversized)] == [431]


@pytest.mark.slow
def test_slow_clients_do_not_hold_the_server_from_others() -> None:
    """A bounded loopback load: 300 connections that trickle headers or stall mid-body, while
    6 clients keep registering and reading; every normal request is answered correctly, and
    the server drops the slow ones by itself."""
    running = start(client_timeout=2.0, max_connections=2000)
    slow: list[socket.socket] = []
    try:
        for index in range(300):
            sock = socket.create_connection(("127.0.0.1", port(running)))
            if index % 2:
                sock.sendall(b"GET /subjects HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            else:
                sock.sendall(b"POST /subjects/s/versions HTTP/1.1\r\nContent-Length: 500\r\n\r\n{")
            slow.append(sock)
        errors: list[str] = []

        def normal(worker: int) -> None:
            connection = http.client.HTTPConnection("127.0.0.1", port(running), timeout=10)
            for index in range(20):
                subject = f"w{worker}-{index}"
                for method, path, body in (
                    ("POST", f"/subjects/{subject}/versions", SCHEMA),
                    ("GET", f"/subjects/{subject}/versions/1", None),
                ):
                    data = None if body is None else json.dumps(body).encode()
                    try:
                        connection.request(method, path, body=data)
                        response = connection.getresponse()
                        answer = json.loads(response.read())
                    except OSError as exc:
                        errors.append(f"{method} {path}: {exc!r}")
                        connection.close()
                        continue
                    if response.status != 200 or answer.get("subject") != subject:
                        errors.append(f"{method} {path}: {response.status} {answer}")

        workers = [threading.Thread(target=normal, args=(w,)) for w in range(6)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        assert errors == []
        # Keep trickling: the slow ones are dropped all the same.
        for sock in slow[1::2]:
            sock.sendall(b"a")
        deadline = time.monotonic() + 10
        for sock in slow:
            sock.settimeout(max(deadline - time.monotonic(), 0.1))
            answer = sock.recv(65536)
            assert answer.startswith(b"HTTP/1.1 408"), answer[:60]
        assert call(running, "GET", "/subjects")[0] == 200
    finally:
        for sock in slow:
            sock.close()
        running.stop()


# ------------------------------------------------------------------ who may do what


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.mark.slow
def test_roles_from_a_users_file(tmp_path: Path) -> None:
    users = tmp_path / "users"
    for name, role in (("reader", "read"), ("writer", "write"), ("boss", "admin")):
        write_user(users, name, role, f"{name}-pw")  # type: ignore[arg-type]
    assert users.stat().st_mode & 0o777 == 0o600
    assert "reader-pw" not in users.read_text()
    running = start(users=Users(users))
    try:
        reader, writer, boss = (basic(n, f"{n}-pw") for n in ("reader", "writer", "boss"))
        status, body, response = call(running, "GET", "/subjects")
        assert (status, body["error_code"]) == (401, 40101)
        assert response.headers["WWW-Authenticate"].startswith("Basic realm=")
        assert call(running, "GET", "/subjects", headers=basic("reader", "wrong"))[0] == 401
        assert call(running, "GET", "/subjects", headers=basic("nobody", "x"))[0] == 401
        assert call(running, "GET", "/subjects", headers=reader)[:2] == (200, [])
        assert call(running, "POST", "/subjects/s/versions", SCHEMA, reader)[1]["error_code"] == (
            40301
        )
        assert call(running, "POST", "/subjects/s/versions", SCHEMA, writer)[0] == 200
        assert call(running, "POST", "/subjects/s", SCHEMA, reader)[0] == 200  # a lookup
        assert call(running, "POST", "/compatibility/subjects/s/versions", SCHEMA, reader)[0] == 200
        assert call(running, "PUT", "/config", {"compatibility": "NONE"}, writer)[0] == 403
        assert call(running, "PUT", "/mode", {"mode": "READONLY"}, writer)[0] == 403
        assert call(running, "DELETE", "/subjects/s", None, writer)[1] == [1]
        assert call(running, "DELETE", "/subjects/s?permanent=true", None, writer)[0] == 403
        assert call(running, "DELETE", "/subjects/s?permanent=true", None, boss)[1] == [1]
        assert call(running, "PUT", "/config", {"compatibility": "NONE"}, boss)[0] == 200
        # A user added while the server runs is known within a second or so.
        write_user(users, "late", "read", "late-pw")
        time.sleep(1.1)
        assert call(running, "GET", "/subjects", headers=basic("late", "late-pw"))[0] == 200
        write_user(users, "reader", None, None)  # removed: its remembered credential too
        time.sleep(1.1)
        assert call(running, "GET", "/subjects", headers=reader)[0] == 401
    finally:
        running.stop()


def test_needed_roles() -> None:
    assert needed_role("GET", ["subjects"], False) == "read"
    assert needed_role("POST", ["subjects", "s"], False) == "read"
    assert needed_role("POST", ["subjects", "s", "versions"], False) == "write"
    assert needed_role("POST", ["compatibility", "subjects", "s", "versions"], False) == "read"
    assert needed_role("DELETE", ["subjects", "s", "versions", "1"], False) == "write"
    assert needed_role("DELETE", ["subjects", "s"], True) == "admin"
    assert needed_role("PUT", ["config"], False) == "admin"
    assert needed_role("DELETE", ["mode", "s"], False) == "admin"


def test_passwd_command(tmp_path: Path) -> None:
    users = tmp_path / "users"
    result = run(
        "registry", "passwd", "--users", str(users), "ann", "--password-stdin", input="pw\n"
    )
    assert result.exit_code == 0, result.output
    assert users.read_text().startswith("ann:read:scrypt$")
    checked = Users(users)
    assert checked.check("Basic " + base64.b64encode(b"ann:pw").decode()) is not None
    result = run("registry", "passwd", "--users", str(users), "ann", "--role", "admin")
    assert result.exit_code == 0 and users.read_text().startswith("ann:admin:")
    result = run("registry", "passwd", "--users", str(users), "bob", "--delete")
    assert result.exit_code == 1 and "no user 'bob'" in result.output
    users.write_text("broken line\n")
    result = run("registry", "serve", "--bootstrap", "127.0.0.1:1", "--users", str(users))
    assert result.exit_code == 1 and f"{users}:1: expected name:role:scrypt$" in result.output


def test_serve_warns_when_reachable_without_auth() -> None:
    from yangkey.registry.commands import exposure_warnings  # noqa: PLC0415

    assert exposure_warnings("127.0.0.1", False, False) == []
    assert exposure_warnings("localhost", False, False) == []
    assert exposure_warnings("::1", False, False) == []
    assert "without --users" in exposure_warnings("0.0.0.0", False, False)[0]
    assert "no TLS" in exposure_warnings("0.0.0.0", True, False)[0]
    assert exposure_warnings("0.0.0.0", True, True) == []


# ------------------------------------------------------------------ TLS


def _certificate(
    tmp_path: Path, name: str, issuer: tuple[Any, Any] | None = None
) -> tuple[Any, Any]:
    pytest.importorskip("cryptography")
    from cryptography import x509  # noqa: PLC0415
    from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
    from cryptography.x509.oid import NameOID  # noqa: PLC0415

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    issuer_cert, issuer_key = issuer or (None, key)
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_cert.subject if issuer_cert else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    if issuer is not None:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False
        )
    cert = builder.sign(issuer_key, hashes.SHA256())
    (tmp_path / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / f"{name}.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key


def test_tls_and_client_certificates(tmp_path: Path) -> None:
    ca = _certificate(tmp_path, "ca")
    _certificate(tmp_path, "server", ca)
    _certificate(tmp_path, "client", ca)
    tls = TLS(tmp_path / "server.pem", tmp_path / "server.key", tmp_path / "ca.pem")
    running = start(tls=tls)
    try:
        assert running.url.startswith("https://127.0.0.1:")
        context = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
        context.check_hostname = False

        def get(with_client_cert: bool) -> int:
            if with_client_cert:
                context.load_cert_chain(tmp_path / "client.pem", tmp_path / "client.key")
            connection = http.client.HTTPSConnection(
                "127.0.0.1", port(running), context=context, timeout=10
            )
            try:
                connection.request("GET", "/subjects")
                return connection.getresponse().status
            finally:
                connection.close()

        with pytest.raises((ssl.SSLError, ConnectionError)):
            get(with_client_cert=False)
        assert get(with_client_cert=True) == 200
    finally:
        running.stop()
    bad = TLS(tmp_path / "server.pem", tmp_path / "client.key")
    with pytest.raises(Exception, match="cannot load the certificate or key"):
        RegistryHTTPServer(Registry(MemoryLog(), "A"), "127.0.0.1", 0, tls=bad)
