"""Brokers recorded per user: several state dirs, stale records, nothing to stop (no JVM)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from yangkey.dirs import user_state_home
from yangkey.kafka.commands import kafka
from yangkey.kafka.process import (
    BrokerState,
    default_state_dir,
    recorded_state_dirs,
    write_state,
)


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg"


def _record(state_dir: Path) -> BrokerState:
    """A record whose pid is no broker (this test process): an exited broker's leftovers."""
    state = BrokerState(
        pid=os.getpid(),
        bootstrap="127.0.0.1:1",
        data_dir=str(state_dir / "data"),
        log=str(state_dir / "data" / "broker.log"),
        properties=str(state_dir / "data" / "server.properties"),
        version="4.3.1",
        keep=False,
        owns_data_dir=True,
        started_at=time.time(),
    )
    write_state(state_dir, state)
    return state


def test_state_home_follows_xdg_and_ignores_a_relative_value(
    xdg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert default_state_dir() == xdg / "yangkey" / "kafka"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/dir")
    assert user_state_home() == Path.home() / ".local" / "state" / "yangkey"


def test_status_lists_every_recorded_broker_and_stop_needs_to_know_which(
    xdg: Path, tmp_path: Path
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    _record(first)
    _record(second)
    assert recorded_state_dirs() == [first.resolve(), second.resolve()]
    runner = CliRunner()

    listing = runner.invoke(kafka, ["status", "--json"])
    assert listing.exit_code == 1  # recorded, but neither runs
    entries = json.loads(listing.stdout)
    assert [(e["state_dir"], e["running"]) for e in entries] == [
        (str(first.resolve()), False),
        (str(second.resolve()), False),
    ]

    ambiguous = runner.invoke(kafka, ["stop"])
    assert ambiguous.exit_code == 1
    assert ambiguous.stderr.startswith("error: kafka stop: 2 brokers are recorded")

    stale = runner.invoke(kafka, ["stop", "--state-dir", str(first)])
    assert stale.exit_code == 1
    assert "had already exited; its record is cleared" in stale.stderr
    assert len(stale.stderr.splitlines()) == 1
    assert recorded_state_dirs() == [second.resolve()]

    # the only broker left is found without --state-dir
    left = runner.invoke(kafka, ["stop"])
    assert left.exit_code == 1 and str(second.resolve()) in left.stderr
    assert recorded_state_dirs() == []

    for args in (["stop"], ["stop", "--all"], ["status", "--bootstrap"]):
        nothing = runner.invoke(kafka, args)
        assert nothing.exit_code == 1, args
        assert nothing.stderr.startswith("error: kafka "), nothing.stderr
        assert len(nothing.stderr.splitlines()) == 1, nothing.stderr
    assert runner.invoke(kafka, ["status"]).exit_code == 1


def test_a_default_broker_is_preferred_over_others(xdg: Path, tmp_path: Path) -> None:
    _record(tmp_path / "elsewhere")
    _record(default_state_dir())
    runner = CliRunner()
    result = runner.invoke(kafka, ["stop"])
    assert str(default_state_dir().resolve()) in result.stderr
    assert recorded_state_dirs() == [(tmp_path / "elsewhere").resolve()]
