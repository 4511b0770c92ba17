"""Issue 33 (phase B): the native key pass (``Decoder.keys``: parse, framing, walk, canonical
values, templates, key bytes, no data tree in Python) against the Python reference
(:func:`yangkey.notifications.decode` then :meth:`yangkey.keys.KeyDeriver.derive`).

Where the native pass answers, its subscription id, sequence number, event time, key, keys
per branch and XPaths are the reference's, byte for byte; where it does not (``None``: XML,
yang-patch, any error, a value its canons leave to Python, no instance) the reference runs,
so errors are the reference's by construction: the builder tests check the records and
rejections of both paths are equal. Inputs: every public vector, every ``yangkey sample``
shape (bad records included), hypothesis-generated notifications over the differential
tests' subscriptions (pinned keys, filters, unions, identityrefs, leaf-lists, positions,
several branches, values that need quoting, junk), and hand-written edges.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from native_helpers import (
    EXAMPLES,
    builder_outputs,
    builders,
    cli_both_ways,
    reference,
    same,
    vectors_keyed,
)
from test_core_differential import SUBSCRIPTIONS, TreeMaker

import yangkey.producer
from yangkey import native
from yangkey.catalog import load_catalog
from yangkey.compiled import CompiledSubscription
from yangkey.demo.sample import generate
from yangkey.keys import KeyDeriver
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.schema import SchemaContext

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def envelope(data: Any, node: Any = "pe1", sub: Any = 7, seq: Any = 3) -> bytes:
    body: dict[str, Any] = {"event-time": "2026-11-20T10:00:00Z", "sequence-number": seq}
    if node is not None:
        body["hostname"] = node
    body["contents"] = {"ietf-yang-push:push-update": {"id": sub, "datastore-contents": data}}
    return orjson.dumps({"ietf-yp-notification:envelope": body})


def wrapped(wrapper: str, data: Any, node: Any, sub: Any) -> bytes:
    """``data`` in one of the JSON framings yangkey reads (SPEC 2.4)."""
    push = {"ietf-yang-push:push-update": {"id": sub, "datastore-contents": data}}
    if wrapper == "envelope":
        return envelope(data, node, sub)
    if wrapper == "bare":
        return orjson.dumps(push)
    if wrapper == "restconf":
        body: dict[str, Any] = {"eventTime": "2026-11-20T10:00:00Z", **push}
        if node is not None:
            body["sysName"] = node
        return orjson.dumps({"ietf-restconf:notification": body})
    if wrapper == "telemetry":
        message: dict[str, Any] = {
            "telemetry-message-metadata": {
                "node-export-timestamp": "2026-11-20T10:00:01Z",
                "yang-push-subscription": {"id": sub, "xpath-filter": "/x"},
            },
            "payload": {"ietf-yp-notification:envelope": {"contents": push}},
        }
        if node is not None:
            message["network-node-manifest"] = {"name": node}
        return orjson.dumps({"ietf-telemetry-message:message": message})
    assert wrapper == "text"  # the pre-RFC 8641 framing: left to the reference
    text = {"id": sub, "datastore-contents-json": orjson.dumps(data).decode()}
    return orjson.dumps({"ietf-yang-push:push-update": text})


WRAPPERS = ["envelope", "envelope", "bare", "restconf", "telemetry", "text"]


# ----------------------------------------------------------------------------- the vectors


def test_native_keys_vectors(decoder: Any, ietf_schema: SchemaContext) -> None:
    assert vectors_keyed(decoder, ietf_schema, "{") >= 2


# ----------------------------------------------------------------------- generated trees


@SETTINGS
@given(data=st.data())
def test_native_keys_generated_notifications_agree(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext, data: Any
) -> None:
    """Schema-driven data (test_core_differential's TreeMaker: valid, junk and wrongly typed
    values, qualified members, single entries, unknown members) in each JSON framing, with
    node names and subscription ids plain, odd or missing."""
    text = data.draw(st.sampled_from(SUBSCRIPTIONS))
    deriver, root = derivers[text]
    tree = data.draw(st.composite(lambda draw: TreeMaker(root, deriver.compiled).tree(draw))())
    node = data.draw(st.sampled_from(["pe1"] * 6 + [None, "", " pe1", "pé", 5]))
    sub = data.draw(st.sampled_from([7] * 5 + ["7", 0, -1, None, 2**32]))
    default = data.draw(st.sampled_from([None, "dflt"]))
    raw = wrapped(data.draw(st.sampled_from(WRAPPERS)), tree, node, sub)
    event(same(decoder, deriver, raw, fx_schema.index.by_namespace, default))


def test_native_keys_answers_most_generated_notifications(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """The native pass is no fallback in disguise: over the generated trees of every
    subscription it answers itself for most that have a key."""
    counts = {"native": 0, "python": 0, "keyed": 0}

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(data=st.data())
    def run(data: Any) -> None:
        deriver, root = derivers[data.draw(st.sampled_from(SUBSCRIPTIONS))]
        tree = data.draw(st.composite(lambda draw: TreeMaker(root, deriver.compiled).tree(draw))())
        raw = envelope(tree)
        ns = fx_schema.index.by_namespace
        counts[same(decoder, deriver, raw, ns, None)] += 1
        counts["keyed"] += reference(deriver, raw, ns, None)[0] == "ok"

    run()
    assert counts["native"] >= counts["keyed"] * 0.7, counts


# ------------------------------------------------------------------------ the hand edges


EDGES: list[tuple[str, Any]] = [
    # quoting: apostrophe, both quotes (concat), the separator inside a value
    ("/ietf-interfaces:interfaces/interface", {"interface": [{"name": "a'b"}, {"name": "x | y"}]}),
    ("/ietf-interfaces:interfaces/interface", {"interface": [{"name": "a'\"b"}, {"name": "é€"}]}),
    # duplicates and order by code point
    ("/ietf-interfaces:interfaces/interface", {"interface": [{"name": "b"}, {"name": "B"}] * 2}),
    # a redundantly qualified key member, a qualified list member
    ("/ietf-interfaces:interfaces/interface", {"interface": [{"ietf-interfaces:name": "q"}]}),
    ("/ietf-interfaces:interfaces/interface", {"ietf-interfaces:interface": {"name": "one"}}),
    # member names of a key's length differing in one byte, first, middle or last, within
    # the first 8 bytes or past them
    (
        "/ietf-interfaces:interfaces/interface",
        {
            "interface": [
                {"nbme": "x", "namf": "y", "mame": "z", "name": "a"},
                {
                    "ietf-interfaces:nbme": "q",
                    "ietf-interfaces:namf": "r",
                    "jetf-interfaces:name": "s",
                    "ietf-interfaces:name": "b",
                },
            ],
            "interfacf": [{"name": "no"}],
        },
    ),
    # a missing key, a null key, a number and a boolean as string keys, a float
    ("/ietf-interfaces:interfaces/interface", {"interface": [{"name": "a"}, {"type": "x"}]}),
    ("/ietf-interfaces:interfaces/interface", {"interface": [{"name": None}]}),
    ("/ietf-interfaces:interfaces/interface", {"interface": [{"name": 5}, {"name": True}]}),
    ("/ietf-interfaces:interfaces/interface", {"interface": [{"name": 1.5}]}),
    # entries that are no objects, an empty list, no data
    ("/ietf-interfaces:interfaces/interface", {"interface": ["x", 3, None, {"name": "z"}]}),
    ("/ietf-interfaces:interfaces/interface", {"interface": []}),
    ("/ietf-interfaces:interfaces/interface", {}),
    # integers: JSON numbers, text with zeros and signs, blanks, past 64 bits
    ("/yk-test:top/flow", {"flow": [{"proto": "yk-test:tcp", "port": "007"}]}),
    ("/yk-test:top/flow[port='80'][enabled='true']", {"flow": [{"port": "+80", "enabled": True}]}),
    ("/yk-test:top/codes", {"codes": [5, "007", "-0", 18446744073709551615]}),
    ("/yk-test:top/codes", {"codes": [" 8", "+5"]}),
    ("/yk-test:top/codes[.='5']", {"codes": ["05", 5, 6]}),
    # pinned keys: no entry has the value (the reference finds nothing), one of two has it
    ("/ietf-interfaces:interfaces/interface[name='eth0']", {"interface": [{"name": "eth1"}]}),
    (
        "/ietf-interfaces:interfaces/interface[name='eth0']",
        {"interface": [{"name": "eth1"}, {"name": "eth0"}]},
    ),
    (
        "/yk-test:top/flow[port='80'][enabled='true']",
        {
            "flow": [
                {"proto": "yk-test:tcp", "port": 80, "enabled": False},
                {"proto": "yk-test:udp", "port": "080", "enabled": "true"},
            ]
        },
    ),
    (
        "/yk-test:top/site[name=\"a'b\"]/rack[id='7']",
        {
            "site": [
                {"name": "a'b", "rack": [{"id": 7}, {"id": "8"}]},
                {"name": "b", "rack": {"id": 7}},
            ]
        },
    ),
]


LEFT_TO_PYTHON = [  # keyed by the reference; read by its canons only (floats, [null])
    ("/ietf-interfaces:interfaces/interface", {"interface": [{"name": 1.5}]}),
]


@pytest.mark.parametrize(("text", "interfaces"), EDGES)
def test_native_keys_edges(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    text: str,
    interfaces: Any,
) -> None:
    deriver, _ = derivers[text]
    member = "ietf-interfaces:interfaces" if "interfaces" in text else "yk-test:top"
    raw = envelope({member: interfaces})
    answered = same(decoder, deriver, raw, fx_schema.index.by_namespace, None)
    ok = reference(deriver, raw, fx_schema.index.by_namespace, None)[0] == "ok"
    assert answered == "native" or not ok or (text, interfaces) in LEFT_TO_PYTHON


@pytest.mark.parametrize(
    "spelled",
    [b'"na\\u006de"', b'"\\u006eame"', b'"ietf-interfaces:nam\\u0065"', b'"n\\"ame"'],
)
def test_native_keys_member_names_with_escapes(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    spelled: bytes,
) -> None:
    """A key member or list member whose name is written with escapes (the parser keeps
    its decoded text apart from the input's): read by its decoded name, as the reference
    reads it; a name that decodes to another one is not the key."""
    text = "/ietf-interfaces:interfaces/interface"
    deriver, _ = derivers[text]
    data = {"ietf-interfaces:interfaces": {"interface": [{"name": "e0"}, {"name": "e1"}]}}
    raw = envelope(data).replace(b'"name"', spelled)  # every entry's, and their values
    raw = raw.replace(b'"e0"', b'"\\u00650"').replace(b'"e1"', b'"e\\u0031"')
    assert raw.count(b"\\") >= 4
    answered = same(decoder, deriver, raw, fx_schema.index.by_namespace, None)
    assert answered == "native" or b'\\"' in spelled
    listed = envelope(data).replace(b'"interface"', b'"interfac\\u0065"', 1)
    assert same(decoder, deriver, listed, fx_schema.index.by_namespace, None) == "native"


def test_native_keys_leaves_other_framings_to_the_reference(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], notif: Any, fx_schema: SchemaContext
) -> None:
    """XML, yang-patch, the text framings, a duplicate member, bad JSON: None."""
    deriver, _ = derivers["/ietf-interfaces:interfaces/interface"]
    ns = fx_schema.index.by_namespace
    data = {"ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}, {"name": "e'1"}]}}
    for wrapper in ("envelope", "bare", "restconf", "telemetry"):
        assert same(decoder, deriver, wrapped(wrapper, data, "pe1", "7"), ns, "d") == "native"
    assert same(decoder, deriver, wrapped("text", data, "pe1", 7), ns, None) == "python"
    text = json.dumps(data)
    others = [
        envelope(data)
        .replace(b'"datastore-contents"', b'"datastore-contents-json"')
        .replace(json.dumps(data, separators=(",", ":")).encode(), orjson.dumps(text)),
        envelope(data)[:-3],
        envelope(data).replace(b'"hostname"', b'"event-time"'),
    ]
    for raw in others:
        assert same(decoder, deriver, raw, ns, None) == "python", raw


def test_native_keys_routes_memo(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """``yangkey_native.Routes``, the memo the pass reads itself: the same answers as with a
    dict memo and with none; the route asked once per (id, node), None among the nodes; what
    the memo holds is what the pass uses (not the route's answer of now); ``len`` and
    ``clear`` as a dict's."""
    deriver, _ = derivers["/ietf-interfaces:interfaces/interface"]
    ns = fx_schema.index.by_namespace
    data = {"ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}, {"name": "e'1"}]}}
    raws = [
        wrapped("envelope", data, "pe1", 7),
        wrapped("envelope", data, "pe2", 7),
        wrapped("restconf", data, "pe1", 8),
        wrapped("bare", data, None, 7),
        wrapped("envelope", data, "p" * 200, 7),  # past the lookup's stack buffer
    ]
    asked: list[tuple[int, str | None]] = []
    memo = yangkey_native.Routes()
    dict_memo: dict[Any, Any] = {}

    def route(subscription_id: int, node: str | None) -> tuple[Any, str, Any]:
        asked.append((subscription_id, node))
        answer = (deriver.native, node or "dflt", ("extra", subscription_id, node))
        memo[(subscription_id, node)] = dict_memo[(subscription_id, node)] = answer
        return answer

    plain = [decoder.keys(raw, "t", ns, route, True) for raw in raws]
    assert all(found is not None for found in plain)
    memo.clear()
    asked.clear()
    for _ in range(3):
        assert [decoder.keys(raw, "t", ns, route, True, memo) for raw in raws] == plain
        assert [decoder.keys(raw, "t", ns, route, True, dict_memo) for raw in raws] == plain
    questions = [(7, "pe1"), (7, "pe2"), (8, "pe1"), (7, None), (7, "p" * 200)]
    assert asked == questions  # each question once, whichever memo asked it first
    assert len(memo) == len(raws)
    asked.clear()
    memo[(7, "pe1")] = (deriver.native, "other", "kept")
    found = decoder.keys(raws[0], "t", ns, route, True, memo)
    assert asked == [] and found[0] == "kept" and found[4].startswith(b"other\n7\n")
    memo.clear()
    assert len(memo) == 0
    assert decoder.keys(raws[0], "t", ns, route, True, memo) == plain[0]
    assert asked == [(7, "pe1")]


# ---------------------------------------------------------------------------- the builder


@pytest.mark.parametrize(
    "knobs",
    [None, ProducerKnobs(keys=False), ProducerKnobs(per_branch=False)],
    ids=["default", "no-keys", "single-topic"],
)
def test_native_keys_builder_same_records(knobs: ProducerKnobs | None) -> None:
    """The Spark worker's record building (MessageBuilder.build) over every ``yangkey
    sample`` shape: the same messages (topic, key, value, headers) and the same rejections
    (kind, reason, position, raw bytes) with the native pass as without."""
    records = generate(nodes=3, interfaces=4, rounds=2, seed=3).records
    with_native, answered, _ = builder_outputs(records, knobs, True)
    without, none, _ = builder_outputs(records, knobs, False)
    assert none == 0
    assert with_native == without
    json_push = [raw for raw in records if raw.lstrip().startswith(b"{") and b"push-update" in raw]
    assert answered >= len(json_push) // 2, (answered, len(json_push))


def test_native_keys_builder_route_memory_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The routes the native pass looks up itself are emptied with the builder's own (node
    names come from the input), and the records stay the same."""
    monkeypatch.setattr(yangkey.producer, "MAX_ROUTES", 2)
    records = generate(nodes=4, interfaces=2, rounds=1, seed=9).records
    builder, reference = builders()
    for number, raw in enumerate(records):
        assert builder.build(raw, f"r:{number}") == reference.build(raw, f"r:{number}")
        assert len(builder._native_routes) <= 2 * len(builder._routes) <= 4
    assert builder.native_keyed > len(records) // 4


def test_native_keys_builder_with_instances_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the instance feed on the pass answers too (its headers: test_native_feed.py);
    YANGKEY_NATIVE=0: no native pass."""
    records = generate(nodes=1, interfaces=2, rounds=1, seed=3).records
    _, answered, _ = builder_outputs(records, ProducerKnobs(instances=True), True)
    assert answered > 0
    monkeypatch.setenv(native.ENV_NATIVE, "0")
    native._load.cache_clear()
    try:
        assert native.keys(records[0], "t", {}, lambda *_: None) is None
        assert native.walker(CompiledSubscription("/x", (), (), ())) is None
    finally:
        monkeypatch.delenv(native.ENV_NATIVE)
        native._load.cache_clear()


# ---------------------------------------------------------------------------- yangkey keys


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--xpath", "/ietf-interfaces:interfaces/interface"],
        ["--xpath", "/ietf-interfaces:interfaces/interface", "--override-node", "pe9"],
        ["--override-node", "pe1.nyc"],
        ["--xpath", "/ietf-interfaces:interfaces/interface | /ietf-system:system/clock"],
    ],
    ids=["file", "xpath", "xpath-node", "file-node", "two-branches"],
)
def test_native_keys_cli_same_lines(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, options: list[str]
) -> None:
    """``yangkey keys`` over every sample shape (bad lines included): the same lines out, the
    same stderr and exit status with the native pass as without, most JSON lines keyed by it."""
    records = generate(nodes=2, interfaces=3, rounds=2, seed=5).records
    lines = tmp_path / "sample.jsonl"
    lines.write_bytes(b"\n".join(records) + b"\n")
    results, answered = cli_both_ways(monkeypatch, "keys", ["keys", *options, str(lines)])
    documents = [json.loads(line) for line in results[0][1].splitlines()]
    keyed = sum(
        "key" in document and b'"datastore-contents"' in raw and b"<" not in raw[:1]
        for raw, document in zip(records, documents, strict=True)
    )
    assert keyed and answered[0] >= keyed * 0.8, (answered, keyed)
    assert answered[1] == 0
    assert results[0] == results[1]
    assert results[0][0] == 1 and '"kind"' in results[0][1]  # the bad records are reported


# ------------------------------------------------------------------ the Spark worker's tally


def test_native_keys_counted_in_the_tally_and_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """``outgoing`` (every Spark task's loop) counts the records the native pass keyed; the
    count survives the task result's JSON and the merge on the driver, and the run summary
    says which path keyed them."""
    from yangkey.spark.report import keyed_natively  # noqa: PLC0415
    from yangkey.spark.transform import Tally, outgoing  # noqa: PLC0415

    records = generate(nodes=2, interfaces=3, rounds=1, seed=5).records
    builder = MessageBuilder(load_catalog(EXAMPLES), default_node="dflt")
    tally = Tally()
    sent = list(outgoing(((raw, f"s:{n}") for n, raw in enumerate(records)), builder, "dl", tally))
    json_push = sum(
        (b'"datastore-contents"' in raw or b'"datastore-changes"' in raw) and raw[:1] == b"{"
        for raw in records
    )  # push-updates and yang-patches (test_native_patch_native.py)
    assert sent and 0 < tally.native == builder.native_keyed <= json_push
    again = Tally.from_json(tally.to_json()).merge(Tally.from_json(tally.to_compact_json(10)))
    assert again.native == 2 * tally.native
    assert keyed_natively(tally.native, tally.records).startswith(
        f"keys: {tally.native:,} of {tally.records:,} records by the native fast path"
    )
    assert "executors without yangkey-native" in keyed_natively(0, 5)
    monkeypatch.setenv(native.ENV_NATIVE, "0")
    native._load.cache_clear()
    try:
        assert keyed_natively(0, 5) == ""
        python_only = MessageBuilder(load_catalog(EXAMPLES), default_node="dflt")
        tally = Tally()
        list(outgoing(((raw, "s") for raw in records), python_only, "dl", tally))
        assert tally.native == 0 and tally.to_json() == Tally.from_json(tally.to_json()).to_json()
    finally:
        native._load.cache_clear()
