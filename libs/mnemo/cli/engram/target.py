"""The mnemo side of an Engram pull: groups made ready, memories written as they are.

Groups are planned before anything is written: an Engram group (or the mnemo group
`--group-map` names for it) that this mnemo lacks is created with Engram's topics and the
`default` template's pipeline; an existing one gets Engram's missing topics added, its own
topics and pipeline left unchanged. A topic of the same name scoped differently here
stops the pull before anything is written (`GroupConflict`, naming it).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mnemo.cli.engram.http import HttpProblem, PoliteClient

IMPORT_BATCH = 500  # memories per POST /v1/import (the server's ceiling)


class GroupConflict(Exception):
    """A topic Engram and this mnemo both have, scoped differently."""


@dataclass
class GroupPlan:
    engram: str  # the group's name in Engram
    mnemo: str  # where its memories go here
    create: bool  # no such group here yet
    missing: list[dict[str, Any]]  # Engram's topics to add, as mnemo topic documents
    config: dict[str, Any] | None = None  # the existing configuration (to extend)


def topic_document(topic: dict[str, Any]) -> dict[str, Any]:
    scoping = topic.get("scoping") or {}
    return {
        "name": topic["topic_name"],
        "description": topic.get("description") or topic["topic_name"],
        "is_bounded": bool(topic.get("is_bounded")),
        "scoping": {
            "user_scoped": bool(scoping.get("user_scoped")),
            "scope_properties": list(scoping.get("scope_properties") or []),
        },
    }


def _shape(topic: dict[str, Any]) -> tuple[bool, bool, tuple[str, ...]]:
    scoping = topic.get("scoping") or {}
    return (
        bool(topic.get("is_bounded")),
        bool(scoping.get("user_scoped")),
        tuple(sorted(scoping.get("scope_properties") or [])),
    )


async def plan_groups(
    mnemo: PoliteClient, engram_groups: list[dict[str, Any]], group_map: dict[str, str]
) -> list[GroupPlan]:
    plans = []
    for group in engram_groups:
        name = group_map.get(group["name"], group["name"])
        topics = [topic_document(t) for t in group.get("topics") or []]
        try:
            config = await mnemo.call("GET", f"/v1/groups/{name}")
        except HttpProblem as exc:
            if exc.status != 404:
                raise
            plans.append(GroupPlan(group["name"], name, True, topics))
            continue
        mine = {t["name"]: t for t in config["topics"]}
        missing = []
        for topic in topics:
            here = mine.get(topic["name"])
            if here is None:
                missing.append(topic)
            elif _shape(here) != _shape({**topic, "topic_name": topic["name"]}):
                raise GroupConflict(
                    f"topic '{topic['name']}' of group '{name}' is scoped differently here "
                    f"(here: {_describe(here)}; Engram: {_describe(topic)}); nothing was "
                    f"written. Import into another group with --group-map {group['name']}=NEW, "
                    "or change the topic here"
                )
        plans.append(GroupPlan(group["name"], name, False, missing, config))
    return plans


def _describe(topic: dict[str, Any]) -> str:
    bounded, user_scoped, properties = _shape(topic)
    return (
        f"{'bounded' if bounded else 'unbounded'}, "
        f"{'user-scoped' if user_scoped else 'project-wide'}, properties {list(properties)}"
    )


async def apply_groups(mnemo: PoliteClient, plans: list[GroupPlan]) -> dict[str, list[str]]:
    """Create or extend the groups; {group: topics added} of every group changed."""
    from mnemo.domain.templates import template_document

    changed: dict[str, list[str]] = {}
    for plan in plans:
        if plan.create:
            pipeline = template_document("default")["pipeline"]
            document: dict[str, Any] = {"topics": plan.missing, "pipeline": pipeline}
        elif plan.missing:
            assert plan.config is not None
            kept = ("description", "topics", "pipeline", "retention", "consolidation",
                    "reconsolidation")  # fmt: skip
            document = {k: plan.config[k] for k in kept if plan.config.get(k) is not None}
            document["topics"] = [*plan.config["topics"], *plan.missing]
        else:
            continue
        await mnemo.call("PUT", f"/v1/groups/{plan.mnemo}", document)
        changed[plan.mnemo] = [t["name"] for t in plan.missing]
    return changed


@dataclass
class Writer:
    """Memories to POST /v1/import in batches; counts what was new here."""

    mnemo: PoliteClient | None  # None: a dry run (nothing written)
    group_map: dict[str, str]
    pending: list[dict[str, Any]] = field(default_factory=list)
    # One batch in flight at a time: a flush waits for batches other scopes took.
    sending: asyncio.Lock = field(default_factory=asyncio.Lock)
    written: int = 0
    already_here: int = 0
    rekeyed: int = 0

    async def add(self, memories: list[dict[str, Any]]) -> None:
        self.pending.extend(memories)
        if len(self.pending) >= IMPORT_BATCH:
            async with self.sending:
                while len(self.pending) >= IMPORT_BATCH:
                    batch = self.pending[:IMPORT_BATCH]
                    del self.pending[:IMPORT_BATCH]
                    await self._send(batch)

    async def flush(self) -> None:
        """Write everything pending; returns once every batch taken so far (by any scope)
        is acknowledged, so a scope marked done has all its memories written."""
        async with self.sending:
            while self.pending:
                batch = self.pending[:IMPORT_BATCH]
                del self.pending[:IMPORT_BATCH]
                await self._send(batch)

    async def _send(self, batch: list[dict[str, Any]]) -> None:
        if self.mnemo is None:
            self.written += len(batch)
            return
        lines = [as_import_line(m, self.group_map) for m in batch]
        try:
            report = await self.mnemo.call("POST", "/v1/import", {"memories": lines})
        except HttpProblem as exc:
            # The server's body limit (MNEMO_MAX_BODY_BYTES) may be under a full batch.
            if exc.status != 413 or len(batch) == 1:
                raise
            half = len(batch) // 2
            await self._send(batch[:half])
            await self._send(batch[half:])
            return
        self.written += report["imported"]
        self.already_here += report.get("already_present", 0)
        self.rekeyed += len(report.get("rekeyed") or [])


def as_import_line(memory: dict[str, Any], group_map: dict[str, str]) -> dict[str, Any]:
    """An Engram memory as mnemo keeps it: same id, scope, content and times. Engram keeps
    no event time: its system times stand in for it (a source that has one, as another
    mnemo does, keeps its own)."""
    created = datetime.fromisoformat(memory["created_at"])
    updated = datetime.fromisoformat(memory.get("updated_at") or memory["created_at"])
    group = memory.get("group") or "default"
    return {
        "id": memory["id"],
        "group": group_map.get(group, group),
        "topic": memory["topic"],
        "user_id": memory.get("user_id"),
        "properties": memory.get("properties") or {},
        "content": memory["content"],
        "created_at": created.isoformat(),
        "updated_at": updated.isoformat(),
        "event_time": memory.get("event_time") or created.isoformat(),
        "event_time_end": memory.get("event_time_end") or max(created, updated).isoformat(),
    }
