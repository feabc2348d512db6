"""Flint translator (TS) compile cost with and without bytecode unification — thesis Table 5.8 style.

Paper 004 §5.5.2 / Table 5.8: a naive translation (one C expression per bytecode, *Base*) makes the
generated source so large that compiling it takes longer than the simulation (the thesis's compiler
failed on Mix and LR-1000); unifying the bytecodes of a phase that share an opcode sequence and
reading their operands from a table passed at run time (*Unify* + *Export*) shrinks it.  Here, per
flattened thesis model, the TS source of the thesis's thread-per-expression mapping with the
compiler option ``unify`` off and on: its size, the time to generate it, and the time to compile it
— with NVRTC (the runtime's compiler, options as the runtime uses) when a CUDA GPU is present, else
with the host's g++ -O2 on the same source with the CUDA keywords stubbed (a proxy: the trend, not
the GPU's numbers).  The thread-per-cell TS source (one function for the whole model) is shown too.

Usage:  python benchmarks/flint_compile.py [--models wang lr-100 …] [--timeout 120]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

from kernels.flint import CompileOptions, compile_model, load_model  # noqa: E402
from kernels.flint.runtimes.host_c import HOST_PRELUDE  # noqa: E402
from kernels.flint.runtimes import NVRTC_OPTIONS, ts_phase_build, ts_source  # noqa: E402




def _compile_nvrtc(src: str, timeout: float) -> float | None:
    """NVRTC compile time of ``src`` in a child process (so a runaway compile can be given up),
    with an empty CuPy kernel cache so that an earlier compile of the same source is not reused."""
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "k.cu")
        with open(f, "w") as fh:
            fh.write(src)
        code = ("import sys, time, cupy as cp\n"
                "src = open(sys.argv[1]).read()\n"
                "opts = tuple(sys.argv[2:])\n"
                "t0 = time.perf_counter(); cp.RawModule(code=src, options=opts).compile()\n"
                "print(time.perf_counter() - t0)\n")
        env = dict(os.environ, CUPY_CACHE_DIR=os.path.join(d, "cache"), CUPY_CACHE_IN_MEMORY="0")
        try:
            r = subprocess.run([sys.executable, "-c", code, f, *NVRTC_OPTIONS], capture_output=True,
                               text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return None
        if r.returncode:
            raise RuntimeError(r.stderr[-300:])
        return float(r.stdout.split()[-1])


def _compile_gxx(src: str, timeout: float) -> float | None:
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "k.cpp")
        with open(f, "w") as fh:
            fh.write(HOST_PRELUDE + src.replace('extern "C"', ""))
        t0 = time.perf_counter()
        try:
            r = subprocess.run(["g++", "-std=c++14", "-O2", "-w", "-c", f, "-o", os.path.join(d, "k.o")],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        if r.returncode:
            raise RuntimeError(r.stderr[:300])
        return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=["luo_rudy_1991", "wang", "rybak", "lr-ring", "lr-100", "mix"])
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per compile before it is given up")
    ap.add_argument("--skip-cell", action="store_true",
                    help="leave out the thread-per-cell source's compile (minutes for the large models)")
    ap.add_argument("--quick", action="store_true", help="the LR-1991 cell only, no thread-per-cell compile")
    a = ap.parse_args()
    if a.quick:
        a.models, a.skip_cell = ["luo_rudy_1991"], True
    from kernels import backend as bk
    gpu, why = bk.gpu_available()
    if gpu:
        compiler, comp = f"NVRTC ({bk.select('gpu').describe()})", _compile_nvrtc
    elif shutil.which("g++"):
        compiler, comp = "host g++ -O2, CUDA keywords stubbed (no GPU here: a proxy for NVRTC)", _compile_gxx
    else:
        print(f"no compiler: {why}; g++ not found", file=sys.stderr)
        return 2
    lines = [f"# Flint TS compile cost, unify off vs on — compiler: {compiler}", "",
             "| model | ODEs | source KB off → on | operand table words (on) | generate s off → on | "
             "compile s off → on | cell-mapping source KB / compile s |",
             "|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)

    def fmt(x):
        return "timeout" if x is None else f"{x:.2f}"
    for name in a.models:
        m = load_model(name)
        row = {}
        for unify in (False, True):
            prog = compile_model(m, options=CompileOptions(unify=unify))
            t0 = time.perf_counter()
            src, table = ts_phase_build(prog)
            gen = time.perf_counter() - t0
            row[unify] = (len(src) / 1024, gen, comp(src, a.timeout), int(table.size))
        cell = ts_source(compile_model(m))
        cell_t = None if a.skip_cell else comp(cell, a.timeout)
        off, on = row[False], row[True]
        cell_s = "not run" if a.skip_cell else fmt(cell_t)
        line = (f"| {name} | {m.n_states} | {off[0]:.0f} → {on[0]:.0f} | {on[3]} | {off[1]:.2f} → {on[1]:.2f} | "
                f"{fmt(off[2])} → {fmt(on[2])} | {len(cell) / 1024:.0f} / {cell_s} |")
        lines.append(line)
        print(line, flush=True)
    save_markdown("flint_compile.md", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
