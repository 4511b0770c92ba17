"""Decoding YANG-Push notifications (RFC 8641) in JSON (RFC 7951) and XML into plain data trees.

Accepted wrappers, outermost first:

* ``ietf-telemetry-message:message`` (draft-ietf-nmop-message-broker-telemetry-message): node
  from ``network-node-manifest/name``, subscription metadata, the notification in ``payload``;
* ``ietf-yp-notification:envelope`` (draft-ietf-netconf-notif-envelope): ``event-time``,
  ``hostname``, ``sequence-number``, the notification in ``contents``;
* the NETCONF ``<notification>`` (RFC 5277) and legacy ``ietf-restconf:notification`` JSON;
* a bare ``push-update`` / ``push-change-update``.

Data trees are JSON-shaped (dicts, lists, scalars; member names qualified by module on the
first level and wherever the module changes, RFC 7951 section 4). XML
(:mod:`yangkey.xmlnotifications`) is converted into the same shape, so Phase 3 has one code path
and the same data gives the same key in both encodings.
``push-change-update`` keeps its yang-patch edits (RFC 8072): operation, parsed target, value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

from yangkey.errors import FramingError, InputError, NotificationError, ShapeError
from yangkey.messages import CONTENT_TYPE_JSON
from yangkey.notification_model import (
    _TARGETS,
    OPERATIONS,
    PUSH_HEADER,
    Edit,
    Kind,
    Notification,
    Selector,
    TargetStep,
    Wanted,
    _local,
    _node_name,
    _operation,
    _sequence_number,
    _subscription_id,
    clear_target_cache,
    parse_target,
)
from yangkey.values import UINT32_MAX, node_name_problem
from yangkey.xmlnotifications import decode_xml, xml_contents

# The model's names stay importable from here, where the decoder's callers look for them.
__all__ = [
    "Edit",
    "Notification",
    "Selector",
    "TargetStep",
    "Wanted",
    "clear_target_cache",
    "decode",
    "parse_target",
]

_loads = orjson.loads
_dumps = orjson.dumps


def _find(obj: Mapping[str, Any], name: str) -> Any:
    """Member ``name`` whether or not it carries a module qualifier."""
    value = obj.get(name)
    if value is not None:
        return value
    for member, candidate in obj.items():
        if _local(member) == name:
            return candidate
    return None


def _reject_duplicate_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise _DuplicateMember(name)
            seen.add(name)
    return obj


class _DuplicateMember(Exception):
    pass


def _check_unique_members(data: bytes, obj: Any, source: str) -> None:
    """Refuse an object with a member twice (``"hostname":"pe1","hostname":"evil"``): JSON
    parsers keep the last one, so the key would depend on which one a reader picks.

    orjson cannot report duplicates. When orjson writes the parsed tree back byte for byte,
    the input had none (a dict has no duplicate keys); only other spellings (whitespace,
    escapes, number formats) pay for a second, checking parse. :func:`decode` makes the
    byte-for-byte comparison itself on its hot path and calls this only when it fails.
    """
    try:
        if orjson.dumps(obj) == data.strip():
            return
    except orjson.JSONEncodeError:
        pass  # nested deeper than orjson writes: check the slow way
    try:
        json.loads(data, object_pairs_hook=_reject_duplicate_members)
    except _DuplicateMember as exc:
        raise NotificationError(
            f"JSON object has member {exc.args[0]!r} more than once", source=source
        ) from None
    except RecursionError:
        raise NotificationError("JSON nested too deeply", source=source) from None


# --------------------------------------------------------------------------------------- JSON


def _envelope_push(obj: Any, source: str) -> Notification | None:
    """The common case, a push-update or push-change-update in an envelope with well-typed
    fields, decoded without the general member scan; None sends anything else down the
    general path."""
    # Subscripts in one try: a missing member (KeyError) or a level that is no object
    # (TypeError: among decoded values only a dict takes a string subscript; len() of a number
    # or null raises it too) sends the notification down the general path.
    try:
        if len(obj) != 1:
            return None
        envelope = obj["ietf-yp-notification:envelope"]
        contents = envelope["contents"]
        hostname = envelope["hostname"]
        sequence = envelope["sequence-number"]
        if len(contents) != 1:
            return None
        # .get: a push-change-update is common too, and raising costs more than a lookup.
        push = contents.get("ietf-yang-push:push-update")
        if push is None:
            return _envelope_change(obj, source)
        subscription_id = push["id"]
        data = push["datastore-contents"]
    except (KeyError, TypeError, AttributeError):  # AttributeError: .get of a list or string
        return _envelope_change(obj, source)
    if (
        type(data) is dict
        and type(hostname) is str
        and type(sequence) is int
        and type(subscription_id) is int
        and 0 <= sequence <= UINT32_MAX
        and 0 <= subscription_id <= UINT32_MAX
        and node_name_problem(hostname) is None
    ):
        return Notification(
            source,
            CONTENT_TYPE_JSON,
            "push-update",
            hostname or None,
            subscription_id,
            envelope.get("event-time"),
            sequence,
            data,
        )
    return _envelope_change(obj, source)


def _envelope_change(obj: Any, source: str) -> Notification | None:
    """:func:`_envelope_push` for anything but a well-typed push-update: a push-change-update
    goes the fast way too, when the envelope is well typed."""
    if type(obj) is not dict or len(obj) != 1:
        return None
    envelope = obj.get("ietf-yp-notification:envelope")
    if type(envelope) is not dict:
        return None
    contents = envelope.get("contents")
    if type(contents) is not dict or len(contents) != 1:
        return None
    hostname = envelope.get("hostname")
    sequence = envelope.get("sequence-number")
    if (
        type(hostname) is not str
        or node_name_problem(hostname) is not None
        or type(sequence) is not int
        or not 0 <= sequence <= UINT32_MAX
    ):
        return None
    push = contents.get("ietf-yang-push:push-update")
    kind: Kind = "push-update"
    if push is None:
        push = contents.get("ietf-yang-push:push-change-update")
        kind = "push-change-update"
    if type(push) is not dict or (kind == "push-update" and "datastore-contents" not in push):
        return None  # a legacy framing (datastore-contents-xml) or none: the general path
    note = Notification(
        source,
        CONTENT_TYPE_JSON,
        kind,
        hostname or None,
        None,
        envelope.get("event-time"),
        sequence,
    )
    return _json_push(kind, push, source, note)


def _unread(member: str) -> bool:
    """A push-update member no decoder reads that may hold its data: unqualified (RFC 8641
    defines none beyond its header) or named like contents; other qualified members are
    metadata of augmenting modules (message-publisher-id, observation-domain-id)."""
    local = _local(member)
    return local not in PUSH_HEADER and (":" not in member or "content" in local)


def _json_text_contents(text: Any, source: str) -> Any:
    """``datastore-contents-json`` of the pre-RFC 8641 drafts: the contents as an object, or
    as JSON text."""
    if not isinstance(text, str):
        return text
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON in datastore-contents-json: {exc}", source=source
        ) from None


def _xml_text_contents(
    text: Any, source: str, ns_modules: Mapping[str, str] | None
) -> dict[str, Any]:
    """IOS-XE's ``datastore-contents-xml``: the datastore contents as XML text."""
    if not isinstance(text, str):
        raise FramingError(
            "datastore-contents-xml must be a string of XML, not " + type(text).__name__,
            source=source,
        )
    return xml_contents(text.encode("utf-8"), source, ns_modules or {})


def _json_notification(
    obj: Any, source: str, note: Notification, ns_modules: Mapping[str, str] | None = None
) -> Notification:
    """The general JSON decoder; ``ns_modules`` reads XML text inside the JSON
    (``datastore-contents-xml``)."""
    if not isinstance(obj, dict):
        raise FramingError("a notification must be a JSON object", source=source)
    for member, body in obj.items():
        local = _local(member)
        if local == "message" and isinstance(body, dict):
            manifest = _find(body, "network-node-manifest")
            if isinstance(manifest, dict) and note.node is None:
                note.node = _node_name(manifest.get("name"), "network-node-manifest name", source)
            metadata = _find(body, "telemetry-message-metadata")
            if isinstance(metadata, dict):
                subscription = _find(metadata, "yang-push-subscription")
                if isinstance(subscription, dict):
                    note.subscription = subscription
                if note.event_time is None:
                    note.event_time = metadata.get("node-export-timestamp") or metadata.get(
                        "collection-timestamp"
                    )
            payload = _find(body, "payload")
            if payload is None:
                raise FramingError("telemetry message has no payload", source=source)
            return _json_notification(payload, source, note, ns_modules)
        if local == "envelope" and isinstance(body, dict):
            note.event_time = body.get("event-time", note.event_time)
            note.node = _node_name(body.get("hostname"), "hostname", source) or note.node
            note.sequence_number = _sequence_number(body.get("sequence-number"), source)
            contents = body.get("contents")
            if contents is None:
                raise FramingError("envelope has no contents", source=source)
            return _json_notification(contents, source, note, ns_modules)
        if local == "notification" and isinstance(body, dict):
            # RFC 8040 section 6.4 (JSON of RFC 5277's <notification>), with the legacy
            # sequencing members (draft-tgraf-netconf-notif-sequencing) Huawei VRP sends:
            # sysName is the node name, as the envelope's hostname.
            note.event_time = body.get("eventTime", note.event_time)
            sys_name = _find(body, "sysName")
            note.node = _node_name(sys_name, "sysName", source) or note.node
            sequence = _find(body, "sequenceNumber")
            if sequence is not None:
                note.sequence_number = _sequence_number(sequence, source)
            rest = {k: v for k, v in body.items() if _local(k) not in _NOTIFICATION_HEADER}
            return _json_notification(rest, source, note, ns_modules)
        if local in ("push-update", "push-change-update") and isinstance(body, dict):
            return _json_push(local, body, source, note, ns_modules)
    members = ", ".join(list(obj)[:5]) or "none"
    raise FramingError(
        f"no push-update or push-change-update found (top-level members: {members})",
        source=source,
    )


_NOTIFICATION_HEADER = frozenset({"eventTime", "sysName", "sequenceNumber"})


def _json_push(
    kind: str,
    body: dict[str, Any],
    source: str,
    note: Notification,
    ns_modules: Mapping[str, str] | None = None,
) -> Notification:
    note.kind = "push-update" if kind == "push-update" else "push-change-update"
    subscription_id = body.get("id")
    if subscription_id is None:
        # The pre-RFC 8639 name (draft-ietf-netconf-yang-push), which IOS-XE still sends.
        subscription_id = body.get("subscription-id")
    note.subscription_id = (
        subscription_id
        if type(subscription_id) is int and 0 <= subscription_id <= 0xFFFFFFFF
        else _subscription_id(subscription_id, source)
    )
    if note.kind == "push-update":
        contents = body.get("datastore-contents")
        if contents is None and "datastore-contents-xml" in body:
            contents = _xml_text_contents(body["datastore-contents-xml"], source, ns_modules)
        elif contents is None and "datastore-contents-json" in body:
            contents = _json_text_contents(body["datastore-contents-json"], source)
        elif contents is None:
            others = [m for m in body if _unread(m)]
            if others:
                raise FramingError(
                    f"push-update has no datastore-contents but {', '.join(others[:5])}: no"
                    " framing yangkey reads",
                    source=source,
                )
            contents = {}
        if not isinstance(contents, dict):
            raise ShapeError(
                "datastore-contents must be an object (RFC 7951), not " + type(contents).__name__,
                source=source,
            )
        note.data = contents
        return note
    changes = body.get("datastore-changes")
    patch = _find(changes, "yang-patch") if isinstance(changes, dict) else None
    if not isinstance(patch, dict):
        raise FramingError("push-change-update has no datastore-changes/yang-patch", source=source)
    edits = patch.get("edit", [])
    if not isinstance(edits, list):
        raise NotificationError("yang-patch edit must be a list", source=source)
    parsed: list[Edit] = []
    targets = _TARGETS
    new = tuple.__new__  # Edit(...) without its Python-level __new__: this loop is per edit
    for edit in edits:
        if not isinstance(edit, dict):
            raise NotificationError("yang-patch edit without target or operation", source=source)
        target = edit.get("target")
        operation = edit.get("operation")
        if type(target) is not str or type(operation) is not str or operation not in OPERATIONS:
            if (target is None and "target" not in edit) or (
                operation is None and "operation" not in edit
            ):
                raise NotificationError(
                    "yang-patch edit without target or operation", source=source
                )
            operation = _operation(operation, source)
            target = str(target)
        edit_id = edit.get("edit-id", "")
        value = edit.get("value")
        parsed.append(
            new(
                Edit,
                (
                    edit_id if type(edit_id) is str else str(edit_id),
                    operation,
                    targets.get(target) or parse_target(target, source),
                    value if type(value) is dict else None,
                ),
            )
        )
    note.edits = tuple(parsed)
    return note


def decode(
    raw: bytes | str,
    source: str,
    ns_modules: Mapping[str, str],
    wanted: Selector | None = None,
) -> Notification:
    """Bytes of one notification -> :class:`Notification`; errors name ``source``.

    ``wanted``: for an XML push-update, called with the notification once its node and
    subscription id are known; what it returns (a :class:`~yangkey.keys.KeyDeriver`'s
    ``wanted``) limits ``data`` to what that derivation reads. None converts everything.
    """
    if type(raw) is bytes and raw[:1] == b"{":
        # The hot path: a JSON object as producers write it, compact, so that orjson writing
        # the tree back gives the same bytes (no member was there twice, see
        # _check_unique_members), in an envelope the fast path reads.
        try:
            obj = _loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"malformed JSON: {exc}", source=source) from None
        try:
            same = _dumps(obj) == raw
        except orjson.JSONEncodeError:
            same = False
        if not same:
            _check_unique_members(raw, obj, source)
        fast = _envelope_push(obj, source)
        if fast is not None:
            return fast
        return _json_notification(
            obj, source, Notification(source, CONTENT_TYPE_JSON, "push-update"), ns_modules
        )
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    start = data[:1]
    if start not in (b"{", b"<"):
        start = data.lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
    if start == b"<":
        return decode_xml(data, source, ns_modules, wanted)
    if start in (b"{", b"["):
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"malformed JSON: {exc}", source=source) from None
        _check_unique_members(data, obj, source)
        fast = _envelope_push(obj, source)
        if fast is not None:
            return fast
        note = Notification(source, CONTENT_TYPE_JSON, "push-update")
        return _json_notification(obj, source, note, ns_modules)
    if not data.strip():
        raise InputError("empty notification", source=source)
    raise InputError(
        "not a JSON or XML notification (first byte is neither '{' nor '<')", source=source
    )
