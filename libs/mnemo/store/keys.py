"""API keys: scoped to one project, stored as SHA-256 hashes, shown once at creation.

A key may be read-only (`writable` false) and bound to one user_id (issue 40); the grant
it carries is `mnemo.domain.grants.Grant`.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.grants import Grant
from mnemo.domain.scope import normalize_user_id
from mnemo.store.schema import api_keys

KEY_PREFIX = "mnemo_"


@dataclass(frozen=True)
class ApiKey:
    id: str
    project: str
    name: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None
    writable: bool = True
    user_id: str | None = None


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


async def create(
    conn: AsyncConnection,
    project: str,
    name: str,
    now: datetime,
    *,
    writable: bool = True,
    user_id: str | None = None,
) -> tuple[ApiKey, str]:
    """A new key (InvalidUserId for a refused user id); its secret is returned, not stored."""
    user = normalize_user_id(user_id)
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(str(uuid.uuid4()), project, name, secret[:12], now, None, writable, user)
    await conn.execute(
        insert(api_keys).values(
            id=key.id,
            project=project,
            name=name,
            key_hash=hash_key(secret),
            prefix=key.prefix,
            created_at=now,
            writable=writable,
            user_id=user,
        )
    )
    return key, secret


async def grant_for(conn: AsyncConnection, secret: str) -> Grant | None:
    """What an active key may do; None for an unknown or revoked key."""
    row = (
        await conn.execute(
            select(api_keys.c.project, api_keys.c.writable, api_keys.c.user_id).where(
                api_keys.c.key_hash == hash_key(secret), api_keys.c.revoked_at.is_(None)
            )
        )
    ).first()
    return None if row is None else Grant(row.project, row.writable, row.user_id)


async def project_for(conn: AsyncConnection, secret: str) -> str | None:
    grant = await grant_for(conn, secret)
    return None if grant is None else grant.project


async def list_(conn: AsyncConnection, project: str | None = None) -> list[ApiKey]:
    stmt = select(api_keys).order_by(api_keys.c.created_at)
    if project is not None:
        stmt = stmt.where(api_keys.c.project == project)
    return [
        ApiKey(r.id, r.project, r.name, r.prefix, r.created_at, r.revoked_at, r.writable, r.user_id)
        for r in (await conn.execute(stmt)).all()
    ]


async def revoke(conn: AsyncConnection, key_id: str, now: datetime) -> bool:
    done = await conn.execute(
        update(api_keys)
        .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
        .values(revoked_at=now)
        .returning(api_keys.c.id)
    )
    return done.first() is not None
