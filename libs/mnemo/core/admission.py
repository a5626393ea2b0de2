"""Admission checks of adds, searches and lists: refuse early, name the location, store nothing."""

from __future__ import annotations

from mnemo.core.dispatch import takes_raw_input
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import AddRequest, FieldError, InvalidRequest, ListRequest, SearchRequest
from mnemo.domain.scope import normalize_user_id
from mnemo.domain.search import MemoryQuery, RetrievalType, TopicSelector
from mnemo.store.tenancy import IsolationError, visible_memories


def check_add(group: GroupConfig, request: AddRequest) -> None:
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
        raise InvalidRequest("unknown topics", errors)
    return selectors


def memory_query(
    project: str,
    group: GroupConfig,
    request: SearchRequest | ListRequest,
) -> MemoryQuery:
    if isinstance(request, SearchRequest):
        config = request.retrieval_config
        retrieval: RetrievalType = config.retrieval_type if config else "hybrid"
        limit = config.limit if config and config.limit else 10
        text = request.query
    else:
        retrieval, limit, text = "hybrid", request.limit, ""
    query = MemoryQuery(
        project=project,
        group=group.name,
        topics=_selectors(group, request.topics),
        user_id=normalize_user_id(request.user_id),
        properties=request.properties or {},
        limit=limit,
        text=text,
        retrieval_type=retrieval,
        include_consolidated=request.include_consolidated,
    )
    try:
        visible_memories(query, group)
    except IsolationError as exc:
        raise InvalidRequest(str(exc), exc.errors) from exc
    return query
