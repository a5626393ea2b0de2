"""`mnemo export`: every memory of the key's project, losslessly, as JSON lines.

It streams `GET /v1/export` (see `mnemo.domain.transfer` for the lines) into a file with a
progress bar. An export cut short (a crash, a network error) leaves a file without its
`end` line; running the same command again resumes after the last memory it holds.
`mnemo import --memories FILE` restores it into another mnemo.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any

import typer

from mnemo.cli.common import ApiKeyOption, UrlOption, fail

if TYPE_CHECKING:
    from mnemo.cli.transfer_http import TransferClient


@dataclass
class Resume:
    """Where a file's export stands: complete, or unfinished after `last_id`."""

    header: dict[str, Any]
    last_id: str
    memories: int
    complete: bool = False


def resume_point(path: Path) -> Resume | None:
    """Where the export in `path` stands: complete, or unfinished with at least one memory
    (a trailing partial line is cut off then). None: there is nothing to resume."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    header: dict[str, Any] | None = None
    last: dict[str, Any] | None = None
    memories, good_bytes = 0, 0
    with path.open("rb") as lines:
        for raw in lines:
            if not raw.endswith(b"\n"):
                break  # a line the interruption cut
            record = json.loads(raw)
            good_bytes += len(raw)
            if header is None:
                header = record
            if record.get("kind") == "end" and header is not None:
                return Resume(header, last["id"] if last else "", memories, complete=True)
            if record.get("kind") == "memory":
                memories, last = memories + 1, record
    if header is None or header.get("kind") != "header" or last is None:
        return None
    os.truncate(path, good_bytes)
    return Resume(header, last["id"], memories)


def export_command(
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="File to write (resumable); default stdout"),
    ] = None,
    vectors: Annotated[
        bool, typer.Option(help="Include vectors (an import recomputes missing ones)")
    ] = True,
    restart: Annotated[bool, typer.Option("--restart", help="Ignore an unfinished export")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar")] = True,
    url: UrlOption = "http://127.0.0.1:8080",
    api_key: ApiKeyOption = None,
) -> None:
    """Export every memory of the project (groups, users, topics, versions, times,
    vectors) for `mnemo import --memories`; re-run to resume an interrupted export."""
    from mnemo.cli.transfer_http import TransferClient
    from mnemo.client.errors import MnemoError

    resume = None if restart or output is None else resume_point(output)
    if resume is not None and resume.complete:
        typer.echo(
            f"{output} already holds a complete export (--restart to export again)", err=True
        )
        return
    try:
        with TransferClient(url, api_key) as client:
            written = _export(client, output, resume, vectors, progress)
    except MnemoError as exc:
        if output is not None:
            typer.echo("export interrupted; run the same command again to resume", err=True)
        raise fail(exc) from exc
    typer.echo(json.dumps({"exported": written, "file": str(output) if output else None}), err=True)


def _export(
    client: TransferClient, output: Path | None, resume: Resume | None, vectors: bool, bar: bool
) -> int:
    """Stream the export into `output` (appending after `resume`); the memories it holds."""
    from tqdm import tqdm

    after = resume.last_id if resume else None
    out: IO[str] = output.open("a" if resume else "w", encoding="utf-8") if output else sys.stdout
    count = resume.memories if resume else 0
    try:
        with client.export(after, vectors) as lines:
            first = next(lines)
            header = json.loads(first)
            if resume is not None:
                _check_same_export(resume.header, header)
            else:
                out.write(first + "\n")
            total = header["remaining"]
            with tqdm(total=total, unit="memory", disable=not bar, file=sys.stderr) as meter:
                for line in lines:
                    record = json.loads(line)
                    kind = record.get("kind")
                    if kind == "end":
                        skipped = record.get("skipped", [])
                        end = {"kind": "end", "memories": count, "skipped": skipped}
                        out.write(json.dumps(end) + "\n")
                        if skipped:
                            typer.echo(f"skipped unreadable memories: {skipped}", err=True)
                        return count
                    if resume is None or kind == "memory":
                        out.write(line + "\n")
                    if kind == "memory":
                        count += 1
                        meter.update(1)
    finally:
        out.flush()
        if output:
            os.fsync(out.fileno())
            out.close()
    raise typer.Exit(_cut_short(count))


def _check_same_export(started: dict[str, Any], now: dict[str, Any]) -> None:
    for key in ("project", "embedding"):
        if started.get(key) != now.get(key):
            typer.echo(
                f"the unfinished export was made with another {key} ({started.get(key)!r}, "
                f"now {now.get(key)!r}); pass --restart to export afresh",
                err=True,
            )
            raise typer.Exit(1)


def _cut_short(count: int) -> int:
    typer.echo(
        f"the export stream ended without its end line after {count} memories; "
        "run the same command again to resume",
        err=True,
    )
    return 1
