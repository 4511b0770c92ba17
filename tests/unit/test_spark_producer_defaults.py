"""The job's producer defaults against the operator's settings (planning.prepare)."""

from __future__ import annotations

from pathlib import Path

import pytest

from yangkey.errors import ConfigError
from yangkey.spark.config import SPARK_PRODUCER_DEFAULTS, JobConfig
from yangkey.spark.planning import prepare

REPO = Path(__file__).resolve().parents[2]


def producer(overrides: dict[str, object]) -> dict[str, object]:
    config = JobConfig.of(
        subscriptions=str(REPO / "examples" / "subscriptions.yaml"),
        inputs=(str(REPO / "tests" / "fixtures" / "notifications"),),
        bootstrap="h:1",
        preflight=False,
        producer_overrides=overrides,
    )
    return dict(prepare(config).sink.producer_config)


def test_default_linger_shrinks_below_a_short_delivery_timeout() -> None:
    # librdkafka refuses a producer whose linger.ms is not below message.timeout.ms
    assert int(str(SPARK_PRODUCER_DEFAULTS["linger.ms"])) > 2000
    chosen = producer({"message.timeout.ms": 2000, "transaction.timeout.ms": 2000})
    assert chosen["linger.ms"] == 1000


def test_linger_given_is_kept_verbatim() -> None:
    assert producer({"message.timeout.ms": 2000, "linger.ms": "0.5"})["linger.ms"] == "0.5"
    assert producer({})["linger.ms"] == SPARK_PRODUCER_DEFAULTS["linger.ms"]
    assert producer({"message.timeout.ms": 0})["linger.ms"] == SPARK_PRODUCER_DEFAULTS["linger.ms"]


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"message.timeout.ms": 2000, "linger.ms": 2000}, r"linger.ms \(2000\) must be less"),
        ({"linger.ms": "soon"}, "linger.ms='soon': expected a number"),
    ],
)
def test_linger_the_producer_would_refuse_is_one_config_error(
    overrides: dict[str, object], reason: str
) -> None:
    with pytest.raises(ConfigError, match=reason):
        producer(overrides)
