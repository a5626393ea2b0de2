"""One installation behind a gateway and its stages (issue 39).

A stage replica started with another `MNEMO_DATA_DIR` or database URL used to start its own
empty Postgres, join the consumer group, report healthy and drop every add on its
partitions ("no row"); one with a misspelt `MNEMO_KAFKA_TOPIC_PREFIX` sat idle on its own
topics and counted as a live worker. Now:

- the gateway claims its database for its topic prefix (`mnemo.store.installation`) and
  refuses a database claimed for another prefix;
- a stage, before it joins its consumer group, reads its database's installation: one no
  gateway has claimed (another database) or one claimed for another prefix refuses the start,
  naming the settings to check, so it never writes a heartbeat nor takes a partition;
- every record carries the installation id in its `mnemo-installation` header; a stage that
  consumes a record of another installation leaves its group at once, without
  acknowledging it (the record waits for a stage of its own installation). Records without
  the header (outside producers, earlier releases) are taken.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.settings import KafkaSettings
from mnemo.store import installation as store

log = logging.getLogger(__name__)
HEADER = "mnemo-installation"


class WrongInstallation(RuntimeError):
    """This process and its database (or its records) belong to different installations."""


async def claim_for_gateway(db: AsyncEngine, ks: KafkaSettings) -> str:
    """The installation id; claims the database for this topic prefix on first use."""
    async with db.begin() as conn:
        found = await store.claim(conn, ks.topic_prefix)
    if found.topic_prefix != ks.topic_prefix:
        raise WrongInstallation(
            f"this database belongs to the installation on topic prefix "
            f"'{found.topic_prefix}', but MNEMO_KAFKA_TOPIC_PREFIX is '{ks.topic_prefix}': "
            "check MNEMO_KAFKA_TOPIC_PREFIX and MNEMO_DATABASE_URL (or MNEMO_DATA_DIR)"
        )
    return found.installation_id


async def check_for_stage(
    db: AsyncEngine, ks: KafkaSettings, service: str, wait_seconds: float = 30.0
) -> str:
    """The installation id, once a gateway has claimed this database for this prefix.
    Waits `wait_seconds` for a first gateway (stages may start together with it)."""
    deadline = asyncio.get_running_loop().time() + wait_seconds
    while True:
        async with db.connect() as conn:
            found = await store.read(conn)
        if found.topic_prefix == ks.topic_prefix:
            return found.installation_id
        if found.topic_prefix is not None:
            raise WrongInstallation(
                f"{service}: this database belongs to the installation on topic prefix "
                f"'{found.topic_prefix}', but MNEMO_KAFKA_TOPIC_PREFIX is '{ks.topic_prefix}'"
                ": a stage on other topics would sit idle; check MNEMO_KAFKA_TOPIC_PREFIX"
            )
        if asyncio.get_running_loop().time() > deadline:
            raise WrongInstallation(
                f"{service}: no gateway has used this database (installation "
                f"{found.installation_id}): the stage's database is not its gateway's, and it "
                "would drop every add as refused; give it the gateway's MNEMO_DATABASE_URL "
                "(or MNEMO_DATA_DIR), or start the gateway first"
            )
        log.info("%s: waiting for a gateway to claim this database", service)
        await asyncio.sleep(1.0)


def foreign(service: str, where: str, theirs: str | None, ours: str | None) -> str | None:
    """Why a stage must not take a record (at `where`) that carries installation `theirs`,
    in one line naming both installations; None when it may (same installation, or a
    record without the header)."""
    if theirs is None or ours is None or theirs == ours:
        return None
    return (
        f"{service}: {where} belongs to installation {theirs}, but this stage's database is "
        f"installation {ours}: check MNEMO_DATABASE_URL (or MNEMO_DATA_DIR) and "
        "MNEMO_KAFKA_TOPIC_PREFIX"
    )


def record_installation(headers: object) -> str | None:
    """The installation id a consumed record carries (None: no header)."""
    items = headers.items() if isinstance(headers, dict) else (headers or [])
    for key, value in items:  # type: ignore[attr-defined]
        if key == HEADER and value is not None:
            return bytes(value).decode("utf-8", errors="replace")
    return None
