"""Decoding YANG-Push notifications (RFC 8641) in JSON (RFC 7951) and XML into plain data trees.

Accepted wrappers, outermost first:

* ``ietf-telemetry-message:message`` (draft-ietf-nmop-message-broker-telemetry-message): node
  from ``network-node-manifest/name``, subscription metadata, the notification in ``payload``;
* ``ietf-yp-notification:envelope`` (draft-ietf-netconf-notif-envelope): ``event-time``,
  ``hostname``, ``sequence-number``, the notification in ``contents``;
* the NETCONF ``<notification>`` (RFC 5277) and legacy ``ietf-restconf:notification`` JSON;
* a bare ``push-update`` / ``push-change-update``.

Data trees are JSON-shaped (dicts, lists, scalars; member names qualified by module on the
first level and wherever the module changes, RFC 7951 section 4). XML is converted into the same
shape, so Phase 3 has one code path and the same data gives the same key in both encodings.
``push-change-update`` keeps its yang-patch edits (RFC 8072): operation, parsed target, value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeAlias
from urllib.parse import unquote_to_bytes

import orjson
from lxml import etree

from yangkey.errors import InputError, NotificationError
from yangkey.messages import CONTENT_TYPE_JSON, CONTENT_TYPE_XML
from yangkey.values import UINT32_MAX, QNameText, node_name_problem, parse_unsigned
from yangkey.xmlsafe import parse_xml

NS_TELEMETRY = "urn:ietf:params:xml:ns:yang:ietf-telemetry-message"
_loads = orjson.loads
_dumps = orjson.dumps

Kind = Literal["push-update", "push-change-update"]

#: RFC 8072 section 2.5: the yang-patch edit operations.
OPERATIONS = frozenset({"create", "delete", "insert", "merge", "move", "replace", "remove"})
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


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
converted only along it (:func:`decode`'s ``wanted``)."""


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


def _local(member: str) -> str:
    return member.rpartition(":")[2]


def _find(obj: Mapping[str, Any], name: str) -> Any:
    """Member ``name`` whether or not it carries a module qualifier."""
    value = obj.get(name)
    if value is not None:
        return value
    for member, candidate in obj.items():
        if _local(member) == name:
            return candidate
    return None


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


def _subscription_id(value: Any, source: str) -> int | None:
    """RFC 8639 subscription-id: uint32, as a JSON number or (XML, lenient JSON) decimal text."""
    if value is None:
        return None
    number = parse_unsigned(value, UINT32_MAX)
    if number is None:
        raise NotificationError(
            f"subscription id {value!r} is not a uint32 (ASCII digits, 0..{UINT32_MAX})",
            source=source,
        )
    return number


def _sequence_number(value: Any, source: str) -> int | None:
    """The envelope's sequence-number: a yang:counter32."""
    if value is None:
        return None
    number = parse_unsigned(value, UINT32_MAX)
    if number is None:
        raise NotificationError(
            f"sequence-number {value!r} is not a uint32 (ASCII digits, 0..{UINT32_MAX})",
            source=source,
        )
    return number


def _operation(value: Any, source: str) -> str:
    # The type first: a list or an object is unhashable, and no operation.
    if not isinstance(value, str) or value not in OPERATIONS:
        raise NotificationError(
            f"yang-patch operation {value!r} is not one of {', '.join(sorted(OPERATIONS))}",
            source=source,
        )
    return str(value)


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
    if type(push) is not dict:
        return None
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


def _json_notification(obj: Any, source: str, note: Notification) -> Notification:
    if not isinstance(obj, dict):
        raise NotificationError("a notification must be a JSON object", source=source)
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
                raise NotificationError("telemetry message has no payload", source=source)
            return _json_notification(payload, source, note)
        if local == "envelope" and isinstance(body, dict):
            note.event_time = body.get("event-time", note.event_time)
            note.node = _node_name(body.get("hostname"), "hostname", source) or note.node
            note.sequence_number = _sequence_number(body.get("sequence-number"), source)
            contents = body.get("contents")
            if contents is None:
                raise NotificationError("envelope has no contents", source=source)
            return _json_notification(contents, source, note)
        if local == "notification" and isinstance(body, dict):
            note.event_time = body.get("eventTime", note.event_time)
            rest = {k: v for k, v in body.items() if k != "eventTime"}
            return _json_notification(rest, source, note)
        if local in ("push-update", "push-change-update") and isinstance(body, dict):
            return _json_push(local, body, source, note)
    members = ", ".join(list(obj)[:5]) or "none"
    raise NotificationError(
        f"no push-update or push-change-update found (top-level members: {members})",
        source=source,
    )


def _json_push(kind: str, body: dict[str, Any], source: str, note: Notification) -> Notification:
    note.kind = "push-update" if kind == "push-update" else "push-change-update"
    subscription_id = body.get("id")
    note.subscription_id = (
        subscription_id
        if type(subscription_id) is int and 0 <= subscription_id <= 0xFFFFFFFF
        else _subscription_id(subscription_id, source)
    )
    if note.kind == "push-update":
        contents = body.get("datastore-contents", {})
        if not isinstance(contents, dict):
            raise NotificationError("datastore-contents must be an object", source=source)
        note.data = contents
        return note
    changes = body.get("datastore-changes")
    patch = _find(changes, "yang-patch") if isinstance(changes, dict) else None
    if not isinstance(patch, dict):
        raise NotificationError(
            "push-change-update has no datastore-changes/yang-patch", source=source
        )
    edits = patch.get("edit", [])
    if not isinstance(edits, list):
        raise NotificationError("yang-patch edit must be a list", source=source)
    parsed: list[Edit] = []
    targets = _TARGETS
    for edit in edits:
        if not isinstance(edit, dict):
            raise NotificationError("yang-patch edit without target or operation", source=source)
        target = edit.get("target")
        operation = edit.get("operation")
        if (target is None and "target" not in edit) or (
            operation is None and "operation" not in edit
        ):
            raise NotificationError("yang-patch edit without target or operation", source=source)
        edit_id = edit.get("edit-id", "")
        value = edit.get("value")
        if type(target) is not str:
            target = str(target)
        steps = targets.get(target)
        parsed.append(
            Edit(
                edit_id if type(edit_id) is str else str(edit_id),
                operation
                if type(operation) is str and operation in OPERATIONS
                else _operation(operation, source),
                steps if steps is not None else parse_target(target, source),
                value if isinstance(value, dict) else None,
            )
        )
    note.edits = tuple(parsed)
    return note


# ---------------------------------------------------------------------------------------- XML


_TagTrie: TypeAlias = "tuple[tuple[str, ...], dict[str, _TagTrie | None]]"
"""A :data:`Wanted` in lxml tags: the tags to read at a level, and what to read below each."""


class _XmlConverter:
    """XML elements -> the JSON-shaped tree, with namespaces mapped to module names.

    One per namespace map (:func:`_converter`), so the tag splits it caches serve every
    notification."""

    def __init__(self, ns_modules: Mapping[str, str]) -> None:
        self.ns_modules = ns_modules
        self.names: dict[tuple[str, str | None], tuple[str, str]] = {}
        """(tag, parent module) -> (member name, module): tags repeat, each is split once."""
        self.namespaces: dict[str, list[str]] = {}
        for ns, module in ns_modules.items():
            self.namespaces.setdefault(module, []).append(ns)
        self.tries: dict[int, tuple[Wanted, _TagTrie]] = {}

    def module(self, ns: str) -> str:
        return self.ns_modules.get(ns, "{" + ns + "}")

    def leaf(self, element: etree._Element) -> str:
        text = element.text or ""
        prefix, colon, name = text.partition(":")
        if colon and prefix and " " not in text:
            ns = element.nsmap.get(prefix)
            if ns is not None and ns in self.ns_modules:
                return QNameText(text, f"{self.ns_modules[ns]}:{name}")
        return text

    def name(self, tag: str, parent_module: str | None) -> tuple[str, str]:
        ns, local = _split(tag)
        module = self.module(ns)
        named = (local if module == parent_module else f"{module}:{local}", module)
        if len(self.names) >= 100_000:
            self.names.clear()  # tags come from the input: the cache must not grow without end
        self.names[(tag, parent_module)] = named
        return named

    def members(
        self, children: Iterable[etree._Element], parent_module: str | None
    ) -> dict[str, Any]:
        result: dict[str, Any] = {}
        repeated: set[str] = set()
        names = self.names
        for child in children:
            tag = child.tag
            if type(tag) is not str:
                continue  # the parser drops comments and PIs; parse_xml refuses entities
            member, module = names.get((tag, parent_module)) or self.name(tag, parent_module)
            # len() counts element children only, now that nothing else can be a child.
            value = self.members(child, module) if len(child) else self.leaf(child)
            if member in result:
                if member not in repeated:
                    result[member] = [result[member]]
                    repeated.add(member)
                result[member].append(value)
            else:
                result[member] = value
        return result

    def trie(self, wanted: Wanted) -> _TagTrie:
        cached = self.tries.get(id(wanted))
        if cached is not None and cached[0] is wanted:
            return cached[1]
        if len(self.tries) >= 1024:
            self.tries.clear()
        trie = self._trie(wanted)
        self.tries[id(wanted)] = (wanted, trie)  # the Wanted kept alive: its id stays its own
        return trie

    def _trie(self, wanted: Wanted) -> _TagTrie:
        below: dict[str, _TagTrie | None] = {}
        for (module, local), inner in wanted.items():
            for ns in self.namespaces.get(module, ()):
                below[f"{{{ns}}}{local}"] = None if inner is None else self._trie(inner)
        return tuple(below), below

    def pruned(
        self, element: etree._Element, parent_module: str | None, trie: _TagTrie
    ) -> dict[str, Any]:
        """:meth:`members` of ``element`` along ``trie`` only: lxml filters the children by
        tag in C, so the members no walker reads never become Python objects. An element with
        element children is a dict and one without is text, whatever is left out: the
        walkers' type checks see what the full conversion gives."""
        tags, below = trie
        result: dict[str, Any] = {}
        if not tags:
            return result
        repeated: set[str] = set()
        names = self.names
        for child in element.iterchildren(*tags):
            tag = child.tag
            member, module = names.get((tag, parent_module)) or self.name(tag, parent_module)
            value: Any
            if len(child):
                inner = below[tag]
                value = (
                    self.members(child, module)
                    if inner is None
                    else self.pruned(child, module, inner)
                )
            else:
                value = self.leaf(child)
            if member in result:
                if member not in repeated:
                    result[member] = [result[member]]
                    repeated.add(member)
                result[member].append(value)
            else:
                result[member] = value
        return result


_CONVERTERS: dict[int, tuple[Mapping[str, str], _XmlConverter]] = {}


def _converter(ns_modules: Mapping[str, str]) -> _XmlConverter:
    """The converter of a namespace map (a schema index's, built once and never changed)."""
    cached = _CONVERTERS.get(id(ns_modules))
    if cached is not None and cached[0] is ns_modules:
        return cached[1]
    if len(_CONVERTERS) >= 64:
        _CONVERTERS.clear()
    converter = _XmlConverter(ns_modules)
    _CONVERTERS[id(ns_modules)] = (ns_modules, converter)
    return converter


def _split(tag: Any) -> tuple[str, str]:
    """``{namespace}local`` -> (namespace, local); string ops, as etree.QName is slow."""
    if tag[0] == "{":
        ns, _, local = tag[1:].partition("}")
        return ns, local
    return "", tag


def _local_tag(element: etree._Element) -> str | None:
    tag = element.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else None


class _Children(dict[str, etree._Element]):
    """Child elements by local name (the first of each); ``repeated`` names appear twice."""

    __slots__ = ("repeated", "source")

    def __init__(self, element: etree._Element, source: str) -> None:
        super().__init__()
        self.repeated: set[str] = set()
        self.source = source
        for child in element:
            tag = child.tag
            if isinstance(tag, str):
                name = tag.rpartition("}")[2]
                if name in self:
                    self.repeated.add(name)
                else:
                    self[name] = child

    def one(self, name: str) -> etree._Element | None:
        """The child ``name``; an error if it appears twice (which one would a reader take?)."""
        if name in self.repeated:
            raise NotificationError(f"element <{name}> appears more than once", source=self.source)
        return self.get(name)


def _text(kids: _Children, name: str) -> str | None:
    child = kids.one(name)
    return None if child is None else (child.text or "").strip()


def _name_text(kids: _Children, name: str, what: str) -> str | None:
    """A node name as written: not stripped, so XML and JSON agree on what is a valid name."""
    child = kids.one(name)
    return None if child is None else _node_name(child.text, what, kids.source)


def _first_element(element: etree._Element | None) -> etree._Element | None:
    if element is None:
        return None
    return next((c for c in element if isinstance(c.tag, str)), None)


Selector = Callable[[Notification], "Wanted | None"]
"""Given the notification's node and subscription id, what its key derivation reads."""


def _xml_notification(
    element: etree._Element,
    source: str,
    note: Notification,
    conv: _XmlConverter,
    wanted: Selector | None = None,
) -> Notification:
    namespace, local = _split(element.tag)
    kids = _Children(element, source)
    if local == "message" and namespace == NS_TELEMETRY:
        manifest = kids.one("network-node-manifest")
        if manifest is not None and note.node is None:
            note.node = _name_text(
                _Children(manifest, source), "name", "network-node-manifest name"
            )
        metadata = kids.one("telemetry-message-metadata")
        if metadata is not None:
            meta = _Children(metadata, source)
            subscription = meta.one("yang-push-subscription")
            if subscription is not None:
                members = conv.members([c for c in subscription if isinstance(c.tag, str)], None)
                note.subscription = {_local(k): v for k, v in members.items()}
                xpath_filter = _Children(subscription, source).one("xpath-filter")
                if xpath_filter is not None:
                    # Prefixes in an XML xpath-filter are XML namespace prefixes in scope.
                    note.subscription["namespaces"] = {
                        prefix: uri for prefix, uri in xpath_filter.nsmap.items() if prefix
                    }
            note.event_time = note.event_time or _text(meta, "node-export-timestamp")
        inner = _first_element(kids.one("payload"))
        if inner is None:
            raise NotificationError("telemetry message has no payload", source=source)
        return _xml_notification(inner, source, note, conv, wanted)
    if local == "envelope":
        note.event_time = _text(kids, "event-time") or note.event_time
        note.node = _name_text(kids, "hostname", "hostname") or note.node
        note.sequence_number = _sequence_number(_text(kids, "sequence-number"), source)
        inner = _first_element(kids.one("contents"))
        if inner is None:
            raise NotificationError("envelope has no contents", source=source)
        return _xml_notification(inner, source, note, conv, wanted)
    if local == "notification":
        note.event_time = _text(kids, "eventTime") or note.event_time
        note.node = _name_text(kids, "hostname", "hostname") or note.node
        sequence = _text(kids, "sequence-number")
        if sequence is not None:
            note.sequence_number = _sequence_number(sequence, source)
        push = kids.one("push-update")
        if push is None:
            push = kids.one("push-change-update")
        if push is None:
            raise NotificationError("NETCONF notification carries no push-update", source=source)
        return _xml_notification(push, source, note, conv, wanted)
    if local in ("push-update", "push-change-update"):
        note.kind = "push-update" if local == "push-update" else "push-change-update"
        note.subscription_id = _subscription_id(_text(kids, "id"), source)
        if note.kind == "push-update":
            contents = kids.one("datastore-contents")
            selected = None if wanted is None or contents is None else wanted(note)
            if selected is not None:
                assert contents is not None
                note.data = conv.pruned(contents, None, conv.trie(selected))
            else:
                children = [] if contents is None else list(contents)
                note.data = conv.members(children, None)
            return note
        changes = kids.one("datastore-changes")
        patch = None if changes is None else _Children(changes, source).one("yang-patch")
        if patch is None:
            raise NotificationError(
                "push-change-update has no datastore-changes/yang-patch", source=source
            )
        edits: list[Edit] = []
        for edit in patch:
            if _local_tag(edit) != "edit":
                continue
            fields = _Children(edit, source)
            target = _text(fields, "target")
            operation = _text(fields, "operation")
            if target is None or operation is None:
                raise NotificationError(
                    "yang-patch edit without target or operation", source=source
                )
            value_element = fields.one("value")
            value = None
            if value_element is not None:
                value = conv.members([c for c in value_element if isinstance(c.tag, str)], None)
            edits.append(
                Edit(
                    _text(fields, "edit-id") or "",
                    _operation(operation, source),
                    parse_target(target, source),
                    value,
                )
            )
        note.edits = tuple(edits)
        return note
    raise NotificationError(
        f"no push-update or push-change-update found (root element <{local}>)", source=source
    )


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
            obj, source, Notification(source, CONTENT_TYPE_JSON, "push-update")
        )
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    start = data[:1]
    if start not in (b"{", b"<"):
        start = data.lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
    if start == b"<":
        root = parse_xml(data, source)
        note = Notification(source, CONTENT_TYPE_XML, "push-update")
        return _xml_notification(root, source, note, _converter(ns_modules), wanted)
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
        return _json_notification(obj, source, note)
    if not data.strip():
        raise InputError("empty notification", source=source)
    raise InputError(
        "not a JSON or XML notification (first byte is neither '{' nor '<')", source=source
    )
