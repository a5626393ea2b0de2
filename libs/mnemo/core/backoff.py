"""The one backoff policy for transient failures (an outage of Postgres or the broker),
used by the embedded workers and by the stage services alike."""

from __future__ import annotations

from mnemo.core.failures import Backoff
from mnemo.settings import Settings


def transient_backoff(settings: Settings) -> Backoff:
    """Waits between retries of one piece of work during an outage: the configured first
    wait, doubling, at most `transient_backoff_cap_seconds`."""
    return Backoff(settings.transient_backoff_seconds, settings.transient_backoff_cap_seconds)
