#!/usr/bin/env bash
# Distributed mode on one machine: the Kafka broker (deploy/kafka), the gateway and the four
# stage services as separate local processes, supervised (mnemo.kafka.stack): a stage that
# crashes is restarted with backoff and reported; one that keeps dying within a minute makes
# the whole stack stop with a message naming it. Ctrl-C stops everything this script started.
#
#   scripts/run-distributed.sh                 # embedded Postgres in $MNEMO_DATA_DIR
#   DATABASE_URL=postgresql://... scripts/run-distributed.sh
#   REPLICAS="extractor=2 committer=2" scripts/run-distributed.sh
#
# Env: PYTHON (default .venv/bin/python), MNEMO_PORT (gateway, 8080), MNEMO_METRICS_BASE_PORT
# (stage /metrics and /healthz on BASE+1, BASE+2, ... one per replica; default 9100),
# REPLICAS (STAGE=N ...), KAFKA_PORT, KAFKA_DATA_DIR, GATEWAY_MODULE (default services.gateway),
# MNEMO_* settings (LLM, partitions, topic prefix, ...).
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

say() { printf '[run-distributed] %s\n' "$*" >&2; }
SUPERVISOR=""
STARTED_BROKER=0
EMBEDDED_PG=0

cleanup() {
  trap - INT TERM EXIT
  say "stopping ..."
  if [[ -n "$SUPERVISOR" ]]; then  # it stops the gateway and the stages
    kill -TERM "$SUPERVISOR" 2>/dev/null || true
    wait "$SUPERVISOR" 2>/dev/null || true
  fi
  local pg_pid="$MNEMO_DATA_DIR/pg/postmaster.pid"
  if [[ "$EMBEDDED_PG" == 1 && -f "$pg_pid" ]]; then  # it outlives its clients: fast shutdown
    kill -INT "$(head -n1 "$pg_pid")" 2>/dev/null || true
  fi
  if [[ "$STARTED_BROKER" == 1 ]]; then bash deploy/kafka/kafka.sh down || true; fi
  say "stopped"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ARGS=(--log-dir "$LOG_DIR" --port "$MNEMO_PORT" --metrics-base "$METRICS_BASE"
      --gateway-module "${GATEWAY_MODULE:-services.gateway}")
for pair in ${REPLICAS:-}; do ARGS+=(--replicas "$pair"); done
ARGS+=(--gateways "${GATEWAYS:-1}")  # GATEWAYS=2: a second gateway on MNEMO_PORT+1
# Start-up checks before it acts: a busy port stops the script before the broker or Postgres.
"$PY" -m mnemo.kafka.stack "${ARGS[@]}" --check-ports
mkdir -p "$LOG_DIR"

if ! PYTHON="$PY" bash deploy/kafka/kafka.sh status >/dev/null 2>&1; then
  PYTHON="$PY" bash deploy/kafka/kafka.sh up
  STARTED_BROKER=1
fi

if [[ -z "${DATABASE_URL:-${MNEMO_DATABASE_URL:-}}" ]]; then
  # Every process joins the same embedded server (pgserver shares one data folder).
  say "no DATABASE_URL: embedded Postgres in $MNEMO_DATA_DIR/pg"
  EMBEDDED_PG=1
fi

say "gateway http://127.0.0.1:$MNEMO_PORT  stage metrics/healthz from :$((METRICS_BASE + 1))"
"$PY" -m mnemo.kafka.stack "${ARGS[@]}" &
SUPERVISOR=$!
status=0
wait "$SUPERVISOR" || status=$?
SUPERVISOR=""
say "the supervisor exited with status $status; see $LOG_DIR"
exit "$status"
