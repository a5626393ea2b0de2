"""The base of every model read from callers: unknown fields and unstorable text refused."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from mnemo.domain.text import refuse_unstorable_text


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _storable_text(cls, data: Any) -> Any:
        """Postgres cannot hold NUL characters, nor UTF-8 an unpaired surrogate: refuse
        them here too, for callers that do not come through the gateway's JSON guard."""
        return refuse_unstorable_text(data)
