"""`mnemo dlq list|replay`: the distributed mode's dead-letter queue (register `dlq_app`)."""

from __future__ import annotations

import json

import typer

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
    """Re-publish dead-lettered records to their source topics (their runs reopen)."""
    import asyncio

    from mnemo.kafka.dlqops import replay_dlq

    entries = asyncio.run(replay_dlq(Settings().kafka, offset or None))
    typer.echo(f"replayed {len(entries)} record(s)")
