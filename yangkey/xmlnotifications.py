"""XML YANG-Push notifications (RFC 8641, RFC 6020 encoding) -> :class:`Notification`.

The elements are converted into the JSON-shaped tree of RFC 7951 (namespaces mapped to module
names), so key derivation has one code path and the same data gives the same key in both
encodings. :func:`yangkey.notifications.decode` sends every document starting with ``<`` here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from lxml import etree

from yangkey.errors import FramingError, NotificationError
from yangkey.messages import CONTENT_TYPE_XML
from yangkey.notification_model import (
    NS_TELEMETRY,
    PUSH_HEADER,
    Edit,
    Notification,
    Selector,
    _local,
    _node_name,
    _operation,
    _sequence_number,
    _subscription_id,
    parse_target,
)
from yangkey.values import UINT32_MAX, node_name_problem, parse_unsigned
from yangkey.xmlsafe import parse_xml
from yangkey.xmltree import XmlConverter, converter_for, split_tag


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


def _xml_notification(
    element: etree._Element,
    source: str,
    note: Notification,
    conv: XmlConverter,
    wanted: Selector | None = None,
) -> Notification:
    namespace, local = split_tag(element.tag)
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
            raise FramingError("telemetry message has no payload", source=source)
        return _xml_notification(inner, source, note, conv, wanted)
    if local == "envelope":
        note.event_time = _text(kids, "event-time") or note.event_time
        note.node = _name_text(kids, "hostname", "hostname") or note.node
        note.sequence_number = _sequence_number(_text(kids, "sequence-number"), source)
        inner = _first_element(kids.one("contents"))
        if inner is None:
            raise FramingError("envelope has no contents", source=source)
        return _xml_notification(inner, source, note, conv, wanted)
    if local == "notification":
        note.event_time = _text(kids, "eventTime") or note.event_time
        # sysName and sequenceNumber: the legacy sequencing leaves (draft-tgraf-netconf-
        # notif-sequencing) Huawei VRP sends; sysName is the node name, as hostname.
        note.node = (
            _name_text(kids, "hostname", "hostname")
            or _name_text(kids, "sysName", "sysName")
            or note.node
        )
        sequence = _text(kids, "sequence-number")
        if sequence is None:
            sequence = _text(kids, "sequenceNumber")
        if sequence is not None:
            note.sequence_number = _sequence_number(sequence, source)
        push = kids.one("push-update")
        if push is None:
            push = kids.one("push-change-update")
        if push is None:
            others = [name for name in kids if name not in _NOTIFICATION_HEADER]
            raise FramingError(
                "NETCONF notification carries no push-update or push-change-update"
                + (f" but <{'>, <'.join(others[:5])}>" if others else ""),
                source=source,
            )
        return _xml_notification(push, source, note, conv, wanted)
    if local in ("push-update", "push-change-update"):
        note.kind = "push-update" if local == "push-update" else "push-change-update"
        subscription_id = _text(kids, "id")
        if subscription_id is None:
            # The pre-RFC 8639 name (draft-ietf-netconf-yang-push), which IOS-XE still sends.
            subscription_id = _text(kids, "subscription-id")
        note.subscription_id = _subscription_id(subscription_id, source)
        if note.kind == "push-update":
            contents = kids.one("datastore-contents")
            if contents is None:
                contents = _legacy_contents(kids, source)
            selected = None if wanted is None or contents is None else wanted(note)
            if selected is not None:
                assert contents is not None
                note.data = conv.pruned(contents, *conv.trie(selected))
                note.pruned = len(contents) > 0
            else:
                children = [] if contents is None else list(contents)
                note.data = conv.members(children, None)
            return note
        changes = kids.one("datastore-changes")
        patch = None if changes is None else _Children(changes, source).one("yang-patch")
        if patch is None:
            raise FramingError(
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
    raise FramingError(
        f"no push-update or push-change-update found (root element <{local}>)", source=source
    )


_NOTIFICATION_HEADER = frozenset(
    {"eventTime", "hostname", "sysName", "sequence-number", "sequenceNumber"}
)
_WRAPPER = "yangkey-contents"
"""The element :func:`xml_contents` wraps XML text in (no namespace: no YANG node has it)."""


def _legacy_contents(kids: _Children, source: str) -> etree._Element | None:
    """A push-update's data when it has no ``datastore-contents``: IOS-XE's
    ``datastore-contents-xml``, holding the elements themselves (NETCONF) or their text; None
    for a push-update with nothing but its header (an empty update)."""
    legacy = kids.one("datastore-contents-xml")
    if legacy is not None:
        if len(legacy) or not (legacy.text or "").strip():
            return legacy
        return _parse_fragment((legacy.text or "").encode("utf-8"), source)
    # Children of augmenting modules (message-publisher-id, observation-domain-id) are
    # metadata; one named like contents is data in a framing no decoder here reads.
    others = [name for name in kids if name not in PUSH_HEADER and "content" in name]
    if others:
        raise FramingError(
            f"push-update has no datastore-contents but <{'>, <'.join(others[:5])}>: no"
            " framing yangkey reads",
            source=source,
        )
    return None


def _parse_fragment(text: bytes, source: str) -> etree._Element:
    """XML text holding the datastore contents (elements, each declaring its namespace),
    parsed under a wrapper element with the hardened parser."""
    stripped = text.strip()
    if stripped.startswith(b"<?xml"):
        end = stripped.find(b"?>")
        stripped = stripped[end + 2 :] if end >= 0 else stripped
    return parse_xml(
        b"<" + _WRAPPER.encode() + b">" + stripped + b"</" + _WRAPPER.encode() + b">", source
    )


def xml_contents(text: bytes, source: str, ns_modules: Mapping[str, str]) -> dict[str, Any]:
    """Datastore contents written as XML text (IOS-XE's ``datastore-contents-xml`` inside a
    JSON notification) -> the JSON-shaped tree of RFC 7951."""
    contents = _parse_fragment(text, source)
    return converter_for(ns_modules).members(list(contents), None)


_WRAPPERS = {
    # local name -> the children the general path reads (each at most once), in its order;
    # the last one is the element to go on with.
    "notification": ("eventTime", "hostname", "sequence-number", "push-update"),
    "envelope": ("event-time", "hostname", "sequence-number", "contents"),
    "push-update": ("id", "datastore-contents"),
}
_LEGACY = frozenset({"sysName", "sequenceNumber", "subscription-id", "datastore-contents-xml"})
"""Children of legacy framings, which the fast path leaves to the general one."""
_Plan: TypeAlias = tuple[str, tuple[int | None, ...], int]
"""A wrapper's local name, where each of its fields is, where the element to go on with is."""
_PLANS: dict[tuple[Any, ...], _Plan | None] = {}


def _plan(tags: tuple[Any, ...]) -> _Plan | None:
    """Where the fields of a wrapper are among its children, from the element's tag and its
    children's (a wrapper *shape*, the same in every notification of a producer); None when
    the fast path does not take that shape: the general one does, and says what is wrong."""
    if any(type(tag) is not str for tag in tags):
        return None
    local = split_tag(tags[0])[1]
    fields = _WRAPPERS.get(local)
    if fields is None:
        return None
    names = [tag.rpartition("}")[2] for tag in tags[1:]]
    if not _LEGACY.isdisjoint(names):
        return None  # Huawei's sysName, IOS-XE's subscription-id: the general path reads them
    where: list[int | None] = []
    for name in fields:
        count = names.count(name)
        if count > 1:
            return None  # the general path refuses it
        where.append(names.index(name) if count else None)
    inner = where.pop()
    if inner is None:
        return None
    return local, tuple(where), inner


def _shape(element: etree._Element) -> tuple[list[etree._Element], _Plan | None]:
    children = list(element)
    tags = (element.tag, *[child.tag for child in children])
    try:
        plan = _PLANS[tags]
    except KeyError:
        if len(_PLANS) >= 4096:
            _PLANS.clear()  # shapes come from the input: the cache must not grow without end
        plan = _PLANS[tags] = _plan(tags)
    return children, plan


_SMALL = 640
"""Bytes of a document under which the pruned conversion walks every element rather than
filter by tag (bench: equal at a 660-byte push-update holding one interface of five leaves)."""


def _fast_push_update(
    root: etree._Element,
    source: str,
    conv: XmlConverter,
    wanted: Selector | None,
    small: bool = False,
) -> Notification | None:
    """:func:`_xml_notification` of a push-update, alone or in one NETCONF notification or
    envelope, with every field well formed; None for anything else (a yang-patch, the telemetry
    message, a nested wrapper, a field to refuse), which the general path then decodes from
    the start. The same answer, without the general path's per-element bookkeeping."""
    children, plan = _shape(root)
    if plan is None:
        return None
    note = Notification(source, CONTENT_TYPE_XML, "push-update")
    if plan[0] != "push-update":
        at_time, at_host, at_sequence = plan[1]
        if at_time is not None:
            note.event_time = (children[at_time].text or "").strip() or None
        if at_host is not None:
            host = children[at_host].text
            if host:
                if node_name_problem(host) is not None:
                    return None
                note.node = host
        if at_sequence is not None:
            sequence = parse_unsigned((children[at_sequence].text or "").strip(), UINT32_MAX)
            if sequence is None:
                return None
            note.sequence_number = sequence
        push = children[plan[2]]
        if plan[0] == "envelope":
            if not len(push):
                return None
            # The first child; a non-element there (none survive parse_xml) has no plan.
            push = push[0]
        children, plan = _shape(push)
        if plan is None or plan[0] != "push-update":
            return None
    (at_id,), at_contents = plan[1:]
    if at_id is not None:
        note.subscription_id = parse_unsigned((children[at_id].text or "").strip(), UINT32_MAX)
        if note.subscription_id is None:
            return None
    contents = children[at_contents]
    selected = None if wanted is None else wanted(note)
    if selected is not None:
        trie, every = conv.trie(selected)
        note.data = conv.pruned(contents, trie, () if small else every)
        note.pruned = len(contents) > 0
    else:
        note.data = conv.members(contents, None)
    return note


def decode_xml(
    data: bytes, source: str, ns_modules: Mapping[str, str], wanted: Selector | None = None
) -> Notification:
    """:func:`yangkey.notifications.decode` of an XML document."""
    root = parse_xml(data, source)
    conv = converter_for(ns_modules)
    fast = _fast_push_update(root, source, conv, wanted, len(data) < _SMALL)
    if fast is not None:
        return fast
    note = Notification(source, CONTENT_TYPE_XML, "push-update")
    return _xml_notification(root, source, note, conv, wanted)
