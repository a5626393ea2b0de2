"""Pre-creating the channels' Kafka topics, and the stages' table changelogs, with explicit
partition counts (faust hangs on a mismatch) and configs.

mnemo creates every topic it uses before a stage starts, and faust never declares one at
run time (`topic_allow_declare` is off): a declare that meets a broker being restarted
("all brokers are currently fenced") crashed the stage.

Every topic is created with `MNEMO_KAFKA_REPLICATION_FACTOR` replicas and
`MNEMO_KAFKA_MIN_INSYNC_REPLICAS`; a topic found with fewer replicas, or a lower
min.insync.replicas, than configured refuses the start (`UnderReplicated`): records
acknowledged on fewer brokers than the operator asked for could be lost with one broker."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaConnectionError, KafkaError, TopicAlreadyExistsError

from mnemo.kafka.events.channels import PIPELINE_CHANNELS, ChannelKind, ChannelNames
from mnemo.settings import KafkaSettings

log = logging.getLogger(__name__)


def channel_names(ks: KafkaSettings) -> ChannelNames:
    """The Kafka topic names of the channels under these settings."""
    return ChannelNames(ks.topic_prefix, ks.topic_version)


# The faust tables of the stage services: (service, table name).
TABLES = (("extractor", "windows"), ("buffer", "buffers"))


def changelog_configs(ks: KafkaSettings) -> dict[str, str]:
    """Topic configs of table changelogs: a replaced or deleted value (e.g. a buffer's state
    before an erase removed a user's items) is compacted away within this bound."""
    lag = str(ks.changelog_max_compaction_lag_ms)
    return {"max.compaction.lag.ms": lag, "segment.ms": lag}


def changelog_name(ks: KafkaSettings, service: str, table: str) -> str:
    """faust's name for a table's changelog: `{app id}-{table}-changelog`."""
    return f"{ks.group_id(service)}-{table}-changelog"


class UnderReplicated(RuntimeError):
    """A topic has fewer replicas (or a lower min.insync.replicas) than the settings ask."""


def wanted(ks: KafkaSettings) -> dict[str, tuple[int, dict[str, str]]]:
    """Every channel's and table changelog's Kafka topic with its partition count and
    configs."""
    out = _wanted(ks)
    isr = str(ks.min_insync_replicas)
    return {name: (parts, {**configs, "min.insync.replicas": isr})
            for name, (parts, configs) in out.items()}  # fmt: skip


def _wanted(ks: KafkaSettings) -> dict[str, tuple[int, dict[str, str]]]:
    names = channel_names(ks)
    in_flight = {"retention.ms": str(ks.pipeline_retention_ms)}
    out: dict[str, tuple[int, dict[str, str]]] = {
        names.name(k): (ks.partitions, in_flight) for k in PIPELINE_CHANNELS
    }
    out[names.raw] = (ks.partitions, {"retention.ms": str(ks.raw_retention_ms)})
    out[names.dlq] = (ks.dlq_partitions, {"retention.ms": str(ks.dlq_retention_ms)})
    out[names.name(ChannelKind.ticks)] = (ks.partitions, {"retention.ms": "3600000"})
    changelog = {"cleanup.policy": "compact", **changelog_configs(ks)}
    for service, table in TABLES:
        out[changelog_name(ks, service, table)] = (ks.partitions, changelog)
    return out


async def ensure_channels(ks: KafkaSettings, wait_seconds: float = 60.0) -> None:
    """Create missing topics; raise if an existing one has another partition count."""
    admin = await _admin(ks, wait_seconds)
    try:
        topics = wanted(ks)
        existing = set(await admin.list_topics())
        missing = [
            NewTopic(name, parts, ks.replication_factor, topic_configs=configs)
            for name, (parts, configs) in topics.items()
            if name not in existing
        ]
        if missing:
            try:
                await admin.create_topics(missing)
            except TopicAlreadyExistsError:
                pass  # another service created them first
            log.info("created topics %s", ", ".join(t.name for t in missing))
        for info in await _described(admin, list(topics), wait_seconds):
            have, want = len(info["partitions"]), topics[info["topic"]][0]
            if have != want:
                raise RuntimeError(
                    f"topic {info['topic']} has {have} partitions but {want} are configured; "
                    "partition counts must match (faust tables hang otherwise)"
                )
            check_replicas(ks, info)
        await check_min_insync(admin, ks, list(topics))
        await _warn_on_retention_drift(admin, {n: topics[n][1] for n in topics if n in existing})
    finally:
        await admin.close()


async def _described(
    admin: AIOKafkaAdminClient, topics: list[str], wait_seconds: float
) -> list[dict[str, Any]]:
    """The topics' descriptions once every one shows its partitions: on a cluster, a topic
    just created is described with none until its metadata reached the broker asked."""
    deadline = asyncio.get_running_loop().time() + wait_seconds
    while True:
        infos: list[dict[str, Any]] = await admin.describe_topics(topics)
        if all(i["partitions"] for i in infos) or asyncio.get_running_loop().time() > deadline:
            return infos
        await asyncio.sleep(0.2)


def check_replicas(ks: KafkaSettings, info: dict[str, Any]) -> None:
    """Refuse a topic whose partitions have fewer replicas than configured."""
    fewest = min((len(p["replicas"]) for p in info["partitions"]), default=0)
    if fewest < ks.replication_factor:
        raise UnderReplicated(
            f"topic {info['topic']} has {fewest} replica(s) per partition but "
            f"MNEMO_KAFKA_REPLICATION_FACTOR is {ks.replication_factor}: a broker's loss could "
            "lose acknowledged records. Recreate the topics with enough replicas (or "
            "reassign them with kafka-reassign-partitions.sh), or lower the setting"
        )


async def check_min_insync(
    admin: AIOKafkaAdminClient, ks: KafkaSettings, topics: list[str]
) -> None:
    """Refuse topics whose min.insync.replicas is below MNEMO_KAFKA_MIN_INSYNC_REPLICAS."""
    if ks.min_insync_replicas <= 1 or not topics:
        return  # Kafka's own floor: nothing can be lower
    resources = [
        ConfigResource(ConfigResourceType.TOPIC, t, {"min.insync.replicas": None}) for t in topics
    ]
    for response in await admin.describe_configs(resources):
        for _, _, _, name, entries in response.resources:
            have = next((e[1] for e in entries if e[0] == "min.insync.replicas"), None)
            if have is not None and int(have) < ks.min_insync_replicas:
                raise UnderReplicated(
                    f"topic {name} has min.insync.replicas={have} but "
                    f"MNEMO_KAFKA_MIN_INSYNC_REPLICAS is {ks.min_insync_replicas}: an add could be "
                    f"acknowledged by fewer brokers than configured. Raise it: kafka-configs.sh "
                    f"--bootstrap-server <broker> --alter --entity-type topics --entity-name {name} "
                    f"--add-config min.insync.replicas={ks.min_insync_replicas}"
                )


async def _warn_on_retention_drift(
    admin: AIOKafkaAdminClient, existing: dict[str, dict[str, str]]
) -> None:
    """Topic configs apply when mnemo creates a topic. For topics that existed already, say
    which retention differs from the settings (e.g. MNEMO_KAFKA_RAW_RETENTION_MS set later),
    and how to change it: retention decides how long erased users' text stays in the log."""
    wanted = {name: c["retention.ms"] for name, c in existing.items() if "retention.ms" in c}
    if not wanted:
        return
    resources = [
        ConfigResource(ConfigResourceType.TOPIC, n, {"retention.ms": None}) for n in wanted
    ]
    try:
        responses = await admin.describe_configs(resources)
    except KafkaError as exc:  # informational only
        log.info("topic retention not checked (%s)", exc)
        return
    for response in responses:
        for _, _, _, name, entries in response.resources:
            have = next((e[1] for e in entries if e[0] == "retention.ms"), None)
            if name in wanted and have is not None and have != wanted[name]:
                log.warning(
                    "topic %s keeps records for retention.ms=%s but %s is configured; topic "
                    "configs apply at creation only. To change it: kafka-configs.sh "
                    "--bootstrap-server <broker> --alter --entity-type topics --entity-name %s "
                    "--add-config retention.ms=%s",
                    name, have, wanted[name], name, wanted[name],
                )  # fmt: skip


async def _admin(ks: KafkaSettings, wait_seconds: float) -> AIOKafkaAdminClient:
    deadline = asyncio.get_running_loop().time() + wait_seconds
    while True:
        admin = AIOKafkaAdminClient(bootstrap_servers=ks.bootstrap_servers)
        try:
            await admin.start()
            return admin
        except (KafkaConnectionError, KafkaError, OSError) as exc:
            await admin.close()
            if asyncio.get_running_loop().time() > deadline:
                raise
            log.warning("broker not reachable yet (%s); retrying", exc)
            await asyncio.sleep(1.0)
