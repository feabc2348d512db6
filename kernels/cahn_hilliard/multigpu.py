"""Cahn–Hilliard on several GPUs of one host: slab decomposition with halo exchange.

Paper 001 §4.6 (Alg. 7–8) splits a finite-difference field along its slowest
axis into contiguous slabs, one per GPU, each stored with halo rows of the
stencil's width, and swaps the halo rows after every kernel launch, staged
through host memory.  We do the same for any number of GPUs (rows in 2D, z
planes in 3D) and add two more exchange paths:

* ``host``: device → pinned host buffer → neighbour device (the paper's way),
  two cudaMemcpyAsync legs ordered by events, host buffers double-buffered;
* ``p2p``: cudaMemcpyPeerAsync straight into the neighbour's halo rows;
* ``nccl``: one ncclSend/ncclRecv group per pass (cupy.cuda.nccl).

**Halo width.**  A *pass* is one kernel application: an Euler step, one RK2
stage (radius R = 2: μ needs φ within 1 cell, F needs μ within 1 cell), or
kernel E's fused RK2 step (R = 4).  We keep halos of width H = R and exchange
once per pass, as the paper does (border of width 2, one swap per launch).
The alternative, H = 4 for the two-pass RK2 with one exchange per step, trades
one latency-bound exchange per step for two redundant rows of stage-1 work per
side; with kernel E that trade is already made inside one launch.

**Overlap** (paper 001 Alg. 8).  Per pass each slab launches, on a side
stream, two small *border* kernels over views [0, 3H) and [L−H, L+2H) of its
padded rows that yield its H top and H bottom rows, sends them, while the
*bulk* kernel on the main stream computes all L rows (its outer H rows are
wrong — the view ends there — and are then patched from the border results).
The exchange is thus hidden behind the bulk kernel.

**Bit for bit.**  Every cell is written by the same kernel instantiation as on
one GPU, from the same neighbour values (halo rows hold exactly the
neighbour's cells), so the multi-GPU field equals the single-GPU field bit for
bit.  Slabs at the edge of a mirror or fixed field have no halo on that side:
the kernel's own boundary rule applies there, as on one GPU; periodic fields
wrap, the first and last slab being neighbours.

**k steps per exchange** (ours, issue 38): with kernel E and ``steps_per_pass`` k > 1 (resolved and
lowered by :mod:`.temporal` as on one GPU) the halo is 4k rows and a pass is k fused RK2 steps
(``ch_fused_*_tb``, bit for bit k single steps): one exchange per k steps.  The border views
[0, 3H) and [L−H, L+2H) still yield exact middle rows (a cell k steps on depends on cells within
4k = H rows); a step count not divisible by k runs its remainder as single-step passes on the same
halos (radius 4 ≤ H).

**CUDA graphs** (ours, beyond the paper): the eager path issues ~12 API calls
per slab and pass from Python, which at 8192² costs as much as the GPU work;
``graph=True`` captures a block of steps across all devices' streams into one
CUDA graph and replays it.

Without CuPy the same scheduling runs on "virtual GPUs" (NumPy slabs, synchronous copies; the
array reference stencil, or kernels A–E as CUDA source run on the CPU through the host device of
:mod:`kernels.gpu`): it demonstrates and tests the decomposition on machines without a GPU.

This module is the stepper driver; the slabs and device operations live in
:mod:`.slabs`, the three halo exchanges in :mod:`.halo`.
"""
from __future__ import annotations

# Imports inside functions: CuPy's NCCL, so that CuPy stays optional (loaded when the multi-GPU stepper allocates).
import numpy as np

# cupy.cuda.nccl is imported where the nccl exchange is set up (CuPy stays optional)
from ..errors import GridTooLarge, InvalidParameter
from . import stencil, temporal
from .cuda_stepper import CudaStepper

from .. import devices as _devices
from ..devices import VIRTUAL_ENV, gpu_count, gpus_text, offered_gpus, split_rows  # noqa: F401
from .halo import (EXCHANGE_NAMES, check_nccl, enable_peer_access, exchange_host,
                   exchange_nccl, exchange_p2p)
from .params import EXCHANGES, GPU_VARIANTS, MAX_GPUS  # noqa: F401  (MAX_GPUS: re-exported)
from .slabs import CudaOps, HostOps, Slab, layout_slabs

__all__ = ["MultiGPUStepper", "resolve_devices", "DEFAULT_GRAPH", "GRAPH_STEPS", "EXCHANGE_NAMES",
           "Slab",
           # re-exported from kernels.devices and .params (callers import them from here)
           "VIRTUAL_ENV", "gpu_count", "gpus_text", "offered_gpus", "split_rows", "EXCHANGES",
           "MAX_GPUS"]

#: capture CUDA graphs by default (make_stepper; falls back to eager stepping if capture fails)
DEFAULT_GRAPH = True
#: steps per captured CUDA graph (even, so buffer roles return to their start)
GRAPH_STEPS = 20


# --------------------------------------------------------------------- devices
# the device list and virtual GPUs are shared with the other multi-GPU workloads (kernels.devices)
def resolve_devices(requested, backend) -> tuple[list[int], list[str]]:
    """:func:`kernels.devices.resolve_devices` for slabs (notes name the halo exchange)."""
    return _devices.resolve_devices(requested, backend, "slabs",
                                    "same decomposition and halo exchange, NumPy arrays")


class MultiGPUStepper:
    """Explicit Euler / RK2 / kernel E on slabs over ``devices``; see the module docstring.

    ``step(phi, n)`` follows the single-GPU Stepper interface: it scatters φ
    (on the display device) to the slabs when φ is new or was changed
    (``field_changed()``), advances n steps and gathers the slabs back into φ.
    ``advance(n)`` steps without the gather (benchmarks).
    """

    name = "multigpu"
    buffers = 3

    def __init__(self, params, backend, devices=(0, 1), exchange: str = "p2p",
                 overlap: bool = True, graph: bool = False):
        if params.integrator == "spectral":
            raise InvalidParameter("the multi-GPU decomposition runs the explicit steppers "
                                   "(Euler, RK2, kernel E); the spectral stepper is single-GPU")
        if exchange not in EXCHANGES:
            raise InvalidParameter(f"exchange must be one of {', '.join(EXCHANGES)} (got {exchange!r})")
        self.params = params
        self.backend = backend
        self.xp = backend.xp
        self.ops = CudaOps(backend) if backend.is_gpu else HostOps(backend)
        self.overlap = overlap
        self.notes: list[str] = []
        self.exchange = exchange
        if exchange == "nccl":
            self.exchange = check_nccl(backend, list(devices), self.notes)
        # CUDA graphs: GPU kernels A–E only (the array reference allocates while it runs)
        self.graph = bool(graph) and backend.is_gpu and params.variant != "reference"
        self.devices = list(devices)
        #: RK2 steps per pass and exchange (kernel E: params.steps_per_pass resolved, else 1); the halo is
        #: sized for this k, and a device that holds less lowers it after the build
        self.pass_steps = self._requested_k(params)
        self.slabs: list[Slab] = []
        self._phi_ref = None
        self._stale = True
        self._graphs: dict = {}
        self._nccl = None
        self._warm = False
        self._role = [0, 1, 2]      # role (0 φ, 1 out, 2 tmp) -> physical buffer index
        self._parity = 0
        self._dtype = None
        self._shape = None

    # ------------------------------------------------------------- set-up
    @property
    def emulated(self) -> bool:
        """The slabs run kernels A–E as CUDA source on the CPU (virtual GPUs on the host device)."""
        return not self.ops.gpu and self.params.variant in GPU_VARIANTS

    @staticmethod
    def _requested_k(params) -> int:
        """k of the passes: kernel E's ``steps_per_pass`` (:func:`.temporal.requested`, lowered by
        :func:`.temporal.fits` for the grid), else 1."""
        if params.variant != "E":
            return 1
        return temporal.fits(params, temporal.requested(params), 8, None)

    @property
    def radius(self) -> int:
        """Stencil radius of one pass = halo width H (4·k for kernel E's k fused steps, else 2)."""
        return temporal.halo(self.pass_steps) if self.params.variant == "E" else stencil.HALO

    def set_params(self, params) -> None:
        if params.variant != self.params.variant or params.integrator != self.params.integrator or \
                (self.slabs and self._requested_k(params) > temporal.halo(self.pass_steps) // 4):
            raise InvalidParameter("changing the kernel variant, integrator or a wider steps per pass needs a new "
                                   "stepper")
        self.params = params
        self._graphs.clear()   # graphs bake the coefficients into their kernel arguments
        for s in self.slabs:
            if hasattr(s.op, "set_params"):
                s.op.set_params(params)
        if self.slabs:
            self._k = self._pass_k()

    def steps_per_pass(self, dtype=None) -> int:
        """RK2 steps per pass and halo exchange (kernel E; 1 for the other variants)."""
        return getattr(self, "_k", None) or min(self.pass_steps, self._requested_k(self.params))

    def _make_op(self, dev):
        if self.params.variant == "reference":
            return None
        with self.ops.device(dev):
            op = CudaStepper(self.params, self.backend)
        op.tex_cache_size = 64
        return op

    def _allocate(self, shape, dtype):
        """Build slabs on self.devices, dropping devices that lack memory (with a note)."""
        devices = list(self.devices)
        most = max(1, shape[0] // (2 * self.radius))
        if len(devices) > most:
            devices = devices[:most]
            self.notes.append(f"a {shape[0]}-row field gives at most {most} slabs of ≥ "
                              f"{2 * self.radius} rows (twice the halo); running on "
                              f"{gpus_text(devices)}")
        while True:
            slabs = layout_slabs(shape[0], devices, self.radius, self.params.boundary == "periodic")
            short = self._short_of_memory(slabs, shape, dtype)
            if short is None:
                try:
                    self._build(slabs, shape, dtype)
                    break
                except MemoryError as exc:      # cupy's OutOfMemoryError included
                    bad = getattr(exc, "_slab_device", None)
                    short = (bad if bad is not None else devices[-1], str(exc))
                    self._release(slabs)
            dev, why = short
            if len(devices) == 1:
                raise GridTooLarge(f"the field does not fit on GPU {dev}: {why}")
            devices.remove(dev)
            self.notes.append(f"GPU {dev} is out of memory ({why}); running on {gpus_text(devices)}")
        self.devices = devices
        self.slabs = slabs
        self._shape, self._dtype = tuple(shape), np.dtype(dtype)
        self._k = self._pass_k()
        if self.exchange == "nccl":
            from cupy.cuda import nccl
            self._nccl = nccl.NcclCommunicator.initAll(devices)

    def _pass_k(self) -> int:
        """k of the passes as run: :attr:`pass_steps` (and the current params' request, at most that),
        lowered to what every slab's device holds (its shared memory)."""
        k = min(self.pass_steps, self._requested_k(self.params))
        for s in self.slabs:
            if k > 1 and s.op is not None:
                k = min(k, s.op.steps_per_pass(self._dtype))
        return max(1, k)

    def _short_of_memory(self, slabs, shape, dtype):
        row = int(np.prod(shape[1:])) * np.dtype(dtype).itemsize
        for s in slabs:
            need = row * (s.padded * self.buffers + 6 * self.radius) * 1.05
            if self.params.variant == "reference":
                need *= 3   # whole-array temporaries of the reference stencil
            free = self.ops.free_bytes(s.device)
            if need > free:
                return s.device, f"needs {need / 2**30:.2f} GiB, {free / 2**30:.2f} GiB free"
        return None

    def _build(self, slabs, shape, dtype):
        ops, H = self.ops, self.radius
        rest = tuple(shape[1:])
        nbuf = 2 if (self.params.variant == "E" or self.params.integrator == "euler") else 3
        if ops.gpu and len(set(s.device for s in slabs)) > 1:
            enable_peer_access(self.xp, sorted(set(s.device for s in slabs)), self.exchange, self.notes)
        for s in slabs:
            try:
                s.bufs = [ops.zeros(s.device, (s.padded,) + rest, dtype) for _ in range(nbuf)]
                if s.up is not None:
                    s.scr_top = ops.zeros(s.device, (3 * H,) + rest, dtype)
                if s.down is not None:
                    s.scr_bot = ops.zeros(s.device, (3 * H,) + rest, dtype)
            except MemoryError as exc:
                exc._slab_device = s.device
                raise
            s.main, s.side = ops.new_stream(s.device), ops.new_stream(s.device)
            s.ev_border, s.ev_main, s.ev_sent = (ops.new_event(s.device) for _ in range(3))
            if self.exchange == "host" and (s.up is not None or s.down is not None):
                s.host_buf = [(ops.pinned((H,) + rest, dtype), ops.pinned((H,) + rest, dtype))
                              for _ in range(2)]
            s.op = self._make_op(s.device)
        while len(self._role) > nbuf:
            self._role.pop()

    def _release(self, slabs):
        for s in slabs:
            s.bufs, s.scr_top, s.scr_bot, s.views = [], None, None, {}

    # ------------------------------------------------------ scatter / gather
    def scatter(self, phi) -> None:
        """Copy the global field φ (host or any device) into the slabs, halos included."""
        shape, dtype = tuple(phi.shape), phi.dtype
        if not self.slabs or shape != self._shape or dtype != self._dtype:
            self._release(self.slabs)
            self._allocate(shape, dtype)
        self._sync_from(phi)
        n = shape[0]
        phys = self._role[0]
        for s in self.slabs:
            pieces = [(s.bufs[phys][s.pt:s.pt + s.rows], s.y0, s.y1)]   # (slab rows, global rows)
            if s.pt:
                g0 = (s.y0 - s.pt) % n
                pieces.append((s.halo_above(phys), g0, g0 + s.pt))
            if s.pb:
                pieces.append((s.halo_below(phys), s.y1 % n, s.y1 % n + s.pb))
            with self.ops.device(s.device):
                for dst, g0, g1 in pieces:
                    self.ops.copy(dst, phi[g0:g1], s.main, self._peer(s, phi))
                self.ops.record(s.ev_main, s.main)    # the first pass's borders wait for this
        self._join_to(phi)
        self._phi_ref = phi
        self._stale = False

    def gather(self, phi) -> None:
        """Copy the slabs' interiors into the global field φ (on the display device)."""
        self._sync_from(phi)
        phys = self._role[0]
        for s in self.slabs:
            with self.ops.device(s.device):
                self.ops.copy(phi[s.y0:s.y1], s.bufs[phys][s.pt:s.pt + s.rows], s.main,
                              self._peer(s, phi, to_phi=True))
        self._join_to(phi)

    def _on_gpu(self, a) -> bool:
        return self.ops.gpu and isinstance(a, self.xp.ndarray)

    def _peer(self, s, phi, to_phi=False):
        if not self._on_gpu(phi):
            return None
        d = phi.device.id
        return (d, s.device) if to_phi else (s.device, d)

    def _sync_from(self, phi):
        """Slab streams wait for pending work on φ's device (its current stream)."""
        if self._on_gpu(phi):
            with self.ops.device(phi.device.id):
                self._fork(self.xp.cuda.get_current_stream(), phi.device.id)

    def _join_to(self, phi):
        """φ's current stream waits for every slab stream (φ ready for its consumers)."""
        if not self.ops.gpu:
            return
        if not self._on_gpu(phi):
            self.synchronize()
            return
        with self.ops.device(phi.device.id):
            self._converge(self.xp.cuda.get_current_stream())

    def field_changed(self) -> None:
        """φ was modified in place outside the stepper: scatter it before the next step."""
        self._stale = True

    def synchronize(self) -> None:
        if self.ops.gpu:
            for s in self.slabs:
                s.main.synchronize()
                s.side.synchronize()

    # ------------------------------------------------------------ stepping
    def step(self, phi, n: int = 1):
        if self._stale or phi is not self._phi_ref:
            self.scatter(phi)
        self.advance(n)
        self.gather(phi)
        return phi

    def _passes(self, k: int = 1):
        """(kind, src role, base role, coef, out role) of one time step (kernel E: of one pass of ``k``
        fused steps; its coef slot carries k)."""
        p = self.params
        if p.variant == "E":
            return [("fused", 0, None, k, 1)]
        if p.integrator == "euler":
            return [("stage", 0, 0, p.dt, 1)]
        return [("stage", 0, 0, 0.5 * p.dt, 2), ("stage", 2, 0, p.dt, 1)]

    def advance(self, n: int) -> None:
        """n time steps on the slabs (asynchronous on GPUs)."""
        if not self.slabs:
            raise InvalidParameter("scatter a field before stepping")
        k = getattr(self, "_k", 1)
        per = GRAPH_STEPS * k                      # steps of one graph replay
        if self.graph and n >= per + 2 * k and not self._graphs and not self._warm:
            for _ in range(2):      # load every kernel eagerly before the first capture
                self._step_once(k)
            n -= 2 * k
        if self.graph and n >= per:
            try:
                g = self._graph()
            except Exception as exc:   # capture unsupported: eager from now on
                self.graph = False
                self.notes.append(f"CUDA graph capture failed ({exc.__class__.__name__}: {exc}); "
                                  "stepping eagerly")
            else:
                s0 = self.slabs[0]
                self._converge(s0.main)                  # pending eager work before the graph
                with self.ops.device(s0.device):
                    for _ in range(n // per):
                        g.launch(s0.main)
                self._fork(s0.main, s0.device)           # later eager work after it
                self._rearm_events()
                n %= per
        for kk in temporal.plan(n, k):
            self._step_once(kk)

    def _step_once(self, k: int = 1):
        """One pass of ``k`` steps (k > 1: kernel E's fused steps) and its exchange."""
        self._warm = True
        for kind, src, base, coef, out in self._passes(k):
            self._pass(kind, self._role[src], None if base is None else self._role[base],
                       coef, self._role[out])
        self._role[0], self._role[1] = self._role[1], self._role[0]

    def _graph(self):
        k = getattr(self, "_k", 1)
        key = (tuple(self._role), self._parity, k)
        g = self._graphs.get(key)
        if g is not None:
            return g
        ops, s0 = self.ops, self.slabs[0]
        role, parity = list(self._role), self._parity
        with ops.device(s0.device):
            # relaxed: a kernel's first use on a device loads its module during the capture
            s0.main.begin_capture(self.xp.cuda.runtime.streamCaptureModeRelaxed)
        try:
            self._fork(s0.main, s0.device)   # every other stream joins the capture
            for s in self.slabs:   # the first pass waits on these: record them in the capture
                with ops.device(s.device):
                    ops.record(s.ev_main, s.main)
                    ops.record(s.ev_sent, s.side)
            for _ in range(GRAPH_STEPS):
                self._step_once(k)
            self._converge(s0.main)
        finally:
            with ops.device(s0.device):
                g = s0.main.end_capture()
            self._role, self._parity = role, parity   # replay starts from the same roles
            self._rearm_events()
        self._graphs[key] = g
        return g

    def _rearm_events(self):
        """Record the per-slab events eagerly again: an event last recorded inside a stream
        capture is a graph node, and eager streams may not wait on it."""
        for s in self.slabs:
            with self.ops.device(s.device):
                self.ops.record(s.ev_main, s.main)
                self.ops.record(s.ev_border, s.side)
                self.ops.record(s.ev_sent, s.side)

    def _fork(self, source, dev):
        """Every slab stream but ``source`` (a stream of device ``dev``) waits for the work
        issued so far on ``source``."""
        ev = self.ops.new_event(dev)
        with self.ops.device(dev):
            self.ops.record(ev, source)
        for s in self.slabs:
            for st in (s.main, s.side):
                if st is not source:
                    self.ops.wait(st, ev)

    def _converge(self, target):
        """``target`` waits for the work issued so far on every other slab stream."""
        for s in self.slabs:
            for st in (s.main, s.side):
                if st is not target:
                    ev = self.ops.new_event(s.device)
                    with self.ops.device(s.device):
                        self.ops.record(ev, st)
                    self.ops.wait(target, ev)

    # ------------------------------------------------------------ one pass
    def _launch(self, s, kind, src, base, coef, out):
        if kind == "fused":                  # coef: the pass's fused steps k
            if coef and coef > 1:
                s.op.fused_steps(src, out, int(coef))
            else:
                s.op.fused_step(src, out)
        elif s.op is None:
            stencil.update(src, base, coef, self.params, out=out)
        else:
            s.op.update(src, base, coef, out)

    def _pass(self, kind, src, base, coef, out):
        ops, H = self.ops, self.radius
        slabs = self.slabs
        split = self.overlap and len(slabs) > 1
        # A: border kernels on the side stream, bulk kernel on the main stream
        for s in slabs:
            L, pt = s.rows, s.pt
            with ops.device(s.device):
                if s.up is not None or s.down is not None:
                    ops.wait(s.side, s.ev_main)            # previous pass complete here
                    if self.exchange == "p2p":             # halos pushed by the neighbours
                        for nb in {s.up, s.down} - {None}:
                            ops.wait(s.side, slabs[nb].ev_sent)
                    if not split:
                        ops.wait(s.main, s.ev_main)
                with ops.stream(s.side):
                    if s.up is not None:
                        self._launch(s, kind, s.view(src, 0, pt + 2 * H),
                                     None if base is None else s.view(base, 0, pt + 2 * H),
                                     coef, s.scr_top)
                    if s.down is not None:
                        lo = pt + L - 2 * H
                        self._launch(s, kind, s.view(src, lo, pt + L + s.pb),
                                     None if base is None else s.view(base, lo, pt + L + s.pb),
                                     coef, s.scr_bot)
                ops.record(s.ev_border, s.side)
                if not split:   # no overlap: the bulk waits for the borders and the exchange
                    ops.wait(s.main, s.ev_border)
                if split:
                    self._bulk(s, kind, src, base, coef, out)
        # B: halo exchange
        if self.exchange == "nccl" and len(slabs) > 1:
            exchange_nccl(ops, self._nccl, slabs, out, H, self._dtype, self._shape)
        elif self.exchange == "host":
            exchange_host(ops, slabs, out, self._parity)
        else:
            exchange_p2p(ops, slabs, out)
        # C: (bulk without overlap,) patch the border rows, mark the pass complete
        for s in slabs:
            with ops.device(s.device):
                if not split:
                    if self.exchange != "p2p":
                        ops.wait(s.main, self._side_done(s))
                    else:
                        for nb in {s.up, s.down} - {None}:
                            ops.wait(s.main, slabs[nb].ev_sent)
                    self._bulk(s, kind, src, base, coef, out)
                if s.up is not None or s.down is not None:
                    ops.wait(s.main, s.ev_border)
                    o = s.bufs[out]
                    if s.up is not None:
                        ops.copy(o[s.pt:s.pt + H], s.top_rows(), s.main)
                    if s.down is not None:
                        e = s.pt + s.rows
                        ops.copy(o[e - H:e], s.bottom_rows(), s.main)
                ops.record(s.ev_main, s.main)
        self._parity ^= 1

    def _side_done(self, s):
        ev = s.ev_sent
        self.ops.record(ev, s.side)
        return ev

    def _bulk(self, s, kind, src, base, coef, out):
        L, pt = s.rows, s.pt
        with self.ops.stream(s.main):
            self._launch(s, kind, s.view(src, pt, pt + L),
                         None if base is None else s.view(base, pt, pt + L),
                         coef, s.view(out, pt, pt + L))

    # ------------------------------------------------------------ read access
    def describe(self) -> str:
        devs = ", ".join(str(d) for d in self.devices)
        kind = "GPUs" if self.ops.gpu else "virtual GPUs"
        return (f"{len(self.slabs) or len(self.devices)} {kind} [{devs}], "
                f"{EXCHANGE_NAMES[self.exchange]}, halo {self.radius}")
