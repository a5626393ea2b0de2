#!/usr/bin/env bash
# Distributed mode on one machine: the Kafka broker (deploy/kafka), the gateway and the four
# stage services as separate local processes. Ctrl-C stops everything this script started.
#
#   scripts/run-distributed.sh                 # embedded Postgres in $MNEMO_DATA_DIR
#   DATABASE_URL=postgresql://... scripts/run-distributed.sh
#
# Env: PYTHON (default .venv/bin/python), MNEMO_PORT (gateway, 8080), MNEMO_METRICS_BASE_PORT
# (stage /metrics on BASE+1..BASE+4, default 9100), KAFKA_DATA_DIR, GATEWAY_MODULE
# (default mnemo.kafka.gateway), MNEMO_* settings (LLM, partitions, topic prefix, ...).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$ROOT"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[[ -x "$PY" ]] || PY="$(command -v python3)"
export PYTHONPATH="$ROOT/libs:$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export MNEMO_DATA_DIR="${MNEMO_DATA_DIR:-$HOME/.local/share/mnemo}"
export KAFKA_DATA_DIR="${KAFKA_DATA_DIR:-$ROOT/deploy/kafka/.data}"
export MNEMO_KAFKA_BOOTSTRAP_SERVERS="${MNEMO_KAFKA_BOOTSTRAP_SERVERS:-127.0.0.1:${KAFKA_PORT:-9092}}"
export MNEMO_PORT="${MNEMO_PORT:-8080}"
METRICS_BASE="${MNEMO_METRICS_BASE_PORT:-9100}"
LOG_DIR="${MNEMO_LOG_DIR:-$MNEMO_DATA_DIR/logs}"
mkdir -p "$LOG_DIR"

say() { printf '[run-distributed] %s\n' "$*" >&2; }
PIDS=()
STARTED_BROKER=0
EMBEDDED_PG=0

cleanup() {
  trap - INT TERM EXIT
  say "stopping ..."
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  local pg_pid="$MNEMO_DATA_DIR/pg/postmaster.pid"
  if [[ "$EMBEDDED_PG" == 1 && -f "$pg_pid" ]]; then  # it outlives its clients: fast shutdown
    kill -INT "$(head -n1 "$pg_pid")" 2>/dev/null || true
  fi
  if [[ "$STARTED_BROKER" == 1 ]]; then bash deploy/kafka/kafka.sh down || true; fi
  say "stopped"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! PYTHON="$PY" bash deploy/kafka/kafka.sh status >/dev/null 2>&1; then
  PYTHON="$PY" bash deploy/kafka/kafka.sh up
  STARTED_BROKER=1
fi

if [[ -z "${DATABASE_URL:-${MNEMO_DATABASE_URL:-}}" ]]; then
  # Every process joins the same embedded server (pgserver shares one data folder).
  say "no DATABASE_URL: embedded Postgres in $MNEMO_DATA_DIR/pg"
  EMBEDDED_PG=1
fi

start() {  # start NAME MODULE [ENV=VALUE ...]
  local name="$1" module="$2"
  shift 2
  env "$@" "$PY" -m "$module" >"$LOG_DIR/$name.log" 2>&1 &
  PIDS+=("$!")
  say "$name: pid $! (log $LOG_DIR/$name.log)"
}

start gateway "${GATEWAY_MODULE:-services.gateway}" MNEMO_MODE=distributed
for _ in $(seq 1 120); do  # the gateway migrates the database before the stages connect
  curl -fs "http://127.0.0.1:$MNEMO_PORT/healthz" >/dev/null 2>&1 && break
  sleep 0.5
done
i=1
for stage in extractor buffer transformer committer; do
  start "$stage" "services.$stage" "MNEMO_METRICS_PORT=$((METRICS_BASE + i))"
  i=$((i + 1))
done
say "gateway http://127.0.0.1:$MNEMO_PORT  metrics :$((METRICS_BASE + 1))-$((METRICS_BASE + 4))"
say "Ctrl-C stops all"
wait -n "${PIDS[@]}" || true
say "a process exited; see $LOG_DIR"
