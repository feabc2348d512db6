"""``rng``: paper 001's Marsaglia lagged-Fibonacci generators headless (§6, Table 1).

Draws ``--count`` numbers with one approach of :mod:`kernels.rng.streams` (``seq``, ``threads``,
``gpu1``, ``gpu2``), reports the throughput next to paper 001's Table 1, the first numbers of
stream 0 and RANMAR's published test vector run through the approach's own code path.  Without
``--out`` the numbers are discarded as in the paper's timing; with ``--out FILE.npy`` they are
stored (float32, streams one after another) and written atomically after the run.  ``--gpus N``
splits gpu1/gpu2 over N GPUs (virtual GPUs on the CPU backend).  On the CPU backend gpu1/gpu2 run
their CUDA source on the CPU (host C++ compiler; JSON ``"emulated": true``), bit-identical to the
GPU, within a size guard of about 30 s.  Everything is checked before any
work; bad input gives one ``error:`` line and exit status 2.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from kernels import backend as bk
from kernels.errors import InvalidParameter
from kernels.fileio import atomic_path
from kernels.rng import streams as st

from .common import (NPY_EXTS, UsageError, check_output, finish, note, num_type, number, threads_type,
                     write_outputs)

NAME = "rng"
USES_BACKEND = True
#: the largest count: discarded (paper 001 Table 1 is 24e9) / stored in --out
MAX_COUNT = 10 ** 13
FIRST = 8


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents, help="Marsaglia lagged-Fibonacci RNG: throughput, first numbers, "
                                                   "test vector (paper 001 §6, Table 1)",
                       description="Draw numbers with one of paper 001's Marsaglia generator approaches, time "
                                   "them (numbers discarded, as Table 1) or store them (--out), and check "
                                   "RANMAR's published test vector.  Approaches: " +
                                   "; ".join(f"{n}: {c.help}" for n, c in st.APPROACHES.items()))
    p.add_argument("--approach", default="seq", choices=list(st.APPROACHES),
                   help="generator approach (default seq)")
    p.add_argument("--count", default=1_000_000, type=num_type(float, minimum=1, maximum=MAX_COUNT),
                   help="numbers to draw, e.g. 1e8 (default 1e6; paper 001 Table 1: 24e9)")
    p.add_argument("--seed", default=1, type=num_type(int, minimum=0), help="user seed, a non-negative integer (default 1)")
    p.add_argument("--gpus", default=1, type=num_type(int, minimum=1, maximum=64), help="GPUs for gpu1/gpu2 (virtual GPUs on the CPU backend; default 1)")
    p.add_argument("--streams", default=None, type=num_type(int, minimum=1),
                   help="streams: threads (default 4096) or gpu1 threads per GPU (default 30720, the paper's)")
    p.add_argument("--threads", default=None, type=threads_type(), help="host threads of the threads approach (default: the cores, at most one per 1024 streams)")
    p.add_argument("--out", metavar="FILE.npy", help="store the numbers (float32) and write them here")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def _count(text) -> int:
    x = number("--count", text, float, minimum=1, maximum=MAX_COUNT)
    if x != math.floor(x):
        raise UsageError(f"--count must be a whole number, got {text!r}")
    return int(x)


def run(a) -> int:
    check_output(a.out, NPY_EXTS, "--out")
    count = _count(a.count)
    seed = number("--seed", a.seed, int, minimum=0, maximum=2 ** 63 - 1)
    gpus = number("--gpus", a.gpus, int, minimum=1, maximum=64)
    streams = None if a.streams is None else number("--streams", a.streams, int, minimum=1, maximum=st.MAX_STREAMS)
    threads = None if a.threads is None else number("--threads", a.threads, int, minimum=1, maximum=1024)
    cls = st.APPROACHES[a.approach]
    if gpus > 1 and not cls.on_devices:
        raise UsageError(f"--gpus applies to gpu1 and gpu2 (not {a.approach}, which runs on the CPU)")
    if streams is not None and a.approach not in ("threads", "gpu1"):
        raise UsageError(f"--streams applies to threads and gpu1 ({a.approach} has one stream per device)")
    if threads is not None and a.approach != "threads":
        raise UsageError("--threads applies to the threads approach")
    if a.out and count * 4 > 0.5 * bk.host_available_memory():
        raise UsageError(f"--out would store {count:,} numbers ({count * 4 / 2**30:.1f} GiB float32), more than "
                         f"half the free memory: lower --count or leave --out out (numbers discarded)")
    be = bk.select(a.backend)
    try:
        gen = st.make(a.approach, seed, be, gpus, streams, threads)
        gen.check_count(count)            # the host path's size guard (CUDA source run on the CPU)
    except InvalidParameter as exc:
        raise UsageError(str(exc)) from None
    if not a.json:
        for text in ([be.notice] if be.notice else []) + gen.notes:
            note(text)
    vector = st.test_vector(gen)
    if a.out:
        sec, drawn, numbers = st.timed(gen, count, store=True)
        n = gen.per_stream(count)
        first = numbers[:min(FIRST, n)]
    else:
        first = gen.generate(gen.streams * FIRST).reshape(gen.streams, FIRST)[0]   # untimed: also warms up
        sec, drawn, numbers = st.timed(gen, count)
    rate = drawn / sec if sec > 0 else float("inf")
    paper = cls.paper_multi_seconds if len(gen.devices) == 2 else (cls.paper_seconds if len(gen.devices) == 1
                                                                   else None)
    out = dict(approach=a.approach, backend=be.name, devices=len(gen.devices),
               device_kind=("GPU" if gen.gpu else "virtual GPU") if cls.on_devices else "CPU",
               emulated=gen.emulated,
               streams=gen.streams, lag=gen.lag, seed=seed, count=count, drawn=drawn,
               stored=bool(a.out), seconds=sec, setup_seconds=gen.setup_seconds, numbers_per_second=rate,
               extrapolated_24e9_seconds=st.PAPER_COUNT / rate if rate > 0 else None,
               paper_table1_seconds=paper,
               paper_row=(cls.paper_multi_row if len(gen.devices) > 1 else cls.paper_row),
               first=[float(x) for x in first], test_vector_passed=vector["passed"],
               test_vector_path=vector["path"], notes=gen.notes)

    def save():
        with atomic_path(a.out) as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, numbers)
        return str(a.out)

    failed = write_outputs(out, [("out", save)] if a.out else [])
    finish(out, a.json, failed)
    if not vector["passed"]:
        print(f"error: RANMAR test vector FAILED on {vector['path']}: got {vector['got']}", file=sys.stderr)
        return 1
    return 0
