"""`mnemo import --memories FILE`: restore an export into the key's project, as it is.

The file's groups go first, then its memories in batches (`POST /v1/import`), each batch
under the server's body limit. Progress is kept in `FILE.mnemo-restore.json`: re-running
the command resumes after the last acknowledged batch (and importing a batch twice leaves
the same state anyway).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mnemo.cli.progress import ProgressFile

if TYPE_CHECKING:
    from mnemo.cli.transfer_http import TransferClient

BATCH_BYTES = 900_000  # under the server's default MNEMO_MAX_BODY_BYTES (1,000,000)
FIELD_OF = {"group": "groups", "memory": "memories"}  # line kind -> field of an import


@dataclass
class RestoreState(ProgressFile):
    imported: int = 0
    groups: int = 0
    # Report counts summed over batches: rekeyed, skipped_erased, recomputed batches, ...
    notes: dict[str, int] = field(default_factory=dict)

    @classmethod
    def suffix(cls) -> str:
        return ".mnemo-restore.json"


def read_export(source: Path) -> tuple[dict[str, Any], int]:
    """The export's header and its number of lines; refuses a file that is not a complete
    export (an unfinished one is completed by re-running `mnemo export`)."""
    with source.open("rb") as lines:
        first = lines.readline()
        count, last = 1, first
        for last in lines:  # noqa: B007 - the last line is what is wanted
            count += 1
    header = json.loads(first) if first.strip() else {}
    if header.get("kind") != "header" or header.get("format") != "mnemo-export":
        raise typer.BadParameter(f"{source} is not a mnemo export", param_hint="--memories")
    if header.get("version", 0) > 1:
        raise typer.BadParameter("the export is of a newer format than this mnemo reads")
    if json.loads(last).get("kind") != "end":
        raise typer.BadParameter(
            f"{source} is an unfinished export (no end line): finish it by running the same "
            "`mnemo export -o` again",
            param_hint="--memories",
        )
    return header, count


def batches(
    source: Path, start: int, limit_bytes: int, limit_items: int
) -> Iterator[tuple[str, list[dict[str, Any]], int]]:
    """(kind, records, last line number) of the groups, then of batches of memories, from
    line `start` on."""
    pending: list[dict[str, Any]] = []
    kind, size, number = "", 0, 0
    with source.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if number <= start:
                continue
            record = json.loads(line)
            if record["kind"] in ("header", "end"):
                continue
            full = pending and (
                record["kind"] != kind
                or size + len(line) > limit_bytes
                or len(pending) >= limit_items
            )
            if full:
                yield kind, pending, number - 1
                pending, size = [], 0
            kind = record["kind"]
            pending.append(record)
            size += len(line)
    if pending:
        yield kind, pending, number


def restore(client: TransferClient, source: Path, state_path: Path, progress: bool) -> RestoreState:
    from tqdm import tqdm

    from mnemo.domain.transfer import IMPORT_BATCH

    header, _ = read_export(source)
    state = RestoreState.load(state_path)
    bar = tqdm(
        total=header["memories"], initial=state.imported, unit="memory", disable=not progress
    )
    notes = Counter(state.notes)
    try:
        for kind, records, last_line in batches(
            source, state.acknowledged_lines, BATCH_BYTES, IMPORT_BATCH
        ):
            for report in send(client, header["embedding"], FIELD_OF[kind], records):
                state.groups += report["groups"]
                state.imported += report["imported"]
                for name in ("rekeyed", "skipped_erased", "skipped_superseded"):
                    notes[name] += len(report[name])
                if report["imported"]:
                    notes[f"embeddings_{report['embeddings']}"] += report["imported"]
                bar.update(report["imported"])
            state.notes = dict(notes)
            state.acknowledged_lines = last_line
            state.save(state_path)
    finally:
        bar.close()
    return state


def send(
    client: TransferClient, embedding: Any, field: str, records: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Import `records` (one batch), halving it while the server finds it too large (413:
    its MNEMO_MAX_BODY_BYTES is below this command's batch size); the server's reports."""
    from mnemo.client.errors import APIError

    try:
        return [client.import_batch({"embedding": embedding, field: records})]
    except APIError as exc:
        if exc.status != 413 or len(records) == 1:
            raise
    half = len(records) // 2
    return [
        *send(client, embedding, field, records[:half]),
        *send(client, embedding, field, records[half:]),
    ]
