"""Scope keys: the unit of ordering, buffering and bounded-topic identity."""

from __future__ import annotations

import hashlib
import json
import unicodedata
import uuid
from collections.abc import Iterable, Mapping
from typing import Annotated

from pydantic import AfterValidator, StringConstraints

from mnemo.domain.limits import USER_ID_CHARS
from mnemo.domain.topics import Topic
from mnemo.errors import MnemoError

_BOUNDED_NAMESPACE = uuid.UUID("6f1d7a52-8c1b-4d55-9d1e-3f0a9b6c2e11")


class InvalidUserId(MnemoError, ValueError):
    """A user id that compatibility normalization would turn into another id."""


def check_user_id(user_id: str) -> str:
    """Refuse an id holding a character Unicode folds onto another one.

    That is a compatibility character (fullwidth or superscript letters, ligatures: the
    id's NFKC form differs from its NFC form) or a canonical singleton (KELVIN SIGN,
    OHM SIGN, ANGSTROM SIGN, CJK compatibility ideographs: NFC itself replaces them), so
    "\u212aate" cannot pass for "kate". Ids that differ only by case, or by composed and
    decomposed accents, are accepted and compare equal (see `normalize_user_id`).
    """
    canonical = unicodedata.normalize("NFC", user_id)
    if unicodedata.normalize("NFKC", canonical) != canonical or any(map(_singleton, user_id)):
        raise InvalidUserId(
            "user_id holds a character Unicode treats as another one (e.g. KELVIN SIGN, "
            "fullwidth or superscript letters, ligatures), which would make it another "
            "user's id; send it in its plain form"
        )
    return user_id


def _singleton(char: str) -> bool:
    """A character whose canonical decomposition is one other character."""
    mapping = unicodedata.decomposition(char).split()
    return len(mapping) == 1 and not mapping[0].startswith("<")


UserId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=USER_ID_CHARS),
    AfterValidator(check_user_id),
]


def normalize_user_id(user_id: str | None) -> str | None:
    """The form user ids are compared and stored in: trimmed, NFKC, case-folded.

    "STRASSE" and "straße", or "José" composed and decomposed, are one user. Raises
    InvalidUserId for an id `check_user_id` refuses; blank ids are None.
    """
    if user_id is None:
        return None
    check_user_id(user_id)
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", user_id).casefold())
    return folded.strip() or None


def required_properties(topics: Iterable[Topic]) -> set[str]:
    """Every property key that some topic of a group is scoped by."""
    return {key for topic in topics for key in topic.scoping.scope_properties}


def scoped_properties(topic: Topic, properties: Mapping[str, str]) -> dict[str, str]:
    """The properties this topic is scoped by: all a memory of it records (an add's other
    properties stay in the run's raw input)."""
    return {k: properties[k] for k in topic.scoping.scope_properties if k in properties}


def topic_scope(topic: Topic, user_id: str | None, properties: Mapping[str, str]) -> dict[str, str]:
    """The part of a write's identity that this topic is scoped by."""
    scope: dict[str, str] = {}
    if topic.scoping.user_scoped and user_id is not None:
        scope["user_id"] = user_id
    for key, value in scoped_properties(topic, properties).items():
        scope[f"p:{key}"] = value
    return scope


def scope_key(
    project: str,
    group: str,
    user_id: str | None,
    properties: Mapping[str, str],
    keys: Iterable[str],
) -> str:
    """Ordering key of a run: project, group, user and the group's scope properties.

    Runs that share it are processed strictly in order; different keys run concurrently.
    """
    scoped = {k: properties[k] for k in sorted(keys) if k in properties}
    raw = json.dumps([project, group, user_id, scoped], separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def bounded_memory_id(project: str, group: str, topic: str, scope: Mapping[str, str]) -> str:
    """The one id a bounded topic's memory has in a scope, so writes update it in place."""
    raw = json.dumps([project, group, topic, dict(sorted(scope.items()))], separators=(",", ":"))
    return str(uuid.uuid5(_BOUNDED_NAMESPACE, raw))
