"""clickhouse/shared_topics.py: the one follower of the shared catalog that ``ddl generate``,
``ddl apply --follow`` and ``ingest --shared-catalog`` share. The catalog is an in-memory log
(tests/unit/test_shared_catalog.py's MemoryLog); the broker runs are in
tests/integration/test_catalog_topic.py."""

from __future__ import annotations

import pytest
from test_shared_catalog import DNS, FILE, IF, MemoryLog, learned

from yangkey.catalog import build_catalog
from yangkey.clickhouse.instances import CatalogFeeds
from yangkey.clickhouse.shared_topics import SharedTopics
from yangkey.config import parse_subscriptions
from yangkey.shared_catalog import SharedCatalog
from yangkey.topics import TopicSpec


def test_merge_is_the_files_topics_then_those_the_catalog_adds_each_handed_out_once() -> None:
    log = MemoryLog()
    catalog = build_catalog(parse_subscriptions(FILE))
    catalog.attach(SharedCatalog(log, "producer"))  # the file's own subscription, shared
    writer = SharedCatalog(log, "other")
    writer.publish(learned(777, DNS, "t-dns"))
    warnings: list[str] = []
    follower = SharedTopics.of(SharedCatalog(log, "ddl"), catalog, warn=warnings.append)

    merged = follower.merge()
    file_topics = [spec.name for spec in catalog.topics]
    assert [spec.name for spec in merged] == [*file_topics, "t-dns"]
    assert merged[: len(file_topics)] == list(catalog.topics)  # the file's specs as they are
    assert follower.new() == []  # nothing gained since
    assert set(follower.typed) == {*file_topics, "t-dns"}  # typed against the local schema
    assert warnings == []

    writer.publish(learned(901, "/acme-widgets:widgets/widget", "t-widgets"))
    (gained,) = follower.new()
    assert gained.name == "t-widgets"
    assert follower.new() == []  # handed out once
    # its modules are not here: message-level tables only, said once
    (warning,) = warnings
    assert warning.startswith("t-widgets: no typed instance tables")
    assert "t-widgets" not in follower.typed


def test_without_a_file_the_shared_catalog_alone_is_typed_against_the_search_path() -> None:
    log = MemoryLog()
    SharedCatalog(log, "other").publish(learned(777, DNS, "t-dns"))
    follower = SharedTopics.of(SharedCatalog(log, "ddl"), None)
    assert [spec.name for spec in follower.merge()] == ["t-dns"]
    assert [c.name for c in follower.typed["t-dns"].columns] == ["search"]


def test_follow_hands_each_new_batch_to_apply_until_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = MemoryLog()
    writer = SharedCatalog(log, "other")
    follower = SharedTopics(SharedCatalog(log, "ddl"), [TopicSpec("t-file", schema_path=IF)])
    assert [spec.name for spec in follower.merge()] == ["t-file"]
    monkeypatch.setattr("yangkey.clickhouse.shared_topics.time.sleep", lambda _s: None)
    # each round the catalog gains a subscription, until the third round stops the loop
    rounds = iter([
        lambda: writer.publish(learned(777, DNS, "t-dns")),
        lambda: None,
        lambda: writer.publish(learned(778, DNS, "t-file")),  # a file topic: never new
    ])
    applied: list[list[str]] = []

    def should_stop() -> bool:
        step = next(rounds, None)
        if step is None:
            return True
        step()
        return False

    def apply(topics: list[TopicSpec]) -> None:
        applied.append([spec.name for spec in topics])

    follower.follow(apply, should_stop=should_stop)
    assert applied == [["t-dns"]]


def test_a_catalog_feed_is_built_on_its_first_record_only() -> None:
    feeds = CatalogFeeds(build_catalog(parse_subscriptions(FILE)))
    (topic,) = feeds.typed
    assert feeds.feeds == {}  # DDL needed the columns only
    assert feeds.feed(topic) is feeds.feed(topic) is feeds.feeds[topic]
    assert feeds.feed("not-a-topic") is None
