"""What a decoded YANG-Push notification is, whatever its encoding: :class:`Notification`, its
yang-patch :class:`Edit` list with parsed targets (RFC 8072, RFC 8040 section 3.5.3), and the
checks of its header fields that the JSON (:mod:`yangkey.notifications`) and XML
(:mod:`yangkey.xmlnotifications`) decoders share.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeAlias
from urllib.parse import unquote_to_bytes

from yangkey.errors import NotificationError
from yangkey.values import UINT32_MAX, node_name_problem, parse_unsigned

NS_TELEMETRY = "urn:ietf:params:xml:ns:yang:ietf-telemetry-message"

Kind = Literal["push-update", "push-change-update"]

#: RFC 8072 section 2.5: the yang-patch edit operations.
OPERATIONS = frozenset({"create", "delete", "insert", "merge", "move", "replace", "remove"})
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
#: push-update members besides its data (RFC 8641, and the ``subscription-id`` of the
#: pre-RFC 8639 yang-push drafts, which IOS-XE still sends).
PUSH_HEADER = frozenset({"id", "subscription-id", "incomplete-update"})


class TargetStep(NamedTuple):
    # NamedTuples, not frozen dataclasses: built per edit, and hashed in C when a parsed
    # target is a cache key.
    module: str
    name: str
    keys: tuple[str, ...] | None
    """Percent-decoded ``=k1,k2`` values, or None when the step names no instance."""


class Edit(NamedTuple):
    """One yang-patch edit: ``value`` is the data at ``target`` (None for delete/remove)."""

    edit_id: str
    operation: str
    target: tuple[TargetStep, ...]
    value: Any


Wanted: TypeAlias = "dict[tuple[str, str], Wanted | None]"
"""The data a key derivation reads: (module, local name) of each member it looks up at a
level -> what it reads below that member (None: everything). XML push-update contents are
converted only along it (:func:`yangkey.notifications.decode`'s ``wanted``)."""


@dataclass(slots=True)
class Notification:
    source: str
    content_type: str
    kind: Kind
    node: str | None = None
    subscription_id: int | None = None
    event_time: str | None = None
    sequence_number: int | None = None
    data: dict[str, Any] = field(default_factory=dict)
    """push-update: the datastore contents (top-level members module-qualified)."""
    edits: tuple[Edit, ...] = ()
    subscription: dict[str, Any] | None = None
    """yang-push-subscription metadata of a telemetry message, when present."""
    pruned: bool = False
    """push-update: ``data`` holds only what the key derivation reads (XML, ``wanted``), so an
    empty ``data`` is no empty update."""

    @property
    def empty(self) -> bool:
        """An update without data: a push-update with no (or empty) datastore-contents, a
        push-change-update without edits. Devices send these as heartbeats."""
        if self.kind == "push-update":
            return not self.data and not self.pruned
        return not self.edits


def _local(member: str) -> str:
    return member.rpartition(":")[2]


_TARGETS: dict[str, tuple[TargetStep, ...]] = {}
_TARGETS_MAX = 65536


def parse_target(target: str, source: str) -> tuple[TargetStep, ...]:
    """A RESTCONF data resource identifier (RFC 8040 section 3.5.3): ``/m:a/b=k1,k2/m2:c``.

    Targets repeat from one on-change notification to the next (the same interfaces change
    again): each text is parsed once, and the same tuple returned after that.
    """
    steps = _TARGETS.get(target)
    if steps is None:
        steps = _parse_target(target, source)
        if len(_TARGETS) >= _TARGETS_MAX:
            _TARGETS.clear()
        _TARGETS[target] = steps
    return steps


def clear_target_cache() -> None:
    """Forget every parsed target (benchmarks measure the first sight of a target with it)."""
    _TARGETS.clear()


def _parse_target(target: str, source: str) -> tuple[TargetStep, ...]:
    if not target.startswith("/"):
        raise NotificationError(f"yang-patch target {target!r} must start with '/'", source=source)
    steps: list[TargetStep] = []
    module: str | None = None
    for segment in target.strip("/").split("/"):
        if not segment:
            continue
        identifier, equals, key_text = segment.partition("=")
        prefix, colon, name = identifier.rpartition(":")
        if colon:
            module = prefix
        elif module is None:
            raise NotificationError(
                f"yang-patch target {target!r}: first step must be module-qualified", source=source
            )
        if not equals:
            keys = None
        elif "%" in key_text:
            keys = tuple(_percent_decode(k, target, source) for k in key_text.split(","))
        else:
            keys = tuple(key_text.split(","))
        steps.append(TargetStep(module, name, keys))
    if not steps:
        raise NotificationError(
            "yang-patch target '/' (the whole datastore) names no instance", source=source
        )
    return tuple(steps)


def _percent_decode(text: str, target: str, source: str) -> str:
    """Strict RFC 3986 percent-decoding: ``%zz`` or bytes that are not UTF-8 are refused rather
    than kept or replaced, so one key value has one spelling."""
    if _BAD_PERCENT.search(text):
        raise NotificationError(
            f"yang-patch target {target!r}: '%' not followed by two hex digits", source=source
        )
    try:
        return unquote_to_bytes(text).decode("utf-8")
    except UnicodeDecodeError:
        raise NotificationError(
            f"yang-patch target {target!r}: percent-encoded bytes are not UTF-8", source=source
        ) from None


def _node_name(value: Any, what: str, source: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise NotificationError(
            f"{what} must be a string, not {type(value).__name__}", source=source
        )
    problem = node_name_problem(value)
    if problem is not None:
        raise NotificationError(f"{what} {value!r} {problem}", source=source)
    return value


def _uint32(value: Any, what: str, source: str) -> int | None:
    if value is None:
        return None
    number = parse_unsigned(value, UINT32_MAX)
    if number is None:
        raise NotificationError(
            f"{what} {value!r} is not a uint32 (ASCII digits, 0..{UINT32_MAX})", source=source
        )
    return number


def _subscription_id(value: Any, source: str) -> int | None:
    """RFC 8639 subscription-id: uint32, as a JSON number or (XML, lenient JSON) decimal text."""
    return _uint32(value, "subscription id", source)


def _sequence_number(value: Any, source: str) -> int | None:
    """The envelope's sequence-number: a yang:counter32."""
    return _uint32(value, "sequence-number", source)


def _operation(value: Any, source: str) -> str:
    # The type first: a list or an object is unhashable, and no operation.
    if not isinstance(value, str) or value not in OPERATIONS:
        raise NotificationError(
            f"yang-patch operation {value!r} is not one of {', '.join(sorted(OPERATIONS))}",
            source=source,
        )
    return str(value)


Selector = Callable[[Notification], "Wanted | None"]
"""Given the notification's node and subscription id, what its key derivation reads."""
