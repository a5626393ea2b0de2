"""Tools that change memories: add (text, conversation or extracted facts), run status, delete."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mnemo.api.schemas import RunOut
from mnemo.client.errors import RunTimeoutError
from mnemo.domain.inputs import (
    AddInput,
    ConversationInput,
    Message,
    PreExtractedInput,
    PreExtractedItem,
    StringInput,
)
from mnemo.mcp.arguments import (
    Deleted,
    Group,
    MemoryId,
    Properties,
    RunId,
    Text,
    UserId,
    WaitSeconds,
)
from mnemo.mcp.binding import MemoryClient, current_client
from mnemo.mcp.problems import ARGUMENTS, refused


async def add_memory(
    text: Annotated[
        Text | Annotated[list[Text], Field(min_length=1)] | None,
        Field(description="Text to remember; a list adds several texts in one run."),
    ] = None,
    messages: Annotated[
        list[Message] | None,
        Field(
            min_length=1,
            description="A conversation to remember: [{role, content}], role one of user, "
            "assistant, system, tool, developer.",
        ),
    ] = None,
    items: Annotated[
        list[PreExtractedItem] | None,
        Field(
            min_length=1,
            description="Facts already extracted, each {content, topic}: no extraction, "
            "still reconciled with what is known.",
        ),
    ] = None,
    user_id: UserId = None,
    group: Group = "default",
    properties: Properties = None,
    wait_seconds: WaitSeconds = 0.0,
) -> RunOut:
    """Remember text, a conversation or extracted facts (give exactly one of them).

    mnemo extracts the memories that match the group's topics, reconciles them with what it
    already knows (keeps, rewrites with history, or deletes) and commits them. The add is
    durable once this returns: you get its run at once (status `running`), or, with
    wait_seconds, once it completed; `committed_operations` then lists the memories it
    created, updated and deleted. A refused add stores nothing.
    """
    client = current_client()
    added = await client.memories.add(
        _add_input(text, messages, items), user_id=user_id, group=group, properties=properties
    )
    return await _run(client, added.run_id, wait_seconds)


def _add_input(
    text: str | list[str] | None,
    messages: list[Message] | None,
    items: list[PreExtractedItem] | None,
) -> AddInput:
    given = [name for name, value in (("text", text), ("messages", messages), ("items", items))
             if value is not None]  # fmt: skip
    if len(given) != 1:
        raise refused(
            ARGUMENTS,
            f"give exactly one of text, messages or items (got {', '.join(given) or 'none'})",
        )
    if messages is not None:
        return AddInput(conversation=ConversationInput(messages=messages))
    if items is not None:
        return AddInput(pre_extracted=PreExtractedInput(items=items))
    return AddInput(string=StringInput(content=[text] if isinstance(text, str) else text))


async def run_status(run_id: RunId, wait_seconds: WaitSeconds = 0.0) -> RunOut:
    """A run's status (running, in_buffer, completed, failed) and the memories it committed.

    With wait_seconds, waits for the run to complete or fail first. A failed run carries
    its error (its input is kept, so an operator can retry it).
    """
    return await _run(current_client(), run_id, wait_seconds)


async def _run(client: MemoryClient, run_id: str, wait_seconds: float) -> RunOut:
    if wait_seconds > 0:
        try:
            run = await client.runs.wait(run_id, timeout=wait_seconds)
        except RunTimeoutError:
            run = await client.runs.get(run_id)
    else:
        run = await client.runs.get(run_id)
    return RunOut.model_validate(run, from_attributes=True)


async def delete_memory(
    memory_id: MemoryId,
    user_id: UserId = None,
    group: Group = "default",
    erase: Annotated[
        bool,
        Field(
            description="Erase for good: the memory and its whole history, irreversibly "
            "(e.g. on a user's request). Default false: deleted but kept in history."
        ),
    ] = False,
) -> Deleted:
    """Delete a memory: it leaves search and lists; its history keeps the content."""
    await current_client().memories.delete(memory_id, user_id=user_id, group=group, erase=erase)
    return Deleted(memory_id=memory_id, erased=erase)
