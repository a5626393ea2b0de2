"""Lanes: different keys run at once, one key strictly in order, barriers, and offsets
acknowledged only in offset order (OrderedAcks)."""

from __future__ import annotations

import asyncio

import pytest

from mnemo.kafka.acks import OrderedAcks
from mnemo.kafka.lanes import Lanes

TP = ("raw", 0)


def test_acks_release_only_the_leading_done_records() -> None:
    acks: OrderedAcks[str] = OrderedAcks()
    for offset in (10, 11, 12, 13):
        acks.take(TP, offset, f"r{offset}")
    assert acks.done(TP, 12) == []  # 10 and 11 still running: the commit stays below 10
    assert acks.lowest_pending(TP) == 10
    assert acks.done(TP, 10) == ["r10"]
    assert acks.done(TP, 11) == ["r11", "r12"]
    assert acks.done(TP, 13) == ["r13"] and len(acks) == 0
    assert acks.done(TP, 13) == []  # unknown or released: nothing


def test_acks_put_a_rewound_offset_in_its_place() -> None:
    acks: OrderedAcks[int] = OrderedAcks()
    acks.take(TP, 5, 5)
    acks.take(TP, 3, 3)  # the consumer seeked back
    assert acks.done(TP, 5) == [] and acks.done(TP, 3) == [3, 5]


class Recorder:
    def __init__(self) -> None:
        self.started: list[str] = []
        self.acked: list[int] = []
        self.gates: dict[str, asyncio.Event] = {}

    def work(self, name: str):  # type: ignore[no-untyped-def]
        gate = self.gates.setdefault(name, asyncio.Event())

        async def run() -> None:
            self.started.append(name)
            await gate.wait()

        return run

    def ack(self, offset: int):  # type: ignore[no-untyped-def]
        return lambda: self.acked.append(offset)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_keys_run_concurrently_in_order_and_acks_follow_offsets() -> None:
    lanes, rec = Lanes(running=8, taken=32), Recorder()
    for offset, (key, name) in enumerate([("a", "a1"), ("b", "b1"), ("a", "a2"), ("c", "c1")]):
        await lanes.submit(TP, offset, key, rec.work(name), rec.ack(offset))
    await settle()
    assert rec.started == ["a1", "b1", "c1"]  # a2 waits for a1; the other keys run
    rec.gates["c1"].set()
    rec.gates["b1"].set()
    await settle()
    assert rec.acked == []  # offset 0 (a1) still runs: nothing past it is acknowledged
    rec.gates["a1"].set()
    await settle()
    assert rec.started[-1] == "a2" and rec.acked == [0, 1]
    rec.gates["a2"].set()
    await settle()
    assert rec.acked == [0, 1, 2, 3] and lanes.pending == 0


async def test_a_barrier_waits_for_its_partition_and_holds_what_follows() -> None:
    lanes, rec = Lanes(running=8, taken=32), Recorder()
    await lanes.submit(TP, 0, "a", rec.work("a1"), rec.ack(0))
    await lanes.submit(TP, 1, None, rec.work("tick"), rec.ack(1))
    await lanes.submit(TP, 2, "b", rec.work("b1"), rec.ack(2))
    await settle()
    assert rec.started == ["a1"]
    rec.gates["a1"].set()
    await settle()
    assert rec.started == ["a1", "tick"]
    rec.gates["tick"].set()
    rec.gates["b1"].set()
    await settle()
    assert rec.started == ["a1", "tick", "b1"] and rec.acked == [0, 1, 2]


async def test_running_slots_bound_the_work_and_a_cancelled_record_is_not_acked() -> None:
    lanes, rec = Lanes(running=2, taken=8), Recorder()
    for offset, key in enumerate("abcd"):
        await lanes.submit(TP, offset, key, rec.work(key), rec.ack(offset))
    await settle()
    assert rec.started == ["a", "b"]
    await lanes.close()
    assert rec.acked == [] and lanes.pending == 4  # nothing acknowledged: all re-delivered
    with pytest.raises(ValueError):
        Lanes(running=4, taken=2)
