"""Bugs are not rejections: producer.MessageBuilder lets an exception that is not a YangkeyError
propagate when strict (the test suites set YANGKEY_STRICT=1), and otherwise keeps the pipeline
going with a rejection of kind ``bug``, logged with its traceback."""

from __future__ import annotations

import json
import logging

import pytest

import yangkey.walker
from yangkey.catalog import build_catalog
from yangkey.config import parse_subscriptions
from yangkey.messages import Rejection
from yangkey.producer import STRICT_ENV, MessageBuilder

IF = "/ietf-interfaces:interfaces/interface"
SUBSCRIPTIONS = f"""
subscriptions:
  - id: 3000
    xpath: {IF}
    type: on-change
"""


def quote_with_a_bug(value: str) -> str:
    # A stand-in for a generator bug; a TypeError, which the pipeline once took for bad input.
    return value + len(value)  # type: ignore[operator]


@pytest.fixture
def buggy_walkers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Walkers compiled from here on call a quote() that fails (on values holding a ')."""
    monkeypatch.setattr(yangkey.walker, "quote", quote_with_a_bug)


def builder(strict: bool | None = None) -> MessageBuilder:
    built = MessageBuilder(
        build_catalog(parse_subscriptions(SUBSCRIPTIONS, "subs.yaml")), strict=strict
    )
    built.native = False  # the bug is planted in the Python walkers: keep the native pass out
    return built


def raw(name: str) -> bytes:
    data = {"ietf-interfaces:interfaces": {"interface": [{"name": name}]}}
    push = {"id": 3000, "datastore-contents": data}
    envelope = {"hostname": "r1", "contents": {"ietf-yang-push:push-update": push}}
    return json.dumps({"ietf-yp-notification:envelope": envelope}).encode()


def test_core_bugs_test_suites_run_strict() -> None:
    import os  # noqa: PLC0415

    assert os.environ.get(STRICT_ENV) == "1"
    assert builder().strict


def test_core_bugs_strict_builder_raises_a_bug(buggy_walkers: None) -> None:
    strict = builder(strict=True)
    assert strict.build(raw("eth0"), "s")  # the path without the bug still works
    with pytest.raises(TypeError):
        strict.build(raw("it's"), "s")


def test_core_bugs_bad_input_is_still_a_rejection_when_strict(buggy_walkers: None) -> None:
    result = builder(strict=True).build(b'{"not": "a notification"}', "s")
    assert isinstance(result, Rejection)
    assert result.kind == "framing"


def test_core_bugs_pipeline_rejects_a_bug_as_kind_bug_and_logs_it_once(
    buggy_walkers: None, caplog: pytest.LogCaptureFixture
) -> None:
    pipeline = builder(strict=False)
    with caplog.at_level(logging.ERROR, logger="yangkey"):
        first = pipeline.build(raw("it's"), "kafka://raw@0:17")
        second = pipeline.build(raw("o'clock"), "kafka://raw@0:18")
    for result, offset in ((first, 17), (second, 18)):
        assert isinstance(result, Rejection)
        assert result.kind == "bug"
        assert result.source == f"kafka://raw@0:{offset}"
        assert "TypeError" in result.reason
    assert first.raw == raw("it's")
    (record,) = caplog.records  # the second one at the same place is only counted
    assert "kafka://raw@0:17" in record.getMessage()
    assert list(pipeline.bugs.values()) == [2]
    # The traceback runs through the generated walker and quotes its line.
    logged = caplog.text
    assert "<yangkey-walker /ietf-interfaces:interfaces/interface " in logged
    assert "quote(v1_0)" in logged
