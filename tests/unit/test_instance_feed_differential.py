"""The instance feed against the message key (architecture review, move 2).

The typed instance rows (:class:`yangkey.instances.InstanceFeed`) and the message key
(:class:`yangkey.keys.KeyDeriver`) must name the same instances: ``@path`` of every feed object
is one of the concrete XPaths Phase 3 finds on that branch, and every such XPath has its
object. A key member written module-qualified (``{"ietf-interfaces:name": "eth0"}``, lenient
RFC 7951) once keyed fine while the feed refused the entry, and the typed rows went missing.

Checked on hypothesis-drawn data over the differential suite's subscriptions (module-qualified
members drawn often), on every public key vector, on every fixture notification, and on the
shapes ``yangkey sample`` streams for the example subscriptions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_NOTIFICATIONS, REPO_DIR
from hypothesis import given
from hypothesis import strategies as st
from test_core_differential import (
    SETTINGS,
    SUBSCRIPTIONS,
    TreeMaker,
    edit_strategy,
    push_update,
)
from test_core_vectors import CASES

from yangkey.catalog import load_catalog
from yangkey.compiled import CompiledSubscription
from yangkey.demo.sample import generate
from yangkey.errors import FramingError, YangkeyError
from yangkey.instances import InstanceFeed, derive_leaves
from yangkey.keys import KeyDeriver
from yangkey.messages import CONTENT_TYPE_JSON
from yangkey.notifications import Notification, decode
from yangkey.patch import edit_plan, edit_tree
from yangkey.schema import SchemaContext
from yangkey.subtree import normalize_subtree
from yangkey.templates import compile_subscription

IF = "/ietf-interfaces:interfaces/interface"


def feeds(compiled: CompiledSubscription, schema: SchemaContext) -> list[InstanceFeed]:
    return [
        InstanceFeed(branch, derive_leaves(branch, schema, compiled.modules))
        for branch in compiled.branches
    ]


def key_paths(deriver: KeyDeriver, note: Notification) -> Any:
    """Per branch, the XPaths Phase 3 finds (before the container-template rule), or the
    class of its rejection."""
    try:
        return [sorted(set(found)) for found in deriver.instances(note)]
    except YangkeyError as exc:
        return type(exc)


def feed_paths(branch_feeds: list[InstanceFeed], note: Notification) -> Any:
    """Per branch, the instances the feed finds (``@path``), or the class of its rejection.
    Where the whole feed builds (no leaf value it converts is invalid), its objects' paths
    are those instances."""
    try:
        per_branch = []
        for feed in branch_feeds:
            if note.kind == "push-update":
                found = [instance.path for instance in feed.instances(note.data)]
            else:
                plan = edit_plan(feed.branch)
                found = []
                for edit in note.edits:
                    tree = edit_tree(plan, edit)
                    if tree is not None:
                        found += [instance.path for instance in feed.instances(tree)]
            per_branch.append(sorted(set(found)))
    except YangkeyError as exc:
        return type(exc)
    for feed, paths in zip(branch_feeds, per_branch, strict=True):
        try:
            objects = feed.feed(note)
        except YangkeyError:
            continue  # a leaf the key does not read is invalid: counted as a feed failure
        assert sorted({obj["@path"] for obj in objects}) == paths
    return per_branch


def qualify(draw: st.DrawFn, value: Any, module: str | None) -> Any:
    """``value`` with members module-qualified where RFC 7951 leaves them bare, one in two:
    the same data, as lenient producers write it."""
    if isinstance(value, list):
        return [qualify(draw, item, module) for item in value]
    if not isinstance(value, dict):
        return value
    result: dict[Any, Any] = {}
    for member, child in value.items():
        if not isinstance(member, str):
            result[member] = child
            continue
        prefix, colon, _ = member.partition(":")
        own = prefix if colon else module
        written = member
        if not colon and own is not None and draw(st.booleans()):
            written = f"{own}:{member}"
        result[written] = qualify(draw, child, own)
    return result


@pytest.fixture(scope="module")
def compiled_feeds(fx_schema: SchemaContext) -> dict[str, Any]:
    result = {}
    for text in SUBSCRIPTIONS:
        compiled = compile_subscription(
            text, fx_schema, keyless="position" if "sample" in text else "reject"
        )
        root = fx_schema.schema_root(compiled.modules)
        result[text] = (compiled, root, feeds(compiled, fx_schema))
    return result


@SETTINGS
@given(data=st.data())
def test_feed_paths_are_key_xpaths_push_update(compiled_feeds, data) -> None:
    compiled, root, branch_feeds = compiled_feeds[data.draw(st.sampled_from(SUBSCRIPTIONS))]
    tree = data.draw(st.composite(lambda draw: TreeMaker(root, compiled).tree(draw))())
    tree = data.draw(st.composite(lambda draw: qualify(draw, tree, None))())
    note = push_update(tree)
    assert feed_paths(branch_feeds, note) == key_paths(KeyDeriver(compiled), note), tree


@SETTINGS
@given(data=st.data())
def test_feed_paths_are_key_xpaths_yang_patch(compiled_feeds, data) -> None:
    compiled, root, branch_feeds = compiled_feeds[data.draw(st.sampled_from(SUBSCRIPTIONS))]
    edits = data.draw(st.lists(edit_strategy(compiled, root), min_size=1, max_size=3))
    note = Notification(
        "generated", CONTENT_TYPE_JSON, "push-change-update", "n", 1, edits=tuple(edits)
    )
    assert feed_paths(branch_feeds, note) == key_paths(KeyDeriver(compiled), note), edits


def test_feed_reads_a_module_qualified_key_member(ietf_schema: SchemaContext) -> None:
    """The review's probe: the feed refused this entry ("has no key leaf name") while the key
    was derived, so the typed rows were silently missing."""
    compiled = compile_subscription(IF, ietf_schema)
    (feed,) = feeds(compiled, ietf_schema)
    note = push_update(
        {"ietf-interfaces:interfaces": {"interface": [
            {"ietf-interfaces:name": "eth0", "ietf-interfaces:enabled": True},
            {"name": "eth1", "enabled": False},
        ]}}
    )
    derived = KeyDeriver(compiled).derive(note)
    objects = feed.feed(note)
    assert [obj["@path"] for obj in objects] == [f"{IF}[name='eth0']", f"{IF}[name='eth1']"]
    assert set(derived.xpaths) == {obj["@path"] for obj in objects}
    assert [(obj["name"], obj["enabled"]) for obj in objects] == [
        ("eth0", "true"), ("eth1", "false")]


def _key_vectors() -> list[Any]:
    return [case for case in CASES if case.values[0] is None or case.values[0]["kind"] == "key"]


@pytest.mark.parametrize("case", _key_vectors())
def test_feed_paths_are_key_xpaths_on_vectors(case: dict[str, Any], ietf_schema) -> None:
    xpath = case.get("xpath") or normalize_subtree(case["subtree"], ietf_schema.index)
    compiled = compile_subscription(xpath, ietf_schema)
    note = decode(case["notification"].encode(), case["id"], ietf_schema.index.by_namespace)
    expected = key_paths(KeyDeriver(compiled), note)
    assert isinstance(expected, list) and any(expected)
    assert feed_paths(feeds(compiled, ietf_schema), note) == expected


FIXTURE_SUBSCRIPTIONS = {
    "flows": ["/yk-test:top/flow"],
    "devices/iosxe": ["/ietf-interfaces:interfaces-state/interface/statistics"],
    "": [
        IF,
        f"{IF}/name",
        f"{IF}[type='iana-if-type:ethernetCsmacd']/statistics",
        f"{IF}[type='iana-if-type:gpon']",
        f"{IF}/statistics | /ietf-interfaces:interfaces",
    ],
}


def _fixture_notifications() -> list[Any]:
    paths = sorted(
        p for p in FIXTURE_NOTIFICATIONS.rglob("*") if p.suffix in (".json", ".xml")
    )
    return [pytest.param(p, id=str(p.relative_to(FIXTURE_NOTIFICATIONS))) for p in paths]


@pytest.mark.parametrize("path", _fixture_notifications())
def test_feed_paths_are_key_xpaths_on_fixture_notifications(path: Path, fx_schema) -> None:
    name = str(path.relative_to(FIXTURE_NOTIFICATIONS))
    subscriptions = next(subs for prefix, subs in FIXTURE_SUBSCRIPTIONS.items()
                         if name.startswith(prefix))
    try:
        note = decode(path.read_bytes(), name, fx_schema.index.by_namespace)
    except FramingError:
        assert name == "devices/subscription-started.json"  # no data to feed or key
        return
    keyed = 0
    for xpath in subscriptions:
        compiled = compile_subscription(xpath, fx_schema)
        expected = key_paths(KeyDeriver(compiled), note)
        assert feed_paths(feeds(compiled, fx_schema), note) == expected, xpath
        keyed += isinstance(expected, list) and any(expected)
    assert keyed or note.empty  # every fixture keys under one of its subscriptions


def test_feed_paths_are_key_xpaths_on_sample_shapes() -> None:
    """Every notification ``yangkey sample`` writes (JSON and XML, envelope, telemetry
    message, yang-patch), under its subscription in examples/subscriptions.yaml."""
    catalog = load_catalog(REPO_DIR / "examples" / "subscriptions.yaml")
    schema = SchemaContext.cached(catalog.yang_dirs)
    by_entry = {id(entry): feeds(entry.compiled, schema) for entry in catalog.entries}
    compared = 0
    for number, raw in enumerate(generate().records):
        try:
            note = decode(raw, f"sample:{number}", schema.index.by_namespace)
        except YangkeyError:
            continue  # the sample's deliberately bad notifications
        entry = catalog.entry(note.subscription_id or 0, note.node)
        if entry is None:
            continue
        expected = key_paths(entry.deriver, note)
        assert feed_paths(by_entry[id(entry)], note) == expected, raw[:200]
        compared += isinstance(expected, list) and any(expected)
    assert compared > 20, json.dumps(compared)
