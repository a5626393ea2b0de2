"""The configured LLM and embedding endpoints, checked at start: reachable, the model
exists, and the structured-output mode works (one tiny call each).

A failure does not stop the server (searches and the console still work; adds fail until
the endpoint answers): it is a warning at start, and a failing check of `/readyz` and
`mnemo status`, re-checked at most every RECHECK_SECONDS until it passes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from mnemo.core.failures import describe
from mnemo.core.readiness import Check
from mnemo.errors import MnemoError

RECHECK_SECONDS = 30.0
PROBE_TIMEOUT_SECONDS = 10.0

# A probe returns the check's detail when the endpoint works and raises EndpointProblem
# (naming what is wrong) when it does not.
Probe = Callable[[], Awaitable[str]]


class EndpointProblem(MnemoError, RuntimeError):
    """What is wrong with an endpoint, in a sentence an operator can act on."""


@dataclass
class EndpointChecks:
    """Named probes and their latest results; failing ones are probed again on demand."""

    probes: dict[str, Probe]
    clock: Callable[[], float] = time.monotonic
    _results: dict[str, tuple[Check, float]] = field(default_factory=dict)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def run(self) -> list[Check]:
        """Probe every endpoint now."""
        async with self._lock:
            for name in self.probes:
                await self._probe(name)
            return self._checks()

    async def current(self) -> list[Check]:
        """The latest results, probing again the failing ones older than RECHECK_SECONDS."""
        async with self._lock:
            for name in self.probes:
                result = self._results.get(name)
                if result is None or (
                    not result[0].ok and self.clock() - result[1] >= RECHECK_SECONDS
                ):
                    await self._probe(name)
            return self._checks()

    def _checks(self) -> list[Check]:
        return [self._results[name][0] for name in self.probes if name in self._results]

    async def _probe(self, name: str) -> None:
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_SECONDS * 3):
                check = Check(name, True, await self.probes[name](), advisory=True)
        except EndpointProblem as exc:
            check = Check(name, False, str(exc), advisory=True)
        except Exception as exc:  # an unexpected answer is a failing check, not a crash
            check = Check(name, False, describe(exc, 300), advisory=True)
        self._results[name] = (check, self.clock())
