"""`mnemo dlq list|replay`: the distributed mode's dead-letter queue (register `dlq_app`)."""

from __future__ import annotations

import asyncio
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
    """List every record in the DLQ topic with its error. The first column (`dlq_offset`
    in --json) is what `replay --offset` takes; the failed record's own position in its
    topic is `source_partition` / `source_offset`."""
    from mnemo.kafka.dlqops import list_dlq

    entries = asyncio.run(list_dlq(Settings().kafka))
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
    """Re-publish dead-lettered records to their source topics (their runs reopen)."""
    from mnemo.kafka.dlqops import replay_dlq

    done = asyncio.run(replay_dlq(Settings().kafka, offset or None))
    typer.echo(f"replayed {len(done.replayed)} record(s)")
    if done.skipped:
        offsets = ", ".join(str(e.offset) for e in done.skipped)
        typer.echo(f"skipped {len(done.skipped)} record(s) that failed again after a replay "
                   f"(DLQ offsets {offsets}); replay one with --offset")  # fmt: skip
