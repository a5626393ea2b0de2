"""Topics: the natural-language "magnets" that extraction looks for."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_\-]{0,63}$"


class Scoping(BaseModel):
    """Where a topic's memories live: per project, per user and/or per property value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_scoped: bool = False
    scope_properties: tuple[str, ...] = ()

    @field_validator("scope_properties")
    @classmethod
    def _unique(cls, keys: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(keys)) != len(keys):
            raise ValueError("scope_properties must not repeat a key")
        return tuple(sorted(keys))


class Topic(BaseModel):
    """A named description of what to remember. A bounded topic holds one memory per scope."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=_NAME_PATTERN)
    description: str = Field(min_length=1, max_length=4000)
    scoping: Scoping = Scoping()
    is_bounded: bool = False
    # Internal topics (e.g. continual-learning fragments) flow through the pipeline but
    # are never committed: commit refuses them, so search can never see them.
    internal: bool = False
    # Expiry (mnemo extension, store/expiry.py): a memory leaves search and list this many
    # days after its last update, or after it was last recalled (or, never recalled, last
    # updated). It stays in history until raw-input retention removes it.
    ttl_days: float | None = Field(
        default=None, gt=0, description="Days after its last update a memory expires."
    )
    expire_unrecalled_days: float | None = Field(
        default=None,
        gt=0,
        description="Days without a recall (counted from its last update when it was never "
        "recalled) after which a memory expires.",
    )

    @property
    def expires(self) -> bool:
        return self.ttl_days is not None or self.expire_unrecalled_days is not None
