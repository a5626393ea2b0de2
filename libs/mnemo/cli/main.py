"""The `mnemo` command (entry point `mnemo.cli.main:app`).

Command modules import only typer at load time; each command imports what it needs when it
runs, so remote commands start fast and only `serve` loads the engine. Help is plain text
(no rich), so `mnemo --help` and `mnemo COMMAND --help` load little more than typer.
"""

from __future__ import annotations

import typer

from mnemo.cli import keys
from mnemo.cli.backup import backup_command, restore_command
from mnemo.cli.dlq import dlq_app
from mnemo.cli.exporter import export_command
from mnemo.cli.importer import import_command
from mnemo.cli.mcp import mcp_command
from mnemo.cli.reembed import reembed_command
from mnemo.cli.remote import add_command, runs_command, search_command
from mnemo.cli.replay import replay_command
from mnemo.cli.serve import serve_command
from mnemo.cli.status import status_command

app = typer.Typer(
    name="mnemo",
    help="mnemo: self-hosted memory for AI agents (Engram v1 API compatible).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain help text: rendering it with rich imports rich and markdown-it, which took longer
    # than everything else `mnemo --help` does (bench/cli_speed.py).
    rich_markup_mode=None,
)
app.command("serve")(serve_command)
app.add_typer(keys.app, name="keys")
app.command("add")(add_command)
app.command("search")(search_command)
app.command("runs")(runs_command)
app.command("import")(import_command)
app.command("export")(export_command)
app.add_typer(dlq_app, name="dlq")
app.command("replay")(replay_command)
app.command("mcp")(mcp_command)
app.command("status")(status_command)
app.command("reembed")(reembed_command)
app.command("backup")(backup_command)
app.command("restore")(restore_command)

if __name__ == "__main__":
    app()
