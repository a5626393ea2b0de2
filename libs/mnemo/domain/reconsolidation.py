"""Reconsolidation: a recalled memory is open to correction for a while (its labile window).

Declared in a group's `reconsolidation:` section. An add's recalled memories (named in its
`recalled` field, or the scope's searches inside the window) are shown to a gate with the new
evidence; the gate's decision, checked by mnemo, is reported on the run.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

GateVerdict = Literal["match", "extend", "contradict", "unrelated"]
# What a run reports per recalled memory: the gate's verdict, or `skipped` for a memory
# mnemo kept from the gate (its hourly cap is spent).
GateOutcomeKind = Literal["match", "extend", "contradict", "unrelated", "skipped"]
# A window longer than this would outlive the recall log (`recall_retention_seconds`).
MAX_LABILE_SECONDS = 24 * 3600.0
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$")
_UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: Any) -> Any:
    """Seconds from a number or a string such as '900', '90s', '15m' or '1h'."""
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match is None:
            raise ValueError("a duration is a number of seconds or e.g. '90s', '15m', '1h'")
        return float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"]
    return value


class ReconsolidationConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # How long a recalled memory stays open to correction, in seconds (or '15m').
    labile_window: float = Field(default=900.0, gt=0, le=MAX_LABILE_SECONDS)
    # Only recalled memories may be rewritten or deleted; other neighbours are read-only.
    only_recalled: bool = False
    # At most this many reconsolidation rewrites per memory in any hour.
    max_per_hour: int = Field(default=3, ge=1, le=100)
    # A recalled memory goes to the gate only when it is at least this similar (cosine)
    # to one of the add's new memories; lower than reconcile's floor, since a recall already
    # says it is relevant.
    min_similarity: float = Field(default=0.55, ge=-1.0, le=1.0)
    # At most this many recalled memories (the most similar) are shown to the gate.
    max_recalled: int = Field(default=10, ge=1, le=50)

    _duration = field_validator("labile_window", mode="before")(parse_duration)


class GateDecision(BaseModel):
    """One recalled memory's decision, as the run reports it. `applied` says whether mnemo
    wrote it; `reason` says why not (a restatement, evidence not found in the input, the
    hourly cap, ...)."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    decision: GateOutcomeKind
    evidence: str = ""
    applied: bool = False
    reason: str | None = None
