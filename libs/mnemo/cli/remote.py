"""`mnemo add|search|runs`: talk HTTP to a running server (--url / --api-key).

Light at import (typer only): the client is imported when a command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from mnemo.cli.common import (
    ApiKeyOption,
    GroupOption,
    PropertyOption,
    UrlOption,
    UserOption,
    parse_properties,
    print_json,
    remote_client,
)

if TYPE_CHECKING:
    from mnemo.client.models import RetrievalConfig

WaitOption = Annotated[
    float | None,
    typer.Option("--wait", help="Wait up to this many seconds for the run to finish"),
]


def add_command(
    text: Annotated[list[str], typer.Argument(help="Text to remember (several = several units)")],
    user: UserOption = None,
    group: GroupOption = None,
    prop: PropertyOption = None,
    wait: WaitOption = None,
    url: UrlOption = "http://127.0.0.1:8080",
    api_key: ApiKeyOption = None,
) -> None:
    """Add text; prints the run (completed, with --wait)."""
    with remote_client(url, api_key) as client:
        result = client.memories.add(
            text, user_id=user, group=group, properties=parse_properties(prop)
        )
        print_json(client.runs.wait(result.run_id, timeout=wait) if wait else result)


def search_command(
    query: str,
    user: UserOption = None,
    group: GroupOption = None,
    prop: PropertyOption = None,
    topic: Annotated[list[str] | None, typer.Option("--topic", "-t", help="Repeatable")] = None,
    retrieval: Annotated[str, typer.Option("--type", help="vector|bm25|hybrid|fetch")] = "hybrid",
    limit: Annotated[int, typer.Option("--limit", min=1, max=100)] = 10,
    url: UrlOption = "http://127.0.0.1:8080",
    api_key: ApiKeyOption = None,
) -> None:
    """Search memories; prints a JSON list with scores."""
    with remote_client(url, api_key) as client:
        found = client.memories.search(
            query,
            topics=list(topic) if topic else None,
            user_id=user,
            group=group,
            properties=parse_properties(prop),
            retrieval_config=_retrieval_config(retrieval, limit),
        )
    print_json(list(found))


def _retrieval_config(kind: str, limit: int) -> RetrievalConfig:
    from mnemo.client.models import retrieval as named_retrieval

    try:
        return named_retrieval(kind, limit)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--type") from exc


def runs_command(
    run_id: str,
    wait: WaitOption = None,
    url: UrlOption = "http://127.0.0.1:8080",
    api_key: ApiKeyOption = None,
) -> None:
    """Show a run (waiting for it to finish with --wait SECONDS)."""
    with remote_client(url, api_key) as client:
        run = client.runs.wait(run_id, timeout=wait) if wait else client.runs.get(run_id)
    print_json(run)
