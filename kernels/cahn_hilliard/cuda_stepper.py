"""Hand-written CUDA kernels for the Cahn–Hilliard stencil: paper 000's A–D plus a fused E.

* A: global memory, one thread per cell (16×16 blocks in 2D, 32×4×2 in 3D: paper 000's
  "rectangles"; ``params.block_layout="strips"``: 256 consecutive cells of one row, its "strips").
* B: shared memory.  2D default: a 68×68 tile swept by columns in registers
  ("sweep"); 3D default: the block marches along z with φ and μ plane rings in
  shared memory ("march", μ computed once per cell).  Also available: the
  paper's 16×16-thread / 12×12-writer tile (2D) and a generic 20×12×12 tile (3D)
  ("paper"), and a y-march in 2D; ``params.tile`` chooses (auto = the defaults).
* C: texture-object reads (2D pitched texture over the array when its row pitch
  is aligned, else a 1D texture over linear memory; no copies).
* D: texture reads into shared memory, then as B (same layouts).
* E: fused RK2 (ours): one launch per RK2 step — one global read and one write per
  cell per step.  2D default: a warp march (``fused_impl="wmarch"``: each warp a strip of
  128 columns marching down the rows with φ, μ, φ*, μ* windows in registers, x neighbours by
  warp shuffles, no shared memory or barriers); also a shared tile with register sweeps
  (``"sliding"``) and tile loops (``"generic"``).  3D: a z-march with rings of φ, μ, φ* and
  μ* planes: default ``fused_impl3d="zreg"`` (each thread 2 or 4 x-adjacent cells with their z
  windows in registers, only in-plane neighbours through shared memory, one barrier per plane);
  ``"march"`` (plane rings in shared memory, four barriers per plane); ``"generic"`` (3D tiles).
  Temporal blocking (``params.steps_per_pass``, :mod:`.temporal`): k = 2–4 RK2 steps per launch with a
  4k halo — 2D the k-step warp march ``ch_fused_wmarch2d_tb``, 3D (and 2D ``"generic"``) the shared tile
  ``ch_fused_tb`` (``cuda/ch_temporal.cuh``) — bit for bit k single steps.

All kernels use the single stencil/boundary definition in ``cuda/ch_stencil.cuh``.
Parameters m, b, u, K, dx, dt and boundary_value are kernel arguments (read from
``self.params`` at every call); boundary mode, dimension, dtype and tile shapes
are template arguments.  Every instantiation is compiled once per device by the GPU layer
(:mod:`kernels.gpu`) and recorded in :mod:`kernels.launches` as ``"CH <expr>"``.

**Devices.**  On the GPU backend the kernels run on the GPU (CuPy arrays); on the CPU backend the
*same CUDA source* runs on the host (``kernels.gpu.device("host")``: the host C++ compiler after a
CUDA prelude, NumPy arrays) — "CUDA source run on the CPU".  The host result equals the NumPy
reference RK2 / Euler step to rounding (the same operations; the GPU may contract a·b + c into
FMAs, the host does not), and :func:`check_host_size` refuses grids the host would need more than
about :data:`HOST_SECONDS` s per run for.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional (the CUDA source also runs on the host backend).
from importlib.resources import files

import numpy as np

# CuPy (texture objects) is imported inside the GPU-only methods: the module imports without it

from .. import gpu as layer
from .. import launches
from ..errors import BackendUnavailable, GridTooLarge
from . import temporal
from .base import Stepper

_CUDA_DIR = files(__package__) / "cuda"        # package data (importlib.resources)
_BC = {"periodic": 0, "mirror": 1, "fixed": 2}
READ_GLOBAL, READ_TEX1D, READ_TEX2D = 0, 1, 2

#: threads per block of variant A (point kernel) per dimension
POINT_BLOCK = {2: (16, 16, 1), 3: (32, 4, 2)}
#: threads per block of A/C with ``block_layout="strips"``: 256 consecutive cells of one row
STRIP_BLOCK = {2: (256, 1, 1), 3: (256, 1, 1)}
#: (threads BX, BY, BZ, outputs OX, OY, OZ) of the shared-tile kernels B/D
TILE_SHAPE = {2: (16, 16, 1, 12, 12, 1), 3: (16, 8, 8, 16, 8, 8)}
#: outputs (OX, OY) per block of the 2D register-sweep stage kernel of B/D (4·OX threads)
SWEEP_SHAPE = (64, 64)
#: __launch_bounds__ minimum blocks per SM of the sweep kernel (1: no register cap)
SWEEP_MINB = 1
#: default layout of B/D per dimension: "sweep" (2D only: tile + per-thread column
#: sweep), "march" (march along y / z with φ and μ plane rings in shared memory),
#: "paper" (2D: 16×16 threads, inner 12×12 write, as paper 000 Listing 7; 3D:
#: the generic TILE_SHAPE tile)
DEFAULT_TILE_IMPL = {2: "sweep", 3: "march"}
#: (TX, TY, chunk) of the march kernel: TX×TY threads (TY = 1 in 2D), each
#: writing one column of ``chunk`` planes
MARCH_SHAPE = {2: (256, 1, 32), 3: (32, 8, 32)}
#: (threads, outputs OX, OY, OZ) of the fused kernel E
FUSED_SHAPE = {2: (256, 64, 32, 1), 3: (256, 32, 8, 4)}
#: outputs (OX, OY) of the 2D register-sliding fused kernel (4·(OX+4) threads)
FUSED2D_SHAPE = (60, 28)
#: (warps per block, φ rows in flight, rows per warp, min. blocks per SM) of the 2D warp-march fused
#: kernel per dtype: each warp a strip of 120 output columns; rows per warp a multiple of 8, 0 = as
#: few as fill the GPU's resident warps once (one wave, at least 32); the last entry caps registers
#: through __launch_bounds__ (1: no cap)
WMARCH_SHAPE = {"float": (1, 3, 0, 24), "double": (1, 2, 0, 1)}
#: (TX, TY, chunk, min. blocks per SM, φ planes in flight, cells per thread VW) of the 3D register
#: z-march fused kernel per dtype: a (TX+8)×(TY+8) frame, one thread per VW x-adjacent cells (2 or
#: 4); two sets of 4 plane buffers must fit 48 KiB of static shared memory; chunk 0 = as few z
#: chunks as fill the GPU once (at least 16 planes)
ZREG_SHAPE = {"float": (32, 24, 0, 2, 2, 4), "double": (32, 8, 0, 1, 1, 4)}
#: (TX, TY, chunk) of the 3D z-march fused kernel per dtype (TX·TY threads; its four plane rings
#: must fit the 48 KiB of static shared memory: float 37.5 KiB, double 45.6 KiB)
FUSED_MARCH_SHAPE = {"float": (32, 16, 64), "double": (32, 8, 64)}

_source: str | None = None
#: the launch registry's system and display prefix of these kernels
SYSTEM, PREFIX = "cahn_hilliard", "CH"
#: what the host device shows for these kernels (GUI labels, CLI notes)
EMULATED_LABEL = "CUDA source run on the CPU"
#: the host path refuses a run it would need longer than this for (seconds)
HOST_SECONDS = 30.0
#: cells × RK2 steps per second the host path makes per variant on a shared 2-core machine, float32
#: (measured 2026-11-28 at 256² and 64³: A 0.56–0.9e6, B 0.59–1.2e6, C 0.64e6, D 1.5e6, E 1.3–2.5e6;
#: benchmarks/ch.py --host), rounded down; an Euler step costs half an RK2 step of A–D
HOST_RATE = {"A": 5e5, "B": 5e5, "C": 5e5, "D": 5e5, "E": 1.2e6}


def _code() -> str:
    """ch_kernels.cu with its headers (ch_stencil.cuh, ch_regmarch.cuh, ch_temporal.cuh) inlined, so the layer's memo key
    (the source text) covers all of them."""
    global _source
    if _source is None:
        body = (_CUDA_DIR / "ch_kernels.cu").read_text(encoding="utf-8")
        for name in ("ch_stencil.cuh", "ch_regmarch.cuh", "ch_temporal.cuh"):
            body = body.replace(f'#include "{name}"', (_CUDA_DIR / name).read_text(encoding="utf-8"))
        _source = body
    return _source


#: compiler options of the kernels (NVRTC's; the host device reads only -D)
OPTIONS = ("-std=c++17",)


def get_kernel(expr: str, block: int, dynamic_smem: int = 0, device=None, options=OPTIONS):
    """The compiled kernel of one template instantiation on ``device`` (a :class:`kernels.gpu.Device`;
    default the GPU), compiled once per device (and ``options``) by the GPU layer.

    ``block`` (threads per block) and ``dynamic_smem`` (bytes) are the launch the caller makes;
    the layer records them in :mod:`kernels.launches` under ``"CH <expr>"``."""
    dev = device if device is not None else layer.device("cuda")
    mod = dev.module(_code(), name_expressions=(expr,), options=tuple(options), system=SYSTEM, prefix=PREFIX)
    return mod.function(expr, block=block, shared_mem=dynamic_smem)


def compiled_kernels() -> list:
    """(name expression, compiled kernel) of every CH kernel compiled so far (from the launch registry)."""
    return [(ln.name[len(PREFIX) + 1:], ln.kernel) for ln in launches.recorded(SYSTEM)]


def host_seconds(params, steps: int) -> float:
    """Estimated seconds the host path needs for ``steps`` steps of ``params`` (:data:`HOST_RATE`)."""
    cells = int(np.prod(params.shape))
    return cells * int(steps) / HOST_RATE[params.variant] * (0.5 if params.integrator == "euler" else 1.0)


def host_limit_cells(params, steps: int = 1) -> int:
    """The most cells a ``steps``-step host run of ``params`` may have (about :data:`HOST_SECONDS` s)."""
    per_cell = host_seconds(params, steps) / max(1, int(np.prod(params.shape)))
    return int(HOST_SECONDS / per_cell) if per_cell > 0 else 0


def check_host_size(params, steps: int = 1) -> None:
    """Refuse (:class:`~kernels.errors.GridTooLarge`) a host run of ``steps`` steps that would take more
    than about :data:`HOST_SECONDS` s, naming the limit."""
    sec = host_seconds(params, steps)
    if sec > HOST_SECONDS:
        most = host_limit_cells(params, steps)
        side = int(most ** (1.0 / params.dim))
        raise GridTooLarge(
            f"kernel {params.variant} ({EMULATED_LABEL}): {steps} step(s) of "
            f"{'×'.join(map(str, params.shape))} would take about {sec:.0f} s (limit {HOST_SECONDS:.0f} s: at most "
            f"{most:,} cells per step × {steps} step(s), e.g. {side}{'²' if params.dim == 2 else '³'}); "
            "use fewer steps or cells, the array reference or cpu-threads, or a GPU")


def _ptr(a) -> int:
    """Address of a device array's data (CuPy) or of a host array's (NumPy, host device)."""
    return a.data.ptr if hasattr(a.data, "ptr") else a.ctypes.data


def block_sweep_case(size: int) -> launches.SweepCase:
    """Variant A's stage kernel (one thread per cell) on a ``size``² float32 periodic grid,
    prepared for a block-size sweep (a :class:`kernels.launches.SweepCase`)."""
    dev = layer.device("cuda")
    xp = dev.xp
    n = int(size)
    k = get_kernel("ch_point<float, 0, 2, 0>", int(np.prod(POINT_BLOCK[2])), device=dev)
    src = xp.random.random((n, n), dtype=xp.float32) * 0.2 - 0.1
    out = xp.empty_like(src)
    f = np.float32
    args = (np.uint64(_ptr(src)), src, out, np.int32(n), np.int32(n), np.int32(1), f(0.01),
            f(1), f(1), f(1), f(1), f(1), f(-1))

    def launch(block: int):
        bx = min(block, 32)
        by = block // bx
        dev.launch(k, (_cdiv(n, bx), _cdiv(n, by), 1), (bx, by, 1), args)
    return launches.SweepCase("ch_point", k, launch, n * n, "cells/s")


def _ctype(dtype) -> str:
    if dtype == np.float32:
        return "float"
    if dtype == np.float64:
        return "double"
    raise TypeError(f"CUDA kernels support float32 and float64 fields, not {dtype}")


def _dims(shape):
    """(nx, ny, nz) with nx the contiguous axis."""
    if len(shape) == 2:
        return shape[1], shape[0], 1
    if len(shape) == 3:
        return shape[2], shape[1], shape[0]
    raise ValueError(f"Cahn–Hilliard kernels need a 2D or 3D field, got shape {shape}")


def _cdiv(a, b):
    return (a + b - 1) // b


class CudaStepper(Stepper):
    """Explicit Euler / RK2 with the CUDA kernel ``params.variant`` (A–E), on the GPU or — on the CPU
    backend — the same CUDA source run on the host (:attr:`emulated`)."""

    name = "cuda"
    buffers = 3

    def __init__(self, params, backend):
        super().__init__(params, backend)
        #: the kernels.gpu Device the kernels run on (GPU, or the host running the CUDA source)
        try:
            self.dev = layer.device_for(backend)
        except BackendUnavailable as exc:
            if backend.is_gpu:
                raise
            raise BackendUnavailable(f"kernel variant {params.variant} on the CPU backend runs its CUDA source "
                                     f"through the host C++ compiler, which is unavailable ({exc}); use the array "
                                     "reference or cpu-threads") from None
        self.xp = self.dev.xp
        #: the CUDA source runs on the CPU (host device)
        self.emulated = bool(self.dev.emulated)
        if self.emulated:
            check_host_size(params)
            self.notes.append(f"kernel {params.variant}: {EMULATED_LABEL} (host C++ compiler), "
                              "the NumPy reference's numbers to rounding")
        #: compiler options (e.g. ``OPTIONS + ("--fmad=false",)``: no FMA contraction on the GPU, the
        #: host's arithmetic, for bit-for-bit comparisons)
        self.options = OPTIONS
        self._tex = {}          # texture cache: key -> (TextureObject, array ref)
        #: texture objects kept alive (a slab stepper reads ~9 views per buffer set and
        #: a captured CUDA graph holds their handles, so it raises this)
        self.tex_cache_size = 8
        self._props = None
        #: how the last texture read was served ("tex2d", "tex1d" or "global" fallback)
        self.last_read = None
        #: 2D fused kernel: "wmarch" (warp march in registers, default), "sliding" (shared tile with
        #: register sweeps) or "generic" (tile loops)
        self.fused_impl = "wmarch"
        self.wmarch_shape = dict(WMARCH_SHAPE)
        #: 3D fused kernel: "zreg" (z-march with register z windows, default), "march" (z-march with
        #: shared plane rings) or "generic" (3D tiles)
        self.fused_impl3d = "zreg"
        self.zreg_shape = dict(ZREG_SHAPE)
        self._wave = {}         # (kernel name, block, blocks across, extent) -> rows / planes per block
        self.fused_march_shape = dict(FUSED_MARCH_SHAPE)
        #: 2D k-step warp march shapes per dtype (temporal.WMARCH_TB_SHAPE; tunable per instance)
        self.tb_wmarch_shape = dict(temporal.WMARCH_TB_SHAPE)
        #: 3D k-step register z-march shapes per dtype (temporal.ZREG_TB_SHAPE; tunable per instance)
        self.tb_zreg_shape = dict(temporal.ZREG_TB_SHAPE)
        #: layout of B/D overriding ``params.tile`` (benchmarks): None, "sweep", "march" or "paper"
        self.tile_impl = None
        #: march kernel shapes per dimension (see MARCH_SHAPE; tunable per instance)
        self.march_shape = dict(MARCH_SHAPE)
        #: tile shapes of the 2D sweep kernels (tunable per instance)
        self.sweep_shape = SWEEP_SHAPE
        self.sweep_minb = SWEEP_MINB
        self.fused2d_shape = FUSED2D_SHAPE

    # ---- helpers -------------------------------------------------------------
    def _kernel(self, expr, block, dynamic_smem=0):
        return get_kernel(expr, block, dynamic_smem, device=self.dev, options=self.options)

    def _device_props(self):
        if self._props is None:
            self._props = self.dev.properties()
        return self._props

    def _coefs(self, dtype):
        p = self.params
        t = dtype.type
        return t(p.m), t(p.b), t(p.u), t(p.K), t(1.0 / (p.dx * p.dx)), t(p.boundary_value)

    def _texture(self, a):
        """(read mode, handle) for texture reads of ``a``: pitched 2D, else 1D linear."""
        if self.emulated:
            return self._host_texture(a)
        from cupy.cuda import runtime, texture
        nx, ny, nz = _dims(a.shape)
        props = self._device_props()
        item = a.dtype.itemsize
        ptr = _ptr(a)
        # both texture kinds need the base address aligned to textureAlignment (a slab view
        # that starts mid-buffer may not be, and reads global memory instead)
        aligned = ptr % int(props.get("textureAlignment", 512)) == 0
        mode = None
        if a.ndim == 2:
            pitch_al = int(props.get("texturePitchAlignment", 32))
            w, h, maxpitch = props.get("maxTexture2DLinear", (0, 0, 0))
            if ((nx * item) % pitch_al == 0 and aligned and nx <= w and ny <= h
                    and nx * item <= maxpitch):
                mode = READ_TEX2D
        if mode is None:
            if a.size <= int(props.get("maxTexture1DLinear", 1 << 27)) and aligned:
                mode = READ_TEX1D
            else:
                self.last_read = "global"
                return READ_GLOBAL, ptr
        key = (ptr, a.shape, a.dtype.str, mode)
        hit = self._tex.get(key)
        if hit is not None and hit[1] is a:
            self.last_read = "tex2d" if mode == READ_TEX2D else "tex1d"
            return mode, hit[0].ptr
        if a.dtype == np.float32:
            ch = texture.ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindFloat)
        else:  # double as int2
            ch = texture.ChannelFormatDescriptor(32, 32, 0, 0, runtime.cudaChannelFormatKindSigned)
        if mode == READ_TEX2D:
            res = texture.ResourceDescriptor(runtime.cudaResourceTypePitch2D, arr=a, chDesc=ch,
                                             width=nx, height=ny, pitchInBytes=nx * item)
            td = texture.TextureDescriptor(
                (runtime.cudaAddressModeClamp, runtime.cudaAddressModeClamp),
                runtime.cudaFilterModePoint, runtime.cudaReadModeElementType)
        else:
            res = texture.ResourceDescriptor(runtime.cudaResourceTypeLinear, arr=a, chDesc=ch,
                                             sizeInBytes=a.nbytes)
            td = texture.TextureDescriptor(
                (runtime.cudaAddressModeClamp,), runtime.cudaFilterModePoint,
                runtime.cudaReadModeElementType)
        tobj = texture.TextureObject(res, td)
        if len(self._tex) >= self.tex_cache_size:
            self._tex.pop(next(iter(self._tex)))
        self._tex[key] = (tobj, a)
        self.last_read = "tex2d" if mode == READ_TEX2D else "tex1d"
        return mode, tobj.ptr

    def _host_texture(self, a):
        """Texture reads on the host device: its texture objects when it has them (the same reader
        code as on the GPU), else global reads (``last_read = "global"``)."""
        make = getattr(self.dev, "texture", None)
        if make is None:
            self.last_read = "global"
            return READ_GLOBAL, _ptr(a)
        mode = READ_TEX2D if a.ndim == 2 else READ_TEX1D
        key = (_ptr(a), a.shape, a.dtype.str, mode)
        hit = self._tex.get(key)
        if hit is None or hit[1] is not a:
            if len(self._tex) >= self.tex_cache_size:
                self._tex.pop(next(iter(self._tex)))
            hit = self._tex[key] = (make(a, "2d" if mode == READ_TEX2D else "1d"), a)
        self.last_read = "tex2d" if mode == READ_TEX2D else "tex1d"
        return mode, int(hit[0])

    def _wave_chunk(self, expr, kern, block, across, n, mult, least):
        """Rows (2D) / planes (3D) per block so that ``across`` blocks per march position fill the
        device's resident block slots once (occupancy API × multiprocessors): one wave, no tail."""
        key = (expr, block, across, n)
        hit = self._wave.get(key)
        if hit is None:
            per_sm = self.dev.active_blocks(kern, block, 0)
            slots = max(1, int(per_sm)) * int(self.dev.sms)
            chunk = _cdiv(n, max(1, slots // max(1, across)))
            hit = self._wave[key] = max(least, _cdiv(chunk, mult) * mult)
        return hit

    @staticmethod
    def vec_ok(a) -> bool:
        """Vector (16-byte) tile loads allowed: nx % 4 == 0 and a 16-byte aligned field."""
        return a.shape[-1] % 4 == 0 and _ptr(a) % 16 == 0

    def _prep(self, a):
        xp = self.xp
        if not a.flags.c_contiguous:
            a = xp.ascontiguousarray(a)
        return a

    # ---- one stage: out = base + coef·F(src) ------------------------------------
    def update(self, src, base, coef, out):
        p = self.params
        if src.dtype != base.dtype or src.dtype != out.dtype or src.shape != out.shape \
                or base.shape != out.shape:
            raise ValueError("src, base and out must share shape and dtype")
        if not out.flags.c_contiguous:
            raise ValueError("out must be C-contiguous")
        src, base = self._prep(src), self._prep(base)
        dtype = src.dtype
        T = _ctype(dtype)
        dim = src.ndim
        nx, ny, nz = _dims(src.shape)
        bc = _BC[p.boundary]
        variant = p.variant
        impl = self.tile_impl or (DEFAULT_TILE_IMPL[dim] if p.tile == "auto" else p.tile)
        if variant in ("C", "D"):
            rd, handle = self._texture(src)
        else:
            rd, handle = READ_GLOBAL, _ptr(src)
        m, b, u, K, idx2, bval = self._coefs(dtype)
        args = (np.uint64(handle), base, out, np.int32(nx), np.int32(ny), np.int32(nz),
                dtype.type(coef), m, b, u, K, idx2, bval)
        if variant in ("A", "C"):
            bx, by, bz = (STRIP_BLOCK if p.block_layout == "strips" else POINT_BLOCK)[dim]
            kern = self._kernel(f"ch_point<{T}, {bc}, {dim}, {rd}>", bx * by * (bz if dim == 3 else 1))
            grid = (_cdiv(nx, bx), _cdiv(ny, by), _cdiv(nz, bz) if dim == 3 else 1)
            self.dev.launch(kern, grid, (bx, by, bz if dim == 3 else 1), args)
        elif impl == "march":  # B, D (and E's single stage)
            TX, TY, chunk = self.march_shape[dim]
            kern = self._kernel(f"ch_march<{T}, {bc}, {dim}, {rd}, {TX}, {TY}>", TX * TY)
            nm = nz if dim == 3 else ny
            grid = (_cdiv(nx, TX), _cdiv(ny, TY), _cdiv(nz, chunk)) if dim == 3 else \
                (_cdiv(nx, TX), _cdiv(ny, chunk), 1)
            same = 1 if _ptr(base) == _ptr(src) else 0
            args = args[:6] + (np.int32(min(chunk, nm)), np.int32(same)) + args[6:]
            self.dev.launch(kern, grid, (TX * TY, 1, 1), args)
        elif dim == 2 and impl == "sweep":  # B, D (and E's single stage)
            OX, OY = self.sweep_shape
            kern = self._kernel(f"ch_sweep<{T}, {bc}, {rd}, {OX}, {OY}, {self.sweep_minb}>", 4 * OX)
            flags = (1 if (rd == READ_GLOBAL and self.vec_ok(src)) else 0) | \
                (2 if _ptr(base) == _ptr(src) else 0)
            args = args[:5] + (np.int32(flags),) + args[6:]
            self.dev.launch(kern, (_cdiv(nx, OX), _cdiv(ny, OY), 1), (4 * OX, 1, 1), args)
        else:  # B, D, and E's single stage (Euler with E is rejected by params)
            BX, BY, BZ, OX, OY, OZ = TILE_SHAPE[dim]
            kern = self._kernel(f"ch_tile<{T}, {bc}, {dim}, {rd}, {BX}, {BY}, {BZ}, {OX}, {OY}, {OZ}>", BX * BY * BZ)
            grid = (_cdiv(nx, OX), _cdiv(ny, OY), _cdiv(nz, OZ) if dim == 3 else 1)
            self.dev.launch(kern, grid, (BX, BY, BZ), args)
        return out

    # ---- fused RK2 (variant E) ----------------------------------------------------
    def fused_step(self, src, out):
        """out = one RK2 step of src in a single launch (variant E)."""
        p = self.params
        src = self._prep(src)
        dtype = src.dtype
        T = _ctype(dtype)
        dim = src.ndim
        nx, ny, nz = _dims(src.shape)
        bc = _BC[p.boundary]
        if dim == 3 and self.fused_impl3d == "zreg":
            TX, TY, chunk, MINB, PD, VW = self.zreg_shape[T]
            NT = _cdiv((TX + 8) // VW * (TY + 8), 32) * 32
            expr = f"ch_fused_zreg3d<{T}, {bc}, {TX}, {TY}, {NT}, {MINB}, {PD}, {VW}>"
            kern = self._kernel(expr, NT)
            m, b, u, K, idx2, bval = self._coefs(dtype)
            t = dtype.type
            if chunk <= 0:
                chunk = self._wave_chunk(expr, kern, NT, _cdiv(nx, TX) * _cdiv(ny, TY), nz, 1, 16)
            chunk = min(chunk, nz)
            vec = 1 if (self.vec_ok(src) and _ptr(out) % 16 == 0) else 0
            self.dev.launch(kern, (_cdiv(nx, TX), _cdiv(ny, TY), _cdiv(nz, chunk)), (NT, 1, 1),
                            (src, out, np.int32(nx), np.int32(ny), np.int32(nz), np.int32(chunk), np.int32(vec),
                             t(0.5 * p.dt), t(p.dt), m, b, u, K, idx2, bval))
            return out
        if dim == 3 and self.fused_impl3d == "march":
            TX, TY, chunk = self.fused_march_shape[T]
            kern = self._kernel(f"ch_fused_march3d<{T}, {bc}, {TX}, {TY}>", TX * TY)
            m, b, u, K, idx2, bval = self._coefs(dtype)
            t = dtype.type
            chunk = min(chunk, nz)
            self.dev.launch(kern, (_cdiv(nx, TX), _cdiv(ny, TY), _cdiv(nz, chunk)), (TX * TY, 1, 1),
                            (src, out, np.int32(nx), np.int32(ny), np.int32(nz), np.int32(chunk),
                             t(0.5 * p.dt), t(p.dt), m, b, u, K, idx2, bval))
            return out
        if dim == 2 and self.fused_impl == "wmarch":
            WPB, PD, chunk, MINB = self.wmarch_shape[T]
            expr = f"ch_fused_wmarch2d<{T}, {bc}, {WPB}, {PD}, {MINB}>"
            kern = self._kernel(expr, 32 * WPB)
            m, b, u, K, idx2, bval = self._coefs(dtype)
            t = dtype.type
            if chunk <= 0:
                chunk = self._wave_chunk(expr, kern, 32 * WPB, _cdiv(_cdiv(nx, 120), WPB), ny, 8, 32)
            chunk = min(chunk, _cdiv(ny, 8) * 8)
            vec = 1 if (self.vec_ok(src) and _ptr(out) % 16 == 0) else 0
            self.dev.launch(kern, (_cdiv(_cdiv(nx, 120), WPB), _cdiv(ny, chunk), 1), (32 * WPB, 1, 1),
                            (src, out, np.int32(nx), np.int32(ny), np.int32(chunk), np.int32(vec),
                             t(0.5 * p.dt), t(p.dt), m, b, u, K, idx2, bval))
            return out
        if dim == 2 and self.fused_impl == "sliding":
            OX, OY = self.fused2d_shape
            NT, OZ = 4 * (OX + 4), 1
            expr = f"ch_fused2d<{T}, {bc}, {OX}, {OY}>"
            n0, n1 = (OX + 8) * (OY + 8), (OX + 4) * (OY + 4)
        else:
            NT, OX, OY, OZ = FUSED_SHAPE[dim]
            expr = f"ch_fused<{T}, {bc}, {dim}, {NT}, {OX}, {OY}, {OZ}>"
            if dim == 2:
                n0 = (OX + 8) * (OY + 8)
                n1 = (OX + 4) * (OY + 4)
            else:
                n0 = (OX + 8) * (OY + 8) * (OZ + 8)
                n1 = (OX + 4) * (OY + 4) * (OZ + 4)
        smem = (n0 + n1) * dtype.itemsize
        kern = self._kernel(expr, NT, smem)
        if not self.emulated and smem > 48 * 1024 and kern.max_dynamic_shared_size_bytes < smem:
            kern.max_dynamic_shared_size_bytes = smem
        m, b, u, K, idx2, bval = self._coefs(dtype)
        t = dtype.type
        third = np.int32(nz) if dim == 3 or self.fused_impl != "sliding" else \
            np.int32(1 if self.vec_ok(src) else 0)   # ch_fused2d: vector-load flag
        args = (np.uint64(_ptr(src)), out, np.int32(nx), np.int32(ny), third,
                t(0.5 * p.dt), t(p.dt), m, b, u, K, idx2, bval)
        grid = (_cdiv(nx, OX), _cdiv(ny, OY), _cdiv(nz, OZ) if dim == 3 else 1)
        self.dev.launch(kern, grid, (NT, 1, 1), args, shared_mem=smem)
        return out

    # ---- temporal blocking (variant E): k RK2 steps per pass ------------------------
    def steps_per_pass(self, dtype=None) -> int:
        """k of this stepper's passes (``params.steps_per_pass`` resolved by :mod:`.temporal`, lowered
        where the grid or the GPU's shared memory cannot hold the 4k halo)."""
        p = self.params
        itemsize = np.dtype(dtype or p.dtype).itemsize
        limit = None
        if not self.emulated:
            limit = int(self._device_props().get("sharedMemPerBlockOptin", temporal.SMEM_LIMIT))
        return temporal.fits(p, temporal.requested(p), itemsize, limit, self._tb_smem(p.dim, itemsize))

    def _tb_smem(self, dim, itemsize):
        """k → shared memory per block of the k-step kernel this stepper launches."""
        T = "float" if itemsize == 4 else "double"
        if dim == 2 and self.fused_impl == "wmarch":
            return lambda k: 0
        if dim == 3 and self.fused_impl3d == "zreg":
            return lambda k: temporal.zreg_smem_bytes(k, itemsize, self.tb_zreg_shape[T])
        return lambda k: temporal.smem_bytes(dim, k, itemsize)

    def fused_steps(self, src, out, k: int):
        """out = k RK2 steps of src in a single launch (temporal blocking, :mod:`.temporal`): in 2D with
        ``fused_impl="wmarch"`` the k-step warp march ``ch_fused_wmarch2d_tb``, in 3D with
        ``fused_impl3d="zreg"`` the k-step register z-march ``ch_fused_zreg3d_tb``, otherwise the shared tile
        ``ch_fused_tb``; bit for bit k calls of :meth:`fused_step`.  k = 1 is :meth:`fused_step`."""
        k = int(k)
        if k == 1:
            return self.fused_step(src, out)
        p = self.params
        src = self._prep(src)
        dtype = src.dtype
        dim = src.ndim
        nx, ny, nz = _dims(src.shape)
        if p.boundary != "fixed" and temporal.halo(k) > min(src.shape):
            raise ValueError(f"{k} fused steps need a halo of {temporal.halo(k)} cells: every extent at least that "
                             f"(got {src.shape})")
        m, b, u, K, idx2, bval = self._coefs(dtype)
        t = dtype.type
        if dim == 2 and self.fused_impl == "wmarch":
            WPB, PD, chunk, MINB = self.tb_wmarch_shape[_ctype(dtype)]
            expr = f"ch_fused_wmarch2d_tb<{_ctype(dtype)}, {_BC[p.boundary]}, {k}, {WPB}, {PD}, {MINB}>"
            kern = self._kernel(expr, 32 * WPB)
            across = _cdiv(_cdiv(nx, temporal.strip_width(k)), WPB)
            if chunk <= 0:
                chunk = self._wave_chunk(expr, kern, 32 * WPB, across, ny, 8, 32 * k)
            chunk = min(chunk, _cdiv(ny, 8) * 8)
            vec = 1 if (self.vec_ok(src) and _ptr(out) % 16 == 0) else 0
            self.dev.launch(kern, (across, _cdiv(ny, chunk), 1), (32 * WPB, 1, 1),
                            (src, out, np.int32(nx), np.int32(ny), np.int32(chunk), np.int32(vec),
                             t(0.5 * p.dt), t(p.dt), m, b, u, K, idx2, bval))
            return out
        if dim == 3 and self.fused_impl3d == "zreg":
            shape = self.tb_zreg_shape[_ctype(dtype)]
            TX, TY, chunk, MINB, PD, VW = shape
            NT = temporal.zreg_threads(k, shape)
            expr = f"ch_fused_zreg3d_tb<{_ctype(dtype)}, {_BC[p.boundary]}, {k}, {TX}, {TY}, {NT}, {MINB}, {PD}, {VW}>"
            smem = temporal.zreg_smem_bytes(k, dtype.itemsize, shape)
            kern = self._kernel(expr, NT, smem)
            if not self.emulated and smem > 48 * 1024 and kern.max_dynamic_shared_size_bytes < smem:
                kern.max_dynamic_shared_size_bytes = smem
            across = _cdiv(nx, TX) * _cdiv(ny, TY)
            if chunk <= 0:
                chunk = self._wave_chunk(expr, kern, NT, across, nz, 1, 16 * k)
            chunk = min(chunk, nz)
            vec = 1 if (self.vec_ok(src) and _ptr(out) % 16 == 0) else 0
            self.dev.launch(kern, (_cdiv(nx, TX), _cdiv(ny, TY), _cdiv(nz, chunk)), (NT, 1, 1),
                            (src, out, np.int32(nx), np.int32(ny), np.int32(nz), np.int32(chunk), np.int32(vec),
                             t(0.5 * p.dt), t(p.dt), m, b, u, K, idx2, bval), shared_mem=smem)
            return out
        expr, nt = temporal.expression(_ctype(dtype), _BC[p.boundary], dim, k)
        smem = temporal.smem_bytes(dim, k, dtype.itemsize)
        kern = self._kernel(expr, nt, smem)
        if not self.emulated and smem > 48 * 1024 and kern.max_dynamic_shared_size_bytes < smem:
            kern.max_dynamic_shared_size_bytes = smem
        self.dev.launch(kern, temporal.grid(dim, nx, ny, nz), (nt, 1, 1),
                        (src, out, np.int32(nx), np.int32(ny), np.int32(nz),
                         t(0.5 * p.dt), t(p.dt), m, b, u, K, idx2, bval), shared_mem=smem)
        return out

    def step(self, phi, n: int = 1):
        """``n`` steps; kernel E runs them as passes of :meth:`steps_per_pass` fused steps and the
        remainder as single steps (:func:`.temporal.plan`)."""
        p = self.params
        if p.variant != "E" or p.integrator != "rk2":
            return super().step(phi, n)
        _, out = self._buffers(phi)
        for k in temporal.plan(n, self.steps_per_pass(phi.dtype)):
            self.fused_steps(phi, out, k)
            phi, out = out, phi
        self._out = out
        return phi
