#!/usr/bin/env bash
# The whole suite. Embedded Postgres is started by the test fixtures; the Kafka broker is
# started here (jars fetched from Maven Central once, then cached) and always stopped.
# Then the other supported Python versions (scripts/test-versions.sh; SKIP_PYTHON_VERSIONS=1
# skips them on a developer's machine).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

# The lock must match pyproject.toml, and .venv must be exactly the lock.
if ! .venv/bin/uv lock --check || ! .venv/bin/uv sync --locked --all-extras --check -q; then
  echo "uv.lock and pyproject.toml (or .venv) disagree: run 'make lock' (docs/guides/install.md)" >&2
  exit 1
fi

# A private temp root per run: pytest prunes old numbered dirs under the shared default,
# which breaks a suite running beside another checkout's.
BASETEMP="$(mktemp -d /tmp/mnemo-pytest.XXXXXX)"

status=0
# The docs site, in strict mode: a broken link or reference fails the suite (and CI).
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$BASETEMP/site" || status=$?
$PY -m pytest tests -m "not kafka" -q -p no:cacheprovider --basetemp "$BASETEMP/main" || status=$?

# The TypeScript client (clients/typescript) against a live `mnemo serve`, where Node 20+ is.
if command -v node >/dev/null && command -v npm >/dev/null \
  && node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
  (
    cd clients/typescript
    npm ci --no-audit --no-fund --loglevel=error
    npm run --silent check:generated
    npm run --silent build
    MNEMO_BIN="$PWD/../../.venv/bin/mnemo" npm test --silent
  ) || status=$?
else
  echo "scripts/test.sh: no Node 20+, the TypeScript client's tests did not run" >&2
fi

if [ -d tests/kafka ] && [ -f deploy/kafka/kafka.sh ]; then
  export KAFKA_DATA_DIR="${KAFKA_DATA_DIR:-$(mktemp -d /tmp/mnemo-kafka.XXXXXX)}"
  # KAFKA_PORT (default 9092) lets several checkouts run their suites side by side; the
  # Kafka suite connects to it (and may restart this broker, which it manages).
  export KAFKA_PORT="${KAFKA_PORT:-9092}"
  trap 'bash deploy/kafka/kafka.sh down || true; rm -rf "$BASETEMP"' EXIT
  bash deploy/kafka/kafka.sh up
  # The Kafka suite and the Kafka half of the behaviour suite (its embedded half ran above).
  $PY -m pytest tests/kafka tests/behaviour -m "kafka and not kafka_cluster" -q -p no:cacheprovider \
    --basetemp "$BASETEMP/kafka" || status=$?
  bash deploy/kafka/kafka.sh down || true
  # The cluster phase: a 3-broker KRaft cluster (topics replicated 3, min ISR 2) on the
  # ports after the single broker's, and tests/kafka/cluster under load (broker kill -9,
  # rolling restarts, a Postgres outage). SKIP_KAFKA_CLUSTER=1 skips it.
  if [ -d tests/kafka/cluster ] && [ "${SKIP_KAFKA_CLUSTER:-}" != 1 ]; then
    (
      export KAFKA_BROKERS=3 KAFKA_PORT=$((KAFKA_PORT + 10)) KAFKA_HEAP=-Xmx384m
      export KAFKA_DATA_DIR="$BASETEMP/kafka-cluster-data"
      trap 'bash deploy/kafka/kafka.sh down || true' EXIT
      bash deploy/kafka/kafka.sh up
      $PY -m pytest tests/kafka/cluster -m kafka_cluster -q -p no:cacheprovider \
        --basetemp "$BASETEMP/kafka-cluster"
    ) || status=$?
  fi
fi
if [ "${SKIP_PYTHON_VERSIONS:-}" != 1 ]; then
  suite=passed
  [ "$status" = 0 ] || suite=FAILED
  MAIN_SUITE_RESULT="$suite" bash scripts/test-versions.sh || status=$?
fi
exit $status
