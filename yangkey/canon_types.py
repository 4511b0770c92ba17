"""Which canonical form a key leaf has: chosen from its resolved YANG type, once, at compile time.

The type of a leaf is followed through leafrefs and typedefs (:mod:`yangkey.schema_build`
records each type's typedef chain, outermost first) down to the built-in type:

* a typedef of ``ietf-inet-types`` or ``ietf-yang-types`` with a canonical form (RFC 6991,
  RFC 9911) anywhere in the chain decides: the address types (any zone variant, link-local,
  address-and-prefix) write IPv6 per RFC 5952; the prefix types also clear the bits outside
  the prefix; ``mac-address``, ``phys-address``, ``hex-string``, ``uuid``, ``language-tag``,
  ``domain-name`` and ``host-name`` are lowercase;
* vendors define their own typedefs with the same names and meaning, outside those modules
  (OpenConfig ``oc-inet:ipv6-address``, SR Linux ``srl_nokia-comm:ip-address-with-zone``): an
  address, ``-with-zone``, ``-no-zone`` or MAC/hex/UUID name in any module is taken the same
  way; a vendor *prefix* typedef gets its address written canonically but keeps its bits (a
  vendor may put an interface address there);
* otherwise the built-in type decides (RFC 7950 section 9): integers, decimal64, boolean,
  bits, binary, identityref; strings and enumerations are taken as written;
* a union takes the canonical form of the first member type the value is valid for (RFC 7950
  section 9.12), tested on the text: ranges, lengths, patterns, enum and bit names, identities;
  so a value gets the same key from JSON and XML.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from yangkey.errors import NotificationError
from yangkey.values import (
    BitsCanon,
    Canon,
    IdentityrefCanon,
    _scalar_text,
    canon_binary,
    canon_boolean,
    canon_decimal,
    canon_integer,
    canon_ip,
    canon_lowercase,
    canon_prefix,
    canon_string,
)

if TYPE_CHECKING:
    from yangson import datatype as dt

INET = "ietf-inet-types"
YANG_TYPES = "ietf-yang-types"

_ADDRESS = frozenset(
    f"{family}-{kind}" if kind else family
    for family in ("ip-address", "ipv4-address", "ipv6-address")
    for kind in ("", "no-zone", "with-zone", "link-local", "and-prefix")
) | {"ipv4-address-and-prefix", "ipv6-address-and-prefix", "ip-address-and-prefix"}
_PREFIX = frozenset({"ip-prefix", "ipv4-prefix", "ipv6-prefix"})
_LOWERCASE_ANYWHERE = frozenset({"mac-address", "phys-address", "hex-string", "uuid"})
_LOWERCASE_STANDARD = frozenset(
    {(INET, "domain-name"), (INET, "host-name"), (YANG_TYPES, "language-tag")}
)


def typedef_chain(datatype: dt.DataType) -> tuple[tuple[str | None, str], ...]:
    """(module, typedef) from the leaf's type statement down to the built-in type."""
    chain: tuple[tuple[str | None, str], ...] | None = getattr(datatype, "typedefs", None)
    if chain is None:  # a model built without the chain: the outermost name is all there is
        return ((None, datatype.name),) if datatype.name else ()
    return chain


def _known(datatype: dt.DataType) -> Canon | None:
    for module, name in typedef_chain(datatype):
        if name in _ADDRESS:
            return canon_ip
        if name in _PREFIX:
            return canon_prefix if module == INET else canon_ip
        if name in _LOWERCASE_ANYWHERE or (module, name) in _LOWERCASE_STANDARD:
            return canon_lowercase
    return None


def canon_for(
    datatype: dt.DataType, module: str, prefixes: Mapping[str, str] | None = None
) -> Canon:
    """The canonicalizer for a leaf of ``datatype`` defined in ``module``; ``prefixes`` (the
    search path's, :attr:`yangkey.modules.ModuleIndex.unique_prefixes`) resolves identityref
    values written with a YANG prefix where the schema itself does not."""
    from yangson import datatype as dt  # noqa: PLC0415

    while isinstance(datatype, dt.LeafrefType):
        datatype = datatype.ref_type
    known = _known(datatype)
    if known is not None:
        return known
    if isinstance(datatype, dt.IntegralType):
        return canon_integer
    if isinstance(datatype, dt.Decimal64Type):
        return canon_decimal
    if isinstance(datatype, dt.BooleanType):
        return canon_boolean
    if isinstance(datatype, dt.IdentityrefType):
        return IdentityrefCanon(module, identity_prefixes(datatype), prefixes)
    if isinstance(datatype, dt.BitsType):
        return BitsCanon(dict(datatype.bit))
    if isinstance(datatype, dt.BinaryType):
        return canon_binary
    if isinstance(datatype, dt.UnionType):
        members = tuple(_member(member, module, prefixes) for member in datatype.types)
        if all(m.canon is canon_integer for m in members):
            return canon_integer
        if all(m.canon is canon_string for m in members):
            return canon_string
        return UnionCanon(members)
    return canon_string


def identity_prefixes(datatype: dt.IdentityrefType) -> dict[str, str]:
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


# --------------------------------------------------------------------------- unions


@dataclass(frozen=True)
class Member:
    """One member type of a union: whether a value's text is valid for it, and its canon."""

    canon: Canon
    kind: str
    """integer, decimal, boolean, enum, bits, identity, empty, string, binary, path
    (instance-identifier), union, any."""
    intervals: tuple[tuple[Any, Any], ...] = ()
    names: frozenset[str] = frozenset()
    patterns: tuple[tuple[re.Pattern[str], bool], ...] = ()
    members: tuple[Member, ...] = ()
    address: bool = False

    def accepts(self, text: str) -> bool:
        kind = self.kind
        if kind == "integer":
            if not re.fullmatch(r"[+-]?[0-9]+", text, re.ASCII):
                return False
            return _within(int(text), self.intervals)
        if kind == "decimal":
            try:
                number = Decimal(text)
            except InvalidOperation:
                return False
            return number.is_finite() and text.isascii() and _within(number, self.intervals)
        if kind == "boolean":
            return text in ("true", "false")
        if kind == "enum":
            return text in self.names
        if kind == "bits":
            return all(word in self.names for word in text.split())
        if kind == "identity":
            return text.rpartition(":")[2] in self.names
        if kind == "empty":
            return text == ""
        if kind == "string":
            if self.intervals and not _within(len(text), self.intervals):
                return False
            if self.address and not self.patterns:
                return _is_address(text)
            return all((regex.match(text) is not None) != invert for regex, invert in self.patterns)
        if kind == "binary":
            try:
                canon_binary(text)
            except NotificationError:
                return False
            return True
        if kind == "path":
            return text.startswith("/")
        if kind == "union":
            return any(member.accepts(text) for member in self.members)
        return True

    def __call__(self, value: Any) -> str:
        return self.canon(value)


def _within(value: Any, intervals: tuple[tuple[Any, Any], ...]) -> bool:
    return not intervals or any(low <= value <= high for low, high in intervals)


def _is_address(text: str) -> bool:
    address = text.partition("/")[0].partition("%")[0]
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return False
    return True


def _intervals(constraint: Any, default: tuple[Any, Any] | None) -> tuple[tuple[Any, Any], ...]:
    if constraint is None:
        return (default,) if default is not None else ()
    return tuple((r[0], r[0]) if len(r) == 1 else (r[0], r[1]) for r in constraint.intervals)


def _member(datatype: dt.DataType, module: str, prefixes: Mapping[str, str] | None) -> Member:
    from yangson import datatype as dt  # noqa: PLC0415

    while isinstance(datatype, dt.LeafrefType):
        datatype = datatype.ref_type
    canon = canon_for(datatype, module, prefixes)
    if isinstance(datatype, dt.UnionType):
        members = tuple(_member(member, module, prefixes) for member in datatype.types)
        return Member(canon, "union", members=members)
    if isinstance(datatype, dt.IntegralType):
        return Member(canon, "integer", _intervals(datatype.range, datatype._range))
    if isinstance(datatype, dt.Decimal64Type):
        return Member(canon, "decimal", _intervals(datatype.range, None))
    if isinstance(datatype, dt.BooleanType):
        return Member(canon, "boolean")
    if isinstance(datatype, dt.EnumerationType):
        return Member(canon, "enum", names=frozenset(datatype.enum))
    if isinstance(datatype, dt.BitsType):
        return Member(canon, "bits", names=frozenset(datatype.bit))
    if isinstance(datatype, dt.IdentityrefType):
        derived = datatype.sctx.schema_data.derived_from_all(datatype.bases)
        return Member(canon, "identity", names=frozenset(name for name, _ in derived))
    if isinstance(datatype, dt.EmptyType):
        return Member(canon, "empty")
    if isinstance(datatype, dt.BinaryType):
        return Member(canon, "binary")
    if isinstance(datatype, dt.InstanceIdentifierType):
        return Member(canon, "path")
    if isinstance(datatype, dt.StringType):
        patterns = tuple((p.regex, p.invert_match) for p in datatype.patterns)
        return Member(
            canon,
            "string",
            _intervals(datatype.length, None),
            patterns=patterns,
            address=canon in (canon_ip, canon_prefix),
        )
    return Member(canon, "any")


@dataclass(frozen=True)
class UnionCanon:
    """The canonical form of the first member type the value is valid for; a value valid for
    none is taken as written (keys do not validate)."""

    members: tuple[Member, ...]

    def __call__(self, value: Any) -> str:
        text = _scalar_text(value)
        for member in self.members:
            if member.accepts(text):
                return member.canon(value)
        return text
