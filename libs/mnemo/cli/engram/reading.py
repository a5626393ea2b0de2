"""Reading one Engram scope completely, and saying honestly how complete it is.

Engram's list answers at most 100 memories, newest first, with no cursor. A scope (group,
topic, user) is read:

1. by listing it: under the cap, that is every memory (saturated);
2. at the cap, by listing each part of it: one per value of each scope property seen
   (new values found later are listed too); a part under the cap is complete;
3. and by enumerating it with search (bm25, vector, hybrid at limit 100), the scope and
   each part still capped: first each listed memory's rarest term, then rounds of queries
   drawn from the memories seen (rarest terms first, memories' own text for vector and
   hybrid), until `QUIET_ROUNDS` rounds in a row find nothing new.

Saturation of a search-read part needs two things: the rounds stopped finding new
memories, and search found again every memory the list had shown (a capture-recapture
check: the list is one sample, search the other). If search misses memories the list
shows, it cannot reach the whole part: the part is reported incomplete, with Chapman's
estimate of how many memories it holds.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from mnemo.cli.engram.http import PoliteClient

CAP = 100
QUIET_ROUNDS = 2  # rounds in a row without a new memory before search stops
ROUND_TERMS = 24  # bm25 queries per round
ROUND_TEXTS = 4  # memories whose text is a vector and a hybrid query, per round
QUERY_CHARS = 400
WORDS = re.compile(r"\w+", re.UNICODE)

Sink = Callable[[list[dict[str, Any]]], Awaitable[None]]


@dataclass(frozen=True)
class Scope:
    group: str
    topic: str
    user: str | None
    properties: tuple[str, ...]  # the topic's scope properties

    @property
    def label(self) -> str:
        return f"{self.group}/{self.topic}/{self.user or '-'}"


@dataclass
class ScopeReport:
    scope: str
    read: int = 0
    how: list[str] = field(default_factory=list)  # "list", "partitions", "search"
    list_calls: int = 0
    partitions: int = 0
    partitions_capped: int = 0
    search_rounds: int = 0
    search_queries: int = 0
    saturated: bool = False
    # Chapman's capture-recapture estimate of the memories the scope holds, and of those
    # this pull did not read (None: the list alone read the scope).
    estimated_total: int | None = None
    may_remain: int | None = None
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def chapman(first: int, second: int, both: int) -> float:
    """Chapman's estimate of a population from two samples of it and their overlap."""
    return (first + 1) * (second + 1) / (both + 1) - 1


def words(text: str) -> list[str]:
    return [w for w in WORDS.findall(text.lower()) if len(w) > 1]


@dataclass
class _Part:
    """What is known of one scope, or one property value of it."""

    filters: dict[str, str] | None
    sampled: set[str]  # ids the list showed (the first sample)
    found: set[str] = field(default_factory=set)  # ids search showed (the second)
    asked_terms: set[str] = field(default_factory=set)
    asked_texts: set[str] = field(default_factory=set)
    quiet: int = 0
    exhausted: bool = False


class ScopeReader:
    """Reads scopes of one Engram project; every new memory goes to `sink` once."""

    def __init__(self, engram: PoliteClient, query_budget: int = 4000) -> None:
        self.engram = engram
        self.query_budget = query_budget
        self.users_seen: set[str] = set()  # user ids of every memory read

    async def read(self, scope: Scope, sink: Sink, tick: Callable[[int], None]) -> ScopeReport:
        report = ScopeReport(scope.label)
        seen: dict[str, dict[str, Any]] = {}

        async def take(memories: list[dict[str, Any]]) -> list[dict[str, Any]]:
            new = [m for m in memories if m["id"] not in seen]
            for memory in new:
                seen[memory["id"]] = memory
                if memory.get("user_id"):
                    self.users_seen.add(memory["user_id"])
            if new:
                report.read += len(new)
                tick(len(new))
                await sink(new)
            return new

        first = await self._list(scope, None, report)
        await take(first)
        report.how.append("list")
        if len(first) < CAP:
            report.saturated = True
            return report
        whole = _Part(None, {m["id"] for m in first})
        parts: dict[tuple[str, str], _Part] = {}
        await self._partition(scope, seen, parts, report, take)
        searched = [whole, *(p for p in parts.values() if len(p.sampled) >= CAP)]
        report.how.append("search")
        while True:
            await asyncio.gather(*(self._enumerate(scope, p, seen, report, take)
                                   for p in searched))  # fmt: skip
            # Search may have shown property values not listed yet: list those parts.
            before = set(parts)
            await self._partition(scope, seen, parts, report, take)
            fresh = [p for key, p in parts.items() if key not in before and len(p.sampled) >= CAP]
            if not fresh:
                break
            searched.extend(fresh)
        _judge(report, searched, len(seen))
        return report

    async def _list(
        self, scope: Scope, filters: dict[str, str] | None, report: ScopeReport
    ) -> list[dict[str, Any]]:
        body = _body(scope, filters)
        body["limit"] = CAP
        report.list_calls += 1
        answer = await self.engram.call("POST", "/v1/memories/list", body)
        return list(answer.get("memories") or [])

    async def _partition(
        self,
        scope: Scope,
        seen: dict[str, dict[str, Any]],
        parts: dict[tuple[str, str], _Part],
        report: ScopeReport,
        take: Callable[[list[dict[str, Any]]], Awaitable[list[dict[str, Any]]]],
    ) -> None:
        """List every part (property value) seen and not listed yet, until none is new."""
        while True:
            todo = sorted(
                {(k, str(m["properties"][k])) for m in seen.values() for k in scope.properties
                 if (m.get("properties") or {}).get(k) is not None} - set(parts)
            )  # fmt: skip
            if not todo:
                return
            if "partitions" not in report.how:
                report.how.append("partitions")
            pages = await asyncio.gather(*(self._list(scope, {k: v}, report) for k, v in todo))
            for (key, value), page in zip(todo, pages, strict=True):
                parts[(key, value)] = _Part({key: value}, {m["id"] for m in page})
                report.partitions += 1
                report.partitions_capped += len(page) >= CAP
                await take(page)

    async def _enumerate(
        self,
        scope: Scope,
        part: _Part,
        seen: dict[str, dict[str, Any]],
        report: ScopeReport,
        take: Callable[[list[dict[str, Any]]], Awaitable[list[dict[str, Any]]]],
    ) -> None:
        part.quiet = 0
        while part.quiet < QUIET_ROUNDS:
            queries = _next_queries(part, seen)
            if not queries:
                return
            if report.search_queries + len(queries) > self.query_budget:
                part.exhausted = True
                return
            report.search_rounds += 1
            report.search_queries += len(queries)
            answers = await asyncio.gather(
                *(self._search(scope, part.filters, text, kind) for kind, text in queries)
            )
            new = 0
            for page in answers:
                part.found.update(m["id"] for m in page)
                new += len(await take(page))
            part.quiet = 0 if new else part.quiet + 1

    async def _search(
        self, scope: Scope, filters: dict[str, str] | None, query: str, kind: str
    ) -> list[dict[str, Any]]:
        body = _body(scope, filters)
        body["query"] = query
        body["retrieval_config"] = {"retrieval_type": kind, "limit": CAP}
        answer = await self.engram.call("POST", "/v1/memories/search", body)
        return list(answer.get("memories") or [])


def _body(scope: Scope, filters: dict[str, str] | None) -> dict[str, Any]:
    topic: Any = {"name": scope.topic, "properties": filters} if filters else scope.topic
    body: dict[str, Any] = {"group": scope.group, "topics": [topic]}
    if scope.user is not None:
        body["user_id"] = scope.user
    return body


def _in_part(memory: dict[str, Any], part: _Part) -> bool:
    props = memory.get("properties") or {}
    return all(props.get(k) == v for k, v in (part.filters or {}).items())


def _next_queries(part: _Part, seen: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """The next round: each listed memory's rarest term first (so search gets the chance
    to find again what the list showed), then the rarest terms not asked yet, and the
    text of memories not used as a query yet."""
    mine = sorted((m for m in seen.values() if _in_part(m, part)), key=lambda m: m["id"])
    frequency = Counter(w for m in mine for w in set(words(m["content"])))
    queries: list[tuple[str, str]] = []
    if not part.asked_terms:
        for memory in mine:
            if memory["id"] in part.sampled:
                own = sorted(set(words(memory["content"])), key=lambda w: (frequency[w], w))
                if own and own[0] not in part.asked_terms:
                    part.asked_terms.add(own[0])
                    queries.append(("bm25", own[0]))
        if queries:
            return queries
    rare = sorted((w for w in frequency if w not in part.asked_terms),
                  key=lambda w: (frequency[w], w))[:ROUND_TERMS]  # fmt: skip
    part.asked_terms.update(rare)
    queries = [("bm25", w) for w in rare]
    texts = [m for m in mine if m["id"] not in part.asked_texts][:ROUND_TEXTS]
    for memory in texts:
        part.asked_texts.add(memory["id"])
        text = memory["content"][:QUERY_CHARS]
        if text.strip():
            queries += [("vector", text), ("hybrid", text)]
    return queries


def _judge(report: ScopeReport, parts: list[_Part], read: int) -> None:
    """Saturated when every searched part stopped finding memories and search found again
    every memory its list showed; else the estimate of what may remain."""
    missed = sum(len(p.sampled - p.found) for p in parts)
    exhausted = any(p.exhausted for p in parts)
    sampled = set().union(*(p.sampled for p in parts))
    found = set().union(*(p.found for p in parts))
    estimate = chapman(len(sampled), len(found), len(sampled & found))
    report.estimated_total = max(read, round(estimate))
    report.may_remain = report.estimated_total - read
    report.saturated = not missed and not exhausted
    if exhausted:
        report.note = (
            "search stopped at its query budget (--max-queries) while still finding memories"
        )
    elif missed:
        report.note = (
            f"search never returned {missed} memories the list showed: it cannot reach all "
            "of this scope, so some memories may be unreadable through Engram's API"
        )
    else:
        report.note = "search found again every listed memory and stopped finding new ones"
