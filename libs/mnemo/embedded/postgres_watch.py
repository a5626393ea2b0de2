"""Keep the embedded Postgres running: the server that started it restarts it if it dies.

Every second the watch checks the postmaster. If it is gone (killed, crashed, OOM), the
server starts it again on the same data folder and socket; crash recovery replays its log,
so nothing committed is lost, and the workers reconnect on their own (their retries of an
unreachable database are transient). Meanwhile adds answer 503 with Retry-After and /readyz
says why. Five restarts within a minute mean it will not stay up: the watch gives up and
the server exits with an error rather than serve on without a database.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable

from mnemo.core.failures import Backoff, describe
from mnemo.store.database import Database, postmaster_alive, restart_embedded

log = logging.getLogger(__name__)

CHECK_SECONDS = 1.0
MAX_RESTARTS = 5
RESTART_WINDOW_SECONDS = 60.0


async def watch_embedded_postgres(
    database: Database,
    on_failure: Callable[[str], None],
    every_seconds: float = CHECK_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Run until cancelled, or until giving up (then `on_failure(reason)` is called)."""
    server = database.embedded
    if server is None:
        return  # an external database is its operator's to run
    attempts: deque[float] = deque(maxlen=MAX_RESTARTS)
    backoff = Backoff(every_seconds, 10.0)
    while True:
        await asyncio.sleep(every_seconds)
        if await asyncio.to_thread(postmaster_alive, server):
            backoff.reset()
            continue
        now = clock()
        attempts.append(now)
        if len(attempts) == MAX_RESTARTS and now - attempts[0] <= RESTART_WINDOW_SECONDS:
            reason = (
                f"the embedded Postgres died or failed to restart {MAX_RESTARTS} times "
                f"within {RESTART_WINDOW_SECONDS:.0f} s; giving up"
            )
            log.error("%s", reason)
            on_failure(reason)
            return
        log.error("the embedded Postgres (pid %s) is gone; restarting it", server.get_pid())
        try:
            pid = await asyncio.to_thread(restart_embedded, server)
        except Exception as exc:
            wait = backoff.next()
            log.error("the embedded Postgres did not restart (%s); again in %.0f s",
                      describe(exc, 300), wait)  # fmt: skip
            await asyncio.sleep(wait)
            continue
        await database.db.dispose()  # connections to the dead server are no use
        log.warning("the embedded Postgres is running again (pid %d)", pid)
