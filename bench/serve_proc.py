"""`mnemo serve`, as the bench runs it: Engine + gateway under uvicorn, in its own process.

The same code path as `mnemo serve` (start_engine from MNEMO_* settings, create_app, uvicorn)
with uvicorn's access log off (one stderr line per request would be measured too). Writes a
fresh API key to --key-file before the server starts listening.
Usage: python -m bench.serve_proc --port P --data-dir D --key-file F
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from pathlib import Path

import uvicorn

from mnemo.api.connections import uvicorn_config
from mnemo.embedded.processes import spawn_workers
from mnemo.embedded.startup import start_engine
from mnemo.gateway.app import create_app
from mnemo.heap import settle_heap
from mnemo.settings import Settings


async def serve(port: int, data_dir: Path, key_file: Path) -> None:
    settings = Settings(port=port, data_dir=data_dir)  # MNEMO_* from the environment
    engine = await start_engine(settings, run_workers=settings.worker_processes == 0)
    workers = spawn_workers(settings, engine.database.url, settings.worker_processes)
    try:
        await workers.wait_ready()
        _, secret = await engine.create_key(settings.project, "bench")
        config = uvicorn_config(
            create_app(settings, engine),
            settings,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            access_log=False,
            backlog=4096,
        )
        settle_heap()  # as `mnemo serve` does
        await asyncio.to_thread(key_file.write_text, secret)  # read once /healthz answers
        await uvicorn.Server(config).serve()
    finally:
        await asyncio.to_thread(workers.stop)
        await engine.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--key-file", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve(args.port, args.data_dir, args.key_file))


if __name__ == "__main__":
    main()
