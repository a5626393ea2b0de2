"""A whole Engram pull: scopes, users, groups, resumable progress and the report.

Scopes are each group's project-wide topics (read once, first: the user ids their
memories carry join the users), then its user-scoped topics for every user. Scopes are
read `scopes_at_once` at a time; each one's memories are written before it is marked done
in the state file, so a pull stopped anywhere (Ctrl-C, a broken connection) resumes with
the scopes not done, and re-writing a memory changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemo.cli.engram.http import Pace, PoliteClient
from mnemo.cli.engram.reading import Scope, ScopeReader, ScopeReport
from mnemo.cli.engram.target import Writer, apply_groups, plan_groups

EXIT_INCOMPLETE = 3  # every scope was read, some may hold more than was read


@dataclass
class PullOptions:
    engram_url: str
    engram_key: str
    users: list[str]
    mnemo_url: str
    mnemo_key: str | None
    state: Path
    group_map: dict[str, str] = field(default_factory=dict)
    dry_run: bool = False
    progress: bool = True
    scopes_at_once: int = 2
    pace: Pace = field(default_factory=Pace)
    query_budget: int = 4000


@dataclass
class PullResult:
    scopes: list[ScopeReport]
    users: list[str]
    groups_changed: dict[str, list[str]]
    written: int
    already_here: int
    rekeyed: int
    dry_run: bool
    resumed: int  # scopes done by an earlier, interrupted run

    @property
    def incomplete(self) -> list[str]:
        return [s.scope for s in self.scopes if not s.saturated]

    def as_json(self) -> dict[str, Any]:
        return {
            "complete": not self.incomplete,
            "dry_run": self.dry_run,
            "read": sum(s.read for s in self.scopes),
            "written": self.written,
            "new": self.written - self.already_here,
            "already_here": self.already_here,
            "rekeyed_bounded": self.rekeyed,
            "users": self.users,
            "groups_changed": self.groups_changed,
            "resumed_scopes": self.resumed,
            "incomplete_scopes": self.incomplete,
            "scopes": [s.as_json() for s in self.scopes],
        }


def _load_state(path: Path, url: str) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The scopes an earlier run of this pull finished, and the users it had seen."""
    if not path.exists():
        return {}, []
    state = json.loads(path.read_text("utf-8"))
    if state.get("engram") != url:
        return {}, []
    return dict(state["done"]), list(state.get("users_seen") or [])


def _save_state(path: Path, url: str, done: dict[str, dict[str, Any]], users: list[str]) -> None:
    """Atomically, so a crash never leaves a half-written state file."""
    temporary = path.with_name(path.name + ".tmp")
    body = {"engram": url, "done": done, "users_seen": sorted(users)}
    temporary.write_text(json.dumps(body), "utf-8")
    os.replace(temporary, path)


def _scopes(groups: list[dict[str, Any]], users: list[str], shared: bool) -> list[Scope]:
    found = []
    for group in groups:
        for topic in group.get("topics") or []:
            scoping = topic.get("scoping") or {}
            if bool(scoping.get("user_scoped")) == shared:
                continue
            properties = tuple(scoping.get("scope_properties") or [])
            for user in [None] if shared else users:
                found.append(Scope(group["name"], topic["topic_name"], user, properties))
    return found


async def pull(options: PullOptions) -> PullResult:
    from mnemo.client.transport import default_headers

    engram = PoliteClient(
        options.engram_url,
        {**default_headers(options.engram_key), "X-Engram-Client": "mnemo-import"},
        options.pace,
    )
    mnemo = PoliteClient(options.mnemo_url, default_headers(options.mnemo_key), options.pace)
    try:
        return await _pull(options, engram, mnemo)
    finally:
        await engram.aclose()
        await mnemo.aclose()


async def _pull(options: PullOptions, engram: PoliteClient, mnemo: PoliteClient) -> PullResult:
    groups = list((await engram.call("GET", "/v1/groups")).get("groups") or [])
    unknown = sorted(set(options.group_map) - {g["name"] for g in groups})
    if unknown:
        raise ValueError(f"--group-map names groups Engram does not have: {unknown}")
    plans = await plan_groups(mnemo, groups, options.group_map)  # may stop the pull here
    changed = {} if options.dry_run else await apply_groups(mnemo, plans)
    if options.dry_run:
        changed = {p.mnemo: [t["name"] for t in p.missing] for p in plans if p.missing}
    done, seen_before = (
        ({}, []) if options.dry_run else _load_state(options.state, options.engram_url)
    )
    finished_before = set(done)
    writer = Writer(None if options.dry_run else mnemo, options.group_map)
    reader = ScopeReader(engram, options.query_budget)
    reader.users_seen.update(seen_before)
    reports: dict[str, ScopeReport] = {k: ScopeReport(**v) for k, v in done.items()}
    users = {u.lower(): u for u in options.users}
    bars = _Bars(options.progress)
    lock = asyncio.Lock()
    slots = asyncio.Semaphore(options.scopes_at_once)

    async def one(scope: Scope) -> None:
        if scope.label in reports:
            return
        async with slots:
            bar = bars.open(scope.label)
            report = await reader.read(scope, writer.add, bar)
            async with lock:
                await writer.flush()
                bars.close(scope.label, report)
                reports[scope.label] = report
                if not options.dry_run and report.saturated:
                    done[scope.label] = report.as_json()
                    _save_state(options.state, options.engram_url, done, list(reader.users_seen))

    shared = _scopes(groups, [], shared=True)
    await asyncio.gather(*(one(s) for s in shared))
    # Engram cannot list users: take the ids the project-wide memories carry too.
    for user in sorted(reader.users_seen):
        users.setdefault(user.lower(), user)
    await asyncio.gather(*(one(s) for s in _scopes(groups, list(users.values()), shared=False)))
    bars.finish()
    scoped = _scopes(groups, list(users.values()), shared=False)
    order = [s.label for s in [*shared, *scoped]]
    result = PullResult(
        scopes=[reports[label] for label in order],
        users=list(users.values()),
        groups_changed=changed,
        written=writer.written,
        already_here=writer.already_here,
        rekeyed=writer.rekeyed,
        dry_run=options.dry_run,
        resumed=len(finished_before & set(order)),
    )
    if not options.dry_run and not result.incomplete:
        options.state.unlink(missing_ok=True)  # finished: a next run reads everything again
    return result


class _Bars:
    """A tqdm bar per scope being read (memories read so far)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.open_bars: dict[str, Any] = {}
        self.position = 0

    def open(self, label: str) -> Any:
        if not self.enabled:
            return lambda n: None
        from tqdm import tqdm

        bar = tqdm(desc=label, unit="memory", position=self.position, leave=True)
        self.position += 1
        self.open_bars[label] = bar
        return bar.update

    def close(self, label: str, report: ScopeReport) -> None:
        bar = self.open_bars.pop(label, None)
        if bar is not None:
            bar.set_postfix_str("saturated" if report.saturated else "MAY BE INCOMPLETE")
            bar.close()

    def finish(self) -> None:
        for bar in self.open_bars.values():
            bar.close()
