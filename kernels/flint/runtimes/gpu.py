"""What the GPU runtimes (``is``, ``ts``) share: CuPy arrays, the integrator's launch sequence, the
thread-per-expression phase launches, device-side sampling and blow-up check.  Sources are compiled
with NVRTC through the GPU layer (:func:`.cuda.cuda_module`: CuPy, once per device and source) with
:data:`~.codegen.NVRTC_OPTIONS` (no FMA contraction).

Cell mapping: one thread integrates one member/cell (blocks of :attr:`block_size`).  Expression
mapping (thesis §5.5.2, Fig. 5.8): one launch a phase, grid (members, warps), 32 threads a block,
then ``flint_update`` (flint_common.cuh) applies the integrator — or, by default (issue 23), the
fused kernel of :mod:`.fused`: a chunk of steps in one launch, barriers between the phases, the same
bits.

Many steps a launch (issue 23): a runtime whose kernel takes a whole chunk of steps for cells without
neighbour coupling (TS: :func:`.codegen.ts_loop_source`; IS: :func:`.is_loop.is_loop_source`) sets
:attr:`GpuRuntime._loop` and supplies its arguments (:meth:`GpuRuntime._loop_args`); the driver here
(:meth:`GpuRuntime.run_loop`) is shared: it times each launch with CUDA events (:mod:`kernels.gpu.timing`) and sizes the next to
about :attr:`~GpuRuntime.LAUNCH_S` seconds (a caller streaming chunks still gets ≥ 30 updates a
second), tunes the block size between launches of :attr:`~GpuRuntime.TUNE_STEPS` steps (issue 38: a
short search, :class:`.tuning.BlockSearch`, remembered per model, GPU and engine in
:class:`.tuning.TuningCache`, so that a new Simulation of a tuned model starts at its block size and
launch length), and hands back the samples the kernel recorded.  Those are copied to the host asynchronously: each launch's
samples go on a second stream into page-locked host memory while the next launch runs, and one
array holds a call's samples, so :meth:`GpuRuntime.collect` hands it on without a copy (up to
:attr:`~GpuRuntime.PINNED_MAX_BYTES` a call; more stays in device buffers, copied at the end)."""
from __future__ import annotations

# Imports inside functions: CuPy (and cupyx), so that they stay optional (loaded when a GPU runtime builds).
import numpy as np

# CuPy (cupy, cupyx) is imported inside the methods that use it: the app runs without it.
from ... import backend as bk, gpu
from ...errors import BackendUnavailable
from .base import RK4_STAGES, Runtime
from .fused import FusedPhases
from .memory import samples_in
from .tuning import BlockSearch, TuningCache, cache_key


class GpuRuntime(Runtime):
    """Base of the CUDA runtimes: subclasses set :meth:`_compile` (kernels, sources) and the
    argument lists :meth:`_cell_args` / :meth:`_phase_args`."""
    device = "gpu"
    #: steps a block size is timed over while tuning
    TUNE_WINDOW = 100
    #: the many-steps kernel: seconds a launch aims at (≥ 30 launches a second, each a chance to
    #: stream), steps a launch while the block size is tuned, device bytes of recorded samples a
    #: launch at most
    LAUNCH_S = 1.0 / 30.0
    TUNE_STEPS = 256
    OUT_MAX_BYTES = 1 << 28
    #: the many-steps driver copies a call's samples asynchronously into page-locked host memory
    #: (a second stream) when they take at most this many bytes; page-locked memory is scarce, so a
    #: larger recording keeps device buffers, copied once at the end
    PINNED_MAX_BYTES = 1 << 26
    async_copies = True
    #: expression mapping: run chunks of steps through the fused kernel (:mod:`.fused`; False: one
    #: launch a phase and an update launch a stage, the thesis's own scheme); its barrier: "block",
    #: "grid" or None (:func:`.fused.choose`: grid for coupled cells); what its blocks keep in shared
    #: memory (:data:`.fused.SHARED`; None: as much as fits)
    fused_enabled = True
    fused_mode: str | None = None
    fused_shared: str | bool | None = None
    #: take the grid barrier for a member whose widest phase has more warps than this (None: never)
    fused_grid_warps: int | None = None
    #: remember tunings across Simulations (:class:`.tuning.TuningCache`; False: search every time)
    tune_cache = True

    @classmethod
    def unavailable(cls) -> str | None:
        ok, why = bk.gpu_available()
        return None if ok else f"runtime {cls.name} needs a GPU: {why}"

    @classmethod
    def memory(cls, n_states, n_functions, n, n_pvar, mapping, itemsize):
        return 0, itemsize * n * (5 * n_states + n_pvar + (n_functions if mapping == "expression" else 0))

    def build(self, prog, dtype) -> None:
        why = self.unavailable()
        if why:
            raise BackendUnavailable(why)
        import cupy as cp
        self.cp = cp
        self.prog, self.dtype = prog, np.dtype(dtype)
        real = "double" if self.dtype == np.float64 else "float"
        self.d_dslot = cp.asarray(np.array(prog.deriv_slots, dtype=np.int32))
        self._kernel = None
        self._loop = None
        self._compile(cp, real)
        if self.mapping == "expression":
            self.V = cp.zeros((max(prog.n_slots, 1), self.n), dtype=self.dtype)
        if self._kernel is not None:
            self._kernel.compile()
        self.y = cp.zeros((prog.n_states, self.n), dtype=self.dtype)
        self.y2 = cp.empty_like(self.y)
        self.P = cp.asarray(prog.pvar_values.astype(self.dtype)) if prog.pvar_values.size \
            else cp.zeros((1, self.n), dtype=self.dtype)
        self.K = cp.asarray(prog.consts.astype(self.dtype))
        self.k1 = cp.zeros_like(self.y)
        self.k2 = cp.zeros_like(self.y)
        self.acc = cp.zeros_like(self.y)
        self._fused = None
        if self.mapping == "expression" and self.fused_enabled:
            self._fused = FusedPhases(self, self._fused_source, *self._fused_code(), mode=self.fused_mode,
                                      shared_v=self.fused_shared)

    def _fused_source(self, mode: str, threads: int, shared_v: int) -> str:
        """The CUDA source holding ``flint_fused`` (:mod:`.fused`) for this runtime."""
        raise NotImplementedError

    def _fused_code(self) -> tuple:
        """(bytecode, lane index) device arrays the fused kernel reads (the interpreter's), or Nones."""
        return None, None

    def _compile(self, cp, real: str) -> None:
        raise NotImplementedError

    # --- many steps a launch (issue 23) -----------------------------------------------------------
    def _loop_ready(self, fn) -> None:
        """Set up the shared driver for the compiled many-steps kernel ``fn`` (:attr:`_loop`): the
        first launches tune the block size from 32 up to the largest its registers allow."""
        self._loop = fn
        self._loop_steps = self.TUNE_STEPS
        self._rec_key = None
        self._search = None
        try:
            self._loop_max_block = min(1024, int(fn.max_threads_per_block)) // 32 * 32
        except Exception:                        # noqa: BLE001 (a CuPy that does not say: stay small)
            self._loop_max_block = 256
        self.block_size = 32

    def _loop_args(self, common: list) -> tuple:
        """The many-steps kernel's arguments around ``common`` (P, y, step0, k, dt, n, every, rec,
        n_rec, col, n_col, out — the layout of ``flint_ts_loop`` and ``flint_is_loop``)."""
        raise NotImplementedError

    def _loop_shared_bytes(self, block: int) -> int:
        """Dynamic shared memory a launch of the many-steps kernel needs for blocks of ``block``."""
        return 0

    def loops(self) -> bool:
        return self._loop is not None or getattr(self, "_fused", None) is not None

    def run_loop(self, k, dt, step0, every, record, cells) -> list:
        """``k`` steps in launches of the many-steps kernel (the expression mapping: the fused kernel's
        own driver, :mod:`.fused`); the samples are host arrays (page-locked) or device buffers."""
        if self._fused is not None:
            return self._fused.run_loop(k, dt, step0, every, record, cells)
        cp, n = self.cp, self.n
        if self._tuning and getattr(self, "_search", None) is None:
            self.tune_begin()
        key = (tuple(record), np.asarray(cells).tobytes())
        if key != self._rec_key:
            col = np.full(n, -1, dtype=np.int32)
            col[np.asarray(cells, dtype=np.int64)] = np.arange(len(cells), dtype=np.int32)
            self._d_rec = cp.asarray(np.asarray(record, dtype=np.int32).reshape(-1))
            self._d_col = cp.asarray(col)
            self._rec_key = key
        n_rec, n_col = len(record), len(cells)
        per_sample = max(1, n_rec * n_col * self.dtype.itemsize)
        max_steps = max(1, self.OUT_MAX_BYTES // per_sample) * every
        out, step, end = [], int(step0), int(step0) + int(k)
        total = samples_in(step, int(k), every)
        host = self._pinned((total, n_rec, n_col)) if total and n_rec and n_col and \
            total * per_sample <= self.PINNED_MAX_BYTES else None
        held, row = [], 0                        # device buffers until their copies are done
        while step < end:
            kl = min(end - step, self._loop_steps, max_steps)
            m = samples_in(step, kl, every)
            buf = cp.empty((max(m, 1), max(n_rec, 1), max(n_col, 1)), dtype=self.dtype)
            bs = self.block_size
            args = self._loop_args([self.P, self.y, np.int64(step), np.int32(kl), np.float64(dt), np.int32(n),
                                    np.int64(every), self._d_rec, np.int32(n_rec), self._d_col, np.int32(n_col),
                                    buf])
            sw = gpu.timing.Stopwatch("cuda").start()
            self._loop_launch(((n + bs - 1) // bs,), (bs,), args, self._loop_shared_bytes(bs), step, kl, dt, every,
                              n_rec, n_col, buf)
            sw.stop()
            if host is not None and m:            # this launch's samples, while the next one runs
                self._copy_stream.wait_event(sw.end_event)
                buf.get(stream=self._copy_stream, out=host[row:row + m], blocking=False)
                held.append(buf)
                row += m
            self.adapt_launch(kl, sw.ms)
            if host is None:
                out.extend(buf[j, :n_rec, :n_col] for j in range(m))
            step += kl
        if host is not None:
            self._copy_stream.synchronize()
            self._block = host
            return list(host)
        return out

    def _pinned(self, shape):
        """A page-locked host array for a call's samples (None: asynchronous copies off)."""
        if not self.async_copies:
            return None
        import cupyx
        if getattr(self, "_copy_stream", None) is None:
            self._copy_stream = self.cp.cuda.Stream(non_blocking=True)
        return cupyx.empty_pinned(shape, dtype=self.dtype)

    def _loop_launch(self, grid, block, args, shared, step, kl, dt, every, n_rec, n_col, buf) -> None:
        """One launch of the many-steps kernel (a runtime with other kernels for some cases, e.g. the
        translator's grid-synchronised lines, dispatches here on the chunk's ``step``/``kl``)."""
        self._loop(grid, block, args, shared_mem=shared)

    # --- block-size tuning (issue 38: a short search, cached) ---------------------------------------
    def _device_id(self) -> str:
        """The GPU as a tuning's key sees it: name, compute capability, driver version."""
        cp = self.cp
        dev = cp.cuda.Device()
        props = cp.cuda.runtime.getDeviceProperties(dev.id)
        name = props.get("name", b"?")
        name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
        return f"{name}|sm_{dev.compute_capability}|driver {cp.cuda.runtime.driverGetVersion()}"

    def _tune_key(self) -> str | None:
        """:func:`.tuning.cache_key` of this engine's many-steps kernel, or None (no source, or a
        device that does not say what it is: not cached)."""
        src = getattr(self, "loop_source", None)
        if not src:
            return None
        try:
            device = self._device_id()
        except Exception:                        # noqa: BLE001 (an unnamed device: tune, do not cache)
            return None
        engine = "/".join(map(str, (self.name, self.mapping, self.integrator, self.dtype, type(self).__name__,
                                    getattr(self, "loop_registers", None), self._loop_max_block,
                                    getattr(self, "coupled", None) is not None)))
        return cache_key(src, getattr(self, "loop_options", ()), device, engine, self.n)

    def tune_begin(self) -> None:
        """Before the first launch: the cached tuning (block size, history, launch length) when there
        is one, else a :class:`.tuning.BlockSearch` over the first launches."""
        self._tune_cache = TuningCache() if self.tune_cache else TuningCache(None)
        self._tune_cache_key = self._tune_key()
        self._tune_store = None
        hit = self._tune_cache.get(self._tune_cache_key, self._loop_max_block) if self._tune_cache_key else None
        if hit:
            self.block_size = hit["block"]
            self.block_history[:] = hit["history"]
            if hit["steps"]:
                self._loop_steps = hit["steps"]
            self._tuning = False
            self._search = False
            self.tuned_from = "cache"
            return
        self._search = BlockSearch(self._loop_max_block, self.n, self.TUNE_WINDOW)
        self.block_size = self._search.block
        self.tuned_from = "search"

    def adapt_launch(self, kl: int, ms: float) -> None:
        """After a launch of ``kl`` steps that took ``ms``: while tuning, the search's next block size
        (:class:`.tuning.BlockSearch`: one launch a candidate, thesis §5.6's windows); then the next
        launch's length, about :attr:`LAUNCH_S` seconds (at most 4× the last).  The tuning is stored
        when the search ends, and again with the launch length once that has settled."""
        if self._tuning:
            if kl < self.TUNE_STEPS:             # the tail of a chunk: too short to judge
                return
            if not getattr(self, "_search", None):
                self.tune_begin()
                if not self._tuning:
                    return
            s = self._search
            s.record(ms / kl)
            self.block_history[:] = s.history    # ms per TUNE_WINDOW steps, as the stepped tuning records
            self.block_size = s.block
            if s.done:
                self._tuning = False
                self._tune_store = self._tune_cache_key
                if self._tune_store:
                    self._tune_cache.put(self._tune_store, s.best, 0, s.history)
            return
        want = int(kl * self.LAUNCH_S * 1000.0 / ms) if ms > 0 else 4 * kl
        self._loop_steps = max(1, min(4 * kl, want))
        if getattr(self, "_tune_store", None) and want <= 4 * kl:      # the launch length has settled
            self._tune_cache.put(self._tune_store, self.block_size, self._loop_steps, self.block_history)
            self._tune_store = None

    # --- launches ------------------------------------------------------------------------------
    def _launch(self, y, kin, cdt, t, dt, mode, w, kout, yout):
        if self.mapping == "expression":
            return self._launch_phases(y, kin, cdt, t, dt, mode, w, kout, yout)
        bs = self.block_size
        grid = ((self.n + bs - 1) // bs,)
        self._kernel(grid, (bs,), self._cell_args(y, kin, cdt, t, dt, mode, w, kout, yout))

    def _launch_phases(self, y, kin, cdt, t, dt, mode, w, kout, yout):
        """Thesis mapping: one launch a phase, grid (members, warps), 32 threads a block."""
        lay, f64, i32 = self.prog.layout, np.float64, np.int32
        for p, kern in enumerate(self._phase_kernels):
            if lay.phase_warps[p] == 0:
                continue
            grid = (self.n, lay.phase_warps[p])
            kern(grid, (32,), self._phase_args(p, y, kin, cdt, t))
        bs = 128
        self._update_kernel(((self.n + bs - 1) // bs,), (bs,),
                            (self.V, self.d_dslot, y, f64(dt), i32(mode), f64(w), kout, self.acc, yout,
                             i32(self.prog.n_states), i32(self.n)))

    def _step(self, dt, t):
        if self.integrator == "euler":
            self._launch(self.y, None, 0.0, t, dt, 0, 0.0, None, self.y2)
        else:
            kin, kout = None, self.k1
            for j, (c, w) in enumerate(RK4_STAGES):
                mode = 1 if j == 0 else (3 if j == 3 else 2)
                self._launch(self.y, kin, c * dt, t + c * dt, dt, mode, w, kout, self.y2)
                kin, kout = kout, (self.k2 if kout is self.k1 else self.k1)
        self.y, self.y2 = self.y2, self.y

    def before_step(self, step: int) -> None:
        """Hook before each step (the translator's block-size tuning)."""

    def advance(self, k: int, dt: float, step0: int) -> None:
        if self._fused is not None:
            return self._fused.advance(k, dt, step0)
        for step in range(int(step0), int(step0) + int(k)):
            self.before_step(step)
            self._step(dt, step * dt)

    def info(self) -> dict:
        tuned = {"tuned_from": self.tuned_from} if getattr(self, "tuned_from", None) else {}
        return {**super().info(), **tuned, **(self._fused.info() if self._fused is not None else {})}

    # --- states --------------------------------------------------------------------------------
    def state(self) -> np.ndarray:
        return self.cp.asnumpy(self.y)

    def set_state(self, y) -> None:
        y = np.asarray(y, dtype=self.dtype).reshape(self.prog.n_states, self.n)
        self.y = self.cp.asarray(y)

    def collect(self, samples: list, n_record: int) -> np.ndarray:
        """The samples stacked on the host: the page-locked array of the last many-steps call as it
        is when the samples are exactly its rows (no copy), else stacked (host rows, or device rows
        copied once)."""
        cp = self.cp
        if not samples:
            return np.zeros((0, n_record, 0))
        block = getattr(self, "_block", None)
        self._block = None
        if isinstance(samples[0], np.ndarray):
            if block is not None and len(samples) == len(block) and all(a.base is block for a in samples):
                return block
            return np.stack(samples)
        return cp.asnumpy(cp.stack(samples))

    def finite(self) -> bool:
        return bool(self.cp.all(self.cp.isfinite(self.y)))

    def synchronize(self) -> None:
        self.cp.cuda.Device().synchronize()
