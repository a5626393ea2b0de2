"""`mnemo import --from-engram URL --key KEY [--users FILE]`: pull a live Engram project.

Engram's v1 API has no export, no paging (a list answers at most 100 memories) and no way
to list users; `mnemo.cli.engram` reads every scope completely where the API allows it
(listing, listing by property value, enumerating by search) and says, scope by scope, how
complete the read is. Memories are written here as they are (same ids, content, scope and
times; nothing extracted again; vectors computed by this mnemo).

Exit codes: 0 every scope was read completely (saturated); 3 some scopes may hold memories
that were not read (named on stderr and in the report); 2 the pull was refused before
writing (a topic scoped differently here, a bad option); 1 Engram or mnemo failed (re-run
to resume); 130 interrupted (re-run to resume).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from mnemo.cli.engram.pull import PullOptions, PullResult

DEFAULT_STATE = Path(".mnemo-engram-pull.json")


def read_users(path: Path) -> list[str]:
    """One user id per line; blank lines and `#` comments are skipped."""
    users = [line.strip() for line in path.read_text("utf-8").splitlines()]
    return list(dict.fromkeys(u for u in users if u and not u.startswith("#")))


def parse_group_map(pairs: list[str]) -> dict[str, str]:
    mapping = {}
    for pair in pairs:
        engram, sep, mnemo = pair.partition("=")
        if not sep or not engram or not mnemo:
            raise typer.BadParameter(f"{pair!r}: expected ENGRAM_GROUP=MNEMO_GROUP",
                                     param_hint="--group-map")  # fmt: skip
        mapping[engram] = mnemo
    return mapping


def run(options: PullOptions, report_file: Path | None) -> None:
    from mnemo.cli.engram.http import HttpProblem
    from mnemo.cli.engram.pull import EXIT_INCOMPLETE, pull
    from mnemo.cli.engram.target import GroupConflict

    try:
        result = asyncio.run(pull(options))
    except GroupConflict as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    except HttpProblem as exc:
        typer.echo(f"error: {exc}; progress is in {options.state}: re-run to resume", err=True)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt as exc:
        typer.echo(f"interrupted; progress is in {options.state}: re-run to resume", err=True)
        raise typer.Exit(130) from exc
    summary = result.as_json()
    if report_file is not None:
        report_file.write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    for line in render(result):
        typer.echo(line, err=True)
    if result.incomplete:
        raise typer.Exit(EXIT_INCOMPLETE)


def render(result: PullResult) -> list[str]:
    """The completeness report as a person reads it."""
    lines = ["scope                                      read  how                   complete"]
    for s in result.scopes:
        how = "+".join(s.how) or "-"
        state = "yes" if s.saturated else f"NO (~{s.may_remain} may remain)"
        lines.append(f"{s.scope:<40} {s.read:>6}  {how:<20}  {state}")
    read = sum(s.read for s in result.scopes)
    verb = "would write" if result.dry_run else "wrote"
    new = result.written - result.already_here
    lines.append(
        f"read {read} memories from {len(result.scopes)} scopes ({len(result.users)} users); "
        f"{verb} {result.written}: {new} new, {result.already_here} already here"
    )
    if not result.dry_run and result.written and not new:
        lines.append("nothing new: this mnemo already had every memory read")
    for group, topics in result.groups_changed.items():
        action = "would add" if result.dry_run else "added"
        lines.append(f"group '{group}': {action} Engram's topics {topics}")
    if result.incomplete:
        lines.append(
            f"INCOMPLETE: {len(result.incomplete)} scopes may hold memories that were not "
            f"read: {', '.join(result.incomplete)}"
        )
        for s in result.scopes:
            if not s.saturated:
                lines.append(f"  {s.scope}: {s.note}")
    else:
        lines.append("complete: every scope was read to saturation")
    return lines
