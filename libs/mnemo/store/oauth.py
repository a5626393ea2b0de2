"""The built-in OAuth server's records: registered clients, and consents, authorization
codes, access and refresh tokens (issue 40).

Every secret is stored as its SHA-256 hash (`keys.hash_key`), never in the clear. A
`family` ties the code and tokens of one consent together, so revoking any of them (or
replaying a used code or refresh token) revokes them all. Expired rows are refused on
read and removed by `purge_expired`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store.keys import hash_key
from mnemo.store.schema import oauth_clients, oauth_tokens

Kind = Literal["consent", "code", "access", "refresh"]


@dataclass(frozen=True)
class TokenRecord:
    kind: Kind
    client_id: str
    family: str
    project: str | None
    writable: bool
    user_id: str | None
    scopes: list[str]
    resource: str | None
    data: dict[str, Any]
    expires_at: datetime
    used_at: datetime | None


async def save_client(
    conn: AsyncConnection, client_id: str, info: dict[str, Any], now: datetime
) -> None:
    await conn.execute(insert(oauth_clients).values(client_id=client_id, info=info, created_at=now))


async def client(conn: AsyncConnection, client_id: str) -> dict[str, Any] | None:
    found = await conn.execute(
        select(oauth_clients.c.info).where(oauth_clients.c.client_id == client_id)
    )
    info: dict[str, Any] | None = found.scalar_one_or_none()
    return info


async def save_token(
    conn: AsyncConnection, secret: str, record: TokenRecord, now: datetime
) -> None:
    await conn.execute(
        insert(oauth_tokens).values(
            token_hash=hash_key(secret),
            kind=record.kind,
            client_id=record.client_id,
            family=record.family,
            project=record.project,
            writable=record.writable,
            user_id=record.user_id,
            scopes=record.scopes,
            resource=record.resource,
            data=record.data,
            created_at=now,
            expires_at=record.expires_at,
            used_at=record.used_at,
        )
    )


async def token(
    conn: AsyncConnection, secret: str, kind: Kind, now: datetime
) -> TokenRecord | None:
    """The unexpired record of this kind, used or not (a used code or refresh token is
    a replay the caller answers by revoking its family)."""
    row = (
        await conn.execute(
            select(oauth_tokens).where(
                oauth_tokens.c.token_hash == hash_key(secret),
                oauth_tokens.c.kind == kind,
                oauth_tokens.c.expires_at > now,
            )
        )
    ).first()
    if row is None:
        return None
    return TokenRecord(
        row.kind,
        row.client_id,
        row.family,
        row.project,
        row.writable,
        row.user_id,
        list(row.scopes),
        row.resource,
        dict(row.data),
        row.expires_at,
        row.used_at,
    )


async def mark_used(conn: AsyncConnection, secret: str, now: datetime) -> bool:
    """Mark a code or refresh token used; False when it already was (a replay)."""
    done = await conn.execute(
        update(oauth_tokens)
        .where(oauth_tokens.c.token_hash == hash_key(secret), oauth_tokens.c.used_at.is_(None))
        .values(used_at=now)
        .returning(oauth_tokens.c.token_hash)
    )
    return done.first() is not None


async def revoke_family(conn: AsyncConnection, family: str) -> None:
    await conn.execute(delete(oauth_tokens).where(oauth_tokens.c.family == family))


async def purge_expired(conn: AsyncConnection, now: datetime) -> int:
    done = await conn.execute(delete(oauth_tokens).where(oauth_tokens.c.expires_at <= now))
    return done.rowcount or 0
