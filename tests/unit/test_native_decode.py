"""Issue 33 (phase A): the native decoder (``yangkey_native``) and the Python reference
(:func:`yangkey.notifications.decode`) give the same Notification, or the same error (class,
kind, message, position), for every document: the fixtures (real devices' framings included),
the shared vectors, every ``yangkey sample`` shape, every string the other unit tests feed the
decoder through their parametrizations, and hypothesis-generated JSON and XML notifications
(every framing, well- and ill-typed header fields, duplicate members, yang-patch edits, byte
mutations). Where the native parsers refuse a document they hand it to the reference
(``None``): only for input the reference refuses as malformed (an InputError).

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from yangkey import native
from yangkey.errors import YangkeyError
from yangkey.notification_model import Notification, Selector, Wanted
from yangkey.notifications import decode as python_decode
from yangkey.schema import SchemaContext
from yangkey.values import QNameText

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures" / "notifications"
NS_ENV = "urn:ietf:params:xml:ns:yang:ietf-yp-notification"
NS_NC = "urn:ietf:params:xml:ns:netconf:notification:1.0"
NS_YP = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
NS_TM = "urn:ietf:params:xml:ns:yang:ietf-telemetry-message"
NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_IANAIFT = "urn:ietf:params:xml:ns:yang:iana-if-type"


@pytest.fixture(scope="module")
def ns_modules() -> dict[str, str]:
    return SchemaContext.cached().index.by_namespace


def canon(value: Any) -> Any:
    """``value`` with every type spelled out (== alone takes 1 for True, 1.0 for 1, and a
    QNameText for its text), dict order kept."""
    if isinstance(value, Notification):
        return (
            "Notification",
            [(f.name, canon(getattr(value, f.name))) for f in dataclasses.fields(value)],
        )
    if isinstance(value, tuple):
        return (type(value).__name__, [canon(item) for item in value])
    if isinstance(value, dict):
        return ("dict", [(canon(k), canon(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [canon(item) for item in value])
    if isinstance(value, QNameText):
        return ("QNameText", str(value), value.module_value)
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def outcome(decode: Callable[[], Notification | None]) -> Any:
    try:
        note = decode()
    except YangkeyError as exc:
        return ("error", type(exc).__name__, exc.kind, str(exc), exc.reason, exc.position)
    return None if note is None else ("ok", canon(note))


def check(
    raw: bytes | str, decoder: Any, ns_modules: dict[str, str], wanted: Selector | None = None
) -> str:
    """Both paths agree on ``raw`` (converted along ``wanted``); the adapter
    (yangkey.native.decode) too. Returns how the native decoder answered: ``native`` or
    ``deferred``."""
    source = "<test>"
    reference = outcome(lambda: python_decode(raw, source, ns_modules, wanted))
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    answer = outcome(lambda: decoder.decode(data, source, ns_modules, wanted))
    if answer is None:
        malformed = reference[0] == "error" and reference[2] == "input"
        assert malformed or _declares_other_encoding(data), (raw, reference)
    else:
        assert answer == reference, raw
    assert outcome(lambda: native.decode(raw, source, ns_modules, wanted)) == reference
    return "deferred" if answer is None else "native"


def _declares_other_encoding(data: bytes) -> bool:
    """An XML declaration naming an encoding other than UTF-8: libxml2 decodes by it, the
    native parser reads UTF-8 only and hands such documents over."""
    head = data.lstrip().removeprefix(b"\xef\xbb\xbf")[:100].lower()
    return head.startswith(b"<?xml") and b"encoding" in head and b"utf-8" not in head


# ------------------------------------------------------------------------------ the corpus


def fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_native_fixtures_same_notification(
    path: Path, decoder: Any, ns_modules: dict[str, str]
) -> None:
    raw = path.read_bytes()
    assert check(raw, decoder, ns_modules) == "native"
    assert check(raw.decode("utf-8"), decoder, ns_modules) == "native"
    if path.suffix == ".xml":
        # As devices also write it: indented, CRLF line ends, an XML declaration, a comment.
        pretty = etree.tostring(etree.fromstring(raw), pretty_print=True)
        for variant in (
            pretty,
            pretty.replace(b"\n", b"\r\n"),
            b'<?xml version="1.0" encoding="UTF-8"?>\n<!-- from a device -->\n' + pretty,
            b"\xef\xbb\xbf" + pretty,
        ):
            assert check(variant, decoder, ns_modules) == "native", variant


def test_native_vectors_same_notification(decoder: Any, ns_modules: dict[str, str]) -> None:
    from test_core_vectors import _vector_file  # noqa: PLC0415 (where the vectors are found)

    vectors = _vector_file()
    if not vectors.is_file():
        pytest.skip(f"public vectors not found at {vectors} (set YANGKEY_VECTORS)")
    seen = 0
    for line in vectors.read_text(encoding="utf-8").splitlines():
        vector = json.loads(line)
        if "notification" in vector:
            assert check(vector["notification"].encode(), decoder, ns_modules) == "native"
            seen += 1
    assert seen >= 4


def test_native_sample_shapes_same_notification(decoder: Any, ns_modules: dict[str, str]) -> None:
    """Every shape ``yangkey sample`` writes (JSON and XML, every envelope, yang-patch
    edits, the bad records it mixes in)."""
    from yangkey.demo.sample import generate  # noqa: PLC0415

    records = generate(nodes=3, interfaces=4, rounds=2, seed=3).records
    answers = [check(raw, decoder, ns_modules) for raw in records]
    assert len(records) > 40 and answers.count("native") >= len(records) - 4


# Every string the decoding tests parametrize, as a document and spliced into each header
# field of a JSON and an XML envelope (the splices the bad-input tests make).
_DECODING_TESTS = [
    "test_core_badinput",
    "test_real_devices",
    "test_core_phase3",
    "test_core_bugs",
    "test_core_differential",
    "test_records_fastpath",
    "test_fleet",
    "test_json_compatibility",
]


def _parametrized_strings() -> Iterator[str]:
    for name in _DECODING_TESTS:
        try:
            module = sys.modules.get(name) or importlib.import_module(name)
        except Exception:  # an extra the module needs is missing: its strings are not ours
            continue
        for attribute in vars(module).values():
            for mark in getattr(attribute, "pytestmark", []):
                if mark.name != "parametrize" or len(mark.args) < 2:
                    continue
                for value in mark.args[1]:
                    values = value.values if hasattr(value, "values") else value
                    items = values if isinstance(values, tuple | list) else (values,)
                    for item in items:
                        if isinstance(item, bytes):
                            yield item.decode("utf-8", "replace")
                        elif isinstance(item, str):
                            yield item


def _spliced(text: str) -> list[str]:
    quoted = json.dumps(text)
    header = '"2026-11-20T10:00:00Z"'

    def envelope(hostname: str = '"r1"', sub: str = "1", seq: str = "7", data: str = "{}") -> str:
        return (
            '{"ietf-yp-notification:envelope": {"event-time": ' + header + ', "hostname": '
            f'{hostname}, "sequence-number": {seq}, "contents": {{"ietf-yang-push:push-update": '
            f'{{"id": {sub}, "datastore-contents": {data}}}}}}}}}'
        )

    def envelope_xml(hostname: str = "r1", sub: str = "1", seq: str = "7", extra: str = "") -> str:
        return (
            f'<envelope xmlns="{NS_ENV}"><event-time>2026-11-20T10:00:00Z</event-time>'
            f"<hostname>{hostname}</hostname>{extra}<sequence-number>{seq}</sequence-number>"
            f'<contents><push-update xmlns="{NS_YP}"><id>{sub}</id><datastore-contents>'
            f'<interfaces xmlns="{NS_IF}"><interface><name>eth0</name></interface></interfaces>'
            "</datastore-contents></push-update></contents></envelope>"
        )

    return [
        text,
        envelope(hostname=text),
        envelope(hostname=quoted),
        envelope(sub=text),
        envelope(sub=quoted),
        envelope(seq=text),
        envelope(data=text),
        envelope_xml(hostname=text),
        envelope_xml(sub=text),
        envelope_xml(seq=text),
        envelope_xml(extra=text),
    ]


def test_native_bad_input_of_the_other_tests_same_error(
    decoder: Any, ns_modules: dict[str, str]
) -> None:
    strings = sorted(set(_parametrized_strings()))
    assert len(strings) > 50, "the harvest of the other tests' inputs found too little"
    answers = [check(doc, decoder, ns_modules) for text in strings for doc in _spliced(text)]
    assert answers.count("native") > len(answers) // 2


# ------------------------------------------------------------------ hand-picked edge cases

EDGES = [
    b"",
    b"  \n",
    b"\xef\xbb\xbf{}",
    b"\xef\xbb\xbf<a/>",
    b"hello",
    b"[1]",
    b"[]",
    b"{}",
    b'{"a":1,"a":2}',
    b'{"a": {"b": 1, "b": 2}, "a": 3}',
    b'{"a":1, "\\u0061":2}',
    # Objects of more than 16 members: the first name seen twice, late or early.
    ("{" + ", ".join(f'"m{i}": {i}' for i in range(20)) + ', "m3": 0}').encode(),
    ('{"m0": 0, "m0": 1, ' + ", ".join(f'"n{i}": {i}' for i in range(20)) + ', "n5": 0}').encode(),
    ('{"x": [' + ", ".join(f'{{"k": "{i % 7}", "up": "up"}}' for i in range(30)) + "]}").encode(),
    b'{"x": 18446744073709551616, "y": -0, "z": -0.0, "w": 1E2, "v": 1.5e-400}',
    b'{"x": 1e400}',
    b'{"x": "\\ud800"}',
    b'{"x": "\\ud83d\\ude00 \\u00e9 \\/"}',
    b'{"x": 01}',
    b'{"x": 1,}',
    b'{"x": "\x01"}',
    b'{"x": 1} \x0b',
    b'{"ietf-yp-notification:envelope": {"hostname": " r1", "sequence-number": "007",'
    b' "contents": {"ietf-yang-push:push-update": {"id": "0042"}}}}',
    b'{"ietf-yp-notification:envelope": {"hostname": "r\\u00e91", "sequence-number": true,'
    b' "contents": {"ietf-yang-push:push-update": {"id": 1}}}}',
    b'{"ietf-yang-push:push-update": {"id": 1, "datastore-contents-json": "{\\"a:b\\": 1,'
    b' \\"a:b\\": 2}"}}',
    b'{"ietf-yang-push:push-update": {"id": 1, "datastore-contents-json": "{oops"}}',
    b'{"ietf-yang-push:push-update": {"id": 1,'
    b' "datastore-contents-xml": "<a xmlns=\\"u\\">1</a>"}}',
    b'{"ietf-yang-push:push-update": {"id": 1, "datastore-contents-xml": 5}}',
    b'{"ietf-yang-push:push-update": {"id": 1, "datastore-contents": [1]}}',
    b'{"ietf-yang-push:push-update": {"id": 1, "contents": {}}}',
    b'{"ietf-yang-push:push-change-update": {"id": 1, "datastore-changes": {"yang-patch":'
    b' {"edit": [{"target": null, "operation": "merge"}, {"edit-id": 3}]}}}}',
    b'{"ietf-yang-push:push-change-update": {"id": 1, "datastore-changes": {"yang-patch":'
    b' {"edit": [{"target": "/a:b=x%2Fy,z", "operation": "merge", "edit-id": 7}]}}}}',
    b'{"ietf-yang-push:push-change-update": {"id": 1, "datastore-changes": {"yang-patch":'
    b' {"edit": [{"target": "/a:b=%zz", "operation": "merge"}]}}}}',
    b'{"ietf-yang-push:push-change-update": {"id": 1, "datastore-changes": {"yang-patch":'
    b' {"edit": null}}}}',
    b"<a/>",
    b' <?xml version="1.0"?><a/>',
    b'<?xml version="1.0" encoding="ISO-8859-1"?><push-update><id>1</id></push-update>',
    b'<?xml version="1.0" encoding="UTF-8"?><push-update><id>1</id></push-update>',
    b'<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>',
    b"<a>&e;</a>",
    b"<a>\x0c</a>",
    b'<a b="1" b="2"/>',
    # roxmltree reads these, libxml2 refuses them: the native parser must hand them over.
    b"<push-update xmlns:p=''><id>1</id></push-update>",
    b"<push-update><id>1&#xD800;</id></push-update>",
    b"<push-update><id>1&#57343;</id></push-update>",
    b"<push-update><:id>1</:id></push-update>",
    b"<push-update><id :a='1'>1</id></push-update>",
    b"<push-update xmlns:p='u' xmlns:q='u'><id p:a='1' q:a='2'>1</id></push-update>",
    # a quote in a comment, PI or CDATA section opens no attribute value
    b"<push-update><!-- don't --><id>1</id><:x/></push-update>",
    b"<push-update><?pi it's?><id>1</id><:x/></push-update>",
    b"<push-update><![CDATA[it's]]><id>1</id><:x/></push-update>",
    b"<push-update><!-- <:x> &#xD800; --><id>1</id></push-update>",
    # and a colon in text or an attribute's value is no empty prefix
    b"<push-update><id a=' :b'>1</id><x xmlns='u'> :y</x></push-update>",
    b"<p:a/>",
    b"<push-update><id>1</id><id>2</id></push-update>",
    b"<push-update><id> 0042 </id><datastore-contents><x xmlns='" + NS_IF.encode() + b"'>"
    b"a<!--c-->b<![CDATA[<c>]]>&lt;&#x41;\r\n</x><x xmlns='u'><y>1</y></x>"
    b"</datastore-contents></push-update>",
    b"<push-update xmlns:i='" + NS_IANAIFT.encode() + b"'><id>1</id><datastore-contents>"
    b"<t xmlns='" + NS_IF.encode() + b"'><type>i:ethernetCsmacd</type><u>x:y</u>"
    b"<v>i:a b</v><w>:z</w></t></datastore-contents></push-update>",
    b"<push-update><id>1</id><datastore-contents-xml>&lt;a xmlns='u'&gt;1&lt;/a&gt;"
    b"</datastore-contents-xml></push-update>",
    b"<push-update><id>1</id><datastore-contents-xml>  </datastore-contents-xml></push-update>",
    b"<push-update><id>1</id><my-content/></push-update>",
    b"<notification xmlns='" + NS_NC.encode() + b"'><eventTime>t</eventTime><sysName>vrp"
    b"</sysName><sequenceNumber>9</sequenceNumber><foo/></notification>",
    b"<notification xmlns='" + NS_NC.encode() + b"'><hostname>\xe2\x80\x83r1</hostname>"
    b"<push-update/></notification>",
    b"<message xmlns='" + NS_TM.encode() + b"'><network-node-manifest><name>n1</name>"
    b"</network-node-manifest><telemetry-message-metadata><node-export-timestamp> t "
    b"</node-export-timestamp><yang-push-subscription xmlns:p='urn:p'><id>5</id>"
    b"<xpath-filter>/p:x</xpath-filter></yang-push-subscription></telemetry-message-metadata>"
    b"<payload/></message>",
    b"<envelope><contents/></envelope>",
    b"<envelope><sequence-number/><contents><push-update/></contents></envelope>",
    b"<push-change-update><id>1</id><datastore-changes><yang-patch><edit><target>/a:b=1"
    b"</target><operation>merge</operation><value><b xmlns='u'><k>1</k></b></value></edit>"
    b"<other/><edit><operation>delete</operation></edit></yang-patch></datastore-changes>"
    b"</push-change-update>",
    b"<push-change-update><id>1</id><datastore-changes><yang-patch><edit><target>/a:b"
    b"</target><operation>frob</operation></edit></yang-patch></datastore-changes>"
    b"</push-change-update>",
]


@pytest.mark.parametrize("raw", EDGES, ids=range(len(EDGES)))
def test_native_edge_cases_same_outcome(
    raw: bytes, decoder: Any, ns_modules: dict[str, str]
) -> None:
    check(raw, decoder, ns_modules)


@pytest.mark.parametrize("size", [2, 15, 16, 17, 24])
def test_native_duplicate_member_at_any_place(
    size: int, decoder: Any, ns_modules: dict[str, str]
) -> None:
    """An object's member named twice, the two anywhere among its first 16 names (found as
    they come) or past them (found once it closes), names of every length: the reference's
    error, naming the same member; an object without one decodes as the reference's."""
    names = [f"{'m' * (i % 11)}{i}" for i in range(size)]
    for first in range(size):
        for again in (first + 1, size - 1):
            if again >= size or again == first:
                continue
            twice = list(names)
            twice[again] = twice[first]
            data = ",".join(f'"{name}":{i}' for i, name in enumerate(twice))
            raw = (
                '{"ietf-yang-push:push-update":{"id":1,"datastore-contents":'
                '{"ietf-interfaces:interfaces":{' + data + "}}}}"
            )
            check(raw, decoder, ns_modules)
    data = ",".join(f'"{name}":{i}' for i, name in enumerate(names))
    check('{"ietf-yang-push:push-update":{"id":1,"x":{' + data + "}}}", decoder, ns_modules)


@pytest.mark.parametrize("extra", [0, 3, 4, 5, 8, 12])
@pytest.mark.parametrize("first", [True, False])
def test_native_framing_objects_of_many_members(
    extra: int, first: bool, decoder: Any, ns_modules: dict[str, str]
) -> None:
    """Framing objects (envelope, push-update, telemetry metadata, yang-patch edit) of up to
    8 members and past them (jsonframe.rs keeps 8 on the stack, then moves them to the
    heap), the extra members before or after the framing's own: the reference's
    Notification."""
    more = [(f"x-{i}", i) for i in range(extra)]

    def obj(own: list[tuple[str, Any]]) -> str:
        pairs = more + own if first else own + more
        return "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in pairs) + "}"

    data = '{"ietf-interfaces:interfaces":{"interface":[{"name":"e0"}]}}'
    push = obj([("id", "1042"), ("datastore-contents", data)])
    envelope = obj(
        [
            ("event-time", '"2026-11-20T10:00:00Z"'),
            ("hostname", '"pe1"'),
            ("sequence-number", "9"),
            ("contents", '{"ietf-yang-push:push-update":' + push + "}"),
        ]
    )
    raw = '{"ietf-yp-notification:envelope":' + envelope + "}"
    assert check(raw, decoder, ns_modules) == "native"
    edit = obj([("edit-id", '"1"'), ("operation", '"merge"'), ("target", '"/a:b"')])
    changes = '{"yang-patch":{"patch-id":"p","edit":[' + edit + "]}}"
    change = obj([("id", "7"), ("datastore-changes", changes)])
    check('{"ietf-yang-push:push-change-update":' + change + "}", decoder, ns_modules)
    stamp = '"2026-11-20T10:00:01Z"'
    metadata = obj([("node-export-timestamp", stamp), ("yang-push-subscription", '{"id":5}')])
    message = '{"telemetry-message-metadata":' + metadata + ',"payload":{}}'
    check('{"ietf-telemetry-message:message":' + message + "}", decoder, ns_modules)


def test_native_deep_document_left_to_the_reference(
    decoder: Any, ns_modules: dict[str, str]
) -> None:
    deep = b'{"ietf-yang-push:push-update": {"id": 1, "datastore-contents": ' + b'{"a:b": ' * 300
    deep += b"1" + b"}" * 302
    assert decoder.decode(deep, "s", ns_modules) is None
    assert native.decode(deep, "s", ns_modules).subscription_id == 1


# ------------------------------------------------------------------------------ hypothesis

_EXAMPLES = int(os.environ.get("YANGKEY_NATIVE_EXAMPLES", "300"))
"""Examples per hypothesis test (a longer hunt: YANGKEY_NATIVE_EXAMPLES=5000)."""

_NAMES = st.sampled_from(
    ["a", "b", "name", "ietf-interfaces:interfaces", "interface", "x:y", "é", "id", "value"]
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
_HEADER_VALUES = st.one_of(
    st.integers(min_value=-5, max_value=2**33),
    st.sampled_from(["1", "0042", "²", "١٠٤٢", " 1", "", "r1", "r 1", " r1", "r\n1", "a\u2003"]),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=1),
)


def _pairs(values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[tuple[str, Any]]]:
    return st.lists(st.tuples(_NAMES, values), max_size=4)


class _Obj:
    """A JSON object as written, duplicate names allowed."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), _pairs(inner).map(_Obj)),
    max_leaves=12,
)


def _dump(value: Any, spaced: bool, ascii_only: bool) -> str:
    sep = ", " if spaced else ","
    colon = ": " if spaced else ":"
    if isinstance(value, _Obj):
        inner = sep.join(
            json.dumps(k, ensure_ascii=ascii_only) + colon + _dump(v, spaced, ascii_only)
            for k, v in value.pairs
        )
        return "{" + inner + "}"
    if isinstance(value, dict):
        return _dump(_Obj(list(value.items())), spaced, ascii_only)
    if isinstance(value, list):
        return "[" + sep.join(_dump(v, spaced, ascii_only) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


@st.composite
def json_notifications(draw: st.DrawFn) -> bytes:
    change = draw(st.booleans())
    push: dict[str, Any] = {}
    if draw(st.booleans()):
        push[draw(st.sampled_from(["id", "subscription-id"]))] = draw(_HEADER_VALUES)
    if change:
        edit = {
            "edit-id": draw(st.one_of(st.text(max_size=3), st.integers())),
            "operation": draw(st.sampled_from(["merge", "delete", "frob", 5])),
            "target": draw(
                st.sampled_from(
                    ["/ietf-interfaces:interfaces/interface=eth%2F0", "/a:b", "b", "/", 7]
                )
            ),
            "value": draw(_TREES),
        }
        edits = draw(st.sampled_from([[edit], [edit, edit], [], None, [5]]))
        push["datastore-changes"] = {"ietf-yang-patch:yang-patch": {"edit": edits}}
        body = {"ietf-yang-push:push-change-update": push}
    else:
        member = draw(
            st.sampled_from(
                ["datastore-contents", "datastore-contents-json", "other-content", None]
            )
        )
        tree = draw(_TREES)
        if member == "datastore-contents-json":
            push[member] = _dump(tree, False, False) if draw(st.booleans()) else tree
        elif member is not None:
            push[member] = tree
        body = {"ietf-yang-push:push-update": push}
    framing = draw(st.sampled_from(["bare", "envelope", "restconf", "telemetry", "sysname"]))
    if framing == "envelope":
        body = {
            "ietf-yp-notification:envelope": {
                "event-time": draw(_HEADER_VALUES),
                "hostname": draw(_HEADER_VALUES),
                "sequence-number": draw(_HEADER_VALUES),
                "contents": body,
            }
        }
    elif framing in ("restconf", "sysname"):
        header: dict[str, Any] = {"eventTime": "2026-11-20T10:00:00Z"}
        if framing == "sysname":
            header["huawei:sysName"] = draw(_HEADER_VALUES)
            header["sequenceNumber"] = draw(_HEADER_VALUES)
        body = {"ietf-restconf:notification": {**header, **body}}
    elif framing == "telemetry":
        body = {
            "ietf-telemetry-message:message": {
                "network-node-manifest": {"name": draw(_HEADER_VALUES)},
                "telemetry-message-metadata": {
                    "node-export-timestamp": draw(_HEADER_VALUES),
                    "collection-timestamp": "t",
                    "yang-push-subscription": {"id": 1},
                },
                "payload": body,
            }
        }
    text = _dump(body, draw(st.booleans()), draw(st.booleans()))
    return text.encode("utf-8")


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_notifications())
def test_native_json_notifications_agree(raw: bytes) -> None:
    check(raw, _shared_decoder(), _ns())


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    json_notifications(),
    st.integers(min_value=0),
    st.sampled_from(['"', "{", "}", ",", "\\", "\x00", "é", "", "1", " "]),
)
def test_native_mutated_json_agree(raw: bytes, at: int, byte: str) -> None:
    """A byte replaced or removed anywhere: malformed documents go to the reference, and any
    that stay well formed give the same answer."""
    at %= max(1, len(raw))
    mutated = raw[:at] + byte.encode() + raw[at + 1 :]
    check(mutated, _shared_decoder(), _ns())


_XML_NAMESPACES = st.sampled_from([NS_IF, NS_IANAIFT, "urn:unknown", ""])
_XML_TEXT = st.one_of(
    st.sampled_from(
        [
            "eth0",
            "i:ethernetCsmacd",
            "x:y",
            "1",
            " 1 ",
            "",
            "a b",
            "&lt;",
            "&#233;",
            "<![CDATA[c]]>",
            "a<!--c-->b",
        ]
    ),
    st.text(alphabet="abc é\t\n:", max_size=6),
)


@st.composite
def xml_elements(draw: st.DrawFn, depth: int = 0) -> str:
    name = draw(st.sampled_from(["interface", "name", "type", "a", "id"]))
    ns = draw(st.one_of(st.none(), _XML_NAMESPACES))
    attrs = "" if ns is None else f' xmlns="{ns}"'
    if draw(st.booleans()):
        attrs += f' xmlns:i="{NS_IANAIFT}"'
    if depth < 3 and draw(st.booleans()):
        children = draw(st.lists(xml_elements(depth=depth + 1), max_size=3))
        return f"<{name}{attrs}>{''.join(children)}</{name}>"
    return f"<{name}{attrs}>{draw(_XML_TEXT)}</{name}>"


@st.composite
def xml_notifications(draw: st.DrawFn) -> bytes:
    value = st.one_of(st.none(), _XML_TEXT, st.sampled_from(["1042", "0", "4294967296", "²"]))

    def field(name: str) -> str:
        text = draw(value)
        return "" if text is None else f"<{name}>{text}</{name}>"

    data = "".join(draw(st.lists(xml_elements(), max_size=3)))
    if draw(st.booleans()):
        member = draw(st.sampled_from(["datastore-contents", "datastore-contents-xml", "foo"]))
        subscription = field(draw(st.sampled_from(["id", "subscription-id"])))
        push = (
            f'<push-update xmlns="{NS_YP}">{subscription}<{member}>{data}</{member}></push-update>'
        )
    else:
        edits = "".join(
            f"<edit>{field('edit-id')}{field('target')}{field('operation')}<value>{data}</value>"
            "</edit>"
            for _ in range(draw(st.integers(min_value=0, max_value=2)))
        )
        push = (
            f'<push-change-update xmlns="{NS_YP}">{field("id")}<datastore-changes><yang-patch>'
            f"{edits}</yang-patch></datastore-changes></push-change-update>"
        )
    framing = draw(st.sampled_from(["bare", "envelope", "netconf", "telemetry"]))
    if framing == "envelope":
        push = (
            f'<envelope xmlns="{NS_ENV}">{field("event-time")}{field("hostname")}'
            f"{field('sequence-number')}<contents>{push}</contents></envelope>"
        )
    elif framing == "netconf":
        push = (
            f'<notification xmlns="{NS_NC}">{field("eventTime")}{field("sysName")}'
            f"{field('sequenceNumber')}{push}</notification>"
        )
    elif framing == "telemetry":
        push = (
            f'<message xmlns="{NS_TM}"><network-node-manifest>{field("name")}'
            "</network-node-manifest><telemetry-message-metadata>"
            f"{field('node-export-timestamp')}</telemetry-message-metadata>"
            f"<payload>{push}</payload></message>"
        )
    return push.encode("utf-8")


_PRUNED = (
    f'<push-update xmlns="{NS_YP}"><id>7</id><datastore-contents>'
    f'<interfaces xmlns="{NS_IF}" xmlns:i="{NS_IANAIFT}"><interface><name>eth0</name>'
    "<type>i:ethernetCsmacd</type><mtu>1500</mtu><stats><in>1</in><out>2</out></stats>"
    "</interface><interface><name>eth1</name><stats/></interface><other>x</other></interfaces>"
    f'<system xmlns="urn:ietf:params:xml:ns:yang:ietf-system"><clock/></system>'
    "</datastore-contents></push-update>"
).encode()


@pytest.mark.parametrize(
    "wanted",
    [
        {("ietf-interfaces", "interfaces"): {("ietf-interfaces", "interface"): None}},
        {
            ("ietf-interfaces", "interfaces"): {
                ("ietf-interfaces", "interface"): {
                    ("ietf-interfaces", "name"): None,
                    ("ietf-interfaces", "stats"): {("ietf-interfaces", "in"): None},
                }
            }
        },
        {("ietf-interfaces", "interfaces"): {("iana-if-type", "interface"): None}},
        {("ietf-system", "system"): None, ("nowhere", "interfaces"): None},
        {},
    ],
    ids=["one-level", "nested", "other-module", "sibling", "nothing"],
)
def test_native_pruned_levels_same_notification(
    wanted: Wanted, decoder: Any, ns_modules: dict[str, str]
) -> None:
    """Pruning at every level: members dropped below a kept one, a leaf kept as text, an
    element with children kept whole, a module of no namespace, an empty selection."""
    note = python_decode(_PRUNED, "s", ns_modules, lambda _note: wanted)
    assert note.pruned
    assert check(_PRUNED, decoder, ns_modules, lambda _note: wanted) == "native"


_WANTED: st.SearchStrategy[Wanted | None] = st.recursive(
    st.none(),
    lambda inner: st.dictionaries(
        st.tuples(
            st.sampled_from(["ietf-interfaces", "iana-if-type", "unknown-module"]),
            st.sampled_from(["interface", "name", "type", "a", "id"]),
        ),
        inner,
        max_size=3,
    ),
    max_leaves=6,
)


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(xml_notifications(), st.one_of(st.none(), _WANTED))
def test_native_xml_notifications_agree(raw: bytes, wanted: Wanted | None) -> None:
    """With and without a selection of what a derivation reads (``wanted``)."""
    selector = None if wanted is None else (lambda _note: wanted)
    check(raw, _shared_decoder(), _ns(), selector)


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    xml_notifications(),
    st.integers(min_value=0),
    st.sampled_from(["<", ">", "/", "&", "'", "", "\x01", "é", "]]>"]),
)
def test_native_mutated_xml_agree(raw: bytes, at: int, byte: str) -> None:
    at %= max(1, len(raw))
    check(raw[:at] + byte.encode() + raw[at + 1 :], _shared_decoder(), _ns())


_STATE: dict[str, Any] = {}


def _shared_decoder() -> Any:
    """The decoder of the hypothesis tests (they take no fixtures of module scope)."""
    if "decoder" not in _STATE:
        _STATE["decoder"] = yangkey_native.Decoder(native.model())
    return _STATE["decoder"]


def _ns() -> dict[str, str]:
    return SchemaContext.cached().index.by_namespace


# ----------------------------------------------------------------------------- the adapter


def test_native_adapter_contract_and_status(monkeypatch: pytest.MonkeyPatch) -> None:
    assert yangkey_native.CONTRACT == native.CONTRACT
    native._load.cache_clear()
    try:
        assert native.status().startswith("native (yangkey-native ")
        assert native.active()
        monkeypatch.setenv(native.ENV_NATIVE, "0")
        native._load.cache_clear()
        assert native.status() == "python (YANGKEY_NATIVE=0)"
        assert not native.active()
        monkeypatch.setattr(yangkey_native, "CONTRACT", native.CONTRACT + 1)
        monkeypatch.delenv(native.ENV_NATIVE)
        native._load.cache_clear()
        assert "expects" in native.status() and not native.active()
    finally:
        monkeypatch.undo()
        native._load.cache_clear()


def test_native_loads_is_orjson_loads(decoder: Any) -> None:
    import orjson  # noqa: PLC0415

    raw = (FIXTURES / "envelope-interfaces.json").read_bytes()
    assert canon(decoder.loads(raw)) == canon(orjson.loads(raw))
    assert decoder.loads(b'{"a":1,"a":2}') is None


def test_native_adapter_logs_the_path_once(caplog: pytest.LogCaptureFixture) -> None:
    native._load.cache_clear()
    try:
        with caplog.at_level("DEBUG", logger="yangkey.native"):
            native.status()
            native.active()
        lines = [r.getMessage() for r in caplog.records if r.name == "yangkey.native"]
        assert lines == [f"yangkey decode path: {native.status()}"]
    finally:
        native._load.cache_clear()


@pytest.mark.parametrize("path", [p for p in fixture_files() if p.suffix == ".xml"], ids=str)
def test_native_pruned_xml_same_notification(
    path: Path, decoder: Any, ns_modules: dict[str, str]
) -> None:
    """An XML push-update converted along what a derivation reads (a MessageBuilder's
    ``wanted``): the same pruned Notification, the selector called with the same fields."""
    raw = path.read_bytes()
    seen: list[Any] = []

    def selector(note: Notification) -> Wanted:
        seen.append(canon(note))
        return {("ietf-interfaces", "interfaces"): {("ietf-interfaces", "interface"): None}}

    assert check(raw, decoder, ns_modules, selector) == "native"
    assert len(seen) in (0, 3) and seen[:1] == seen[1:2] == seen[2:]


_THREADS = """
import sys, threading, time
from pathlib import Path
import yangkey_native
from yangkey import native
from yangkey.notifications import decode
from yangkey.schema import SchemaContext

ns = SchemaContext.cached().index.by_namespace
raw = Path(sys.argv[1]).read_bytes()
decoder = yangkey_native.Decoder(native.model())

def selector(_note):
    time.sleep(0.0005)  # releases the GIL while this thread holds the decoder's state
    return {("ietf-interfaces", "interfaces"): None}

reference = decode(raw, "s", ns, selector)
answers = []

def work():
    for _ in range(30):
        answers.append(decoder.decode(raw, "s", ns, selector))

threads = [threading.Thread(target=work) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert answers == [reference] * 120, answers[:2]
print("ok")
"""


def test_native_decoder_shared_by_threads() -> None:
    """Threads sharing one Decoder, with a selector that lets other threads run in the middle
    of a decode (it sleeps): every decode ends, each with the reference's answer. In a child
    process: a decoder waiting on its state while holding the GIL would hang it, not this."""
    import subprocess  # noqa: PLC0415

    path = FIXTURES / "envelope-interfaces.xml"
    try:
        done = subprocess.run(
            [sys.executable, "-c", _THREADS, str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("decodes sharing a Decoder across threads never ended")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
