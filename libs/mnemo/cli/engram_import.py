"""`mnemo import --from-engram URL --key KEY --users FILE`: pull a live Engram project.

Engram's v1 API has no export and no user enumeration: this reads each group's topics
(`GET /v1/groups`), then lists each topic's memories (`POST /v1/memories/list`), per user
of FILE for user-scoped topics and once for shared ones, and writes them into mnemo as
they are (same ids, content, scope and times; nothing extracted again; vectors computed by
this mnemo). Engram lists at most 100 memories per call, newest first, and has no paging:
a scope that returns 100 may hold more, and is reported as possibly incomplete.

A group this mnemo lacks is created from Engram's topics with the `default` template's
pipeline; an existing group must have every topic. Re-running is safe: a memory imported
twice is the same memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from mnemo.cli.transfer_http import TransferClient
    from mnemo.client import MnemoClient
    from mnemo.client.models import GroupSummary, Memory

ENGRAM_LIST_CAP = 100


@dataclass
class EngramPull:
    imported: int = 0
    scopes: int = 0
    # "group/topic/user" of every scope that returned ENGRAM_LIST_CAP memories.
    capped: list[str] = field(default_factory=list)
    created_groups: list[str] = field(default_factory=list)


def read_users(path: Path) -> list[str]:
    """One user id per line; blank lines and `#` comments are skipped."""
    users = [line.strip() for line in path.read_text("utf-8").splitlines()]
    return list(dict.fromkeys(u for u in users if u and not u.startswith("#")))


def as_exported(memory: Memory, group: str) -> dict[str, Any]:
    """An Engram memory as an export line: its id, scope, content and times. Engram keeps
    no event time (mnemo's own list does): its system times stand in for it."""
    from mnemo.domain.event_time import as_utc

    created, updated = as_utc(memory.created_at), as_utc(memory.updated_at)
    start = as_utc(memory.event_time) if memory.event_time else created
    end = as_utc(memory.event_time_end) if memory.event_time_end else max(start, updated)
    return {
        "id": memory.id,
        "group": group,
        "topic": memory.topic,
        "user_id": memory.user_id,
        "properties": memory.properties or {},
        "content": memory.content,
        "created_at": created.isoformat(),
        "updated_at": updated.isoformat(),
        "event_time": start.isoformat(),
        "event_time_end": end.isoformat(),
    }


def ensure_group(target: MnemoClient, group: GroupSummary) -> bool:
    """Make sure this mnemo has `group` with every topic Engram has; True if created."""
    from mnemo.client.errors import NotFoundError
    from mnemo.domain.templates import template_document

    try:
        existing = target.groups.get(group.name)
    except NotFoundError:
        topics = [
            {
                "name": t.topic_name,
                "description": t.description,
                "is_bounded": t.is_bounded,
                "scoping": t.scoping.model_dump(),
            }
            for t in group.topics
        ]
        pipeline = template_document("default")["pipeline"]
        target.groups.put(group.name, {"topics": topics, "pipeline": pipeline})
        return True
    missing = [t.topic_name for t in group.topics if not existing.has_topic(t.topic_name)]
    if missing:
        raise typer.BadParameter(
            f"group '{group.name}' exists here without Engram's topics {missing}: add them "
            f"(PUT /v1/groups/{group.name}) or remove the group, then run this again",
            param_hint="--from-engram",
        )
    return False


def pull(
    source: MnemoClient, target: MnemoClient, sink: TransferClient, users: list[str]
) -> EngramPull:
    from mnemo.domain.transfer import IMPORT_BATCH

    done = EngramPull()
    for group in source.groups.list():
        if ensure_group(target, group):
            done.created_groups.append(group.name)
        for topic in group.topics:
            owners: list[str | None] = list(users) if topic.scoping.user_scoped else [None]
            for user in owners:
                page = source.memories.list(
                    topics=[topic.topic_name], user_id=user, group=group.name,
                    limit=ENGRAM_LIST_CAP,
                )  # fmt: skip
                done.scopes += 1
                if len(page) >= ENGRAM_LIST_CAP or page.total > len(page):
                    done.capped.append(f"{group.name}/{topic.topic_name}/{user or '-'}")
                lines = [as_exported(m, group.name) for m in page]
                for start in range(0, len(lines), IMPORT_BATCH):
                    report = sink.import_batch({"memories": lines[start : start + IMPORT_BATCH]})
                    done.imported += report["imported"]
    return done


def report(done: EngramPull) -> None:
    for scope in done.capped:
        typer.echo(
            f"warning: {scope}: Engram's list returned its cap of {ENGRAM_LIST_CAP} "
            "memories; this scope may hold more that could not be read",
            err=True,
        )
    summary = {
        "imported": done.imported,
        "scopes": done.scopes,
        "capped_scopes": done.capped,
        "created_groups": done.created_groups,
    }
    typer.echo(json.dumps(summary), err=True)
