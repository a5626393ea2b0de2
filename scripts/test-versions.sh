#!/usr/bin/env bash
# The Python versions beside the one the whole suite ran on (.venv): for each, install from
# uv.lock into a fresh environment, start `mnemo serve`, make an add searchable through the
# SDK (scripts/smoke.py), and run the unit tests and the embedded-Postgres tests.
# Prints which versions were covered and how. In CI (CI=true) a supported version without
# an interpreter fails the run; elsewhere it is reported as not covered.
# An interpreter is found as python3.X on PATH, then pyenv's newest 3.X; PYTHON_3_12=/path
# (and so on) names one.
set -uo pipefail
cd "$(dirname "$0")/.."
SUPPORTED="3.11 3.12 3.13"
UV="$PWD/.venv/bin/uv"
main_version="$(.venv/bin/python -c 'import platform; print(platform.python_version())')"
WORK="$(mktemp -d /tmp/mnemo-versions.XXXXXX)"
chmod 755 "$WORK"  # run as root, the embedded Postgres (user pgserver) must reach it
trap 'rm -rf "$WORK"' EXIT
declare -a report=("$main_version: the whole suite (.venv, from uv.lock): ${MAIN_SUITE_RESULT:-see above}")
status=0

find_python() {
  local minor="$1" var="PYTHON_${1/./_}" candidate version
  if [ -n "${!var:-}" ]; then "${!var}" -c '' 2>/dev/null && echo "${!var}"; return; fi
  if "python$minor" -c '' 2>/dev/null; then command -v "python$minor"; return; fi
  if command -v pyenv >/dev/null; then
    version="$(pyenv versions --bare 2>/dev/null | grep -E "^${minor//./\\.}\.[0-9]+$" | sort -V | tail -1)"
    candidate="$(pyenv root)/versions/$version/bin/python$minor"
    if [ -n "$version" ] && [ -x "$candidate" ]; then echo "$candidate"; return; fi
  fi
  return 1
}

free_port() {
  .venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

serve_and_smoke() {
  local venv="$1" log="$2" port pid ok=1
  port="$(free_port)"
  MNEMO_AUTH_DISABLED=true "$venv/bin/mnemo" serve --port "$port" --data-dir "$WORK/data-$3" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 180); do
    curl -fs -o /dev/null "http://127.0.0.1:$port/health" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  "$venv/bin/python" scripts/smoke.py "http://127.0.0.1:$port" && ok=0
  kill -TERM "$pid" 2>/dev/null
  wait "$pid" || true
  [ "$ok" = 0 ] || tail -20 "$log" >&2
  return "$ok"
}

for minor in ${TEST_PYTHON_VERSIONS:-$SUPPORTED}; do  # TEST_PYTHON_VERSIONS="3.13": only those
  [ "${main_version%.*}" = "$minor" ] && continue
  if ! python="$(find_python "$minor")"; then
    report+=("$minor: NOT COVERED (no interpreter found; set PYTHON_${minor/./_}=/path/to/python$minor)")
    [ "${CI:-}" = true ] && status=1
    continue
  fi
  version="$("$python" -c 'import platform; print(platform.python_version())')"
  venv="$WORK/venv-$minor"
  echo "== Python $version ($python): install from uv.lock, serve, SDK add -> search, tests"
  steps=()
  if "$python" -m venv "$venv" &&
    UV_PROJECT_ENVIRONMENT="$venv" "$UV" sync -q --locked --all-extras --python "$venv/bin/python"; then
    steps+=("installed from uv.lock")
  else
    report+=("$version: FAILED to install from uv.lock"); status=1; continue
  fi
  if serve_and_smoke "$venv" "$WORK/serve-$minor.log" "$minor"; then
    steps+=("mnemo serve + an add searchable through the SDK")
  else
    steps+=("FAILED: mnemo serve + SDK add -> search"); status=1
  fi
  if "$venv/bin/python" -m pytest tests/unit tests/integration/test_embedded_postgres.py \
    tests/integration/test_legacy_data_dir.py tests/integration/test_local_embedder.py \
    -q -p no:cacheprovider --basetemp "$WORK/pytest-$minor"; then
    steps+=("unit, embedded-Postgres and local-embedder tests passed")
  else
    steps+=("FAILED: unit, embedded-Postgres or local-embedder tests"); status=1
  fi
  joined="${steps[0]}"
  for step in "${steps[@]:1}"; do joined+=", $step"; done
  report+=("$version: $joined")
done

echo
echo "== Python versions covered =="
for line in "${report[@]}"; do echo "  $line"; done
exit $status
