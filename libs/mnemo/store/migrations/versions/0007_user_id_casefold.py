"""Stored user ids take the form they are now compared in: NFKC, then case-folded.

They were stored lower-cased. For almost every id nothing changes; ids with a character
that lower-casing and case folding treat differently (German sharp s, Greek final sigma,
Cherokee), or sent decomposed (NFD, as macOS often sends accents), are rewritten so their
owners find them again: in memories (bounded memories keep their one-per-scope id, which
derives from the user), runs (with their scope keys), staged drafts and held buffer items.
Records already queued on the bus keep the id they were queued with.

The rule is frozen here, as it was when this migration was written, so later changes to
`mnemo.domain.scope` cannot change what this migration does.

Revision ID: 0007
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
import uuid
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_BOUNDED_NAMESPACE = uuid.UUID("6f1d7a52-8c1b-4d55-9d1e-3f0a9b6c2e11")


def _folded(user_id: str) -> str:
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", user_id).casefold()).strip()


def _scope_key(project: str, group: str, user: str, props: Mapping[str, str], keys: Any) -> str:
    scoped = {k: props[k] for k in sorted(keys) if k in props}
    raw = json.dumps([project, group, user, scoped], separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def _bounded_id(project: str, group: str, topic: str, scope: Mapping[str, str]) -> str:
    raw = json.dumps([project, group, topic, dict(sorted(scope.items()))], separators=(",", ":"))
    return str(uuid.uuid5(_BOUNDED_NAMESPACE, raw))


class _Groups:
    """Scope properties and bounded topics of every stored group."""

    def __init__(self, conn: sa.Connection) -> None:
        self.topics: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        for project, name, config in conn.execute(
            sa.text('SELECT project, name, config FROM "groups"')
        ):
            self.topics[(project, name)] = {t["name"]: t for t in config.get("topics", [])}

    def scope_keys(self, project: str, group: str, props: Mapping[str, str]) -> Any:
        topics = self.topics.get((project, group))
        if topics is None:
            return props.keys()
        return {
            k for t in topics.values() for k in t.get("scoping", {}).get("scope_properties", [])
        }

    def bounded_scope(
        self, project: str, group: str, topic: str, user: str, props: Mapping[str, str]
    ) -> dict[str, str] | None:
        """The scope a bounded, user-scoped topic's memory id derives from (None otherwise)."""
        found = self.topics.get((project, group), {}).get(topic)
        scoping = (found or {}).get("scoping", {})
        if not found or not found.get("is_bounded") or not scoping.get("user_scoped"):
            return None
        scope = {"user_id": user}
        for key in scoping.get("scope_properties", []):
            if key in props:
                scope[f"p:{key}"] = props[key]
        return scope


def _stored_ids(conn: sa.Connection) -> set[str]:
    found: set[str] = set()
    for query in (
        "SELECT DISTINCT user_id FROM memories WHERE user_id IS NOT NULL",
        "SELECT DISTINCT user_id FROM runs WHERE user_id IS NOT NULL",
        "SELECT DISTINCT candidate->>'user_id' FROM drafts WHERE candidate ? 'user_id'",
        "SELECT DISTINCT payload->>'_user_id' FROM buffer_items WHERE payload ? '_user_id'",
    ):
        found.update(v for v in conn.execute(sa.text(query)).scalars() if v is not None)
    return found


def _rekey_bounded(conn: sa.Connection, groups: _Groups, old: str, new: str) -> None:
    rows = conn.execute(
        sa.text('SELECT id, project, "group", topic, properties FROM memories WHERE user_id = :u'),
        {"u": old},
    ).all()
    for memory_id, project, group, topic, props in rows:
        old_scope = groups.bounded_scope(project, group, topic, old, props or {})
        new_scope = groups.bounded_scope(project, group, topic, new, props or {})
        if old_scope is None or new_scope is None:
            continue
        if memory_id != _bounded_id(project, group, topic, old_scope):
            continue
        new_id = _bounded_id(project, group, topic, new_scope)
        taken = conn.execute(sa.text("SELECT 1 FROM memories WHERE id = :i"), {"i": new_id}).first()
        if taken:  # both forms were in use: the other memory keeps the scope's id
            continue
        params = {"old": memory_id, "new": new_id}
        conn.execute(sa.text("UPDATE memories SET id = :new WHERE id = :old"), params)
        conn.execute(
            sa.text("UPDATE memory_versions SET memory_id = :new WHERE memory_id = :old"), params
        )
        conn.execute(
            sa.text(
                "UPDATE drafts SET candidate = jsonb_set(candidate, '{memory_id}', to_jsonb("
                "CAST(:new AS text))) WHERE candidate->>'memory_id' = :old"
            ),
            params,
        )


def _rekey_user(conn: sa.Connection, groups: _Groups, old: str, new: str) -> None:
    _rekey_bounded(conn, groups, old, new)
    params = {"old": old, "new": new}
    conn.execute(sa.text("UPDATE memories SET user_id = :new WHERE user_id = :old"), params)
    runs = conn.execute(
        sa.text('SELECT run_id, project, "group", properties FROM runs WHERE user_id = :old'),
        params,
    ).all()
    for run_id, project, group, props in runs:
        key = _scope_key(
            project, group, new, props or {}, groups.scope_keys(project, group, props or {})
        )
        conn.execute(
            sa.text("UPDATE runs SET user_id = :new, scope_key = :key WHERE run_id = :run"),
            {"new": new, "key": key, "run": run_id},
        )
    conn.execute(
        sa.text(
            "UPDATE drafts SET candidate = jsonb_set(candidate, '{user_id}', to_jsonb("
            "CAST(:new AS text))) WHERE candidate->>'user_id' = :old"
        ),
        params,
    )
    conn.execute(
        sa.text(
            "UPDATE buffer_items SET payload = jsonb_set(payload, '{_user_id}', to_jsonb("
            "CAST(:new AS text))) WHERE payload->>'_user_id' = :old"
        ),
        params,
    )


def upgrade() -> None:
    conn = op.get_bind()
    groups = _Groups(conn)
    for old in sorted(_stored_ids(conn)):
        new = _folded(old)
        if new and new != old:
            _rekey_user(conn, groups, old, new)


def downgrade() -> None:
    """Nothing to undo: lower-casing the folded ids would not give the old ones back, and
    the previous code compares lower-cased ids, which folded ids already are for ASCII."""
