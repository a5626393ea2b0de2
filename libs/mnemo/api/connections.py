"""How the gateway runs under uvicorn: a deadline for request heads, a cap on connections
still sending theirs, and access logs without query strings.

uvicorn times out idle keep-alive connections only: a client sending its request head a
byte at a time kept a connection (and its memory) for as long as it liked. Here a head
must be complete within MNEMO_HEADER_TIMEOUT_SECONDS of its first byte (or of the
connection); the connection is then closed with a 408. Connections still sending a head
are unauthenticated (the key is in the head), and at most
MNEMO_MAX_UNAUTHENTICATED_CONNECTIONS of them are kept: past that the one waiting longest
is closed, so slow clients can never crowd out the connections of authenticated ones,
whose heads arrive at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from mnemo.settings import Settings

_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 33\r\nconnection: close\r\n\r\nthe request head did not arrive.\n"
)
REDACTED = "***"


class HeadGuard:
    """The connections still sending a request head, oldest first."""

    def __init__(self, header_timeout: float, max_pending: int) -> None:
        self.header_timeout = header_timeout
        self.max_pending = max_pending
        self.pending: OrderedDict[GuardedProtocol, None] = OrderedDict()
        self.dropped = 0  # connections closed for a late head or over the cap

    def waiting(self, protocol: GuardedProtocol) -> None:
        self.pending[protocol] = None
        while len(self.pending) > self.max_pending:
            oldest, _ = self.pending.popitem(last=False)
            oldest.drop_head()

    def done(self, protocol: GuardedProtocol) -> None:
        self.pending.pop(protocol, None)


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a head deadline; `guard` is set per server by
    `protocol_for`."""

    guard: HeadGuard

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        self._await_head()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._head_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._await_head()  # the next request on a kept-alive connection

    def on_headers_complete(self) -> None:
        self._head_arrived()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_arrived()
        super().connection_lost(exc)

    def _await_head(self) -> None:
        self._head_timer = self.loop.call_later(self.guard.header_timeout, self.drop_head)
        self.guard.waiting(self)

    def _head_arrived(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        self.guard.done(self)

    def drop_head(self) -> None:
        """Close a connection whose request head is late (or over the cap), with a 408."""
        self._head_arrived()
        self.guard.dropped += 1
        if not self.transport.is_closing():
            self.transport.write(_TIMED_OUT)
            self.transport.close()


def protocol_for(settings: Settings) -> type[GuardedProtocol]:
    """A protocol class with its own guard, for one server."""
    guard = HeadGuard(settings.header_timeout_seconds, settings.max_unauthenticated_connections)
    return type("MnemoHttpProtocol", (GuardedProtocol,), {"guard": guard})


def redact_query(target: str) -> str:
    """A request target with every query value (and bare query item) replaced by `***`:
    keys sent in URLs are refused, but must not reach the logs either."""
    path, sep, query = target.partition("?")
    if not sep:
        return target
    items = []
    for item in query.split("&"):
        name, has_value, _ = item.partition("=")
        items.append(f"{name}={REDACTED}" if has_value and name else REDACTED)
    return f"{path}?{'&'.join(items)}"


class RedactQuery(logging.Filter):
    """On uvicorn's access logger: its third argument is the path with the query string."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact_query(args[2]), *args[3:])
        return True


def install_access_log_redaction() -> None:
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactQuery) for f in logger.filters):
        logger.addFilter(RedactQuery())


def uvicorn_config(app: Any, settings: Settings, **options: Any) -> uvicorn.Config:
    """The uvicorn configuration every entry point serves the gateway with: the guarded
    protocol, and the access log (if on) without query strings. `options` go to uvicorn."""
    options.setdefault("host", settings.host)
    options.setdefault("port", settings.port)
    config = uvicorn.Config(app, http=protocol_for(settings), **options)
    install_access_log_redaction()  # after Config, which (re)configures uvicorn's loggers
    return config
