"""`mnemo import`: adds from JSONL, an export of another mnemo, or a live Engram project.

- `mnemo import FILE`: add each JSONL line, resumably. A line is `{"messages": [...]}` (a
  conversation), `{"content": [...]}` or `{"text": "..."}` (strings), `{"items": [{content,
  topic}]}` (pre-extracted), plus optional `user_id`, `group` and `properties`. Progress
  is kept in `FILE.mnemo-import.json` next to the file: the number of the last line the
  server acknowledged. Re-running the command resumes after it, and each line is sent with
  an `Idempotency-Key` derived from the file and the line, so a line whose answer was lost
  (a timeout) is not added twice.
- `mnemo import --memories FILE`: restore a `mnemo export` as it is (`cli.restore`).
- `mnemo import --from-engram URL --key KEY [--users FILE]`: a complete, verified pull of
  a live Engram project (`cli.engram_import`, `cli.engram`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mnemo.cli.common import ApiKeyOption, UrlOption, fail, remote_client
from mnemo.cli.progress import ProgressFile

if TYPE_CHECKING:
    from mnemo.client import MnemoClient
    from mnemo.client.models import InputLike


@dataclass
class ImportState(ProgressFile):
    """Where an import of adds stands, and how many adds it made."""

    runs: int = 0


def line_to_add(record: dict[str, Any]) -> tuple[InputLike, dict[str, Any]]:
    """A JSONL record -> (input, add keyword arguments)."""
    from mnemo.client.models import PreExtractedInput

    options = {k: record.get(k) for k in ("user_id", "group", "properties")}
    if "messages" in record:
        return record["messages"], options
    if "content" in record:
        content = record["content"]
        return ([content] if isinstance(content, str) else content), options
    if "text" in record:
        return str(record["text"]), options
    if "items" in record:
        return PreExtractedInput.model_validate({"items": record["items"]}), options
    raise ValueError("a line needs 'messages', 'content', 'text' or 'items'")


def line_key(file_digest: str, number: int, line: str) -> str:
    """The Idempotency-Key of a line: the same for a re-run over the same file, another
    for any other file or line."""
    digest = hashlib.sha256(f"{file_digest}:{number}:{line}".encode()).hexdigest()
    return f"mnemo-import-{digest[:40]}"


def import_file(client: MnemoClient, source: Path, state_path: Path, progress: bool) -> ImportState:
    from tqdm import tqdm

    state = ImportState.load(state_path)
    text = source.read_text("utf-8")
    lines = text.splitlines()
    file_digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    bar = tqdm(
        total=len(lines), initial=state.acknowledged_lines, unit="line", disable=not progress
    )
    try:
        for number, line in enumerate(lines, start=1):
            if number <= state.acknowledged_lines:
                continue
            if line.strip():
                try:
                    data, options = line_to_add(json.loads(line))
                except (ValueError, TypeError) as exc:
                    raise typer.BadParameter(f"line {number}: {exc}") from exc
                key = line_key(file_digest, number, line)
                client.memories.add(data, idempotency_key=key, **options)
                state.runs += 1
            state.acknowledged_lines = number
            state.save(state_path)
            bar.update(1)
    finally:
        bar.close()
    return state


def import_command(
    file: Annotated[
        Path | None,
        typer.Argument(exists=True, dir_okay=False, help="JSONL file of adds"),
    ] = None,
    memories: Annotated[
        Path | None,
        typer.Option("--memories", exists=True, dir_okay=False, help="A `mnemo export` file"),
    ] = None,
    from_engram: Annotated[
        str | None, typer.Option("--from-engram", help="Base URL of an Engram project")
    ] = None,
    engram_key: Annotated[
        str | None, typer.Option("--key", help="The Engram project's API key")
    ] = None,
    users: Annotated[
        Path | None,
        typer.Option("--users", exists=True, dir_okay=False, help="User ids, one per line"),
    ] = None,
    group_map: Annotated[
        list[str] | None,
        typer.Option("--group-map", help="ENGRAM=MNEMO: import an Engram group into another"),
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", dir_okay=False, help="Write the report as JSON")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Read Engram and count; write nothing")
    ] = False,
    state: Annotated[
        Path | None, typer.Option("--state", dir_okay=False, help="Engram pull progress file")
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=32, help="Requests in flight at most")
    ] = 4,
    rate: Annotated[
        float | None, typer.Option("--rate", min=0.1, help="Requests per second at most")
    ] = None,
    retries: Annotated[
        int, typer.Option("--retries", min=0, help="Retries of a 429, 5xx or broken call")
    ] = 7,
    max_queries: Annotated[
        int, typer.Option("--max-queries", min=1, help="Search queries per scope at most")
    ] = 4000,
    restart: Annotated[bool, typer.Option("--restart", help="Ignore saved progress")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar")] = True,
    url: UrlOption = "http://127.0.0.1:8080",
    api_key: ApiKeyOption = None,
) -> None:
    """Import adds (FILE), an export (--memories FILE) or an Engram project (--from-engram
    URL --key KEY [--users FILE]) into the project of --api-key; safe to re-run.

    An Engram pull exits 0 when every scope was read completely, 3 when some may hold
    memories that were not read (named), 2 when refused before writing anything."""
    if sum(x is not None for x in (file, memories, from_engram)) != 1:
        raise typer.BadParameter("give exactly one of FILE, --memories or --from-engram")
    if memories is not None:
        _restore(memories, restart, progress, url, api_key)
    elif from_engram is not None:
        if engram_key is None:
            raise typer.BadParameter("--from-engram needs --key (the Engram project's key)")
        from mnemo.cli.engram.http import Pace
        from mnemo.cli.engram.pull import PullOptions
        from mnemo.cli.engram_import import DEFAULT_STATE, parse_group_map, read_users, run

        state_path = state or DEFAULT_STATE
        if restart:
            state_path.unlink(missing_ok=True)
        options = PullOptions(
            engram_url=from_engram, engram_key=engram_key,
            users=read_users(users) if users is not None else [],
            mnemo_url=url, mnemo_key=api_key, state=state_path,
            group_map=parse_group_map(group_map or []), dry_run=dry_run, progress=progress,
            pace=Pace(concurrency=concurrency, rate=rate, attempts=retries + 1), query_budget=max_queries,
        )  # fmt: skip
        run(options, report)
    else:
        assert file is not None
        _import_adds(file, restart, progress, url, api_key)


def _import_adds(file: Path, restart: bool, progress: bool, url: str, api_key: str | None) -> None:
    from mnemo.client.errors import MnemoError

    state_path = ImportState.path_for(file)
    if restart:
        state_path.unlink(missing_ok=True)
    with remote_client(url, api_key) as client:
        try:
            state = import_file(client, file, state_path, progress)
        except MnemoError as exc:
            done = ImportState.load(state_path).acknowledged_lines
            typer.echo(f"stopped after line {done}; re-run to resume", err=True)
            raise fail(exc) from exc
    typer.echo(
        f"imported {state.runs} adds ({state.acknowledged_lines} lines); progress in {state_path}",
        err=True,
    )


def _restore(source: Path, restart: bool, progress: bool, url: str, api_key: str | None) -> None:
    from mnemo.cli.restore import RestoreState, restore
    from mnemo.cli.transfer_http import TransferClient
    from mnemo.client.errors import MnemoError

    state_path = RestoreState.path_for(source)
    if restart:
        state_path.unlink(missing_ok=True)
    try:
        with TransferClient(url, api_key) as client:
            state = restore(client, source, state_path, progress)
    except MnemoError as exc:
        done = RestoreState.load(state_path).acknowledged_lines
        typer.echo(f"stopped after line {done}; re-run to resume", err=True)
        raise fail(exc) from exc
    summary = {"imported": state.imported, "groups": state.groups, **state.notes}
    typer.echo(json.dumps(summary), err=True)
