"""Pure tests of the librdkafka config helpers and the broker's generated settings."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from yangkey.errors import ConfigError, TopicError
from yangkey.kafka.config import (
    TopicSpec,
    client_overrides,
    consumer_config,
    ensure_topics,
    env_overlay,
    load_properties,
    parse_kv,
    parse_properties,
    producer_config,
    topic_configs,
)
from yangkey.kafka.process import BrokerState, NodeState
from yangkey.kafka.properties import broker_properties, random_cluster_id, render_properties

# --------------------------------------------------------------------------- parse_kv


def test_parse_kv_splits_on_the_first_equals_and_keeps_values_verbatim() -> None:
    assert parse_kv(["a.b=1", " sasl.password = p=w ", "empty="]) == {
        "a.b": "1",
        "sasl.password": " p=w ",
        "empty": "",
    }


def test_parse_kv_later_wins() -> None:
    assert parse_kv(["acks=1", "acks=all"]) == {"acks": "all"}


@pytest.mark.parametrize("item", ["novalue", "=x", "  =x"])
def test_parse_kv_rejects_malformed_items(item: str) -> None:
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_kv([item], source="--set")


# --------------------------------------------------------------------------- properties


def test_properties_skip_comments_and_blank_lines_and_strip() -> None:
    text = "# comment\n! also a comment\n\n  security.protocol = SASL_SSL  \nsasl.mechanism=PLAIN\n"
    assert parse_properties(text) == {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}


def test_properties_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    path.write_text("a=1\n\nbroken line\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_properties(path)
    assert caught.value.position is not None
    assert caught.value.position.line == 3
    assert str(path) in str(caught.value)


def test_missing_properties_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_properties(tmp_path / "nope.properties")


# --------------------------------------------------------------------------- env overlay


def test_env_overlay_maps_underscores_to_dots_and_ignores_other_variables() -> None:
    environ = {
        "YANGKEY_KAFKA_SASL_USERNAME": "alice",
        "YANGKEY_KAFKA_SSL_CA_LOCATION": "/etc/ca.pem",
        "YANGKEY_KAFKA_": "ignored",
        "YANGKEY_CACHE": "/tmp",
        "PATH": "/bin",
    }
    assert env_overlay(environ) == {"sasl.username": "alice", "ssl.ca.location": "/etc/ca.pem"}


def test_client_overrides_precedence_file_then_env_then_kv(tmp_path: Path) -> None:
    path = tmp_path / "c.properties"
    path.write_text("linger.ms=5\nacks=1\nclient.id=file\n", encoding="utf-8")
    merged = client_overrides(
        properties_file=path,
        environ={"YANGKEY_KAFKA_ACKS": "0", "YANGKEY_KAFKA_CLIENT_ID": "env"},
        kv=["client.id=cli"],
    )
    assert merged == {"linger.ms": "5", "acks": "0", "client.id": "cli"}


# --------------------------------------------------------------------------- client configs


def test_producer_defaults() -> None:
    assert producer_config("h:9092") == {
        "bootstrap.servers": "h:9092",
        "partitioner": "murmur2_random",
        "enable.idempotence": True,
        "acks": "all",
        "linger.ms": 20,
        "compression.type": "lz4",
    }


def test_producer_overrides_win_but_explicit_bootstrap_beats_them() -> None:
    config = producer_config(
        "h:1", {"compression.type": "zstd", "bootstrap.servers": "other:2", "x.y": "z"}
    )
    assert config["compression.type"] == "zstd"
    assert config["bootstrap.servers"] == "h:1"
    assert config["x.y"] == "z"


def test_bootstrap_may_come_from_overrides_only() -> None:
    assert producer_config(None, {"bootstrap.servers": "b:3"})["bootstrap.servers"] == "b:3"


def test_missing_bootstrap_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="bootstrap"):
        consumer_config(None, "g")


def test_lowering_acks_turns_idempotence_off_unless_set_explicitly() -> None:
    assert producer_config("h:1", {"acks": "1"})["enable.idempotence"] is False
    assert producer_config("h:1", {"acks": -1})["enable.idempotence"] is True
    explicit = producer_config("h:1", {"acks": "1", "enable.idempotence": "true"})
    assert explicit["enable.idempotence"] == "true"


def test_consumer_defaults() -> None:
    assert consumer_config("h:9092", "ingest") == {
        "bootstrap.servers": "h:9092",
        "group.id": "ingest",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "isolation.level": "read_committed",
    }


def test_consumer_overrides() -> None:
    config = consumer_config("h:1", "g", {"auto.offset.reset": "latest"})
    assert config["auto.offset.reset"] == "latest"


# --------------------------------------------------------------------------- topics


def test_topic_configs_for_compaction_and_retention() -> None:
    assert topic_configs(TopicSpec("t", compaction=True, retention_seconds=60)) == {
        "cleanup.policy": "compact",
        "retention.ms": "60000",
    }
    assert topic_configs(TopicSpec("t", retention_seconds=-1)) == {
        "cleanup.policy": "delete",
        "retention.ms": "-1",
    }
    spec = TopicSpec("t", configs={"segment.ms": "100"})
    assert topic_configs(spec, {"min.insync.replicas": "1"}) == {
        "cleanup.policy": "delete",
        "segment.ms": "100",
        "min.insync.replicas": "1",
    }


class _FakeTopic:
    def __init__(self, partitions: int, replicas: int) -> None:
        self.partitions = {i: _FakePartition(replicas) for i in range(partitions)}
        self.error = None


class _FakePartition:
    leader = 1

    def __init__(self, replicas: int) -> None:
        self.replicas = list(range(1, replicas + 1))


class _FakeMetadata:
    def __init__(self, topics: dict[str, tuple[int, int]], brokers: int) -> None:
        self.topics = {name: _FakeTopic(*shape) for name, shape in topics.items()}
        self.brokers = {i: f"broker {i}" for i in range(1, brokers + 1)}


class _FakeAdmin:
    """Just enough AdminClient: records what would be created, answers with metadata. A
    topic created with the broker's default replication gets ``default_replicas``."""

    def __init__(
        self,
        topics: dict[str, int],
        refuse: dict[str, KafkaError] | None = None,
        *,
        brokers: int = 1,
        default_replicas: int = 1,
    ):
        self.topics = {name: (partitions, 1) for name, partitions in topics.items()}
        self.refuse = refuse or {}
        self.requested: list[Any] = []
        self.brokers = brokers
        self.default_replicas = default_replicas

    def list_topics(self, timeout: float) -> _FakeMetadata:
        return _FakeMetadata(self.topics, self.brokers)

    def create_topics(self, new_topics: list[Any], **_: Any) -> dict[str, Future[None]]:
        futures: dict[str, Future[None]] = {}
        for topic in new_topics:
            self.requested.append(topic)
            future: Future[None] = Future()
            if topic.topic in self.refuse:
                future.set_exception(KafkaException(self.refuse[topic.topic]))
            else:
                factor = topic.replication_factor
                replicas = self.default_replicas if factor == -1 else factor
                self.topics[topic.topic] = (topic.num_partitions, replicas)
                future.set_result(None)
            futures[topic.topic] = future
        return futures


def test_ensure_topics_creates_only_missing_topics() -> None:
    admin = _FakeAdmin({"old": 6})
    result = ensure_topics(
        admin,  # type: ignore[arg-type]
        [TopicSpec("old", partitions=3), TopicSpec("new", partitions=2, compaction=True)],
    )
    assert result.created == ("new",)
    assert result.existing == ("old",)
    assert result.warnings and "old exists with 6 partitions" in result.warnings[0]
    (requested,) = admin.requested
    assert requested.config["cleanup.policy"] == "compact"


def test_topics_ask_for_the_brokers_replication_unless_told(
    capsys: pytest.CaptureFixture[str],
) -> None:
    admin = _FakeAdmin({}, brokers=3, default_replicas=3)
    specs = [TopicSpec("plain"), TopicSpec("sure", replication_factor=3, min_insync_replicas=2)]
    ensure_topics(admin, specs)  # type: ignore[arg-type]
    plain, sure = admin.requested
    assert plain.replication_factor == -1  # CreateTopics: the broker's default.replication.factor
    assert "min.insync.replicas" not in plain.config  # the broker's
    assert sure.replication_factor == 3 and sure.config["min.insync.replicas"] == "2"
    assert capsys.readouterr().err == "", "3 replicas on 3 brokers: nothing to say"


def test_too_few_replicas_on_a_cluster_is_one_warning_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    admin = _FakeAdmin({"old": 3}, brokers=3, default_replicas=3)  # "old" has 1 replica
    ensure_topics(
        admin,  # type: ignore[arg-type]
        [TopicSpec("old", partitions=3), TopicSpec("new", replication_factor=1), TopicSpec("ok")],
    )
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "warning: 2 topic(s) with fewer than 3 replicas on this 3-broker cluster: new (1), old (1);"
    )

    ensure_topics(_FakeAdmin({"old": 1}, brokers=1), [TopicSpec("old")])  # type: ignore[arg-type]
    ensure_topics(_FakeAdmin({"old": 1}, brokers=3), [TopicSpec("old")], warn=False)  # type: ignore[arg-type]
    assert capsys.readouterr().err == "", "one broker: 1 replica is all there can be"


def test_ensure_topics_treats_a_concurrent_creation_as_success() -> None:
    race = KafkaError(KafkaError.TOPIC_ALREADY_EXISTS)
    admin = _FakeAdmin({}, refuse={"t": race})
    result = ensure_topics(admin, [TopicSpec("t")])  # type: ignore[arg-type]
    assert result.created == ()
    assert result.existing == ("t",)


def test_ensure_topics_raises_a_topic_error_naming_each_refusal() -> None:
    refusal = KafkaError(KafkaError.INVALID_REPLICATION_FACTOR, "only 1 broker")
    admin = _FakeAdmin({}, refuse={"bad": refusal})
    with pytest.raises(TopicError, match="bad: only 1 broker"):
        ensure_topics(admin, [TopicSpec("bad", replication_factor=3)])  # type: ignore[arg-type]


def test_ensure_topics_rejects_conflicting_duplicates() -> None:
    with pytest.raises(TopicError, match="twice"):
        ensure_topics(_FakeAdmin({}), [TopicSpec("t"), TopicSpec("t", partitions=2)])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- broker settings


def test_broker_properties_are_local_single_node_and_overridable(tmp_path: Path) -> None:
    props = broker_properties(
        port=1234,
        controller_port=1235,
        log_dir=tmp_path,
        overrides={"auto.create.topics.enable": True, "num.partitions": 6},
    )
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:1234,CONTROLLER://127.0.0.1:1235"
    assert props["controller.quorum.bootstrap.servers"] == "127.0.0.1:1235"
    assert props["transaction.state.log.min.isr"] == "1"
    assert props["offsets.topic.replication.factor"] == "1"
    assert props["group.initial.rebalance.delay.ms"] == "0"
    assert props["log.cleaner.min.compaction.lag.ms"] == "0"
    assert props["auto.create.topics.enable"] == "true"  # the override, Java-style boolean
    assert props["num.partitions"] == "6"
    assert (
        broker_properties(port=1, controller_port=2, log_dir=tmp_path)["auto.create.topics.enable"]
        == "false"
    )


@pytest.mark.parametrize(
    ("nodes", "replicas", "in_sync"), [(2, "2", "1"), (3, "3", "2"), (5, "3", "2")]
)
def test_cluster_nodes_share_a_static_quorum_and_replicate_like_production(
    tmp_path: Path, nodes: int, replicas: str, in_sync: str
) -> None:
    voters = {node: 9100 + node for node in range(1, nodes + 1)}
    props = broker_properties(
        port=9002, controller_port=9102, log_dir=tmp_path, node_id=2, voters=voters
    )
    assert props["node.id"] == "2"
    assert props["controller.quorum.voters"] == ",".join(
        f"{node}@127.0.0.1:{port}" for node, port in voters.items()
    )
    assert "controller.quorum.bootstrap.servers" not in props
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:9002,CONTROLLER://127.0.0.1:9102"
    for key in (
        "default.replication.factor",
        "offsets.topic.replication.factor",
        "transaction.state.log.replication.factor",
    ):
        assert props[key] == replicas, key
    assert props["min.insync.replicas"] == props["transaction.state.log.min.isr"] == in_sync


def test_render_properties_escapes_backslashes() -> None:
    text = render_properties({"log.dirs": "C:\\kafka", "a": "b"}, "header")
    assert text == "# header\nlog.dirs=C:\\\\kafka\na=b\n"


def test_cluster_id_looks_like_kafkas() -> None:
    ids = {random_cluster_id() for _ in range(200)}
    assert len(ids) == 200
    for cluster_id in ids:
        assert len(cluster_id) == 22
        assert not cluster_id.startswith("-")


def test_broker_state_round_trip_and_missing_file(tmp_path: Path) -> None:
    assert BrokerState.read(tmp_path) is None
    state = BrokerState(
        pid=2**22 + 17,  # beyond the default pid_max: certainly not a running broker
        bootstrap="127.0.0.1:1",
        data_dir=str(tmp_path / "d"),
        log=str(tmp_path / "d" / "broker.log"),
        properties=str(tmp_path / "d" / "server.properties"),
        version="4.3.1",
        keep=False,
        owns_data_dir=True,
        started_at=1.0,
    )
    (tmp_path / "broker.json").write_text(state.to_json(), encoding="utf-8")
    assert BrokerState.read(tmp_path) == state
    assert not state.alive()
    assert [node.pid for node in state.members()] == [state.pid]  # one node, no "nodes"

    nodes = tuple(
        NodeState(i, 2**22 + i, f"127.0.0.1:{i}", f"n{i}/broker.log", f"n{i}/server.properties")
        for i in (1, 2, 3)
    )
    cluster = replace(state, bootstrap="127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", nodes=nodes)
    (tmp_path / "broker.json").write_text(cluster.to_json(), encoding="utf-8")
    assert BrokerState.read(tmp_path) == cluster
    assert cluster.members() == nodes and not cluster.running()
