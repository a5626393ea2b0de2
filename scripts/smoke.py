"""Through the SDK against a running mnemo: an add is made searchable, or this exits non-zero.

    python scripts/smoke.py http://127.0.0.1:8080 [--expect TEXT] [--user U]

Without --expect it adds a memory and finds it by search; with --expect it only searches
for TEXT (a memory stored earlier, e.g. in a data dir from an older release).
Used by scripts/test-versions.sh (the other Python versions in CI) and by hand.
"""

from __future__ import annotations

import argparse
import sys
import time

from mnemo.client.sync import MnemoClient

MEMORY = "The user keeps bees on the roof of the library"
QUERY = "Who keeps bees?"


def wait_searchable(client: MnemoClient, query: str, text: str, user: str, timeout: float) -> bool:
    """Poll the search until `text` is among the results (the pipeline is asynchronous)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(text in m.content for m in client.memories.search(query, user_id=user)):
            return True
        time.sleep(0.5)
    return False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--expect", help="only search for this text (stored earlier)")
    parser.add_argument("--user", default="smoke-user")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    with MnemoClient(base_url=args.url) as client:
        text = args.expect or MEMORY
        if args.expect is None:
            run = client.memories.add(MEMORY, user_id=args.user)
            client.runs.wait(run.run_id, timeout=args.timeout)
        if not wait_searchable(
            client, QUERY if args.expect is None else text, text, args.user, args.timeout
        ):
            print(f"smoke: FAILED, {text!r} not found by search at {args.url}", file=sys.stderr)
            return 1
    print(f"smoke: ok, {text!r} added earlier or now is found by search through the SDK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
