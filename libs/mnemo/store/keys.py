"""API keys: scoped to one project, stored as SHA-256 hashes, shown once at creation."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

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


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


async def create(
    conn: AsyncConnection, project: str, name: str, now: datetime
) -> tuple[ApiKey, str]:
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(str(uuid.uuid4()), project, name, secret[:12], now, None)
    await conn.execute(
        insert(api_keys).values(
            id=key.id,
            project=project,
            name=name,
            key_hash=hash_key(secret),
            prefix=key.prefix,
            created_at=now,
        )
    )
    return key, secret


async def project_for(conn: AsyncConnection, secret: str) -> str | None:
    return (
        await conn.execute(
            select(api_keys.c.project).where(
                api_keys.c.key_hash == hash_key(secret), api_keys.c.revoked_at.is_(None)
            )
        )
    ).scalar_one_or_none()


async def list_(conn: AsyncConnection, project: str | None = None) -> list[ApiKey]:
    stmt = select(api_keys).order_by(api_keys.c.created_at)
    if project is not None:
        stmt = stmt.where(api_keys.c.project == project)
    return [
        ApiKey(r.id, r.project, r.name, r.prefix, r.created_at, r.revoked_at)
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
