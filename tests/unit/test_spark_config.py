"""spark/config.py: the frozen JobConfig, its sub-models, and the one validator of legal option
combinations (``produce``: a usage error, exit status 2, whichever combination it is); the
librdkafka timeout rules (kafka/config.py reconcile_timeouts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from yangkey.errors import ConfigError
from yangkey.kafka.config import reconcile_timeouts
from yangkey.registry.client import RegistrySettings
from yangkey.spark.commands import produce
from yangkey.spark.config import FLAT, Delivery, JobConfig, Source, SparkRuntime, Stream

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "subscriptions.yaml"
LEGAL = {"subscriptions": str(EXAMPLE), "inputs": ("in.jsonl",), "bootstrap": "h:1"}

# (settings over LEGAL, the produce arguments that say the same, the reason)
ILLEGAL = [
    ({"bootstrap": None}, [], "--bootstrap is required (or use --dry-run)"),
    ({"stream": True}, ["--stream"], "--stream needs --checkpoint DIR"),
    (
        {"stream": True, "checkpoint": "ck", "inputs": ("a", "b")},
        ["--stream", "--checkpoint", "ck"],
        "--stream reads exactly one --input",
    ),
    ({"trigger_interval": "10s"}, ["--trigger-interval", "10s"], "--trigger-interval needs"),
    ({"restart_on_failure": 2}, ["--restart-on-failure", "2"], "--restart-on-failure needs"),
    (
        {"inputs": ("in.jsonl", "hdfs:///raw")},
        [],
        "--input: mix local inputs and Hadoop URIs",
    ),
    (
        {"ship_env": True, "stream": True, "checkpoint": "ck", "inputs": ("kafka://raw",)},
        ["--ship-env", "--stream", "--checkpoint", "ck"],
        "--ship-env cannot serve --stream from kafka://",
    ),
    (
        {"schema_registry": RegistrySettings("http://r:8081"), "single_topic": "all"},
        ["--schema-registry", "http://r:8081", "--single-topic", "all"],
        "--single-topic mixes every subscription branch",
    ),
    (
        {"producer_overrides": {"transactional.id": "x"}},
        ["-X", "transactional.id=x"],
        "transactional.id is derived per task",
    ),
    (
        {"producer_overrides": {"acks": "1"}},
        ["-X", "acks=1"],
        "exactly-once delivery needs acks=all and idempotence",
    ),
    (
        {"producer_overrides": {"enable.idempotence": False}},
        ["-X", "enable.idempotence=false"],
        "exactly-once delivery needs acks=all and idempotence",
    ),
]


@pytest.mark.parametrize(("settings", "args", "reason"), ILLEGAL)
def test_an_illegal_combination_is_refused_by_the_model_and_is_a_usage_error(
    settings: dict[str, object], args: list[str], reason: str
) -> None:
    with pytest.raises(ConfigError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        JobConfig.of(**{**LEGAL, **settings})
    inputs = settings.get("inputs", LEGAL["inputs"])
    assert isinstance(inputs, tuple)
    command = ["--subscriptions", str(EXAMPLE), *(f"--input={uri}" for uri in inputs), *args]
    if "bootstrap" not in settings:
        command += ["--bootstrap", "h:1"]
    result = CliRunner().invoke(produce, command)
    assert result.exit_code == 2, result.output
    assert f"Error: {reason}" in result.output
    assert "Traceback" not in result.output


def test_the_same_settings_are_legal_where_they_make_a_run() -> None:
    assert JobConfig.of(**{**LEGAL, "bootstrap": None, "dry_run": True}).dry_run
    stream = JobConfig.of(**LEGAL, stream=True, checkpoint="ck", trigger_interval="10s")
    assert stream.stream == Stream(enabled=True, checkpoint="ck", trigger_interval="10s")
    assert JobConfig.of(**LEGAL, delivery="at-least-once", producer_overrides={"acks": "1"})
    registry = RegistrySettings("http://r:8081")
    assert JobConfig.of(
        **LEGAL, schema_registry=registry, single_topic="all", dry_run=True
    ).registry == registry
    assert JobConfig.of(**{**LEGAL, "inputs": ("in.jsonl", "kafka://raw")})


def test_flat_names_land_in_their_sub_models_and_a_copy_changes_only_itself() -> None:
    config = JobConfig.of(
        **LEGAL, master="local[2]", spark_conf={"a": "b"}, split_size=10, delivery="at-least-once"
    )
    assert config.spark == SparkRuntime(master="local[2]", conf={"a": "b"})
    assert config.source == Source(inputs=("in.jsonl",), split_size=10)
    assert config.delivery == Delivery(mode="at-least-once")
    changed = config.but(split_size=20, run_id="r2")
    assert (changed.source.split_size, changed.delivery.run_id) == (20, "r2")
    assert (config.source.split_size, config.delivery.run_id) == (10, None)
    assert changed.but() == changed
    with pytest.raises(ValidationError, match="frozen"):
        config.dry_run = True  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        config.source.split_size = 1  # type: ignore[misc]
    # one flat name per field, and a typo is no silent default
    targets = [target for target in FLAT.values()]
    assert len(targets) == len(set(targets))
    with pytest.raises(ValidationError, match="split_sise"):
        JobConfig.of(**LEGAL, split_sise=1)


def test_timeouts_the_operator_set_win_and_the_defaults_adjust() -> None:
    defaults = {"message.timeout.ms": 120_000, "transaction.timeout.ms": 600_000, "linger.ms": 5000}
    short = reconcile_timeouts(defaults, {"transaction.timeout.ms": 5000}, transactional=True)
    assert short["message.timeout.ms"] == 5000 and short["linger.ms"] == 2500
    long = reconcile_timeouts(defaults, {"message.timeout.ms": 700_000}, transactional=True)
    assert long["transaction.timeout.ms"] == 700_000
    plain = {k: v for k, v in defaults.items() if k != "transaction.timeout.ms"}
    assert reconcile_timeouts(plain, {"message.timeout.ms": 700_000}, transactional=False) == {
        "message.timeout.ms": 700_000,
        "linger.ms": 5000,
    }
    with pytest.raises(ConfigError, match=r"message.timeout.ms \(2000\) must not exceed"):
        reconcile_timeouts(
            defaults,
            {"message.timeout.ms": 2000, "transaction.timeout.ms": 1000},
            transactional=True,
        )
    with pytest.raises(ConfigError, match=r"linger.ms \(3000\) must be less"):
        reconcile_timeouts(
            defaults, {"message.timeout.ms": 3000, "linger.ms": 3000}, transactional=True
        )
