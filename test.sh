#!/usr/bin/env bash
# Run the whole test suite (sets everything up on first run).  Tests with a
# canvas run under Xvfb with real Mesa OpenGL (pytest-xvfb); GPU tests skip
# with a reason when no CUDA GPU is present.  Extra arguments go to pytest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
exec .venv/bin/python -m pytest "$@"
