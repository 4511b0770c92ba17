"""SPEC 5 and 8 — the subscriptions file (yangkey.config) and the compiled catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from yangkey.catalog import build_catalog, load_catalog
from yangkey.config import load_subscriptions_file, parse_duration, parse_subscriptions
from yangkey.errors import ConfigError, YangkeyError

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "subscriptions.yaml"
IF = "/ietf-interfaces:interfaces/interface"


def write(tmp_path: Path, text: str, name: str = "subs.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- example


def test_core_example_subscriptions_compile() -> None:
    catalog = load_catalog(EXAMPLE)
    by_id = {entry.id: entry for entry in catalog.entries}
    assert set(by_id) == {1042, 1043, 1100, 3001, 2001, 2002}
    assert by_id[1042].topics == ("netops-current-state-if-interfaces-interface",)
    assert by_id[1042].compiled.branches[0].template == f"{IF}[name='%s']"
    assert by_id[1043].topics == ("netops-stats-if-interfaces-interface-statistics",)
    assert by_id[1100].topics == ("netops-state-change-if-interfaces-interface-ip-ipv4-address",)
    assert by_id[3001].compiled.branches[0].template == (
        "/ietf-hardware:hardware/component[name='%s']/serial-num"
    )
    assert by_id[2001].compiled.branches[0].template == "/ietf-system:system/clock"
    assert by_id[2002].compiled.branches[0].target == "leaf-list"
    assert catalog.dead_letter_topic == "netops-yangkey-dead-letter"
    names = [spec.name for spec in catalog.topics]
    assert names == sorted(names)
    assert len(names) == len(set(names)) == 6


def test_core_example_topic_specs() -> None:
    catalog = load_catalog(EXAMPLE)
    clock = catalog.topic("netops-stats-sys-system-clock")
    assert clock.retention_seconds == 30 * 86400
    assert clock.subscription_ids == (2001,)
    assert clock.compaction is False
    current = catalog.topic("netops-current-state-if-interfaces-interface")
    assert current.compaction is True
    assert current.retention_seconds == 7 * 86400
    assert current.partitions == 6
    with pytest.raises(KeyError):
        catalog.topic("no-such-topic")


def test_core_example_parses_without_compiling() -> None:
    model = load_subscriptions_file(EXAMPLE)
    assert model.organisation_prefix == "netops"
    assert model.topic_policy.type_level is True
    assert [s.id for s in model.subscriptions] == [1042, 1043, 1100, 3001, 2001, 2002]
    assert "<hardware" in model.subscriptions[3].filter_text


# ------------------------------------------------------------------------ validation


def error_of(text: str, tmp_path: Path, name: str = "subs.yaml") -> ConfigError:
    path = write(tmp_path, text, name)
    with pytest.raises(ConfigError) as info:
        load_subscriptions_file(path)
    return info.value


def test_core_config_duplicate_ids(tmp_path: Path) -> None:
    text = (
        "subscriptions:\n"
        "  - id: 1\n"
        "    xpath: /ietf-system:system/clock\n"
        "  - id: 1\n"
        "    xpath: /ietf-system:system/ntp\n"
    )
    error = error_of(text, tmp_path, "dups.yaml")
    assert "dups.yaml" in str(error)
    assert "1" in error.reason and "twice" in error.reason


def test_core_config_duplicate_id_error_points_at_duplicate_line(tmp_path: Path) -> None:
    """The operator must find the second declaration: the line of the duplicate entry (4),
    not the top of the file."""
    text = (
        "subscriptions:\n"
        "  - id: 1\n"
        "    xpath: /ietf-system:system/clock\n"
        "  - id: 1\n"
        "    xpath: /ietf-system:system/ntp\n"
    )
    error = error_of(text, tmp_path)
    assert error.position is not None
    assert error.position.line == 4


def test_core_config_compaction_needs_on_change_sync(tmp_path: Path) -> None:
    text = (
        "subscriptions:\n"
        "  - id: 1\n"
        "    xpath: /ietf-system:system/clock\n"
        "    type: on-change-sync\n"
        "    compaction: true\n"
        "  - id: 2\n"
        "    xpath: /ietf-system:system/clock\n"
        "    type: on-change\n"
        "    compaction: true\n"
    )
    error = error_of(text, tmp_path, "compaction.yaml")
    assert "compaction.yaml" in str(error)
    assert "compaction" in error.reason
    assert error.position is not None
    assert error.position.line == 6


@pytest.mark.parametrize(
    ("text", "field", "lines"),
    [
        (
            "subscriptions:\n  - id: 1\n    xpath: /ietf-system:system/clock\n    bogus: 3\n",
            "bogus",
            {2, 4},
        ),
        ("organisation_prefix: x\nunknown_top: 1\n", "unknown_top", {1, 2}),
        (
            "topic_policy:\n  type_level: true\n  colour: red\n",
            "colour",
            {2, 3},  # the topic_policy mapping starts on line 2; the field is on line 3
        ),
        (
            "defaults:\n  partitions: 6\n  replicas: 3\n",
            "replicas",
            {2, 3},
        ),
    ],
)
def test_core_config_unknown_field_rejected(
    tmp_path: Path, text: str, field: str, lines: set[int]
) -> None:
    error = error_of(text, tmp_path, "unknown.yaml")
    assert field in error.reason
    assert "unknown.yaml" in str(error)
    assert error.position is not None and error.position.line in lines


@pytest.mark.parametrize(
    ("text", "needle", "lines"),
    [
        (
            "subscriptions:\n  - id: 1\n    xpath: /ietf-system:system/clock\n"
            "  - id: 2\n    xpath: /ietf-system:system/clock\n    type: weekly\n",
            "type",
            {4, 6},
        ),
        ("subscriptions:\n  - id: 1\n    xpath: /a:b\n    subtree: <a/>\n", "xpath", {2, 3, 4}),
        ("subscriptions:\n  - id: 1\n    type: periodic\n", "xpath", {2}),
        ("subscriptions:\n  - id: -5\n    xpath: /a:b\n", "id", {2}),
        ("subscriptions:\n  - id: 1\n    xpath: /a:b\n    retention: forever\n", "retention",
         {2, 4}),
        ("topic_policy:\n  separator: '/'\n", "separator", {1, 2}),
        ("defaults:\n  partitions: 0\n", "partitions", {1, 2}),
    ],
)
def test_core_config_invalid_values_named_with_line(
    tmp_path: Path, text: str, needle: str, lines: set[int]
) -> None:
    error = error_of(text, tmp_path, "bad.yaml")
    assert needle in str(error)
    assert "bad.yaml" in str(error)
    assert error.position is not None and error.position.line in lines


def test_core_config_invalid_yaml_syntax_has_position(tmp_path: Path) -> None:
    error = error_of("subscriptions: [\n  - id: 1\n", tmp_path, "broken.yaml")
    assert "broken.yaml" in str(error)
    assert error.position is not None and error.position.line == 2


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n"])
def test_core_config_top_level_must_be_mapping(tmp_path: Path, text: str) -> None:
    assert "mapping" in error_of(text, tmp_path).reason


def test_core_config_empty_file_is_empty_catalog(tmp_path: Path) -> None:
    model = load_subscriptions_file(write(tmp_path, ""))
    assert model.subscriptions == ()
    assert build_catalog(model).entries == ()


def test_core_config_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_subscriptions_file(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(info.value)


def test_core_config_yaml_is_safe_loaded(tmp_path: Path) -> None:
    text = "subscriptions: !!python/object/apply:os.system ['echo hacked']\n"
    with pytest.raises(ConfigError):
        load_subscriptions_file(write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("7d", 604800), ("12h", 43200), ("90m", 5400), ("3600", 3600), (" 2w ", 1209600),
     ("30s", 30), (45, 45)],
)
def test_core_config_durations(text: str | int, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["7x", "d7", "", "-1d", "1.5h"])
def test_core_config_bad_durations(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


# --------------------------------------------------------------------------- catalog


def test_core_catalog_compile_error_names_file_and_subscription(tmp_path: Path) -> None:
    text = (
        "subscriptions:\n"
        "  - id: 1\n"
        "    xpath: /ietf-system:system/clock\n"
        "  - id: 77\n"
        "    xpath: /ietf-system:system/clockz\n"
    )
    path = write(tmp_path, text, "compile-error.yaml")
    with pytest.raises(YangkeyError) as info:
        load_catalog(path, strict=True)
    message = str(info.value)
    assert "clockz" in message
    # The error must say where the bad filter is: the file, or at least the subscription id.
    assert "compile-error.yaml" in message or "subscription 77" in message, message


def test_core_catalog_invalid_prefix_names_file(tmp_path: Path) -> None:
    text = "organisation_prefix: 'net ops'\nsubscriptions:\n  - id: 1\n" \
           "    xpath: /ietf-system:system/clock\n"
    path = write(tmp_path, text, "prefix.yaml")
    with pytest.raises(YangkeyError) as info:
        load_catalog(path)
    assert "net ops" in str(info.value)
    assert "prefix.yaml" in str(info.value)


def test_core_catalog_relative_yang_dirs_resolved_against_file(tmp_path: Path, fx_dir: str) -> None:
    (tmp_path / "yang").symlink_to(fx_dir)
    text = (
        "defaults:\n  yang_dirs: [yang]\n"
        "subscriptions:\n  - id: 5\n    xpath: /yk-test:top/flow\n"
    )
    catalog = load_catalog(write(tmp_path, text))
    assert catalog.entries[0].topics == ("ykt-top-flow",)


def test_core_catalog_per_subscription_yang_dirs(tmp_path: Path, fx_dir: str) -> None:
    text = (
        "subscriptions:\n  - id: 5\n    xpath: /yk-test:top/site/rack\n"
        f"    yang_dirs: ['{fx_dir}']\n"
    )
    catalog = load_catalog(write(tmp_path, text))
    assert catalog.entries[0].compiled.branches[0].template == (
        "/yk-test:top/site[name='%s']/rack[id='%s']"
    )


def test_core_catalog_type_level_off_by_default() -> None:
    text = "subscriptions:\n  - id: 1\n    xpath: /ietf-system:system/clock\n    type: on-change\n"
    catalog = build_catalog(parse_subscriptions(text))
    assert catalog.entries[0].topics == ("sys-system-clock",)


@pytest.mark.parametrize(
    ("kind", "compaction", "level"),
    [("periodic", "false", "stats"), ("on-change", "false", "state-change"),
     ("on-change-sync", "false", "state"), ("on-change-sync", "true", "current-state")],
)
def test_core_catalog_type_level_per_type(kind: str, compaction: str, level: str) -> None:
    text = (
        "organisation_prefix: netops\ntopic_policy:\n  type_level: true\n  separator: '.'\n"
        f"subscriptions:\n  - id: 1\n    xpath: {IF}\n    type: {kind}\n"
        f"    compaction: {compaction}\n"
    )
    catalog = build_catalog(parse_subscriptions(text))
    assert catalog.entries[0].topics == (f"netops.{level}.if-interfaces-interface",)
    assert catalog.topics[0].compaction is (compaction == "true")


def test_core_catalog_type_level_separates_pinned_and_open_of_different_types() -> None:
    text = (
        "topic_policy:\n  type_level: true\n"
        f"subscriptions:\n  - id: 1\n    xpath: {IF}\n    type: periodic\n"
        f"  - id: 2\n    xpath: \"{IF}[name='eth0']\"\n    type: on-change\n"
    )
    catalog = build_catalog(parse_subscriptions(text))
    assert [e.topics for e in catalog.entries] == [
        ("stats-if-interfaces-interface",), ("state-change-if-interfaces-interface",),
    ]


def test_core_catalog_shared_topic_with_different_types_rejected() -> None:
    text = (
        f"subscriptions:\n  - id: 1\n    xpath: {IF}\n    type: periodic\n"
        f"  - id: 2\n    xpath: {IF}\n    type: on-change\n"
    )
    with pytest.raises(YangkeyError, match="if-interfaces-interface"):
        build_catalog(parse_subscriptions(text))


def test_core_catalog_entry_lookup_by_node_pattern() -> None:
    text = (
        "subscriptions:\n"
        f"  - id: 1\n    xpath: {IF}\n    node: 'pe*'\n"
        "  - id: 2\n    xpath: /ietf-system:system/clock\n"
    )
    catalog = build_catalog(parse_subscriptions(text))
    assert catalog.entry(1, "pe-7") is not None
    assert catalog.entry(1, "core-1") is None
    assert catalog.entry(1, None) is not None
    assert catalog.entry(2, "anything") is not None
    assert catalog.entry(3, "pe-7") is None


def test_core_catalog_retention_and_partitions_overrides() -> None:
    text = (
        "defaults: {partitions: 3, retention: 1d, replication_factor: 2}\n"
        "subscriptions:\n"
        f"  - id: 1\n    xpath: {IF}\n    retention: 3d\n    partitions: 12\n"
        f"  - id: 2\n    xpath: \"{IF}[name='x']\"\n"
    )
    catalog = build_catalog(parse_subscriptions(text))
    (spec,) = catalog.topics
    assert spec.retention_seconds == 3 * 86400
    assert spec.partitions == 12
    assert spec.replication_factor == 2
    assert spec.subscription_ids == (1, 2)


def test_replication_defaults_to_the_brokers_own() -> None:
    """Nothing said: every topic asks the broker for its default.replication.factor (-1 in
    CreateTopics) and keeps its min.insync.replicas; an older file's values still hold."""
    from yangkey.spark.preflight import topic_specs  # noqa: PLC0415

    catalog = build_catalog(parse_subscriptions(f"subscriptions:\n  - id: 1\n    xpath: {IF}\n"))
    specs = topic_specs(catalog, None)
    assert len(specs) == 2 and specs[-1].name == catalog.dead_letter_topic
    assert [(s.replication_factor, s.min_insync_replicas) for s in specs] == [(-1, None)] * 2
    assert catalog.file.internal("catalog") == catalog.file.internal("schema_store") == (None, None)
    assert catalog.shared_record(catalog.entries[0]).replication_factor == -1


def test_replication_per_subscription_and_per_internal_topic() -> None:
    text = (
        "defaults: {replication_factor: 3, min_insync_replicas: 2}\n"
        "internal_topics:\n"
        "  dead_letter: {replication_factor: 5, min_insync_replicas: 3}\n"
        "  catalog: {min_insync_replicas: 3}\n"
        "subscriptions:\n"
        f"  - id: 1\n    xpath: {IF}\n    replication_factor: 2\n    min_insync_replicas: 1\n"
        "  - id: 2\n    xpath: /ietf-system:system/clock\n"
    )
    from yangkey.spark.preflight import topic_specs  # noqa: PLC0415

    catalog = build_catalog(parse_subscriptions(text))
    replication = {s.name: (s.replication_factor, s.min_insync_replicas) for s in topic_specs(
        catalog, None)}
    assert replication == {
        "if-interfaces-interface": (2, 1),
        "sys-system-clock": (3, 2),
        catalog.dead_letter_topic: (5, 3),
    }
    assert catalog.file.internal("catalog") == (3, 3)
    assert catalog.file.internal("schema_store") == (3, 2)
    record = catalog.shared_record(catalog.entries[0])
    assert (record.replication_factor, record.min_insync_replicas) == (2, 1)
    (single,) = topic_specs(catalog, "everything")[:1]
    assert (single.replication_factor, single.min_insync_replicas) == (3, 2)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("defaults: {replication_factor: 0}\n", "defaults.replication_factor: Input should be"),
        (
            "defaults: {replication_factor: 2, min_insync_replicas: 3}\n",
            "min_insync_replicas (3) exceeds replication_factor (2)",
        ),
        (
            "defaults: {replication_factor: 2}\n"
            "internal_topics: {schema_store: {min_insync_replicas: 3}}\n",
            "internal_topics.schema_store (unset fields from defaults): min_insync_replicas (3)",
        ),
        (
            "internal_topics: {registry: {replication_factor: 3}}\n",
            "internal_topics.registry: Extra inputs are not permitted",
        ),
    ],
)
def test_replication_settings_are_validated(text: str, reason: str, tmp_path: Path) -> None:
    assert reason in error_of(text, tmp_path).reason


def test_subscriptions_sharing_a_topic_take_the_most_replicas() -> None:
    text = (
        "subscriptions:\n"
        f"  - id: 1\n    xpath: {IF}\n    replication_factor: 2\n"
        f"  - id: 2\n    xpath: \"{IF}[name='x']\"\n    replication_factor: 3\n"
        f"  - id: 3\n    xpath: \"{IF}[name='y']\"\n    min_insync_replicas: 2\n"
    )
    (spec,) = build_catalog(parse_subscriptions(text)).topics
    assert (spec.replication_factor, spec.min_insync_replicas) == (3, 2)
    clash = text.replace("replication_factor: 3", "replication_factor: 1").replace(
        "replication_factor: 2", "replication_factor: 1")
    with pytest.raises(YangkeyError, match="min_insync_replicas 2 exceeds their largest"):
        build_catalog(parse_subscriptions(clash))


def test_core_catalog_subtree_subscription() -> None:
    text = (
        "subscriptions:\n  - id: 9\n    subtree: |\n"
        "      <filter><system xmlns=\"urn:ietf:params:xml:ns:yang:ietf-system\"><clock/><ntp>"
        "<server/></ntp></system></filter>\n"
    )
    catalog = build_catalog(parse_subscriptions(text))
    entry = catalog.entries[0]
    assert [b.template for b in entry.compiled.branches] == [
        "/ietf-system:system/clock", "/ietf-system:system/ntp/server[name='%s']",
    ]
    assert entry.topics == ("sys-system-clock", "sys-system-ntp-server")


def test_core_catalog_generation_carried() -> None:
    text = f"subscriptions:\n  - id: 1\n    xpath: {IF}\n    generation: 4\n"
    assert build_catalog(parse_subscriptions(text)).entries[0].generation == 4
