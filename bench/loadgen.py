"""Open-loop HTTP load: requests leave on a fixed clock, latency counts from the scheduled time.

Sending on a schedule (not when the previous answer arrives) and timing from the scheduled
instant avoids coordinated omission: a stalled server shows up as latency, not as fewer
requests. The client is a minimal keep-alive HTTP/1.1 pool on asyncio streams rather than
httpx: on a 2-core machine httpx's own CPU time per request (~0.5 ms) would compete with the
server under test and delay reading answers; this client costs a few tens of microseconds.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Below uvicorn's default keep-alive timeout (5 s).
KEEP_ALIVE_REUSE_SECONDS = 4.0


class HttpPool:
    """Keep-alive connections to one host; at most `size` requests in flight."""

    def __init__(self, host: str, port: int, headers: dict[str, str], size: int = 256) -> None:
        self.host, self.port, self.size = host, port, size
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self._head = f"Host: {host}:{port}\r\nContent-Type: application/json\r\n{extra}"
        # (reader, writer, last used): uvicorn closes keep-alive connections idle for 5 s, and
        # reusing one of those fails the request, so older ones are not reused.
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = []
        self._slots = asyncio.Semaphore(size)

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        data = json.dumps(body).encode()
        request = (
            f"POST {path} HTTP/1.1\r\n{self._head}Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        async with self._slots:
            conn = await self._connection()
            try:
                status, payload = await self._exchange(conn, request)
            except BaseException:
                conn[1].close()
                raise
            self._idle.append((*conn, time.monotonic()))
            return status, payload

    async def _connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        while self._idle:
            reader, writer, last_used = self._idle.pop()
            if time.monotonic() - last_used < KEEP_ALIVE_REUSE_SECONDS:
                return reader, writer
            writer.close()
        return await self._open()

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection(self.host, self.port)

    @staticmethod
    async def _exchange(
        conn: tuple[asyncio.StreamReader, asyncio.StreamWriter], request: bytes
    ) -> tuple[int, bytes]:
        reader, writer = conn
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        return status, await reader.readexactly(length)

    async def close(self) -> None:
        for _, writer, _ in self._idle:
            writer.close()
        self._idle.clear()


@dataclass
class LoadResult:
    rate: float
    seconds: float
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    error_kinds: Counter[str] = field(default_factory=Counter)
    sent: int = 0
    unsent: int = 0  # scheduled but never sent: the server fell more than `max_behind` behind
    finished_at: float = 0.0
    answers: list[bytes] = field(default_factory=list)

    @property
    def achieved(self) -> float:
        return len(self.latencies) / self.finished_at if self.finished_at else 0.0


async def open_loop(
    pool: HttpPool,
    path: str,
    body_for: Callable[[int], dict[str, Any]],
    rate: float,
    seconds: float,
    keep_answers: bool = False,
    max_behind: float = 3.0,
) -> LoadResult:
    """Send `rate` requests/s for `seconds`; request i leaves at start + i / rate.

    A saturated server would queue requests without bound (and the phase would never end),
    so once more than `max_behind` seconds' worth of requests are in flight, the rest of the
    schedule is counted as `unsent` and the phase stops.
    """
    result = LoadResult(rate=rate, seconds=seconds)
    total = int(rate * seconds)
    start = time.perf_counter()
    in_flight = 0

    async def one(i: int, scheduled: float) -> None:
        nonlocal in_flight
        in_flight += 1
        try:
            status, payload = await pool.post(path, body_for(i))
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            result.errors += 1
            result.error_kinds[type(exc).__name__] += 1
            return
        finally:
            in_flight -= 1
        if status >= 300:
            result.errors += 1
            result.error_kinds[f"HTTP {status}"] += 1
            return
        result.latencies.append(time.perf_counter() - scheduled)
        if keep_answers:
            result.answers.append(payload)

    tasks = []
    for i in range(total):
        scheduled = start + i / rate
        delay = scheduled - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        if in_flight > rate * max_behind:
            result.unsent = total - i
            break
        tasks.append(asyncio.create_task(one(i, scheduled)))
        result.sent += 1
    await asyncio.gather(*tasks)
    result.finished_at = time.perf_counter() - start
    return result
