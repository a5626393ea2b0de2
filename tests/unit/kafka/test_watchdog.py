"""The recovery-stall rule of mnemo.kafka.watchdog."""

from __future__ import annotations

from mnemo.kafka.watchdog import RecoveryStall


def test_a_recovery_without_progress_stalls_after_the_limit() -> None:
    stall = RecoveryStall(limit_seconds=60)
    assert not stall.observe(True, 13, now=0)
    assert not stall.observe(True, 13, now=59)
    assert stall.observe(True, 13, now=60)


def test_progress_restarts_the_clock() -> None:
    stall = RecoveryStall(limit_seconds=60)
    stall.observe(True, 100, now=0)
    assert not stall.observe(True, 40, now=50)  # read 60 records
    assert not stall.observe(True, 40, now=100)
    assert stall.observe(True, 40, now=110)


def test_a_finished_recovery_resets_and_never_stalls() -> None:
    stall = RecoveryStall(limit_seconds=60)
    stall.observe(True, 5, now=0)
    assert not stall.observe(False, 0, now=70)
    assert not stall.observe(False, 0, now=500)
    assert not stall.observe(True, 5, now=501)  # a new recovery starts its own clock
    assert not stall.observe(True, 5, now=560)
    assert stall.observe(True, 5, now=561)
