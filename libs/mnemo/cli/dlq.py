"""`mnemo dlq list|replay`: the distributed mode's dead-letter queue (register `dlq_app`)."""

from __future__ import annotations

import json

import typer

from mnemo.cli.common import opened_database, settings_with

dlq_app = typer.Typer(
    help="Dead-lettered records of the Kafka stage services.",
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: rich costs more than the rest of `--help` (main.py)
)


@dlq_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="One JSON document per line."),
) -> None:
    """List every record in the DLQ topic with its error. The first column (`dlq_offset`
    in --json) is what `replay --offset` takes; the failed record's own position in its
    topic is `source_partition` / `source_offset`."""
    import asyncio

    from mnemo.kafka.dlqops import list_dlq

    entries = asyncio.run(list_dlq(settings_with().kafka))
    for e in entries:
        r = e.record
        if as_json:
            fields = r.model_dump(mode="json")
            source = {"source_partition": fields.pop("partition"),
                      "source_offset": fields.pop("offset")}  # fmt: skip
            typer.echo(json.dumps({"dlq_partition": e.partition, "dlq_offset": e.offset,
                                   **source, **fields}))  # fmt: skip
        else:
            runs = ",".join(r.run_ids) or "-"
            again = f"\treplay of {r.replay_of} failed again" if r.replay_of else ""
            typer.echo(f"{e.offset}\t{r.failed_at:%Y-%m-%d %H:%M:%S}\t{r.service}\t{r.reason}"
                       f"\truns={runs}\t{r.error}{again}")  # fmt: skip
    if not as_json:
        typer.echo(f"{len(entries)} record(s)", err=True)


@dlq_app.command("replay")
def replay_command(
    offset: list[int] = typer.Option(
        None,
        "--offset",
        help="Replay these DLQ offsets (dlq_offset in `list --json`; repeatable); default: "
        "every entry not replayed before, except records that failed again after a replay.",
    ),
) -> None:
    """Re-publish dead-lettered records to their source topics (their runs reopen); records
    of erased users or past their group's retention are skipped."""
    import asyncio

    from mnemo.kafka.dlqops import DlqReplay, replay_dlq

    async def replay() -> DlqReplay:
        settings = settings_with()
        async with opened_database(settings) as db:
            return await replay_dlq(settings.kafka, db, offset or None)

    outcome = asyncio.run(replay())
    for entry, reason in outcome.skipped:
        typer.echo(f"skipped DLQ offset {entry.offset}: {reason}", err=True)
    typer.echo(f"replayed {len(outcome.replayed)} record(s), skipped {len(outcome.skipped)}")
    if any(reason == "failed_after_replay" for _, reason in outcome.skipped):
        typer.echo("a record that failed again after a replay is replayed only when named: "
                   "mnemo dlq replay --offset N", err=True)  # fmt: skip
