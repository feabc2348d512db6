#!/usr/bin/env bash
# Launch GPU Science Explorer (sets everything up on first run).
# Extra arguments go to main.py, e.g.  bash run.sh ch --size 256 --json
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
if [ $# -eq 0 ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "[run] no display found: starting the app inside Xvfb (xvfb-run)" >&2
  exec xvfb-run -a -s "-screen 0 1600x1000x24 +extension GLX" .venv/bin/python main.py
fi
exec .venv/bin/python main.py "$@"
