#!/usr/bin/env bash
# Regenerate the screenshots of docs/console.md from a run of the console's browser tests
# (real data: a live gateway, embedded Postgres, headless Chromium). The pictures test adds
# runs over a few minutes first, so the pipeline-health charts show more than one minute.
# Usage: bash scripts/console-screenshots.sh [minutes of runs, default 4]
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/libs:$PWD" HF_HUB_OFFLINE=1
export MNEMO_SCREENSHOT_SPREAD_MINUTES="${1:-4}"
rm -rf build/screenshots
.venv/bin/python -m pytest tests/console/test_browser.py tests/console/test_browser_pictures.py \
  -q -p no:cacheprovider
for name in login-help memories search memory-history memory-versions memory-rule runs \
  run-failed group-invalid group-conflict health health-charts timeline; do
  cp "build/screenshots/$name.png" "docs/console/$name.png"
done
echo "copied $(ls docs/console/*.png | wc -l) screenshots to docs/console/"
