#!/usr/bin/env bash
# Makes this folder's fixtures: what the release tagged `wave-2` (47aa3f4) leaves behind when
# its gateway has acknowledged adds that no stage has processed yet, as an upgrade meets it:
#   store.backup  its database (embedded Postgres 16, schema revision 0014), as `mnemo backup`
#                 of this release writes it;
#   raw.jsonl     the records its gateway produced on the raw topic (key, value, as bytes).
# tests/kafka/test_upgrade.py restores the one and replays the other into this release.
#
# Usage: OLD=<a worktree at wave-2 with its venv (make install)> bash make.sh
#        (KAFKA_PORT, default 19900: a free port for a throwaway broker)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
NEW="$(cd "$HERE/../../../.." && pwd -P)"
OLD="${OLD:?a worktree of wave-2 with its .venv}"
WORK="$(mktemp -d)"
export KAFKA_PORT="${KAFKA_PORT:-19900}" KAFKA_DATA_DIR="$WORK/kafka"
GATEWAY_PORT="$((KAFKA_PORT + 7))"
chmod 755 "$WORK"
bash "$NEW/deploy/kafka/kafka.sh" up
trap 'bash "$NEW/deploy/kafka/kafka.sh" down || true' EXIT

if curl -fs "http://127.0.0.1:$GATEWAY_PORT/healthz" >/dev/null 2>&1; then
  echo "port $GATEWAY_PORT is taken by another server"; exit 1
fi
env PYTHONPATH="$OLD/libs:$OLD" HF_HUB_OFFLINE=1 MNEMO_DATA_DIR="$WORK/data" \
  MNEMO_KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:$KAFKA_PORT" MNEMO_KAFKA_TOPIC_PREFIX=wave2 \
  MNEMO_KAFKA_PARTITIONS=4 MNEMO_EMBEDDING_PROVIDER=hash MNEMO_AUTH_DISABLED=true MNEMO_MODE=distributed \
  MNEMO_PORT="$GATEWAY_PORT" "$OLD/.venv/bin/python" -m services.gateway >"$WORK/gateway.log" 2>&1 &
GATEWAY=$!
trap 'kill -TERM "$GATEWAY" 2>/dev/null || true; bash "$NEW/deploy/kafka/kafka.sh" down || true' EXIT
for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$GATEWAY_PORT/healthz" >/dev/null 2>&1 && break
  sleep 1
done
add() {  # retried while the gateway's producer first meets the topics (503)
  for _ in $(seq 1 30); do
    curl -fsS -X POST "http://127.0.0.1:$GATEWAY_PORT/v1/memories" \
      -H 'content-type: application/json' -d "$1" && echo && return 0
    sleep 1
  done
  return 1
}
add '{"user_id": "alice", "input": {"string": {"content": ["I keep bees on the roof of the library."]}}}'
add '{"user_id": "bob", "input": {"conversation": {"messages": [{"role": "user", "content": "My sister Ana lives in Porto and teaches physics."}]}}}'
add '{"user_id": "alice", "input": {"pre_extracted": {"items": [{"content": "Alice prefers tea to coffee.", "topic": "UserKnowledge"}]}}}'
kill -TERM "$GATEWAY"; wait "$GATEWAY" || true


"$NEW/.venv/bin/python" -m mnemo.cli.main backup --data-dir "$WORK/data" -o "$HERE/store.backup"
"$NEW/.venv/bin/python" - "$KAFKA_PORT" "$HERE/raw.jsonl" <<'PY'
import asyncio, base64, json, sys
from aiokafka import AIOKafkaConsumer

async def main(port: str, out: str) -> None:
    consumer = AIOKafkaConsumer("wave2.raw.v1", bootstrap_servers=f"127.0.0.1:{port}",
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    try:
        batches = await consumer.getmany(timeout_ms=10000)
        records = sorted((r for rs in batches.values() for r in rs), key=lambda r: r.timestamp)
    finally:
        await consumer.stop()
    with open(out, "w") as f:
        for r in records:
            f.write(json.dumps({"key": base64.b64encode(r.key).decode(),
                                "value": base64.b64encode(r.value).decode()}) + "\n")
    print(f"{len(records)} raw records")

asyncio.run(main(*sys.argv[1:]))
PY
