"""``yangkey produce``'s options -> JobConfig, and its error reporting (no Spark started)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from yangkey.spark.commands import main, produce
from yangkey.spark.config import FLAT, JobConfig
from yangkey.spark.options import job_config
from yangkey.spark.transform import BuilderSpec

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "subscriptions.yaml"
REQUIRED = ["--subscriptions", str(EXAMPLE), "--input", "in.jsonl", "--bootstrap", "h:1"]


def _options(*args: str) -> dict[str, Any]:
    ctx = produce.make_context("produce", [*REQUIRED, *args])
    options = dict(ctx.params)
    options.pop("fmt")
    options.pop("report")  # like fmt, produce's own: not a job setting
    return options


def test_option_defaults_are_the_job_configs_defaults() -> None:
    # Two sources of defaults (click's and the dataclass's) must not drift apart: the
    # spark-submit entry, the demo and the tests build JobConfig without click.
    from_cli = job_config(_options())
    from_code = JobConfig.of(subscriptions=str(EXAMPLE), inputs=("in.jsonl",), bootstrap="h:1")
    assert from_cli == from_code


def test_every_option_lands_in_a_field() -> None:
    config = job_config(
        _options(
            "--no-keys",
            "--no-learn",
            "--topic-config",
            "min.insync.replicas=2",
            "--spark-conf",
            "spark.executor.memory=4g",
            "--split-size",
            "2k",
            "--outage-budget",
            "3s",
            "--transactional-id-prefix",
            "acl",
            "--producer-config",
            "compression.type=zstd",
            "--consumer-config",
            "fetch.min.bytes=1",
            "--delivery",
            "at-least-once",
            "--spark-log-level",
            "warn",
            "--stream",
            "--checkpoint",
            "ck",
            "--trigger-interval",
            "10s",
        )
    )
    assert config.keys is False and config.learn is False
    assert config.delivery.topic_configs == {"min.insync.replicas": "2"}
    assert config.spark.conf == {"spark.executor.memory": "4g"}
    assert config.source.split_size == 2048 and config.source.outage_budget == 3.0
    assert config.delivery.transactional_prefix == "acl"
    assert config.delivery.producer_overrides == {"compression.type": "zstd"}
    assert config.source.consumer_overrides == {"fetch.min.bytes": "1"}
    assert config.delivery.mode == "at-least-once" and config.spark.log_level == "WARN"
    assert config.stream.enabled and config.stream.trigger_interval == "10s"
    assert config.stream.checkpoint == "ck"
    # No option is left over nor invented: every destination but --json and --report (the
    # run's outputs) is a field (the client settings through their overrides).
    fields = set(FLAT) | set(JobConfig.model_fields)
    merged = {"producer_config", "producer_config_file", "consumer_config", "consumer_config_file"}
    merged |= {"shared_catalog", "schema_registry_config"}  # folded into other fields
    destinations = {p.name for p in produce.params if p.expose_value} - {"fmt", "report"}
    assert destinations - merged <= fields


def test_properties_file_and_options_make_one_field(tmp_path: Path) -> None:
    properties = tmp_path / "producer.properties"
    properties.write_text("linger.ms=5\ncompression.type=lz4\n", encoding="utf-8")
    config = job_config(
        _options(
            "--producer-config-file", str(properties), "--producer-config", "compression.type=zstd"
        )
    )
    assert config.delivery.producer_overrides == {"linger.ms": "5", "compression.type": "zstd"}


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--spark-conf", "spark.executor.memory"], "--spark-conf"),
        (["--topic-config", "=2"], "--topic-config"),
        (["--outage-budget", "forever"], "--outage-budget"),
        (["--trigger-interval", "soon", "--stream"], "--trigger-interval"),
        (["--split-size", "big"], "--split-size"),
    ],
)
def test_bad_option_values_are_usage_errors(args: list[str], option: str) -> None:
    result = CliRunner().invoke(
        produce, ["--subscriptions", str(EXAMPLE), "--input", "x", "--dry-run", *args]
    )
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in result.output
    assert "Traceback" not in result.output


def test_spark_submit_main_reports_through_the_same_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("subscriptions: [\n")
    code = main(["--subscriptions", str(broken), "--input", "x", "--dry-run"])
    captured = capsys.readouterr()
    assert code == 1
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(broken) in lines[0]
    assert main(["--subscriptions", str(EXAMPLE), "--input", "x", "--split-size", "big"]) == 2


def test_instance_feed_reaches_the_producer_knobs() -> None:
    assert job_config(_options()).instance_feed is False
    config = job_config(_options("--instance-feed"))
    assert config.instance_feed is True
    spec = BuilderSpec.from_file(EXAMPLE, instances=config.instance_feed)
    assert spec.knobs(spec.catalog()).instances is True
    assert BuilderSpec.from_file(EXAMPLE).knobs(spec.catalog()).instances is False
