"""`mnemo import FILE`: add each JSONL line, resumably.

A line is `{"messages": [...]}` (a conversation), `{"content": [...]}` or `{"text": "..."}`
(strings), `{"items": [{content, topic}]}` (pre-extracted), plus optional `user_id`, `group`
and `properties`. Progress is kept in `FILE.mnemo-import.json` next to the file: the number of
the last line the server acknowledged. Re-running the command resumes after it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mnemo.cli.common import ApiKeyOption, UrlOption, fail, remote_client

if TYPE_CHECKING:
    from mnemo.client import MnemoClient
    from mnemo.client.models import InputLike


@dataclass
class ImportState:
    """Where an import stands: every line up to `acknowledged_lines` is stored server-side."""

    acknowledged_lines: int = 0
    runs: int = 0

    @staticmethod
    def path_for(source: Path) -> Path:
        return source.with_name(source.name + ".mnemo-import.json")

    @classmethod
    def load(cls, path: Path) -> ImportState:
        if not path.exists():
            return cls()
        return cls(**json.loads(path.read_text("utf-8")))

    def save(self, path: Path) -> None:
        """Atomically, so a crash never leaves a half-written state file."""
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(json.dumps(asdict(self)), "utf-8")
        os.replace(temporary, path)


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


def import_file(client: MnemoClient, source: Path, state_path: Path, progress: bool) -> ImportState:
    from tqdm import tqdm

    state = ImportState.load(state_path)
    lines = source.read_text("utf-8").splitlines()
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
                client.memories.add(data, **options)
                state.runs += 1
            state.acknowledged_lines = number
            state.save(state_path)
            bar.update(1)
    finally:
        bar.close()
    return state


def import_command(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSONL file")],
    restart: Annotated[bool, typer.Option("--restart", help="Ignore saved progress")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar")] = True,
    url: UrlOption = "http://127.0.0.1:8080",
    api_key: ApiKeyOption = None,
) -> None:
    """Import a JSONL file of adds; safe to re-run after an interruption."""
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
