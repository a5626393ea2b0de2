"""`mnemo export`: memories as JSONL, through the public list API.

Limits (the Engram v1 API has no pagination or user enumeration): each (group, topic, user)
yields at most its 100 most recently updated memories, and user-scoped topics are exported
only for the users named with --user. A warning on stderr reports any truncated listing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from mnemo.cli.common import ApiKeyOption, UrlOption, remote_client

if TYPE_CHECKING:
    from mnemo.client import MnemoClient
    from mnemo.client.models import GroupSummary

MAX_LIST = 100


def _export_group(client: MnemoClient, group: GroupSummary, users: list[str], out: TextIO) -> int:
    written = 0
    for topic in group.topics:
        owners: list[str | None] = list(users) if topic.scoping.user_scoped else [None]
        for user in owners:
            page = client.memories.list(
                topics=[topic.topic_name], user_id=user, group=group.name, limit=MAX_LIST
            )
            if page.total > len(page):
                typer.echo(
                    f"warning: {group.name}/{topic.topic_name}/{user or '-'}: exported "
                    f"{len(page)} of {page.total} (API list limit)",
                    err=True,
                )
            for memory in page:
                out.write(memory.model_dump_json(exclude_none=True) + "\n")
                written += 1
    return written


def export_command(
    user: Annotated[list[str] | None, typer.Option("--user", "-u", help="Repeatable")] = None,
    group: Annotated[list[str] | None, typer.Option("--group", "-g", help="Repeatable")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Default: stdout")] = None,
    url: UrlOption = "http://127.0.0.1:8080",
    api_key: ApiKeyOption = None,
) -> None:
    """Export memories as JSONL (see the module docs for the API's limits)."""
    out = output.open("w", encoding="utf-8") if output else sys.stdout
    try:
        with remote_client(url, api_key) as client:
            groups = [g for g in client.groups.list() if not group or g.name in group]
            written = sum(_export_group(client, g, list(user or []), out) for g in groups)
    finally:
        if output:
            out.close()
    typer.echo(json.dumps({"exported": written}), err=True)
