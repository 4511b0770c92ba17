"""Canonical text of key values, so that JSON and XML encodings give byte-identical keys.

RFC 7950 section 9 defines the canonical forms: integers without sign ``+`` or leading zeros,
decimal64 with one digit either side of the point and no other leading/trailing zeros, booleans
``true``/``false``, identityref as ``module:identity`` (RFC 7951 section 6.8 names the module, not
an XML prefix). IPv6 addresses are written per RFC 5952 (ietf-inet-types says so).

A converter is chosen once per key leaf at compile time (Phase 2); Phase 3 only calls it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from yangkey.errors import FilterError, NotificationError

if TYPE_CHECKING:
    from yangson import datatype as dt

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


def _ipv6(text: str) -> str:
    address, percent, zone = text.partition("%")
    try:
        canonical = ipaddress.IPv6Address(address).compressed
    except ValueError:
        raise NotificationError(f"invalid IPv6 address {text!r}") from None
    return canonical + percent + zone


def canon_ip(value: Any) -> str:
    """ip-address / ipv6-address (with optional zone) and the -prefix variants."""
    text = _scalar_text(value).strip()
    if ":" not in text:
        return text
    address, slash, length = text.partition("/")
    return _ipv6(address) + slash + length


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


def _identity_prefixes(datatype: dt.IdentityrefType) -> dict[str, str]:
    """YANG prefix -> module for the identities an identityref type can hold: the imports of
    the module whose text defines the type, then the own prefixes of the modules defining
    identities derived from its bases. Module names are never prefixes here."""
    data = datatype.sctx.schema_data
    names = {mid[0] for mid in data.modules}
    # Walked here: yangson's derived_from() grows the sets of its own identity graph.
    derived: set[tuple[str, str]] = set()
    pending = list(datatype.bases)
    while pending:
        adjacent = data.identity_adjs.get(pending.pop())
        for identity in () if adjacent is None else adjacent.derivs:
            if identity not in derived:
                derived.add(identity)
                pending.append(identity)
    owners = {module for _, module in derived}
    prefixes: dict[str, str] = {}
    for mdata in data.modules.values():
        for prefix, mid in mdata.prefix_map.items():
            if mid[0] in owners and mid == mdata.main_module:
                prefixes.setdefault(prefix, mid[0])
    text = data.modules.get(datatype.sctx.text_mid)
    if text is not None:
        prefixes.update((prefix, mid[0]) for prefix, mid in text.prefix_map.items())
    return {prefix: module for prefix, module in prefixes.items() if prefix not in names}


_IP_TYPEDEFS = {
    "ip-address",
    "ip-address-no-zone",
    "ipv6-address",
    "ipv6-address-no-zone",
    "ip-prefix",
    "ipv6-prefix",
}


def canon_for(
    datatype: dt.DataType, module: str, prefixes: Mapping[str, str] | None = None
) -> Canon:
    """Pick the canonicalizer for a leaf of ``datatype`` defined in ``module``; ``prefixes``
    (the search path's, :meth:`yangkey.schema.ModuleIndex.unique_prefixes`) resolves
    identityref values written with a YANG prefix where the schema itself does not."""
    from yangson import datatype as dt  # noqa: PLC0415

    if datatype.name in _IP_TYPEDEFS:
        return canon_ip
    if isinstance(datatype, dt.LeafrefType):
        return canon_for(datatype.ref_type, module, prefixes)
    if isinstance(datatype, dt.IntegralType):
        return canon_integer
    if isinstance(datatype, dt.Decimal64Type):
        return canon_decimal
    if isinstance(datatype, dt.BooleanType):
        return canon_boolean
    if isinstance(datatype, dt.IdentityrefType):
        return IdentityrefCanon(module, _identity_prefixes(datatype), prefixes)
    if isinstance(datatype, dt.UnionType):
        members = [canon_for(member, module, prefixes) for member in datatype.types]
        if all(member is canon_integer for member in members):
            return canon_integer
        if any(member is canon_ip for member in members):
            return canon_ip
    return canon_string


def literal_canon(canon: Canon, text: str, what: str) -> str:
    """Canonical form of a literal written in a subscription (a pinned key or a filter)."""
    try:
        return canon(text)
    except NotificationError as exc:
        raise FilterError(f"{what}: {exc.reason}") from None
