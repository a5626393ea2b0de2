#!/usr/bin/env bash
# Run a real Apache Kafka cluster of KAFKA_BROKERS nodes (KRaft, each node a combined
# broker+controller; 1 by default) without Docker: jars come from Maven Central (pom.xml),
# the JVMs are started directly. Works from any cwd. See README.md in this directory.
#
# Usage: kafka.sh {fetch [--force]|up|down|status|reset|logs|bootstrap|help}
#        kafka.sh {up-node|down-node|kill-node} I   (one node of a cluster, 1..KAFKA_BROKERS)
#        kafka.sh controller                        (the active controller's node id)
#
# Environment (all optional):
#   KAFKA_BROKERS            nodes in the cluster                (default 1)
#   KAFKA_PORT               client listener of node 1 on 127.0.0.1 (default 9092);
#                            node I listens on KAFKA_PORT+I-1
#   KAFKA_CONTROLLER_PORT    KRaft controller listener of node 1 (default KAFKA_PORT+KAFKA_BROKERS);
#                            node I's is KAFKA_CONTROLLER_PORT+I-1
#   KAFKA_DATA_DIR           config, data, logs, pid file        (default <this dir>/.data);
#                            with several nodes, one node-I folder each
#   KAFKA_HEAP               JVM heap flags                      (default -Xmx512m)
#   KAFKA_JVM_OPTS           extra JVM flags for the broker
#   KAFKA_NUM_PARTITIONS     num.partitions for auto-created topics (default 1)
#   KAFKA_INTERNAL_PARTITIONS partitions of __consumer_offsets/__transaction_state (default 1)
#   KAFKA_EXTRA_PROPERTIES   newline-separated key=value lines appended to server.properties
#   KAFKA_CLUSTER_ID         cluster id used when formatting     (default: random)
#   KAFKA_READY_TIMEOUT      seconds `up` waits for readiness    (default 90)
#   KAFKA_STOP_TIMEOUT       seconds `down` waits before SIGKILL (default 30)
#   KAFKA_LOG_LEVEL          broker root log level               (default INFO)
#   PYTHON                   python with aiokafka: used for the readiness probe
#                            (otherwise Kafka's BrokerApiVersionsCommand is used)
#   JAVA / JAVA_HOME         java >= 17 to use                   (default: java on PATH)
#   MVN                      maven executable                    (default mvn)
#   MAVEN_REPO_LOCAL         maven local repository              (default ~/.m2/repository)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
LIB_DIR="$HERE/target/lib"
STAMP_FILE="$LIB_DIR/.fetched-pom.sha256"

KAFKA_BROKERS="${KAFKA_BROKERS:-1}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-$((KAFKA_PORT + KAFKA_BROKERS))}"
KAFKA_DATA_DIR="${KAFKA_DATA_DIR:-$HERE/.data}"
KAFKA_HEAP="${KAFKA_HEAP:--Xmx512m}"
KAFKA_JVM_OPTS="${KAFKA_JVM_OPTS:-}"
KAFKA_NUM_PARTITIONS="${KAFKA_NUM_PARTITIONS:-1}"
KAFKA_INTERNAL_PARTITIONS="${KAFKA_INTERNAL_PARTITIONS:-1}"
KAFKA_EXTRA_PROPERTIES="${KAFKA_EXTRA_PROPERTIES:-}"
KAFKA_READY_TIMEOUT="${KAFKA_READY_TIMEOUT:-90}"
KAFKA_STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"
PYTHON="${PYTHON:-}"
MVN="${MVN:-mvn}"

# A relative KAFKA_DATA_DIR is relative to the caller's cwd; make it absolute.
case "$KAFKA_DATA_DIR" in
  /*) ;;
  *) KAFKA_DATA_DIR="$PWD/$KAFKA_DATA_DIR" ;;
esac
KAFKA_DATA_DIR="${KAFKA_DATA_DIR%/}"

CLUSTER_DIR="$KAFKA_DATA_DIR"
# Every node's client listener: what clients bootstrap from.
ALL_BOOTSTRAP=""
for ((i = 1; i <= KAFKA_BROKERS; i++)); do
  ALL_BOOTSTRAP+="${ALL_BOOTSTRAP:+,}127.0.0.1:$((KAFKA_PORT + i - 1))"
done
# The static quorum of a cluster: every node is a voter.
QUORUM_VOTERS=""
for ((i = 1; i <= KAFKA_BROKERS; i++)); do
  QUORUM_VOTERS+="${QUORUM_VOTERS:+,}$i@127.0.0.1:$((KAFKA_CONTROLLER_PORT + i - 1))"
done

# select_node I: point the per-node variables at node I. A single node keeps the flat
# layout of KAFKA_DATA_DIR (what every existing data dir has).
select_node() {
  NODE_ID="$1"
  NODE_PORT=$((KAFKA_PORT + NODE_ID - 1))
  NODE_CONTROLLER_PORT=$((KAFKA_CONTROLLER_PORT + NODE_ID - 1))
  if ((KAFKA_BROKERS == 1)); then
    NODE_DIR="$CLUSTER_DIR"
  else
    NODE_DIR="$CLUSTER_DIR/node-$NODE_ID"
  fi
  CONFIG="$NODE_DIR/server.properties"
  KRAFT_DIR="$NODE_DIR/kraft"
  LOGS_DIR="$NODE_DIR/logs"
  PID_FILE="$NODE_DIR/kafka.pid"
  OUT_FILE="$LOGS_DIR/kafka.out"
  PROBE_LOG="$LOGS_DIR/probe.log"
  CLIENT_CONFIG="$NODE_DIR/client.properties"
  BOOTSTRAP="127.0.0.1:$NODE_PORT"
}
select_node 1

log() { printf '[kafka.sh] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }
for v in KAFKA_BROKERS KAFKA_PORT KAFKA_CONTROLLER_PORT KAFKA_NUM_PARTITIONS KAFKA_INTERNAL_PARTITIONS \
         KAFKA_READY_TIMEOUT KAFKA_STOP_TIMEOUT; do
  is_uint "${!v}" || die "$v must be a non-negative integer (got '${!v}')"
done
(( KAFKA_BROKERS >= 1 )) || die "KAFKA_BROKERS must be at least 1"
(( KAFKA_CONTROLLER_PORT >= KAFKA_PORT + KAFKA_BROKERS || KAFKA_CONTROLLER_PORT + KAFKA_BROKERS <= KAFKA_PORT )) ||
  die "the client ports (KAFKA_PORT..+KAFKA_BROKERS-1) and controller ports must not overlap"
# Replication of the internal topics and the defaults: 1 on one node, 3 (at most the node
# count) with min ISR 2 on a cluster, so one node may be down and every write still lands twice.
if ((KAFKA_BROKERS == 1)); then
  REPLICATION=1 MIN_ISR=1
else
  REPLICATION=$((KAFKA_BROKERS < 3 ? KAFKA_BROKERS : 3))
  MIN_ISR=$((REPLICATION - 1))
fi

# ----------------------------------------------------------------------------- java

JAVA_CMD=""
find_java() {
  [[ -n "$JAVA_CMD" ]] && return 0
  if [[ -n "${JAVA:-}" ]]; then
    JAVA_CMD="$JAVA"
  elif [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/java" ]]; then
    JAVA_CMD="$JAVA_HOME/bin/java"
  elif command -v java >/dev/null 2>&1; then
    JAVA_CMD="$(command -v java)"
  else
    die "java not found (need Java >= 17; set JAVA or JAVA_HOME)"
  fi
  local ver major
  ver="$("$JAVA_CMD" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n1)"
  major="${ver%%[.-]*}"
  [[ "$major" == "1" ]] && major="$(echo "$ver" | cut -d. -f2)"
  if ! is_uint "${major:-x}" || (( major < 17 )); then
    die "$JAVA_CMD is Java '${ver:-unknown}'; Kafka 4 needs Java >= 17"
  fi
}

# Short-lived JVMs for CLI tools: small heap, fast startup, quiet logging.
# Usage: [timeout N] "${TOOL_JAVA[@]}" main.Class args...   (after calling tool_java)
TOOL_JAVA=()
tool_java() {
  find_java
  TOOL_JAVA=("$JAVA_CMD" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto
    -Djava.awt.headless=true "-Dlog4j2.configurationFile=$HERE/log4j2-tools.xml"
    -cp "$LIB_DIR/*")
}
run_tool() { tool_java; "${TOOL_JAVA[@]}" "$@"; }

# ----------------------------------------------------------------------------- fetch

pom_hash() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$HERE/pom.xml" | cut -d' ' -f1
  else
    shasum -a 256 "$HERE/pom.xml" | cut -d' ' -f1
  fi
}

# lock_fd FD SECONDS: take an exclusive lock on an already-opened fd (no-op without flock).
lock_fd() {
  command -v flock >/dev/null 2>&1 || return 0
  flock -w "$2" "$1"
}

# with_timeout SECONDS cmd...: coreutils timeout when available.
with_timeout() {
  local secs="$1"
  shift
  if command -v timeout >/dev/null 2>&1; then
    timeout "$secs" "$@"
  else
    "$@"
  fi
}

count_jars() { find "$LIB_DIR" -maxdepth 1 -name '*.jar' | wc -l | tr -d ' '; }

kafka_version() {
  local j
  for j in "$LIB_DIR"/kafka_2.13-*.jar; do
    j="${j##*/kafka_2.13-}"
    echo "${j%.jar}"
    return 0
  done
}

jars_present() {
  compgen -G "$LIB_DIR/kafka_2.13-*.jar" >/dev/null &&
    [[ -f "$STAMP_FILE" && "$(cat "$STAMP_FILE")" == "$(pom_hash)" ]]
}

cmd_fetch() {
  local force=0
  [[ "${1:-}" == "--force" ]] && force=1
  mkdir -p "$HERE/target"
  # Serialise concurrent fetches (e.g. two `up`s at once).
  exec 8>"$HERE/target/.fetch.lock"
  lock_fd 8 600 || die "could not lock $HERE/target/.fetch.lock"
  if (( ! force )) && jars_present; then
    log "jars already present in $LIB_DIR ($(count_jars) jars); skipping fetch"
    exec 8>&-
    return 0
  fi
  command -v "$MVN" >/dev/null 2>&1 || die "maven ('$MVN') not found; install Maven >= 3.6"
  log "fetching Kafka jars with maven into $LIB_DIR ..."
  rm -rf "$LIB_DIR"
  local mvn_log="$HERE/target/mvn-fetch.log"
  local -a args=(-q -B -Dstyle.color=never -f "$HERE/pom.xml")
  [[ -n "${MAVEN_REPO_LOCAL:-}" ]] && args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
  local start=$SECONDS
  if ! "$MVN" "${args[@]}" package >"$mvn_log" 2>&1; then
    tail -n 60 "$mvn_log" >&2 || true
    die "maven fetch failed (full log: $mvn_log)"
  fi
  compgen -G "$LIB_DIR/kafka_2.13-*.jar" >/dev/null || die "maven succeeded but no kafka_2.13 jar in $LIB_DIR"
  pom_hash >"$STAMP_FILE"
  log "fetched $(count_jars) jars in $((SECONDS - start))s"
  exec 8>&-
}

# ----------------------------------------------------------------------------- process helpers

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Is $1 a live broker process started with our config file?
is_our_broker() {
  local pid="$1" args
  kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r "/proc/$pid/cmdline" ]]; then
    args="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  else
    args="$(ps -ww -p "$pid" -o args= 2>/dev/null || true)"
  fi
  [[ "$args" == *kafka.Kafka* && "$args" == *"$CONFIG"* ]]
}

# Prints the broker pid (from the pid file, else by looking for our command line).
find_pid() {
  local pid=""
  if [[ -f "$PID_FILE" ]]; then
    pid="$(tr -dc '0-9' <"$PID_FILE" || true)"
    if [[ -n "$pid" ]] && is_our_broker "$pid"; then
      echo "$pid"
      return 0
    fi
  fi
  if command -v pgrep >/dev/null 2>&1; then
    for pid in $(pgrep -f "kafka\.Kafka $CONFIG" 2>/dev/null || true); do
      if is_our_broker "$pid"; then
        echo "$pid"
        return 0
      fi
    done
  fi
  return 1
}

show_logs_tail() {
  local f
  for f in "$OUT_FILE" "$LOGS_DIR/server.log" "$PROBE_LOG"; do
    if [[ -s "$f" ]]; then
      echo "----- last lines of $f -----" >&2
      tail -n 40 "$f" >&2 || true
    fi
  done
}

# ----------------------------------------------------------------------------- config / storage

render_config() {
  local tmpl="$HERE/server.properties.template" line tmp="$CONFIG.tmp"
  : >"$tmp"
  while IFS= read -r line || [[ -n "$line" ]]; do
    line="${line//@NODE_ID@/$NODE_ID}"
    line="${line//@KAFKA_PORT@/$NODE_PORT}"
    line="${line//@KAFKA_CONTROLLER_PORT@/$NODE_CONTROLLER_PORT}"
    line="${line//@REPLICATION@/$REPLICATION}"
    line="${line//@MIN_ISR@/$MIN_ISR}"
    if [[ "$line" == "@QUORUM@" ]]; then
      # One node: a dynamic quorum (formatted --standalone). A cluster: static voters.
      if ((KAFKA_BROKERS == 1)); then
        line="controller.quorum.bootstrap.servers=127.0.0.1:$NODE_CONTROLLER_PORT"
      else
        line="controller.quorum.voters=$QUORUM_VOTERS"
      fi
    fi
    line="${line//@KAFKA_LOG_DIR@/$KRAFT_DIR}"
    line="${line//@KAFKA_NUM_PARTITIONS@/$KAFKA_NUM_PARTITIONS}"
    line="${line//@KAFKA_INTERNAL_PARTITIONS@/$KAFKA_INTERNAL_PARTITIONS}"
    printf '%s\n' "$line" >>"$tmp"
  done <"$tmpl"
  if [[ -n "$KAFKA_EXTRA_PROPERTIES" ]]; then
    printf '\n# from KAFKA_EXTRA_PROPERTIES\n%s\n' "$KAFKA_EXTRA_PROPERTIES" >>"$tmp"
  fi
  mv -f "$tmp" "$CONFIG"
  # Used by the Java readiness probe.
  printf 'request.timeout.ms=5000\ndefault.api.timeout.ms=10000\n' >"$CLIENT_CONFIG"
}

random_cluster_id() {
  # Same shape as org.apache.kafka.common.Uuid: 16 random bytes, URL-safe base64, no padding,
  # and (like Uuid.randomUuid) never starting with '-' so it can't look like a CLI flag.
  local id
  while :; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    [[ "$id" != -* ]] && { echo "$id"; return 0; }
  done
}

format_storage_if_needed() {
  if [[ -f "$KRAFT_DIR/meta.properties" ]]; then
    # Ports of the controller are recorded in the KRaft log at format time (dynamic quorum).
    if [[ -f "$NODE_DIR/.formatted-ports" ]] &&
       [[ "$(cat "$NODE_DIR/.formatted-ports")" != "$NODE_PORT $NODE_CONTROLLER_PORT" ]]; then
      log "WARNING: data dir was formatted with ports '$(cat "$NODE_DIR/.formatted-ports")'," \
          "now '$NODE_PORT $NODE_CONTROLLER_PORT'; if startup fails run: $0 reset"
    fi
    return 0
  fi
  # No meta.properties => nothing valid in there (e.g. an interrupted format); start clean.
  rm -rf "$KRAFT_DIR"
  # Every node of a cluster is formatted with the same id (kept in the cluster dir).
  local cid="${KAFKA_CLUSTER_ID:-}"
  if [[ -z "$cid" && -s "$CLUSTER_DIR/.cluster-id" ]]; then cid="$(cat "$CLUSTER_DIR/.cluster-id")"; fi
  [[ -n "$cid" ]] || cid="$(random_cluster_id)"
  echo "$cid" >"$CLUSTER_DIR/.cluster-id"
  local -a mode=(--standalone)
  ((KAFKA_BROKERS == 1)) || mode=()
  log "formatting KRaft storage in $KRAFT_DIR (cluster id $cid)"
  if ! run_tool kafka.tools.StorageTool format --config "$CONFIG" --cluster-id "$cid" \
        ${mode[@]+"${mode[@]}"} >"$LOGS_DIR/format.log" 2>&1; then
    cat "$LOGS_DIR/format.log" >&2 || true
    rm -rf "$KRAFT_DIR"
    die "storage format failed"
  fi
  echo "$NODE_PORT $NODE_CONTROLLER_PORT" >"$NODE_DIR/.formatted-ports"
}

# ----------------------------------------------------------------------------- readiness

PY_PROBE='
import asyncio, sys
from aiokafka.client import AIOKafkaClient

async def main(bootstrap, node):
    client = AIOKafkaClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
    try:
        await client.bootstrap()
        md = await client.fetch_all_metadata()
        brokers = md.brokers()
        if not brokers:
            print("metadata has no brokers yet", file=sys.stderr)
            return 1
        if int(node) not in {b.nodeId for b in brokers}:
            print("node %s is not registered yet" % node, file=sys.stderr)
            return 1
        print("ready: brokers=%s" % sorted(b.nodeId for b in brokers))
        return 0
    finally:
        await client.close()

sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
'

PROBE_KIND=""
choose_probe() {
  [[ -n "$PROBE_KIND" ]] && return 0
  if [[ -n "$PYTHON" ]]; then
    if "$PYTHON" -c 'import aiokafka' >/dev/null 2>&1; then
      PROBE_KIND=python
      return 0
    fi
    log "PYTHON=$PYTHON cannot import aiokafka; falling back to the Java readiness probe"
  fi
  PROBE_KIND=java
}

# One real request round-trip: bootstrap + metadata (+ ApiVersions for the Java tool).
probe_once() {
  choose_probe
  if [[ "$PROBE_KIND" == python ]]; then
    with_timeout 30 "$PYTHON" -c "$PY_PROBE" "$BOOTSTRAP" "$NODE_ID" >"$PROBE_LOG" 2>&1
  else
    tool_java
    with_timeout 30 "${TOOL_JAVA[@]}" org.apache.kafka.tools.BrokerApiVersionsCommand \
      --bootstrap-server "$BOOTSTRAP" --command-config "$CLIENT_CONFIG" >"$PROBE_LOG" 2>&1 &&
      grep -q "(id: $NODE_ID " "$PROBE_LOG"
  fi
}

wait_ready() {
  local pid="$1" deadline=$((SECONDS + KAFKA_READY_TIMEOUT))
  choose_probe
  find_java
  while (( SECONDS < deadline )); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "broker process $pid exited during startup"
      return 1
    fi
    if port_open "$NODE_PORT" && probe_once; then
      return 0
    fi
    sleep 0.5
  done
  log "broker not ready after ${KAFKA_READY_TIMEOUT}s (probe: $PROBE_KIND)"
  return 1
}

# ----------------------------------------------------------------------------- commands

stop_pid() {
  local pid="$1" deadline
  log "stopping broker (pid $pid) ..."
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + KAFKA_STOP_TIMEOUT))
  while kill -0 "$pid" 2>/dev/null && (( SECONDS < deadline )); do
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "broker did not stop within ${KAFKA_STOP_TIMEOUT}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  fi
}

# launch_node: start the selected node's JVM (formatting its storage first if new) without
# waiting for readiness: a cluster's nodes need each other to elect a controller.
# Prints nothing; sets LAUNCHED_PID (empty when it was running already).
launch_node() {
  LAUNCHED_PID=""
  mkdir -p "$NODE_DIR" "$LOGS_DIR"
  local pid
  if pid="$(find_pid)"; then
    log "node $NODE_ID already running (pid $pid)"
    echo "$pid" >"$PID_FILE"
    return 0
  fi
  rm -f "$PID_FILE"
  local p
  for p in "$NODE_PORT" "$NODE_CONTROLLER_PORT"; do
    port_open "$p" && die "port $p on 127.0.0.1 is already in use by another process"
  done

  jars_present || cmd_fetch
  find_java
  render_config
  format_storage_if_needed

  log "starting Kafka $(kafka_version) node $NODE_ID on $BOOTSTRAP" \
      "(controller 127.0.0.1:$NODE_CONTROLLER_PORT, data $NODE_DIR)"
  local -a heap=() extra=()
  read -r -a heap <<<"$KAFKA_HEAP"
  read -r -a extra <<<"$KAFKA_JVM_OPTS"
  local -a jvm=(
    ${heap[@]+"${heap[@]}"}
    -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
    -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError
    -Djava.awt.headless=true
    "-Dkafka.logs.dir=$LOGS_DIR"
    "-Dlog4j2.configurationFile=$HERE/log4j2.xml"
    ${extra[@]+"${extra[@]}"}
  )
  local -a launcher=()
  # New session: Ctrl-C / SIGINT to the caller's process group must not kill the broker.
  command -v setsid >/dev/null 2>&1 && launcher=(setsid)
  echo "=== $(date '+%F %T') starting broker" >>"$OUT_FILE"
  # The inner shell writes its own pid and then execs java, so the pid file is exactly the JVM's
  # pid even if setsid had to fork.
  rm -f "$PID_FILE"
  (
    cd "$NODE_DIR"  # hs_err_pid*.log etc. land in the data dir
    # shellcheck disable=SC2016  # $$/$1/$@ belong to the inner shell
    exec ${launcher[@]+"${launcher[@]}"} bash -c 'echo $$ >"$1"; shift; exec "$@"' kafka-launch "$PID_FILE" \
      "$JAVA_CMD" "${jvm[@]}" -cp "$LIB_DIR/*" kafka.Kafka "$CONFIG"
  ) </dev/null >>"$OUT_FILE" 2>&1 8>&- 9>&- &  # don't leak the lock fds into the broker
  local _
  for _ in $(seq 1 50); do
    [[ -s "$PID_FILE" ]] && break
    sleep 0.1
  done
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  [[ -n "$pid" ]] || { show_logs_tail; die "node $NODE_ID did not start (no pid written)"; }
  LAUNCHED_PID="$pid"
  log "node $NODE_ID pid $pid"
}

# await_node: wait until the selected node answers and is registered; on failure stop it.
await_node() {
  local pid start=$SECONDS
  pid="$(find_pid)" || { show_logs_tail; die "node $NODE_ID is not running"; }
  if ! wait_ready "$pid"; then
    show_logs_tail
    kill -0 "$pid" 2>/dev/null && stop_pid "$pid"
    rm -f "$PID_FILE"
    die "Kafka node $NODE_ID failed to become ready on $BOOTSTRAP"
  fi
  log "node $NODE_ID ready on $BOOTSTRAP after $((SECONDS - start))s (probe: $PROBE_KIND)"
}

lock_cluster() {
  mkdir -p "$CLUSTER_DIR"
  exec 9>"$CLUSTER_DIR/.lock"
  lock_fd 9 180 || die "another kafka.sh is operating on $CLUSTER_DIR"
}

node_arg() {
  [[ "${1:-}" =~ ^[0-9]+$ ]] && (( $1 >= 1 && $1 <= KAFKA_BROKERS )) ||
    die "a node number from 1 to $KAFKA_BROKERS is needed (got '${1:-}')"
}

cmd_up() {
  lock_cluster
  local i
  for ((i = 1; i <= KAFKA_BROKERS; i++)); do select_node "$i"; launch_node; done
  log "waiting up to ${KAFKA_READY_TIMEOUT}s for readiness ..."
  for ((i = 1; i <= KAFKA_BROKERS; i++)); do select_node "$i"; await_node; done
  ((KAFKA_BROKERS == 1)) || log "cluster of $KAFKA_BROKERS ready; bootstrap $ALL_BOOTSTRAP"
}

cmd_up_node() {
  node_arg "${1:-}"
  lock_cluster
  select_node "$1"
  launch_node
  await_node
}

down_node() {
  local pid
  if ! pid="$(find_pid)"; then
    log "node $NODE_ID not running"
    rm -f "$PID_FILE"
    return 0
  fi
  stop_pid "$pid"
  rm -f "$PID_FILE"
  log "node $NODE_ID stopped"
}

cmd_down() {
  local i
  for ((i = KAFKA_BROKERS; i >= 1; i--)); do select_node "$i"; down_node; done
}

cmd_down_node() {
  node_arg "${1:-}"
  select_node "$1"
  down_node
}

# kill -9 of one node (what a crash looks like to the rest of the cluster).
cmd_kill_node() {
  node_arg "${1:-}"
  select_node "$1"
  local pid
  pid="$(find_pid)" || die "node $NODE_ID is not running"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  rm -f "$PID_FILE"
  log "node $NODE_ID (pid $pid) killed"
}

# The node id of the active controller (the quorum leader), from the metadata quorum tool.
cmd_controller() {
  tool_java
  local out leader attempt
  # Retried: right after a node came back the quorum may not answer yet.
  for attempt in 1 2 3 4 5 6; do
    out="$(with_timeout 60 "${TOOL_JAVA[@]}" org.apache.kafka.tools.MetadataQuorumCommand \
      --bootstrap-server "$ALL_BOOTSTRAP" describe --status 2>&1)" || out=""
    leader="$(sed -n 's/^LeaderId:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$out")"
    if [[ -n "$leader" && "$leader" != "-1" ]]; then
      echo "$leader"
      return 0
    fi
    sleep $((attempt * 2))
  done
  die "the quorum did not name its leader: ${out:-no answer}"
}

cmd_status() {
  local pid i running=0 starting=0
  for ((i = 1; i <= KAFKA_BROKERS; i++)); do
    select_node "$i"
    if pid="$(find_pid)"; then
      if port_open "$NODE_PORT"; then
        echo "running: pid $pid, bootstrap $BOOTSTRAP, data $NODE_DIR"
        running=$((running + 1))
      else
        echo "starting (port not open yet): pid $pid, data $NODE_DIR"
        starting=$((starting + 1))
      fi
    else
      echo "stopped (data $NODE_DIR)"
    fi
  done
  ((running == KAFKA_BROKERS)) && return 0
  ((running + starting > 0)) && return 1
  return 3
}

cmd_reset() {
  cmd_down
  local i
  for ((i = 1; i <= KAFKA_BROKERS; i++)); do
    select_node "$i"
    # Only delete what this script creates, in case KAFKA_DATA_DIR points somewhere shared.
    rm -rf "$KRAFT_DIR" "$LOGS_DIR" "$CONFIG" "$CONFIG.tmp" "$CLIENT_CONFIG" "$PID_FILE" \
           "$NODE_DIR/.formatted-ports" "$NODE_DIR"/hs_err_pid*.log
    [[ "$NODE_DIR" == "$CLUSTER_DIR" ]] || rmdir "$NODE_DIR" 2>/dev/null || true
  done
  rm -f "$CLUSTER_DIR/.lock" "$CLUSTER_DIR/.cluster-id"
  rmdir "$CLUSTER_DIR" 2>/dev/null || true
  log "data wiped ($CLUSTER_DIR)"
}

cmd_logs() {
  [[ -f "$LOGS_DIR/server.log" ]] || die "no log yet at $LOGS_DIR/server.log"
  tail -n "${1:-100}" -F "$LOGS_DIR/server.log"
}

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

main() {
  local cmd="${1:-help}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    fetch) cmd_fetch "$@" ;;
    up | start) cmd_up ;;
    down | stop) cmd_down ;;
    up-node) cmd_up_node "$@" ;;
    down-node) cmd_down_node "$@" ;;
    kill-node) cmd_kill_node "$@" ;;
    controller) cmd_controller ;;
    bootstrap) echo "$ALL_BOOTSTRAP" ;;
    status) cmd_status ;;
    reset) cmd_reset ;;
    logs) cmd_logs "$@" ;;
    help | -h | --help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
