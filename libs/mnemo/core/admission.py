"""Admission checks of adds, searches and lists: refuse early, name the location, store nothing."""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import ValidationError

from mnemo.core.dispatch import takes_raw_input
from mnemo.core.limits import add_errors, group_errors, query_errors
from mnemo.domain.event_time import FUTURE_SECONDS, as_utc, located_times
from mnemo.domain.group import GroupConfig
from mnemo.domain.limits import InputLimits
from mnemo.domain.paging import InvalidCursor, ListCursor, selection_digest
from mnemo.domain.pipeline import BufferStep, ExtractStep, Pipeline
from mnemo.domain.requests import (
    AddRequest,
    FieldError,
    InvalidRequest,
    ListRequest,
    Refusal,
    SearchRequest,
    location_of,
)
from mnemo.domain.scope import InvalidUserId, normalize_user_id
from mnemo.domain.search import MemoryQuery, RetrievalType, TopicSelector
from mnemo.domain.templates import group_from_document
from mnemo.store.tenancy import IsolationError, visible_memories


def _refuse_over_limits(errors: list[FieldError], what: str) -> None:
    if errors:
        raise InvalidRequest(
            f"the {what} is over a limit; nothing was stored", errors, kind=Refusal.unprocessable
        )


def check_add(group: GroupConfig, request: AddRequest, limits: InputLimits) -> None:
    _refuse_over_limits(add_errors(request.input, request.properties, limits), "add")
    errors: list[FieldError] = []
    properties = request.properties or {}
    for key in sorted(group.scope_property_keys - set(properties)):
        errors.append(
            FieldError(
                location=f"body.properties.{key}",
                message=f"group '{group.name}' scopes topics by '{key}': every add must carry it",
            )
        )
    user_id = normalize_user_id(request.user_id)
    if user_id is None and all(t.scoping.user_scoped for t in group.committable_topics):
        errors.append(
            FieldError(
                location="body.user_id",
                message=f"every topic of group '{group.name}' is user-scoped: an add needs user_id",
            )
        )
    if request.input.pre_extracted is not None:
        for i, item in enumerate(request.input.pre_extracted.items):
            where = f"body.input.pre_extracted.items[{i}].topic"
            if not group.has_topic(item.topic):
                errors.append(
                    FieldError(
                        location=where,
                        value=item.topic,
                        message=f"group '{group.name}' has no topic '{item.topic}'",
                    )
                )
            elif group.topic(item.topic).scoping.user_scoped and user_id is None:
                errors.append(
                    FieldError(
                        location="body.user_id",
                        message=f"topic '{item.topic}' is user-scoped: needs user_id",
                    )
                )
    try:
        entry = group.pipeline.entry_for(request.input.input_type, request.root)
        if not takes_raw_input(entry) and request.input.pre_extracted is None:
            errors.append(
                FieldError(
                    location="body.root",
                    value=request.root,
                    message=f"step '{entry.id}' comes after extraction: only pre_extracted input "
                    "can start there",
                )
            )
    except LookupError as exc:
        errors.append(
            FieldError(
                location="body.root" if request.root else "body.input",
                message=str(exc),
                value=request.root,
            )
        )
    if errors:
        raise InvalidRequest("the add was refused; nothing was stored", errors)


def check_event_times(request: AddRequest, now: datetime) -> None:
    """Refuse event times too far ahead of `now` (see `FUTURE_SECONDS`): the range check
    of each time itself was made when the request was read (`mnemo.domain.instant`)."""
    latest = now + timedelta(seconds=FUTURE_SECONDS)
    errors = [
        FieldError(
            location=where,
            value=at.isoformat(),
            message=f"an event time more than {FUTURE_SECONDS / 3600:.0f} h ahead of the "
            f"server's clock ({now.isoformat()})",
        )
        for where, at in located_times(request.input)
        if as_utc(at) > latest
    ]
    if errors:
        raise InvalidRequest(
            "the add was refused; nothing was stored", errors, kind=Refusal.unprocessable
        )


def _selectors(
    group: GroupConfig, topics: list[str | TopicSelector] | None
) -> tuple[TopicSelector, ...]:
    if topics is None:
        return tuple(TopicSelector(name=t.name) for t in group.committable_topics)
    selectors = tuple(TopicSelector(name=t) if isinstance(t, str) else t for t in topics)
    errors = [
        FieldError(
            location=f"body.topics[{i}]",
            value=s.name,
            message=f"group '{group.name}' has no topic '{s.name}'",
        )
        for i, s in enumerate(selectors)
        if not group.has_topic(s.name)
    ]
    if errors:
        raise InvalidRequest("unknown topics", errors, Refusal.unprocessable)  # Engram's status
    return selectors


def memory_query(
    project: str,
    group: GroupConfig,
    request: SearchRequest | ListRequest,
    limits: InputLimits,
) -> MemoryQuery:
    _refuse_over_limits(query_errors(request.topics, request.properties, limits), "request")
    if isinstance(request, SearchRequest):
        config = request.retrieval_config
        retrieval: RetrievalType = config.retrieval_type if config else "hybrid"
        limit = config.limit if config and config.limit else 10
        text = request.query
        min_similarity = config.min_score if config else None
    else:
        retrieval, limit, text, min_similarity = "hybrid", request.limit, "", None
    query = MemoryQuery(
        project=project,
        group=group.name,
        topics=_selectors(group, request.topics),
        user_id=normalize_user_id(request.user_id),
        properties=request.properties or {},
        limit=limit,
        text=text,
        retrieval_type=retrieval,
        min_similarity=min_similarity,
        as_of=as_utc(request.as_of) if request.as_of is not None else None,
        include_consolidated=request.include_consolidated,
    )
    try:
        visible_memories(query, group)
    except IsolationError as exc:
        raise InvalidRequest(str(exc), exc.errors) from exc
    return query


def listing_cursor(query: MemoryQuery, request: ListRequest) -> ListCursor | None:
    """The request's cursor, checked against the listing it continues; None without one."""
    if request.cursor is None:
        return None

    def refused(message: str) -> InvalidRequest:
        return InvalidRequest(
            f"invalid cursor: {message}",
            [FieldError(location="body.cursor", value=request.cursor, message=message)],
        )

    try:
        cursor = ListCursor.decode(request.cursor)
    except InvalidCursor as exc:
        raise refused(str(exc)) from exc
    if cursor.selection != selection_digest(query):
        raise refused("it belongs to a listing with other filters; send the first page's")
    if request.offset:
        raise refused("a cursor continues where its page ended: send it without offset")
    if query.as_of is not None and query.as_of != cursor.at:
        raise refused("the listing reads as of its first page's time; send that as_of or none")
    return cursor


def parse_group(name: str, document: dict[str, object]) -> GroupConfig:
    """The group a PUT body describes; 400 naming each field that is wrong."""
    try:
        return group_from_document(name, document)
    except ValidationError as exc:
        errors = [
            FieldError(location=location_of(("body", *e["loc"])), message=e["msg"])
            for e in exc.errors(include_url=False, include_input=False)
        ]
        raise InvalidRequest("invalid group configuration", errors) from exc
    except (ValueError, LookupError) as exc:
        raise InvalidRequest(
            f"invalid group configuration: {exc}",
            [FieldError(location="body", message=str(exc))],
        ) from exc


def check_group(group: GroupConfig, limits: InputLimits) -> None:
    """Refuse a group configuration before it is stored: limits, and entry steps that
    could never take the input they are declared for."""
    _refuse_over_limits(group_errors(group, limits), "group configuration")
    errors = _entry_errors(group.pipeline)
    if errors:
        raise InvalidRequest(
            "the pipeline would refuse every add it is declared for", errors, Refusal.unprocessable
        )


def _entry_errors(pipeline: Pipeline) -> list[FieldError]:
    """Entry steps for string or conversation input must reach an extract step through
    nothing but sliding-window buffers: every other step works on extracted memories.
    (pre_extracted input may enter anywhere: its items are memories already.)"""
    errors = []
    for index, entry in enumerate(pipeline.steps):
        if entry.input_type not in ("string", "conversation"):
            continue
        step = entry
        while isinstance(step, BufferStep) and step.mode == "sliding_window" and step.next:
            step = pipeline.step(step.next)
        if not isinstance(step, ExtractStep):
            errors.append(
                FieldError(
                    location=f"body.pipeline.steps[{index}]",
                    value=entry.id,
                    message=f"step '{entry.id}' is the entry for {entry.input_type} input, "
                    f"which needs an extract step first; its chain reaches a {step.kind} "
                    "step before any extract (start with an extract step, or a "
                    "sliding-window buffer before one)",
                )
            )
    return errors


def caller_user(user_id: str | None, location: str = "query.user_id") -> str | None:
    """The caller's user id in its compared form; 422 for one that is refused."""
    try:
        return normalize_user_id(user_id)
    except InvalidUserId as exc:
        raise InvalidRequest(
            "invalid user_id",
            [FieldError(location=location, message=str(exc))],
            Refusal.unprocessable,
        ) from exc
