"""Sending `Call`s over httpx, sync or async, and turning problem+json into typed errors."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import httpx

from mnemo.client.errors import MnemoConnectionError, error_for
from mnemo.client.requests import Call, WaitPlan
from mnemo.domain.memory import Run

T = TypeVar("T")
DEFAULT_TIMEOUT = 30.0


class AsyncSender(Protocol):
    """Where the async client's resources send their calls: over HTTP (`AsyncTransport`)
    or to an Engine in this process (`mnemo.client.engine_client.EngineTransport`). Both
    answer with the same parsed results and raise the same typed errors."""

    async def send(self, call: Call[T]) -> T: ...

    async def drive(self, plan: WaitPlan) -> Run: ...

    async def close(self) -> None: ...


class SyncSender(Protocol):
    """`AsyncSender` for the synchronous client (HTTP only: `SyncTransport`)."""

    def send(self, call: Call[T]) -> T: ...

    def drive(self, plan: WaitPlan) -> Run: ...

    def close(self) -> None: ...


def default_headers(api_key: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json", "User-Agent": "mnemo-client"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def outcome(call: Call[T], response: httpx.Response) -> T:
    """The parsed answer, or the typed error its status and problem document describe."""
    data: Any = None
    if response.content:
        try:
            data = response.json()
        except json.JSONDecodeError:
            data = {"detail": response.text[:500]}
    if response.status_code >= 400:
        raise error_for(response.status_code, data if isinstance(data, dict) else None)
    return call.parse(data)


def _request_kwargs(call: Call[Any], timeout: float) -> dict[str, Any]:
    return {
        "params": call.params,
        "json": call.json,
        "headers": call.headers,
        "timeout": timeout + call.extra_timeout,
    }


class SyncTransport:
    def __init__(
        self, base_url: str, api_key: str | None, timeout: float, http: httpx.Client | None = None
    ) -> None:
        self.timeout = timeout
        self.http = http or httpx.Client(
            base_url=base_url.rstrip("/"), headers=default_headers(api_key)
        )

    def send(self, call: Call[T]) -> T:
        try:
            response = self.http.request(
                call.method, call.path, **_request_kwargs(call, self.timeout)
            )
        except httpx.TransportError as exc:
            raise MnemoConnectionError(str(exc)) from exc
        return outcome(call, response)

    def drive(self, plan: WaitPlan) -> Run:
        call = next(plan)
        while True:
            try:
                call = plan.send(self.send(call))
            except StopIteration as done:
                result: Run = done.value
                return result

    def close(self) -> None:
        self.http.close()


class AsyncTransport:
    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        timeout: float,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.timeout = timeout
        self.http = http or httpx.AsyncClient(
            base_url=base_url.rstrip("/"), headers=default_headers(api_key)
        )

    async def send(self, call: Call[T]) -> T:
        try:
            response = await self.http.request(
                call.method, call.path, **_request_kwargs(call, self.timeout)
            )
        except httpx.TransportError as exc:
            raise MnemoConnectionError(str(exc)) from exc
        return outcome(call, response)

    async def drive(self, plan: WaitPlan) -> Run:
        return await drive_async(plan, self.send)

    async def close(self) -> None:
        await self.http.aclose()


async def drive_async(plan: WaitPlan, send: Callable[[Call[Run]], Awaitable[Run]]) -> Run:
    """Run a wait plan with an async sender."""
    call = next(plan)
    while True:
        run = await send(call)
        try:
            call = plan.send(run)
        except StopIteration as done:
            result: Run = done.value
            return result
