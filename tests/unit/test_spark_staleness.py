"""Which other runs under a transactional-id prefix a starting run fences (no broker)."""

from __future__ import annotations

import pytest

from yangkey.spark.delivery.fencing import (
    DONE,
    FAILED,
    FENCED,
    RUNNING,
    RunRecord,
    Scan,
    decode_record,
    encode_record,
    run_of_group,
    verdict,
)

NOW = 1_800_000_000.0


def _running(age: float, period: float = 5.0) -> RunRecord:
    return RunRecord("a", 4, RUNNING, NOW - age, period)


@pytest.mark.parametrize(
    ("age", "expected"),
    [(0.0, "live"), (29.9, "live"), (30.1, "fence"), (3600.0, "fence"), (-120.0, "live")],
)
def test_a_running_record_is_stale_only_past_the_bound(age: float, expected: str) -> None:
    # -120: a driver whose clock runs ahead of ours is alive, not dead
    assert verdict(_running(age), NOW, 30.0) == expected


def test_a_slowly_beating_run_is_judged_by_its_own_period() -> None:
    # It beats every 20 s: our 30 s bound would call it dead between two beats.
    assert verdict(_running(45.0, period=20.0), NOW, 30.0) == "live"
    assert verdict(_running(61.0, period=20.0), NOW, 30.0) == "fence"


@pytest.mark.parametrize(
    ("state", "expected"),
    [(DONE, "finished"), (FENCED, "finished"), (FAILED, "fence"), ("", "unknown")],
)
def test_ended_and_unknown_runs(state: str, expected: str) -> None:
    # a failed run is fenced at once, whatever its last heartbeat: its driver is gone
    record = RunRecord("a", 4, state, NOW, 5.0)
    assert verdict(record, NOW, 30.0) == expected


def test_record_round_trip_and_records_without_a_state() -> None:
    text = encode_record(RUNNING, NOW, 5.0, stream=True)
    assert decode_record("a", 7, text) == RunRecord("a", 7, RUNNING, NOW, 5.0, True)
    # written by an older version (offset only) or unreadable: no state, never fenced
    for metadata in (None, "", "not json", "[1]", '{"hb": "x"}'):
        record = decode_record("a", 3, metadata)
        assert record.tasks == 3
        assert verdict(record, NOW, 30.0) == "unknown"


def test_run_records_are_told_from_other_groups_under_the_prefix() -> None:
    assert run_of_group("yangkey-b1a2-run", "yangkey") == "b1a2"
    assert run_of_group("yangkey-b1a2-3", "yangkey") is None  # a task's marker
    assert run_of_group("yangkey-reader-b1a2", "yangkey") is None
    # a longer prefix is not a run id: run ids never hold '-'
    assert run_of_group("yangkey-x-b1a2-run", "yangkey") is None
    assert run_of_group("yangkey-x-b1a2-run", "yangkey-x") == "b1a2"
    assert run_of_group("yk.1-b1-run", "yk.1") == "b1"
    assert run_of_group("ykx1-b1-run", "yk.1") is None  # the prefix is literal


def test_scan_notes_name_fenced_and_live_runs() -> None:
    scan = Scan(fenced={"b2": 3}, live=[("b9", 2.4)], unknown=["b7"])
    notes = scan.notes("yangkey")
    assert notes == [
        "run b2 (prefix yangkey) had stopped without finishing: 3 open transaction(s) of it"
        " aborted",
        "live run(s) under prefix yangkey left alone: b9 (heartbeat 2s ago)",
    ]
    assert scan.unfinished and not Scan(fenced={"b2": 1}).unfinished
