"""Who may do what on the registry: HTTP basic auth (RFC 7617) against a users file, and three
roles (issue 31, item 3).

The users file has one ``name:role:hash`` line per user (``#`` starts a comment); ``hash`` is
``scrypt$<log2 N>$<r>$<p>$<salt>$<key>`` (RFC 7914, stdlib :func:`hashlib.scrypt`, base64
salt and key). ``yangkey registry passwd`` writes it; the server reads it again when it changes.

Roles, each including the one before:

* ``read``: every ``GET``, and the ``POST`` that only read (lookups, compatibility checks);
* ``write``: registering schemas and soft deletes;
* ``admin``: permanent deletes, ``/config`` and ``/mode`` changes.

A password check costs ~50 ms of CPU on purpose; a credential that passed is remembered (by an
HMAC under a per-process key, never the password itself), so a client sending basic auth on
every request pays it once.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import os
import secrets
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from yangkey.errors import ConfigError

Role = Literal["read", "write", "admin"]
ROLES: tuple[Role, ...] = ("read", "write", "admin")
SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P = 14, 8, 1  # 16 MiB and ~50 ms per check
REMEMBERED = 4096
"""Credentials remembered at most (then forgotten all at once: re-checked on next use)."""


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    key = _scrypt(password, salt, SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P)
    return "$".join(
        ("scrypt", str(SCRYPT_LOG_N), str(SCRYPT_R), str(SCRYPT_P), _b64(salt), _b64(key))
    )


def verify_password(password: str, hashed: str) -> bool:
    try:
        scheme, log_n, r, p, salt, key = hashed.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(key, validate=True)
        found = _scrypt(password, base64.b64decode(salt, validate=True), int(log_n), int(r), int(p))
    except (ValueError, binascii.Error):
        return False
    return hmac.compare_digest(found, expected)


def _scrypt(password: str, salt: bytes, log_n: int, r: int, p: int) -> bytes:
    n = 1 << log_n
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=256 * r * n, dklen=32)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class User:
    name: str
    role: Role
    hashed: str

    def may(self, needed: Role) -> bool:
        return ROLES.index(self.role) >= ROLES.index(needed)


def parse_users(text: str, *, source: str) -> dict[str, User]:
    users: dict[str, User] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, rest = line.partition(":")
        role, _, hashed = rest.partition(":")
        if not name or role not in ROLES or not hashed.startswith("scrypt$"):
            raise ConfigError(
                "expected name:role:scrypt$... with role read, write or admin "
                "(`yangkey registry passwd` writes such lines)",
                source=f"{source}:{number}",
            )
        users[name] = User(name, role, hashed)
    return users


def read_users(path: Path) -> dict[str, User]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", source=str(path)) from None
    return parse_users(text, source=str(path))


def write_user(path: Path, name: str, role: Role | None, password: str | None) -> str:
    """Add, change (``role``, ``password``) or remove (both None) a user; the file is
    replaced atomically and readable by its owner only. Returns what was done."""
    if not name or ":" in name or any(c.isspace() for c in name):
        raise ConfigError("a user name holds no ':' and no white space", source=repr(name))
    users = read_users(path)
    current = users.get(name)
    if role is None and password is None:
        if current is None:
            raise ConfigError(f"no user {name!r}", source=str(path))
        del users[name]
        done = "removed"
    else:
        if current is None and password is None:
            raise ConfigError(f"a new user needs a password: {name!r}", source=str(path))
        users[name] = User(
            name,
            role or (current.role if current else "read"),
            hash_password(password) if password is not None else current.hashed,  # type: ignore[union-attr]
        )
        done = "changed" if current else "added"
    lines = [f"{u.name}:{u.role}:{u.hashed}\n" for u in users.values()]
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.writelines(lines)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return done


class Users:
    """The users file as the server checks requests against it (re-read when it changes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._key = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self._checking = threading.Semaphore(1)  # at most one scrypt at a time: CPU bound
        self._stamp: tuple[int, int] | None = None
        self._looked = 0.0
        self._users: dict[str, User] = {}
        self._passed: dict[bytes, User] = {}
        self._load()
        if not self._users:
            raise ConfigError(
                "no users: add one with `yangkey registry passwd --users FILE NAME --role admin`",
                source=str(path),
            )

    def _load(self) -> None:
        try:
            stat = self.path.stat()
        except OSError as exc:
            raise ConfigError(f"cannot read: {exc.strerror}", source=str(self.path)) from None
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            users = read_users(self.path)
            with self._lock:
                self._users, self._passed, self._stamp = users, {}, stamp

    def remembered(self, authorization: str) -> User | None:
        """The user of a credential checked before (cheap; None: call :meth:`check`)."""
        digest = hmac.new(self._key, authorization.encode(), hashlib.sha256).digest()
        with self._lock:
            return self._passed.get(digest)

    def refresh(self) -> None:
        """Pick up an edited users file, looking at most once a second (a failed read keeps
        the users known)."""
        now = time.monotonic()
        if now - self._looked < 1.0:
            return
        self._looked = now
        with contextlib.suppress(ConfigError):
            self._load()

    def check(self, authorization: str) -> User | None:
        """The user a ``Basic`` credential proves, or None. Slow: call it off the event loop."""
        scheme, _, encoded = authorization.partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            name, sep, password = (
                base64.b64decode(encoded.strip(), validate=True).decode("utf-8").partition(":")
            )
        except (binascii.Error, UnicodeDecodeError):
            return None
        user = self._users.get(name)
        if not sep or user is None:
            # As slow as a wrong password: the answer time does not tell which names exist.
            with self._checking:
                verify_password(password, _dummy_hash())
            return None
        with self._checking:
            if not verify_password(password, user.hashed):
                return None
        digest = hmac.new(self._key, authorization.encode(), hashlib.sha256).digest()
        with self._lock:
            if len(self._passed) >= REMEMBERED:
                self._passed.clear()
            self._passed[digest] = user
        return user


@cache
def _dummy_hash() -> str:
    return hash_password(secrets.token_hex(8))


def needed_role(method: str, segments: list[str], permanent: bool) -> Role:
    """The role a request needs, from its method and path segments (still encoded)."""
    head = segments[0] if segments else ""
    if method in ("GET", "HEAD", "OPTIONS"):
        return "read"
    if method == "POST":
        if head == "subjects" and len(segments) >= 3 and segments[2] == "versions":
            return "write"
        return "read"  # lookups and compatibility checks (anything else is a 404/405)
    if method == "DELETE" and head == "subjects":
        return "admin" if permanent else "write"
    return "admin"  # PUT/DELETE of /config and /mode, and any other method
