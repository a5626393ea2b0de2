"""Steady adds while a test breaks something, and what must hold afterwards.

Each user adds in sequence (a State update and a fact per step), so per-scope order is
checked on the State memory's history: its versions must be exactly the accepted states, in
add order. A refused add (503) is recorded with how long it waited: the only refusal the
cluster tests allow is the produce timeout's (or, while Postgres is down, the database's)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field

from aiokafka.admin import AIOKafkaAdminClient

from mnemo.api.statuses import STATUS_OF
from mnemo.core.engine import Engine
from mnemo.domain.memory import RunState
from mnemo.domain.requests import InvalidRequest
from mnemo.domain.scope import bounded_memory_id
from mnemo.kafka.channels import wanted
from mnemo.settings import KafkaSettings
from tests.kafka.helpers import add, add_state, memories, wait_all


@dataclass
class Refusal:
    user: str
    step: int
    status: int
    waited: float
    detail: str


@dataclass
class Load:
    engine: Engine
    project: str
    users: int = 2
    pause: float = 1.5
    accepted: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    refused: list[Refusal] = field(default_factory=list)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def start(self) -> None:
        for u in range(self.users):
            self.accepted[f"u{u}"] = []
            self._tasks.append(asyncio.create_task(self._user(f"u{u}")))

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.gather(*self._tasks)

    @property
    def run_ids(self) -> list[str]:
        return [run_id for runs in self.accepted.values() for _, _, run_id in runs]

    async def until_accepted(self, more: int, timeout: float = 300) -> None:
        """Until `more` adds beyond now were accepted (the load goes on meanwhile)."""
        target = len(self.run_ids) + more
        deadline = time.monotonic() + timeout
        while len(self.run_ids) < target:
            assert time.monotonic() < deadline, f"no progress: {len(self.run_ids)} accepted"
            await asyncio.sleep(0.2)

    async def _user(self, user: str) -> None:
        step = 0
        while not self._stop.is_set():
            for kind in ("state", "fact"):
                started = time.monotonic()
                try:
                    if kind == "state":
                        run = await add_state(self.engine, self.project, user, f"state {step}")
                    else:
                        run = await add(self.engine, self.project, user, f"fact {step}")
                except Exception as exc:  # 503s; while Postgres is down, its errors too
                    # the HTTP status the API would answer (api/statuses.py)
                    status = STATUS_OF[exc.kind] if isinstance(exc, InvalidRequest) else 0
                    self.refused.append(Refusal(user, step, status, time.monotonic() - started,
                                                f"{exc.__class__.__name__}: {exc}"[:300]))  # fmt: skip
                    continue
                self.accepted[user].append((step, kind, run.run_id))
            step += 1
            await asyncio.sleep(self.pause)

    async def verify(self, timeout: float = 600) -> None:
        """Every accepted run completed exactly once, in order per scope; nothing refused
        became a memory."""
        engine, project = self.engine, self.project
        await wait_all(engine, project, self.run_ids, timeout=timeout)
        for run_id in self.run_ids:
            run = await engine.get_run(project, run_id)
            assert run.status == RunState.completed, run
        for user, runs in self.accepted.items():
            states = [f"state {s}" for s, kind, _ in runs if kind == "state"]
            facts = Counter(f"User said: fact {s}" for s, kind, _ in runs if kind == "fact")
            found = await memories(engine, project, user, limit=100)
            assert len(found) < 100, "more memories than one page: lower the load"
            got = Counter(m.content for m in found if m.topic == "Facts")
            assert got == facts, f"{user}: facts lost or doubled: {got - facts} {facts - got}"
            if not states:
                continue
            memory_id = bounded_memory_id(project, "kt", "State", {"user_id": user})
            current = await engine.get_memory(project, "kt", user, memory_id)
            history = await engine.memory_history(project, "kt", user, memory_id)
            versions = [v.content for v in sorted(history, key=lambda v: v.version)]
            # The history holds the replaced versions, the memory the last one: together,
            # every accepted state once, in add order.
            assert [*versions, current.content] == states, f"{user}: out of order or lost"


async def wait_in_sync(ks: KafkaSettings, timeout: float = 240) -> None:
    """Until every partition of mnemo's topics and of the group offsets has all its
    replicas in sync (what an operator waits for between two broker restarts)."""
    topics = [*wanted(ks), "__consumer_offsets"]
    deadline = time.monotonic() + timeout
    while True:
        behind = []
        admin = AIOKafkaAdminClient(bootstrap_servers=ks.bootstrap_servers)
        try:
            await admin.start()
            for info in await admin.describe_topics(topics):
                for p in info["partitions"]:
                    if len(p["isr"]) < len(p["replicas"]):
                        behind.append(f"{info['topic']}[{p['partition']}]")
        except Exception as exc:  # a broker still coming up
            behind.append(repr(exc))
        finally:
            await admin.close()
        if not behind:
            return
        assert time.monotonic() < deadline, f"replicas not in sync: {behind[:10]}"
        await asyncio.sleep(1.0)
