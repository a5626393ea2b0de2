"""Moving a project: the lines of an export and the batches of an import (mnemo extension).

An export is JSON lines: a `header`, every `group` with its configuration, every `memory`
of the project (all users and topics, deleted ones too) with its versions, and an `end`
line counting the memories sent, so a reader knows the export is complete. A memory line
holds every field of the memory: ids, scope, content, status (consolidated episodes too),
version, the runs that wrote it, a rule's sources (the episodes it was made from), system times (`created_at`, `updated_at`, each version's `valid_from` and
`valid_to`), event times, and its vector (float32, little-endian, base64) unless the
export was made without vectors. An import writes such memories as they are.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from mnemo.domain.instant import AwareInstant
from mnemo.domain.limits import MEMORY_CHARS_CEILING, NAME_CHARS
from mnemo.domain.memory import MemoryStatus
from mnemo.domain.provenance import Operation
from mnemo.domain.scope import UserId
from mnemo.domain.search import PropertyKey, PropertyValue
from mnemo.domain.wire import WireModel

FORMAT = "mnemo-export"
FORMAT_VERSION = 1
IMPORT_BATCH = 500  # memories per import request at most
ID_CHARS = 255


def encode_vector(values: Sequence[float]) -> str:
    """A vector as base64 of little-endian float32 (what pgvector stores: lossless)."""
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


def decode_vector(text: str) -> list[float]:
    raw = base64.b64decode(text, validate=True)
    if len(raw) % 4:
        raise ValueError("a vector is a whole number of float32 values")
    values = list(struct.unpack(f"<{len(raw) // 4}f", raw))
    if not all(math.isfinite(v) for v in values):
        raise ValueError("a vector holds only finite numbers (no NaN or infinity)")
    return values


class EmbeddingModel(WireModel):
    """Which model made the vectors (the embedder's label) and their size. An import keeps
    vectors only when the target's embedder is the same; else it computes them."""

    label: str = Field(min_length=1, max_length=200)
    dim: int = Field(ge=1, le=16_000)


class ExportHeader(WireModel):
    kind: Literal["header"] = "header"
    format: Literal["mnemo-export"] = "mnemo-export"
    version: int = FORMAT_VERSION
    project: str
    exported_at: AwareInstant
    # None: the export holds no vectors (the target computes them).
    embedding: EmbeddingModel | None
    groups: int
    users: int
    memories: int  # in the project when the export began
    # The id the export resumes after (None: from the start), and how many memories follow.
    after: str | None = None
    remaining: int


class ExportedGroup(WireModel):
    kind: Literal["group"] = "group"
    name: str = Field(min_length=1, max_length=64)
    config: dict[str, Any]


class ExportedVersion(WireModel):
    """A prior state of a memory (`memory_versions`)."""

    version: int = Field(ge=1)
    content: str = Field(max_length=MEMORY_CHARS_CEILING)
    valid_from: AwareInstant
    valid_to: AwareInstant
    change: Literal["updated", "deleted"]
    run_id: str | None = None  # the run that ended this version
    status: MemoryStatus
    event_time: AwareInstant
    event_time_end: AwareInstant
    written_by_run_id: str | None = None
    operation: Operation
    embedding: str | None = None


class ExportedSource(WireModel):
    """An episode a consolidated rule was made from (`memory_sources`): the episode's id,
    the consolidation pass that linked it, and when."""

    memory_id: str = Field(min_length=1, max_length=ID_CHARS)
    pass_id: str = Field(min_length=1, max_length=ID_CHARS)
    linked_at: AwareInstant


class ExportedMemory(WireModel):
    kind: Literal["memory"] = "memory"
    id: str = Field(min_length=1, max_length=ID_CHARS)
    group: str = Field(min_length=1, max_length=64)
    topic: str = Field(min_length=1, max_length=NAME_CHARS)
    user_id: UserId | None = None
    properties: dict[PropertyKey, PropertyValue] = Field(default_factory=dict)
    content: str = Field(max_length=MEMORY_CHARS_CEILING)
    status: MemoryStatus = MemoryStatus.active
    version: int = Field(default=1, ge=1)
    run_ids: list[str] = Field(default_factory=list)
    created_at: AwareInstant
    updated_at: AwareInstant
    event_time: AwareInstant
    event_time_end: AwareInstant
    written_by_run_id: str | None = None
    operation: Operation = "created"
    embedding: str | None = None
    versions: list[ExportedVersion] = Field(default_factory=list)
    # For a consolidated rule: the episodes it holds.
    sources: list[ExportedSource] = Field(default_factory=list)


class ExportEnd(WireModel):
    kind: Literal["end"] = "end"
    memories: int  # memory lines this response sent
    # Memories left out because a stored value of theirs cannot be read (their ids).
    skipped: list[str] = Field(default_factory=list)


class ImportBatch(WireModel):
    """POST /v1/import: groups (applied first: created or replaced) and memories (created
    or replaced, as they are). `embedding`: the model the memories' vectors come from."""

    embedding: EmbeddingModel | None = None
    groups: list[ExportedGroup] = Field(default_factory=list, max_length=200)
    memories: list[ExportedMemory] = Field(default_factory=list, max_length=IMPORT_BATCH)


class Rekeyed(BaseModel):
    """A bounded memory stored under the id this project derives for its scope."""

    old_id: str
    new_id: str


class ImportReport(BaseModel):
    groups: int = 0
    imported: int = 0
    # Of `imported`: memories this project held already (replaced as they are, not added).
    already_present: int = 0
    # kept: the vectors came with the memories; recomputed: the target's model made them.
    embeddings: Literal["kept", "recomputed", "none"] = "none"
    rekeyed: list[Rekeyed] = Field(default_factory=list)
    # Memories of users erased in this project: never brought back.
    skipped_erased: list[str] = Field(default_factory=list)
    # Memories of a bounded scope that another, newer memory of the batch holds.
    skipped_superseded: list[str] = Field(default_factory=list)
