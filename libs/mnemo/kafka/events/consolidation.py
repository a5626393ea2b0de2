"""The consolidation channel (`{prefix}.consolidation.v1`): "check this scope's triggers".

The committer publishes one when a commit's new episodes make a count trigger fire, and its
timer publishes them for time triggers. Keyed by the scope's own key (`EpisodeScope.key`), so
one scope's passes run one at a time, in order.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemo.domain.consolidation import EpisodeScope


class ConsolidationCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    project: str
    group: str
    user_id: str | None = None
    properties: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def of(cls, scope: EpisodeScope) -> ConsolidationCheck:
        return cls.model_validate(scope.as_payload())

    @property
    def scope(self) -> EpisodeScope:
        return EpisodeScope(self.project, self.group, self.user_id, self.properties)
