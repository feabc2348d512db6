"""All-pairs shortest paths beyond one GPU's memory: the sources split over the GPUs of one host
(beyond papers 000 and 004, which run on one GPU).

Every row of the distance matrix is an independent single-source problem, so the sources are
the natural unit to split: each GPU holds the whole graph (CSR / int4 layout: tens of MB) and
computes the rows of the sources it takes.  Two engines:

* ``bfs``  — paper 000's kernel 7, compacted (:class:`~kernels.graphs.apsp.bfs.BFSK7`): hop counts,
  uint8/16/32, many sources per launch;
* ``sssp`` — paper 004's task-parallel SSSP (:class:`~kernels.graphs.apsp.sssp.TaskParallelSSSP`):
  weighted costs (float32) or hop counts, S problems per launch.

Where the rows go (``rows``):

* ``"host"`` — gathered into one host array (the usual APSPResult);
* ``"file"`` — streamed batch by batch into a memory-mapped ``.npy`` (``out=PATH``; written beside
  the destination and renamed at the end), so the matrix may exceed one GPU *and* the host RAM —
  e.g. 400 000 vertices = 160 GB of uint8 — while a GPU only ever holds one batch;
* ``"device"`` (:func:`rows_on_devices`) — each GPU keeps its contiguous block of rows in its own
  memory (2 × 141 GB H200s hold 160 GB of uint8 rows); :class:`DeviceRows` reads rows or gathers.

For ``host`` and ``file`` the sources are handed out in batches through a shared cursor
(:class:`kernels.devices.WorkCursor`, one host thread per GPU), so a faster GPU takes more batches;
``device`` splits them into contiguous blocks.  On the NumPy backend the GPUs are *virtual*
(:mod:`kernels.devices`) and each batch is computed by the same CUDA source run on the host device
(:mod:`kernels.gpu.host`), as ``gpu-bfs`` / ``sssp`` run without a GPU: the split, the batches and the
gather are the same, and the rows equal the one-device rows exactly.
"""
from __future__ import annotations

import contextlib
import threading
import time

import numpy as np

from ... import devices as dv
from ...errors import InvalidParameter
from ..cuda import HostRunnable
from .bfs import BFSK7, BFSKernel7
from .core import APSPMethod, APSPResult, DistanceOverflow, hop_dtype, sentinel
from .sssp import TaskParallelSSSP, TaskParallelSSSPMethod, auto_S
from ..data.graph import CSR, Graph
from ...fileio import check_output_path, atomic_path

ENGINES = ("bfs", "sssp")
ROWS = ("host", "file")


def _hops(d: np.ndarray, dtype) -> np.ndarray:
    fin = np.isfinite(d)
    top = sentinel(dtype)
    if fin.any() and d[fin].max() >= top:
        raise DistanceOverflow(f"a hop count exceeds {np.dtype(dtype)}")
    return np.where(fin, d, top).astype(dtype)


class _Engine:
    """One device's solver: ``rows(sources) -> host array`` (len(sources) × n)."""

    def __init__(self, csr, backend, engine, weighted, dtype, block, S):
        self.csr, self.backend, self.weighted, self.dtype = csr, backend, weighted, dtype
        self.launches = 0
        self.kind = engine
        # the one-GPU solvers: on a GPU backend CUDA, else (a virtual GPU) the same CUDA source on the
        # host device (kernels.gpu.host), as gpu-bfs / sssp run without a GPU
        if engine == "bfs":
            self.bfs = BFSK7(csr, backend, dtype, block)
        else:
            self.sssp = TaskParallelSSSP(csr, backend, S or auto_S(csr.n, backend), weighted=weighted)

    def batch_size(self) -> int:
        if self.kind == "bfs":
            return self.bfs.batch_size()
        return self.sssp.S

    def device_rows(self, sources: np.ndarray):
        """Rows as a device array (BFS on a GPU), else a host array."""
        if self.kind == "bfs":
            out = self.bfs.run_batch(0, sources.size, None, sources)
            self.launches = self.bfs.launches
            return out
        cost, _ = self.sssp.run(np.ascontiguousarray(sources, np.int64))
        self.launches = self.sssp.launches
        return cost if self.weighted else _hops(cost, self.dtype)

    def rows(self, sources: np.ndarray) -> np.ndarray:
        r = self.device_rows(sources)
        return r.get() if hasattr(r, "get") else r


def _check(engine, gpus, rows, out):
    if engine not in ENGINES:
        raise InvalidParameter(f"unknown multi-GPU APSP engine {engine!r}: use {' or '.join(ENGINES)}")
    if rows not in ROWS:
        raise InvalidParameter(f"rows must go to {' or '.join(ROWS)} (got {rows!r})")
    if (rows == "file") != (out is not None):
        raise InvalidParameter("rows='file' needs out=PATH.npy (and out needs rows='file')")


def apsp_multi(csr: CSR, backend, engine: str = "bfs", gpus=2, weighted: bool | None = None, dtype="auto",
               batch: int | None = None, block: int = 256, S: int | None = None, sources=None,
               rows: str = "host", out=None, progress=None, cancel=None, name: str | None = None) -> APSPResult:
    """Rows of ``sources`` (default all) by ``engine`` on ``gpus`` GPUs (virtual on the CPU);
    ``rows='file'`` streams them into ``out`` (.npy, memory-mapped; the result's ``dist`` is that
    file opened read-only).  ``batch``: sources per cursor step (default: what the smallest device
    holds, at most a quarter of each device's share)."""
    csr = csr.csr() if isinstance(csr, Graph) else csr
    _check(engine, gpus, rows, out)
    weighted = (csr.weights is not None) if weighted is None else bool(weighted)
    if weighted and engine == "bfs":
        raise InvalidParameter("the bfs engine counts hops: use the sssp engine for weighted graphs")
    src = csr.source_array(sources)
    devices, notes = dv.resolve_devices(gpus, backend, "source blocks",
                                        "same batches and gather, the CUDA kernels run on the CPU")
    dt = np.dtype(np.float32) if weighted else hop_dtype(csr, dtype)
    be = backend if backend is not None and backend.is_gpu else None
    engines = dv.run_on_devices(be, devices, lambda r, d: _Engine(csr, be, engine, weighted, dt, block, S))
    if batch is None:
        share = -(-src.size // (4 * len(devices)))
        batch = max(1, min(min(e.batch_size() for e in engines), share))
    batch = int(batch)
    if batch < 1:
        raise InvalidParameter(f"batch must be ≥ 1 source (got {batch})")
    shape = (src.size, csr.n)
    if rows == "file":
        check_output_path(out, (".npy",), "rows file")
    cursor = dv.WorkCursor(src.size, batch)
    lock, done = threading.Lock(), [0]
    taken = [0] * len(devices)
    t0 = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if rows == "file":                     # a temporary .npy beside ``out``, renamed when complete
            tmp = stack.enter_context(atomic_path(out))
            dist = np.lib.format.open_memmap(tmp, mode="w+", dtype=dt, shape=shape)
        else:
            dist = np.empty(shape, dt)

        def work(rank, dev):
            eng = engines[rank]
            while (blk := cursor.take()) is not None:
                if cancel is not None and cancel():
                    raise InterruptedError("cancelled")
                a, b = blk
                dist[a:b] = eng.rows(src[a:b])
                taken[rank] += 1
                with lock:
                    done[0] += b - a
                    if progress is not None:
                        progress(done[0] / src.size)

        dv.run_on_devices(be, devices, work)
        if rows == "file":
            dist.flush()
            del dist
    if rows == "file":
        dist = np.load(out, mmap_mode="r")
    sec = time.perf_counter() - t0
    return APSPResult(dist, name or f"multi-{engine}", sec, sec, sum(e.launches for e in engines), weighted,
                      timings={"batches_per_device": taken, "devices": devices, "notes": notes},
                      params={"gpus": len(devices), "batch": batch, "rows": rows, "engine": engine,
                              **({"out": str(out)} if out is not None else {})})


# ------------------------------------------------------------------ rows kept on the devices
class DeviceRows:
    """The distance rows kept where they were computed: device g holds rows [y0, y1) of the
    sources in its own memory (a CuPy array; a NumPy array on a virtual GPU)."""

    def __init__(self, n: int, sources: np.ndarray, blocks: list, ranges: list, devices: list, backend):
        self.n, self.sources, self.blocks, self.ranges, self.devices = n, sources, blocks, ranges, devices
        self.backend = backend

    @property
    def shape(self) -> tuple[int, int]:
        return (self.sources.size, self.n)

    def row(self, i: int) -> np.ndarray:
        """Row i (of the sources' order) copied to the host."""
        for blk, (y0, y1), dev in zip(self.blocks, self.ranges, self.devices):
            if y0 <= i < y1:
                with dv.device_context(self.backend, dev):
                    r = blk[i - y0]
                    return r.get() if hasattr(r, "get") else np.array(r)
        raise IndexError(f"row {i} is not in 0 … {self.sources.size - 1}")

    def gather(self, out=None) -> np.ndarray:
        """All rows on the host (into ``out``, e.g. a memmap, when given)."""
        out = np.empty(self.shape, self.blocks[0].dtype) if out is None else out
        for blk, (y0, y1), dev in zip(self.blocks, self.ranges, self.devices):
            with dv.device_context(self.backend, dev):
                out[y0:y1] = blk.get() if hasattr(blk, "get") else blk
        return out

    def nbytes_per_device(self) -> list[int]:
        return [int(b.nbytes) for b in self.blocks]


def rows_on_devices(csr: CSR, backend, engine: str = "bfs", gpus=2, dtype="auto", sources=None,
                    batch: int | None = None, block: int = 256, S: int | None = None) -> DeviceRows:
    """Hop-count rows (``bfs``) or weighted costs (``sssp``) split into contiguous blocks of
    sources, each block computed and *kept* on its GPU (a matrix larger than one GPU's memory,
    when the GPUs together hold it)."""
    csr = csr.csr() if isinstance(csr, Graph) else csr
    if engine not in ENGINES:
        raise InvalidParameter(f"unknown multi-GPU APSP engine {engine!r}: use {' or '.join(ENGINES)}")
    weighted = csr.weights is not None and engine == "sssp"
    src = csr.source_array(sources)
    devices, _notes = dv.resolve_devices(gpus, backend, "source blocks", "same blocks, the CUDA kernels on the CPU")
    dt = np.dtype(np.float32) if weighted else hop_dtype(csr, dtype)
    be = backend if backend is not None and backend.is_gpu else None
    ranges = dv.split_rows(src.size, len(devices))

    def work(rank, dev):
        y0, y1 = ranges[rank]
        eng = _Engine(csr, be, engine, weighted, dt, block, S)
        step = int(batch or eng.batch_size())
        xp = be.xp if be is not None else np
        keep = xp.empty((y1 - y0, csr.n), dt)
        for a in range(y0, y1, step):
            b = min(y1, a + step)
            keep[a - y0:b - y0] = xp.asarray(eng.device_rows(src[a:b]))
        return keep

    blocks = dv.run_on_devices(be, devices, work)
    return DeviceRows(csr.n, src, blocks, ranges, devices, be)


# ------------------------------------------------------------------ registry
class MultiGPUAPSP(HostRunnable, APSPMethod):
    """Common options: ``gpus`` (GPUs; virtual on the CPU backend), ``batch`` (sources per cursor
    step), ``out`` (stream the rows into this .npy, memory-mapped), ``sources``.  Without a GPU the
    devices are virtual and each runs the one-GPU method's CUDA source on the host device
    (``host``): the host guard of that method applies to the whole run."""

    gpu, cpu = True, False
    engine = "bfs"
    #: the one-GPU method whose kernels every device runs (its host cost model is the run's)
    single: type[APSPMethod] = BFSKernel7

    def __init__(self, gpus=None, batch=None, out=None, sources=None):
        if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, (int, np.integer))
                                 or not 1 <= gpus <= dv.MAX_GPUS):
            raise InvalidParameter(f"gpus must be an integer from 1 to {dv.MAX_GPUS} (got {gpus!r})")
        if batch is not None and int(batch) < 1:
            raise InvalidParameter(f"batch must be ≥ 1 source (got {batch})")
        if out is not None:
            check_output_path(out, (".npy",), "rows file")
        super().__init__(gpus=gpus, batch=batch, out=out, sources=sources)

    def memory_bytes(self, csr, weighted):
        """Per GPU: the graph and one batch of rows (the matrix itself lives on the host or disk)."""
        n = csr.n
        rows = int(self.options["batch"] or 1)
        return 16 * (csr.arcs + 4 * n) // 4 + 12 * n + rows * n * (9 if self.engine == "sssp" else 1)

    def host_work(self, csr):
        """The one-GPU method's work for the same sources (the virtual GPUs share the host's cores)."""
        return self.single(sources=self.options["sources"]).host_work(csr)

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        self.check_host(csr, backend)
        o = self.options
        gpus = o["gpus"] or (max(2, dv.gpu_count(backend)) if backend is not None and backend.is_gpu else 2)
        return apsp_multi(csr, backend, self.engine, gpus, weighted, dtype, o["batch"], sources=o["sources"],
                          rows="file" if o["out"] else "host", out=o["out"], progress=progress, cancel=cancel,
                          name=self.name)


class MultiGPUBFS(MultiGPUAPSP):
    name = "multi-bfs"
    help = ("Beyond the papers: kernel 7 compacted (gpu-bfs) with the sources split over several GPUs in "
            "batches (one host thread per GPU), rows gathered on the host or streamed to a memory-mapped "
            ".npy (out) — a matrix larger than one GPU; virtual GPUs on the CPU")
    hops_only = True


class MultiGPUSSSP(MultiGPUAPSP):
    name = "multi-sssp"
    help = ("Beyond the papers: paper 004's task-parallel SSSP (sssp) with the sources split over several "
            "GPUs in batches, rows gathered or streamed to a memory-mapped .npy (out) — weighted or hops; "
            "virtual GPUs on the CPU")
    engine = "sssp"
    single = TaskParallelSSSPMethod
    host_costs = TaskParallelSSSPMethod.host_costs
