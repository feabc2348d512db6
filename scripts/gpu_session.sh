#!/usr/bin/env bash
# One batched GPU-machine session (device tool): GPU tests, the SBML Test Suite on the GPU
# runtimes and the Flint benchmark, every log under $OUT.
#
#   carry [".gpukit", ".gpudata"] and run:
#     bash scripts/gpu_session.sh [tests] [tests-KEYWORD] [suite-sample] [suite] [bench-quick] [bench] [bench-flat] [compile]
#                                 [graphview] [pfhub]
#
# .gpudata/shared.tar.xz holds ../shared/{sbml-test-suite,models} (made here by
# `tar cJf main/.gpudata/shared.tar.xz shared/sbml-test-suite shared/models` from the parent folder),
# since ../shared does not travel.  Each stage has its own time limit so the call ends in time.
set -u
OUT=${OUT:-/tmp/gse-out}
mkdir -p "$OUT"
source .gpukit/setup.sh || exit 1
[ -d ../shared/sbml-test-suite ] || tar xJf .gpudata/shared.tar.xz -C .. || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
stages=${*:-tests suite-sample bench-quick}
for s in $stages; do
  t0=$(date +%s)
  case $s in
    tests)
      timeout ${T_TESTS:-300} python -m pytest -m gpu -q -rfE --tb=short -p no:cacheprovider \
        ${PYTEST_ARGS:-} --durations=12 ${TEST_FILES:-} 2>&1 | tee "$OUT/pytest.log" | tail -60 ;;
    tests-*)  # tests-<keyword>: a subset
      timeout ${T_TESTS:-300} python -m pytest -m gpu -q -rfE --tb=short -p no:cacheprovider -k "${s#tests-}" \
        2>&1 | tee "$OUT/pytest-${s#tests-}.log" | tail -60 ;;
    suite-sample)
      for rt in ts is; do
        timeout ${T_SAMPLE:-90} python main.py flint-suite --sample --engine $rt --timeout 60 \
          --json "$OUT/suite-sample-$rt.json" 2>&1 | tail -25
      done ;;
    suite)   # in chunks, so that a stage cut by its time limit still returns what it finished; every
             # chunk's JSON and log go to $OUT at once (a stalled chunk still tells how far it got)
      for rt in ${SUITE_RUNTIMES:-ts is}; do
        end=$(( $(date +%s) + ${T_SUITE:-200} ))
        for ch in ${CHUNKS:-1-460 461-920 921-1380 1381-1821}; do
          left=$(( end - $(date +%s) )); [ $left -gt 5 ] || break
          timeout $left python main.py flint-suite $ch ${SUITE_FLAG:---engine} $rt --timeout ${CASE_TIMEOUT:-60} \
            --workers ${WORKERS:-16} ${SUITE_ARGS:-} \
            --json "$OUT/suite-$rt-$ch.json" > "$OUT/suite-$rt-$ch.log" 2>&1
          tail -1 "$OUT/suite-$rt-$ch.log"
        done
        python - "$rt" "$OUT" <<'PY'
import glob, json, os, sys
rt, out = sys.argv[1], sys.argv[2]
parts = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(out, f"suite-{rt}-*.json")))]
cases = [c for p in parts for c in p["cases"]]
tot = {k: sum(c["status"] == k for c in cases) for k in ("passed", "failed", "refused")}
tot["total"] = len(cases)
json.dump({"runtime": rt, "wall_seconds": sum(p["wall_seconds"] for p in parts), "totals": tot,
           "chunks": len(parts), "cases": cases}, open(os.path.join(out, f"suite-{rt}.json"), "w"))
print(rt, tot, "wall", round(sum(p["wall_seconds"] for p in parts), 1), "s in", len(parts), "chunks")
for c in cases:
    if c["status"] == "failed":
        print("  failed", c["case"], c["message"][:160])
PY
      done ;;
    bench-quick)
      timeout ${T_BENCH:-150} python benchmarks/flint.py --quick 2>&1 | tail -60 ;;
    compile)   # thesis Table 5.8 style: TS source size and NVRTC time, unify off vs on
      timeout ${T_COMPILE:-240} python benchmarks/flint_compile.py ${COMPILE_ARGS:-} 2>&1 | tee "$OUT/compile.log" | tail -12 ;;
    bench-flat)
      timeout ${T_BENCH:-150} python benchmarks/flint.py --only flat ${FLAT_ARGS:-} 2>&1 | tee "$OUT/bench-flat.log" | tail -30 ;;
    bench)
      timeout ${T_BENCH:-400} python benchmarks/flint.py 2>&1 | tee "$OUT/bench.log" | tail -80 ;;
    graphview)   # issue 32: force layout, frame time at 1 M / 10 M, click to colours (peers in the same run)
      timeout ${T_GRAPHVIEW:-360} python benchmarks/graph_view.py --json "$OUT/graph_view.json" 2>&1 \
        | tee "$OUT/graph_view.log" | tail -60
      cp -f graph_view_bench.md "$OUT/" 2>/dev/null ;;
    pfhub)       # issue 39: PFHub benchmark 1a/1b (and 1c) to equilibrium or t = 1e6
      timeout ${T_PFHUB:-300} python benchmarks/pfhub.py ${PFHUB_ARGS:-} 2>&1 | tee "$OUT/pfhub.log" | tail -60 ;;
    *) echo "unknown stage $s" ;;
  esac
  echo "== stage $s: $(( $(date +%s) - t0 )) s"
done
