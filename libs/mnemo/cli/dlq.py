"""`mnemo dlq list|replay`: the distributed mode's dead-letter queue (register `dlq_app`)."""

from __future__ import annotations

import json

import typer

from mnemo.cli.common import opened_database
from mnemo.settings import Settings

dlq_app = typer.Typer(
    help="Dead-lettered records of the Kafka stage services.", no_args_is_help=True
)


@dlq_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="One JSON document per line."),
) -> None:
    """List every record in the DLQ topic with its error."""
    import asyncio

    from mnemo.kafka.dlqops import list_dlq

    entries = asyncio.run(list_dlq(Settings().kafka))
    for e in entries:
        r = e.record
        if as_json:
            typer.echo(json.dumps({"offset": e.offset, **r.model_dump(mode="json")}))
        else:
            runs = ",".join(r.run_ids) or "-"
            typer.echo(f"{e.offset}\t{r.failed_at:%Y-%m-%d %H:%M:%S}\t{r.service}\t{r.reason}"
                       f"\truns={runs}\t{r.error}")  # fmt: skip
    if not as_json:
        typer.echo(f"{len(entries)} record(s)", err=True)


@dlq_app.command("replay")
def replay_command(
    offset: list[int] = typer.Option(
        None,
        "--offset",
        help="Replay these DLQ offsets (repeatable); default: all not yet replayed.",
    ),
) -> None:
    """Re-publish dead-lettered records to their source topics (their runs reopen); records
    of erased users or past their group's retention are skipped."""
    import asyncio

    from mnemo.kafka.dlqops import DlqReplay, replay_dlq

    async def replay() -> DlqReplay:
        settings = Settings()
        async with opened_database(settings) as db:
            return await replay_dlq(settings.kafka, db, offset or None)

    outcome = asyncio.run(replay())
    for entry, reason in outcome.skipped:
        typer.echo(f"skipped {entry.offset}: {reason}", err=True)
    typer.echo(f"replayed {len(outcome.replayed)} record(s), skipped {len(outcome.skipped)}")
