#!/bin/sh
# `make demo`: the example sessions imported, the demo shop served on a free loopback port, and
# `tui-agent scrape` with the offline planner exploring it live in the TUI (no model needed).
# Safe to run twice: imports skip what is there, the shop picks a new port each time.
set -eu
BIN=.venv/bin
DB=.demo/sessions.db
mkdir -p .demo
"$BIN/tui-agent" --db "$DB" sessions import --skip-existing sessions/*.jsonl
LOG=.demo/demo-site.log
"$BIN/tui-agent" demo-site >"$LOG" 2>&1 &
SITE=$!
trap 'kill "$SITE" 2>/dev/null || true' EXIT INT TERM
URL=""
for _ in $(seq 100); do
    URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$LOG" | head -n 1 || true)
    [ -n "$URL" ] && break
    sleep 0.1
done
if [ -z "$URL" ]; then
    echo "demo: the demo site did not start; see $LOG" >&2
    exit 1
fi
"$BIN/tui-agent" --db "$DB" scrape "$URL/panel" --task "Extract 20 items" \
    --planner offline --save-recipe .demo/panel-recipe.json
