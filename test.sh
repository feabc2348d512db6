#!/usr/bin/env bash
# Run the whole test suite (sets everything up on first run).  Tests with a
# canvas run under Xvfb with real Mesa OpenGL (pytest-xvfb, one X server per
# worker); GPU tests skip with a reason when no CUDA GPU is present.
#
# The tests run in parallel (pytest-xdist): one worker per CPU core, at least
# two; GSE_TEST_WORKERS=N sets the count (0: one process, no workers; auto:
# pytest-xdist's choice).  Tests marked xdist_group("name") run in one worker,
# one after another.  Extra arguments go to pytest and win over these
# (e.g. `bash test.sh -n 0 tests/cli`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
workers="${GSE_TEST_WORKERS:-$(nproc 2>/dev/null || echo 2)}"
case "$workers" in
  ""|*[!0-9]*) ;;                            # "auto", "logical": pytest-xdist decides
  0) ;;
  1) workers=2 ;;
esac
exec .venv/bin/python -m pytest -n "$workers" --dist loadgroup "$@"
