"""One transient-retry backoff for both modes, from Settings."""

from __future__ import annotations

import pytest

from mnemo.core.backoff import transient_backoff
from mnemo.settings import Settings


def test_waits_double_up_to_the_cap() -> None:
    settings = Settings(transient_backoff_seconds=1.0, transient_backoff_cap_seconds=5.0)
    backoff = transient_backoff(settings)
    assert [backoff.next() for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    backoff.reset()
    assert backoff.next() == 1.0


def test_the_setting_comes_from_one_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_TRANSIENT_BACKOFF_SECONDS", "0.5")
    monkeypatch.setenv("MNEMO_TRANSIENT_BACKOFF_CAP_SECONDS", "30")
    backoff = transient_backoff(Settings())
    assert (backoff.initial, backoff.cap) == (0.5, 30.0)


def test_the_old_kafka_only_variable_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_KAFKA_TRANSIENT_BACKOFF_SECONDS", "0.5")
    with pytest.raises(Exception, match="MNEMO_KAFKA_TRANSIENT_BACKOFF_SECONDS"):
        Settings()
