"""Canonical text of key values, so that JSON and XML encodings give byte-identical keys.

RFC 7950 section 9 defines the canonical forms: integers without sign ``+`` or leading zeros,
decimal64 with one digit either side of the point and no other leading/trailing zeros, booleans
``true``/``false``, identityref as ``module:identity`` (RFC 7951 section 6.8 names the module, not
an XML prefix), bits in position order, binary as RFC 4648 base64. ietf-inet-types and
ietf-yang-types (RFC 6991, RFC 9911) add theirs: IPv6 addresses per RFC 5952 (IPv4-mapped and
-translated ones in mixed notation, whatever the Python version), prefixes with the bits
outside the prefix cleared, MAC and hex strings, UUIDs and domain names in lowercase. A zone
index (``%eth0``) is kept as written: the numeric form RFC 4007 prefers needs the device's
interface table.

A converter is chosen once per key leaf at compile time (Phase 2,
:func:`yangkey.canon_types.canon_for`); Phase 3 only calls it. Every converter pickles
(compiled subscriptions are cached on disk).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from yangkey.errors import FilterError, NotificationError

Canon = Callable[[Any], str]

UINT32_MAX = 0xFFFFFFFF
UINT64_MAX = 0xFFFFFFFFFFFFFFFF

_ASCII_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_ASCII_UNSIGNED = re.compile(r"[0-9]+", re.ASCII)


def parse_unsigned(value: Any, maximum: int) -> int | None:
    """``value`` as an integer in 0..maximum: a JSON integer or text of ASCII digits only.

    ``int()`` alone would take ``"١٠٤٢"`` as 1042, ``"1_000"`` as 1000 and a float 1e20 as an
    integer: two different inputs would then share one key or one header. None if not valid.
    """
    if type(value) is int:
        number = value
    elif isinstance(value, str) and _ASCII_UNSIGNED.fullmatch(value):
        digits = value.lstrip("0")
        if len(digits) > len(str(maximum)):
            return None  # out of range, and int() raises ValueError past 4300 digits
        number = int(digits or "0")
    else:
        return None
    return number if 0 <= number <= maximum else None


_GOOD_NODE_NAMES: set[str] = set()


def node_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be the first line of a message key, or None when it can.

    A line feed would split the key; other control characters and surrounding spaces make two
    names that look alike and key differently (XML and JSON would disagree on stripping).
    """
    if name in _GOOD_NODE_NAMES:
        return None  # every notification of a node asks again (decode, then derive)
    problem = _node_name_problem(name)
    if problem is None and type(name) is str:
        if len(_GOOD_NODE_NAMES) >= 65536:
            _GOOD_NODE_NAMES.clear()
        _GOOD_NODE_NAMES.add(name)
    return problem


def _node_name_problem(name: str) -> str | None:
    if "\n" in name:
        return "contains a line feed"
    if not name.isprintable():
        return "contains a control or non-printable character"
    if name != name.strip():
        return "has leading or trailing whitespace"
    return None


class QNameText(str):
    """XML text of the form ``prefix:name`` with the prefix resolved to a module name.

    The XML decoder produces it for leaf text whose prefix is declared in scope; identityref
    converters use :attr:`module_value` so that ``if:ethernetCsmacd`` in XML equals
    ``iana-if-type:ethernetCsmacd`` in JSON.
    """

    __slots__ = ("module_value",)
    module_value: str

    def __new__(cls, text: str, module_value: str) -> QNameText:
        obj = super().__new__(cls, text)
        obj.module_value = module_value
        return obj


def _scalar_text(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list) and len(value) == 1 and value[0] is None:
        return ""  # RFC 7951 "empty" type: [null]
    raise NotificationError(f"expected a scalar value, found {type(value).__name__}")


def _no_float(value: Any, what: str) -> None:
    if type(value) is float:
        # A JSON number wider than 64 bits arrives as a float: 10**30 and 10**30 + 1 would
        # both read as 1e+30 and share a key.
        raise NotificationError(
            f"{what} value {value!r} is a JSON number that is not an exact integer; "
            "send it as a JSON string (RFC 7951)"
        )


def canon_string(value: Any) -> str:
    if type(value) is str:
        return value
    _no_float(value, "string")
    return _scalar_text(value)


def canon_integer(value: Any) -> str:
    if type(value) is int:
        return str(value)
    _no_float(value, "integer")
    text = _scalar_text(value).strip()
    if not _ASCII_INTEGER.fullmatch(text):
        raise NotificationError(f"invalid integer value {text!r}: ASCII digits only")
    return str(int(text, 10))


def canon_decimal(value: Any) -> str:
    _no_float(value, "decimal64")
    text = _scalar_text(value).strip()
    if not text.isascii():
        raise NotificationError(f"invalid decimal64 value {text!r}: ASCII digits only")
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise NotificationError(f"invalid decimal64 value {text!r}") from None
    if not number.is_finite():
        raise NotificationError(f"invalid decimal64 value {text!r}")
    plain = format(number.normalize(), "f")
    if "." not in plain:
        plain += ".0"
    if plain.startswith("-0") and Decimal(plain) == 0:
        plain = plain[1:]
    return plain


def canon_boolean(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    text = _scalar_text(value).strip()
    if text in ("true", "false"):
        return text
    raise NotificationError(f"invalid boolean value {text!r}")


# --------------------------------------------------------------------------- addresses

#: Well-known prefixes whose last 32 bits are an IPv4 address written in dotted notation
#: (RFC 5952 section 5: IPv4-mapped ::ffff:0:0/96, RFC 4291; IPv4-translated ::ffff:0:0:0/96,
#: RFC 2765). Python writes them in hex before 3.13 and mixed after: never rely on it.
_MIXED = (0xFFFF, 0xFFFF0000)


def _hextets(groups: list[int]) -> str:
    """RFC 5952 section 4: lowercase, no leading zeros, the longest run of two or more zero
    groups (the first of equal runs) as "::"."""
    best_start, best_length, start = -1, 1, -1
    for index, group in enumerate([*groups, 1]):
        if group == 0 and start < 0:
            start = index
        elif group != 0 and start >= 0:
            if index - start > best_length:
                best_start, best_length = start, index - start
            start = -1
    text = [format(group, "x") for group in groups]
    if best_start < 0:
        return ":".join(text)
    return ":".join(text[:best_start]) + "::" + ":".join(text[best_start + best_length :])


def _ipv6_text(address: str, what: str = "IPv6 address") -> str:
    try:
        number = int(ipaddress.IPv6Address(address))
    except ValueError:
        raise NotificationError(f"invalid {what} {address!r}") from None
    if number >> 32 in _MIXED:
        head = _hextets([(number >> shift) & 0xFFFF for shift in range(112, 31, -16)])
        tail = str(ipaddress.IPv4Address(number & 0xFFFFFFFF))
        return head + tail if head.endswith("::") else f"{head}:{tail}"
    return _hextets([(number >> shift) & 0xFFFF for shift in range(112, -1, -16)])


def canon_ip(value: Any) -> str:
    """ip-address, ipv4-address, ipv6-address (any zone variant), ip-address-and-prefix: the IPv6
    address per RFC 5952 (ietf-inet-types, RFC 6991 / RFC 9911), an IPv4 address as written,
    a zone (``%eth0``) and a prefix length (``/64``) as written, without leading zeros."""
    text = _scalar_text(value).strip()
    address, percent, zone = text.partition("%")
    if percent:  # a zone may contain "/" (SR Linux: fe80::1%ethernet-1/1.1); no prefix then
        return (_ipv6_text(address) if ":" in address else address) + percent + zone
    address, slash, length = text.partition("/")
    if ":" in address:
        address = _ipv6_text(address)
    if slash and length.isdigit() and length.isascii():
        length = str(int(length))
    return address + slash + length


def canon_prefix(value: Any) -> str:
    """ietf-inet-types ip-prefix, ipv4-prefix, ipv6-prefix: the bits outside the prefix set to
    zero (RFC 9911: "192.0.2.1/24 ... will be converted into the canonical format
    192.0.2.0/24"), the IPv6 address per RFC 5952."""
    text = _scalar_text(value).strip()
    try:
        network = ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise NotificationError(f"invalid IP prefix {text!r}") from None
    if network.version == 6:
        return f"{_ipv6_text(str(network.network_address))}/{network.prefixlen}"
    return str(network)


def canon_lowercase(value: Any) -> str:
    """mac-address, phys-address, hex-string, uuid, language-tag (ietf-yang-types), domain-name
    and host-name (ietf-inet-types, RFC 9911): the canonical form uses lowercase."""
    return _scalar_text(value).strip().lower()


# --------------------------------------------------------------------------- other built-ins


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*", re.ASCII)


class IdentityrefCanon:
    """The canonical ``module:identity`` of an identityref value (RFC 7951 section 6.8).

    A value without a qualifier is in ``module`` (the leaf's). A qualifier that is a YANG
    ``prefix`` rather than a module name (``ianaift:gpon``, as some devices write it) is
    resolved in Phase 2's tables: ``local`` (the imports of the module defining the type, and
    the prefixes of the modules defining identities derived from its bases), then ``shared``
    (the prefixes that one module owns on the search path). A qualifier that is neither stays
    as written: its module may not be on the search path. XML text whose prefix the document
    declares arrives resolved (:class:`QNameText`). Text that is no ``[module:]identity`` is
    refused. A class, not a closure, so that compiled subscriptions pickle.
    """

    __slots__ = ("local", "module", "shared")

    def __init__(
        self,
        module: str,
        local: Mapping[str, str] | None = None,
        shared: Mapping[str, str] | None = None,
    ) -> None:
        self.module = module
        self.local: Mapping[str, str] = local or {}
        self.shared: Mapping[str, str] = shared or {}

    def __call__(self, value: Any) -> str:
        if isinstance(value, QNameText):
            return value.module_value
        text = _scalar_text(value).strip()
        prefix, colon, name = text.partition(":")
        if not colon:
            if not _IDENTIFIER.fullmatch(text):
                raise NotificationError(f"invalid identityref value {text!r}: not an identifier")
            return f"{self.module}:{text}"
        if not (_IDENTIFIER.fullmatch(prefix) and _IDENTIFIER.fullmatch(name)):
            raise NotificationError(
                f"invalid identityref value {text!r}: not [module:]identity (RFC 7951 6.8)"
            )
        module = self.local.get(prefix) or self.shared.get(prefix)
        return text if module is None else f"{module}:{name}"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is IdentityrefCanon
            and other.module == self.module
            and other.local == self.local
            and (other.shared is self.shared or other.shared == self.shared)
        )

    def __hash__(self) -> int:
        return hash(self.module)

    def __reduce__(self) -> tuple[Any, ...]:
        return IdentityrefCanon, (self.module, self.local, self.shared)


class BitsCanon:
    """bits: the names of the set bits ordered by position, one space apart (RFC 7950 section
    9.7.2)."""

    __slots__ = ("positions",)

    def __init__(self, positions: dict[str, int]) -> None:
        self.positions = positions

    def __call__(self, value: Any) -> str:
        names = _scalar_text(value).split()
        unknown = [name for name in names if name not in self.positions]
        if unknown:
            raise NotificationError(f"invalid bits value: unknown bit {unknown[0]!r}")
        return " ".join(sorted(dict.fromkeys(names), key=self.positions.__getitem__))

    def __reduce__(self) -> tuple[Any, ...]:
        return BitsCanon, (self.positions,)


def canon_binary(value: Any) -> str:
    """binary: base64 as RFC 4648 writes it (RFC 7950 section 9.8.2), line breaks and other
    white space removed."""
    import base64  # noqa: PLC0415 - binary keys are rare
    import binascii  # noqa: PLC0415

    text = "".join(_scalar_text(value).split())
    try:
        return base64.b64encode(base64.b64decode(text, validate=True)).decode("ascii")
    except (binascii.Error, ValueError):
        raise NotificationError(f"invalid binary value {text[:40]!r}: not base64") from None


def literal_canon(canon: Canon, text: str, what: str) -> str:
    """Canonical form of a literal written in a subscription (a pinned key or a filter)."""
    try:
        return canon(text)
    except NotificationError as exc:
        raise FilterError(f"{what}: {exc.reason}") from None
