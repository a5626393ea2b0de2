"""The polite HTTP client of an Engram pull: bounded concurrency, a request rate, retries.

Both ends of a pull (Engram and the target mnemo) are called through `PoliteClient`:
at most `concurrency` requests in flight, at most `rate` requests started per second, and
a 429 or 5xx answer (or a broken connection) retried after its `Retry-After` or an
exponential backoff, up to `attempts` tries. Anything else >= 400 is an `HttpProblem`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

RETRIED = frozenset({429, 500, 502, 503, 504})
MAX_WAIT = 120.0  # seconds: a Retry-After longer than this is cut to it


@dataclass(frozen=True)
class Pace:
    concurrency: int = 4
    rate: float | None = None  # requests per second; None: no limit
    attempts: int = 8
    backoff: float = 0.5  # seconds before the second try; doubles each time


class HttpProblem(Exception):
    """An answer >= 400 that retrying does not help (or retries ran out)."""

    def __init__(self, method: str, url: str, status: int, detail: str) -> None:
        super().__init__(f"{method} {url}: {status} {detail}")
        self.status, self.detail = status, detail


class PoliteClient:
    def __init__(self, base_url: str, headers: dict[str, str], pace: Pace) -> None:
        self.http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), headers=headers, timeout=httpx.Timeout(60.0)
        )
        self.pace = pace
        self.slots = asyncio.Semaphore(pace.concurrency)
        self.next_start = 0.0
        self.starts = asyncio.Lock()
        self.retries = 0  # answers retried, for the report

    async def aclose(self) -> None:
        await self.http.aclose()

    async def call(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        """The JSON answer (None for an empty one); retried as the module says."""
        wait = self.pace.backoff
        for attempt in range(1, self.pace.attempts + 1):
            async with self.slots:
                await self._paced()
                try:
                    response = await self.http.request(
                        method, path, json=body, params=params or None
                    )
                except httpx.TransportError as exc:
                    if attempt == self.pace.attempts:
                        raise HttpProblem(method, path, 0, f"connection failed: {exc}") from exc
                    response = None
            if response is not None and response.status_code not in RETRIED:
                return _answer(method, path, response)
            if attempt == self.pace.attempts:
                assert response is not None
                return _answer(method, path, response)
            self.retries += 1
            delay = _retry_after(response) if response is not None else None
            await asyncio.sleep(min(MAX_WAIT, delay if delay is not None else wait))
            wait *= 2
        raise AssertionError("unreachable")

    async def _paced(self) -> None:
        if not self.pace.rate:
            return
        async with self.starts:
            now = time.monotonic()
            start = max(now, self.next_start)
            self.next_start = start + 1.0 / self.pace.rate
        if start > now:
            await asyncio.sleep(start - now)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _answer(method: str, path: str, response: httpx.Response) -> Any:
    if response.status_code >= 400:
        detail = response.text[:500]
        try:
            problem = response.json()
            if isinstance(problem, dict):
                detail = str(problem.get("detail") or problem.get("title") or detail)
        except json.JSONDecodeError:
            pass
        raise HttpProblem(method, path, response.status_code, detail)
    return response.json() if response.content else None
