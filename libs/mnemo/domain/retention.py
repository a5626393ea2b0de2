"""Raw-input retention: how long a group keeps what was added, once it has been used.

A group's `retention` (in its configuration document) says when the raw input of its runs is
redacted: `raw_input_days` after the add (fractions allowed), and/or as soon as the run
commits (`drop_raw_input_at_commit`). The memories themselves are not affected.
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

MAX_RETENTION_DAYS = 36_500


class Redaction(StrEnum):
    """Why a run's content is gone (the `runs.redaction` column)."""

    erased = "erased"  # its user was erased: input, user, properties and error are gone
    expired = "expired"  # the group's raw_input_days passed: its raw input is gone
    committed = "committed"  # the group drops raw input at commit: its raw input is gone
    memory_erased = "memory_erased"  # the one memory it made was erased: raw input gone


class RetentionPolicy(BaseModel):
    """Keep raw inputs forever (the default), for `raw_input_days`, and/or until commit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Redact a run's raw input this many days after the add (once the run is no longer
    # running). None keeps it; failed runs keep theirs for a retry until then.
    raw_input_days: float | None = Field(default=None, gt=0, le=MAX_RETENTION_DAYS)
    # Redact a run's raw input in the transaction that completes it.
    drop_raw_input_at_commit: bool = False

    @property
    def max_age(self) -> timedelta | None:
        """How long raw input is kept after the add (None: no age limit)."""
        if self.raw_input_days is None:
            return None
        return timedelta(days=self.raw_input_days)
