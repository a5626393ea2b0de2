"""Write libs/mnemo/client/sync.py from libs/mnemo/client/aio.py (issue 36: one source).

The synchronous client is the asynchronous one without `async`/`await`, on the sync
transport; request building and parsing are shared already (`mnemo.client.requests`). Edit
aio.py, then run:

    python scripts/generate_sync_client.py          # rewrite sync.py
    python scripts/generate_sync_client.py --check  # exit 1 when sync.py is not current

tests/unit/client/test_sync_generated.py runs the check.
"""

from __future__ import annotations

import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parent.parent / "libs" / "mnemo" / "client"
SOURCE, TARGET = CLIENT / "aio.py", CLIENT / "sync.py"
HEADER = "# Generated from aio.py by scripts/generate_sync_client.py: edit aio.py, then run it.\n"
# In order: the longer names first, so `async def __aenter__` is not cut by `async def `.
REPLACEMENTS = (
    (
        "`AsyncMnemoClient`: the asynchronous HTTP client",
        "`MnemoClient`: the synchronous HTTP client",
    ),
    ("Asynchronous client", "Synchronous client"),
    ("async def __aenter__", "def __enter__"),
    ("async def __aexit__", "def __exit__"),
    ("async def ", "def "),
    ("await ", ""),
    ("AsyncTransport", "SyncTransport"),
    ("AsyncSender", "SyncSender"),
    ("AsyncMnemoClient", "MnemoClient"),
    ("httpx.AsyncClient", "httpx.Client"),
)


def generate(source: str) -> str:
    for old, new in REPLACEMENTS:
        source = source.replace(old, new)
    return HEADER + source


def main(argv: list[str]) -> int:
    wanted = generate(SOURCE.read_text())
    if "--check" in argv:
        if TARGET.read_text() != wanted:
            print(f"{TARGET} is not generated from {SOURCE.name}: run {Path(__file__).name}")
            return 1
        return 0
    TARGET.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
