"""GPU launchers of the Floyd–Warshall family (papers 002 and 004 ch. 4, and our fast version).

Every launcher works in place on a dense, padded, row-major device matrix ``d`` (float32 or
int32, "no path" = inf / ``FW_INT_INF``) and an optional predecessor matrix ``p`` (int32, same
shape; ``None``: distances only), and returns the number of kernel launches.  The element type
and ``p`` pick the kernel instantiation (``T``, ``PRED``); ``dpx`` picks Hopper's explicit
``__viaddmin_s32`` for int32 in the kernels that have it.

What the launchers need from the machine is one device of the GPU layer (:mod:`kernels.gpu`:
arrays, compiled kernels, the occupancy API, streams): the CUDA device on a GPU, or the host
device — the same CUDA sources compiled by the host C++ compiler and run on the CPU cores
(:mod:`kernels.gpu.host`) — so the same launch sequences run on both (:func:`device`).  CUDA sources:
``cuda/fw.cu``, ``fw_paper002.cu`` (+ ``fw_coop.cu``), ``fw_thesis.cu``, ``fw_gemm.cu``.
"""
from __future__ import annotations

from itertools import product

import numpy as np

from .. import cuda as _cuda
from ... import gpu

TYPES = ("float", "int")
BOOL = ("false", "true")
#: paper 004 §4.5: pivot-kernel h per tile (16, 8, 4 for t = 16, 32, 64); row/column kernel h = 4
THESIS_H_PIVOT = {16: 16, 32: 8, 64: 4}
THESIS_H_ROWCOL = 4
#: paper 004 Table 4.4: the two-level sub-tile t' per tile t
TWO_LEVEL_TP = {16: 4, 32: 2, 64: 4}
THESIS_TILES = (16, 32, 64)
BLOCKED_TILES = (32, 64)
#: min-plus GEMM configurations (BM, BN, BK, TM, TN, MB): the tuner and the benchmark try them
GEMM_CONFIGS = {
    "128x128/8x8": (128, 128, 16, 8, 8, 1),
    "128x128/8x8/2": (128, 128, 16, 8, 8, 2),
    "128x128/8x8/bk8": (128, 128, 8, 8, 8, 2),
    "128x128/8x4": (128, 128, 16, 8, 4, 1),
    "128x64/8x4": (128, 64, 16, 8, 4, 2),
    "64x64/4x4": (64, 64, 16, 4, 4, 2),
}
#: the configuration predecessor runs use (two register blocks per element)
GEMM_PRED = (64, 64, 16, 4, 4, 1)
DEFAULT_GEMM = "128x128/8x8/2"
#: the thin products of fw-fast's look-ahead (a band of tile rows or columns): small blocks, more of them
THIN_GEMM = "64x64/4x4"
FAST_TILES = (64, 128)
#: the persistent fw-fast (cuda/fw_persist.cu, one cooperative launch): its product configurations
#: (256 threads a block, like the closure and the panels of tile 64 it runs in the same kernel)
PERSIST_CONFIGS = ("128x128/8x8/2", "128x128/8x8", "128x64/8x4", "64x64/4x4")
#: its pivot tiles (128: without predecessors, with the product configurations below), and the default
PERSIST_TILES = (64, 128)
PERSIST_TILE = 64
PERSIST_128_CONFIGS = ("128x128/8x8/2", "128x128/8x8")


def ctype(dtype) -> str:
    return "int" if np.dtype(dtype) == np.int32 else "float"


def gemm_name(t: str, op: int, pred: bool, cfg) -> str:
    bm, bn, bk, tm, tn, mb = cfg
    return f"mp_gemm<{t},{op},{BOOL[pred]},{bm},{bn},{bk},{tm},{tn},{mb}>"


def _names() -> dict[str, list[str]]:
    """Every instantiation the launchers use, per source file."""
    ops = [("float", 0), ("int", 0), ("int", 1)]
    fw = [f"fw_naive<{t},{b}>" for t, b in product(TYPES, BOOL)]
    fw += [f"fw_phase{k}<{t},false,{tt}>" for k, t, tt in product((1, 2, 3), TYPES, BLOCKED_TILES)]
    fw += [f"fw_phase{k}<{t},true,32>" for k, t in product((1, 2, 3), TYPES)]
    p2 = [f"fw_v2<{t},{b}>" for t, b in product(TYPES, BOOL)]
    p2 += [f"fw_v3<{t},{b}>" for t, b in product(TYPES, BOOL)]
    p2 += [f"fw_v{v}<{t},{b},false>" for v, t, b in product((4, 5), TYPES, BOOL)]
    coop = [f"fw_v{v}<{t},{b},true>" for v, t, b in product((4, 5), TYPES, BOOL)]
    th = []
    for t, b, tt in product(TYPES, BOOL, THESIS_TILES):
        th += [f"fw_th_pivot<{t},{b},{tt},{THESIS_H_PIVOT[tt]}>", f"fw_th_rowcol<{t},{b},{tt},{THESIS_H_ROWCOL}>"]
    for (t, op), tt in product(ops, THESIS_TILES):
        th += [f"fw_mm_nonpivot<{t},{op},false,{tt}>", f"fw_2l_nonpivot<{t},{op},false,{tt},{TWO_LEVEL_TP[tt]}>"]
    for t, tt in product(TYPES, THESIS_TILES):
        th += [f"fw_mm_nonpivot<{t},0,true,{tt}>", f"fw_2l_nonpivot<{t},0,true,{tt},{TWO_LEVEL_TP[tt]}>"]
    gm = [gemm_name(t, op, False, cfg) for (t, op), cfg in product(ops, GEMM_CONFIGS.values())]
    gm += [gemm_name(t, 0, True, GEMM_PRED) for t in TYPES]
    gm += [f"fw_fast_closure<{t},{b},{tt}>" for t, b, tt in product(TYPES, BOOL, FAST_TILES)]
    gm += [f"fw_fast_panels<{t},{op},false,{tt},{tt // 16}>" for (t, op), tt in product(ops, FAST_TILES)]
    gm += [f"fw_fast_panels<{t},0,true,{tt},{tt // 16}>" for t, tt in product(TYPES, FAST_TILES)]
    pe = [persist_name(t, 0, False, GEMM_CONFIGS[c], tt) for t, tt in product(TYPES, PERSIST_TILES)
          for c in (PERSIST_CONFIGS if tt == 64 else PERSIST_128_CONFIGS)]
    pe += [persist_name("int", 1, False, GEMM_CONFIGS[DEFAULT_GEMM], tt) for tt in PERSIST_TILES]
    pe += [persist_name(t, 0, True, GEMM_PRED) for t in TYPES]
    return {"fw.cu": fw, "fw_paper002.cu": p2, "fw_coop.cu": coop, "fw_thesis.cu": th, "fw_gemm.cu": gm,
            "fw_persist.cu": pe}


def persist_name(t: str, op: int, pred: bool, cfg, tile: int = PERSIST_TILE) -> str:
    bm, bn, bk, tm, tn, mb = cfg
    return f"fw_persist<{t},{op},{BOOL[pred]},{tile},{bm},{bn},{bk},{tm},{tn},{mb}>"


NAMES = _names()
_cuda.NAME_EXPRESSIONS.update(NAMES)
_cuda.COOPERATIVE.add("fw_persist.cu")


#: paper 004 Table 4.4's non-pivot kernels, as compiled here (occupancy presets): key → (file, name, threads)
PRESET_KERNELS = {
    **{f"fw-mm t={t}": ("fw_thesis.cu", f"fw_mm_nonpivot<int,0,false,{t}>", 64) for t in THESIS_TILES},
    **{f"fw-2level t={t}": ("fw_thesis.cu", f"fw_2l_nonpivot<int,0,false,{t},{TWO_LEVEL_TP[t]}>", t * TWO_LEVEL_TP[t])
       for t in THESIS_TILES},
}


def compiled_resources(key: str) -> dict:
    """Registers, static shared memory and threads per block of one of the thesis's non-pivot
    kernels compiled for this GPU (:data:`PRESET_KERNELS`); needs CuPy and a GPU."""
    if key not in PRESET_KERNELS:
        raise KeyError(f"unknown kernel {key!r}: use one of {', '.join(PRESET_KERNELS)}")
    file, name, threads = PRESET_KERNELS[key]
    dev = gpu.device("cuda")
    attrs = dev.attributes(kernel(dev, file, name))
    return {"registers": int(attrs["num_regs"]), "smem_static": int(attrs["shared_size_bytes"]),
            "threads": threads, "kernel": name}


#: the GPU layer's device the launchers run on for an app backend: the CUDA device behind a GPU
#: backend, the host device (the same CUDA source compiled for the CPU, :mod:`kernels.gpu.host`) for
#: the CPU backend or None
device = _cuda.device

#: the CUDA devices of older callers: ``CudaDevice(backend)`` is :func:`device`
CudaDevice = device
_functions: dict = {}


def kernel(dev, file: str, name: str):
    """The kernel ``name`` (one of :data:`NAMES` [file]) of ``cuda/<file>`` on ``dev``: compiled once
    per device by the GPU layer (kernels.graphs.cuda.function; on the host each kernel is its own
    small library), looked up here once per (device, kernel) — launch loops ask per launch."""
    key = (id(dev), dev.current_id(), file, name)
    fn = _functions.get(key)
    if fn is None:
        if name not in NAMES.get(file, ()):
            raise KeyError(f"{name} is not instantiated for {file}")
        fn = _functions[key] = _cuda.function(dev, file, name)
    return fn


def _null(dev):
    return np.uintp(0)


def _pp(dev, p):
    return _null(dev) if p is None else p


def _tp(d, p):
    return ctype(d.dtype), BOOL[p is not None]


# ----------------------------------------------------------------------------- plain FW (004 Fig. 4.1)
def run_naive(dev, d, p, n: int, cancel=None) -> int:
    t, b = _tp(d, p)
    k = kernel(dev, "fw.cu", f"fw_naive<{t},{b}>")
    threads = 256
    grid = max(1, min(dev.sms * 32, _cuda.blocks(n * n, threads)))
    for kk in range(n):
        if cancel is not None and kk % 256 == 0 and cancel():
            raise InterruptedError("cancelled")
        dev.launch(k, (grid,), (threads,), (d, _pp(dev, p), np.int32(n), np.int32(kk)))
    return n


# ----------------------------------------------------------------------------- paper 002, V2–V5
def run_v2(dev, d, p, n: int, cancel=None) -> int:
    t, b = _tp(d, p)
    dev.launch(kernel(dev, "fw_paper002.cu", f"fw_v2<{t},{b}>"), (1,), (1,), (d, _pp(dev, p), np.int32(n)))
    return 1


def work_split(n: int, grid: int, block: int) -> int:
    """Paper 002 §II: cells per thread, ceil(n² / (blocksInGrid · threadsPerBlock))."""
    return max(1, -(-(n * n) // (grid * block)))


def v3_launch_config(dev, k) -> tuple[int, int]:
    """Paper 002 §II: the grid and block sizes cudaOccupancyMaxPotentialBlockSize returns."""
    return dev.potential_block(k)


def run_v3(dev, d, p, n: int, cancel=None) -> int:
    t, b = _tp(d, p)
    k = kernel(dev, "fw_paper002.cu", f"fw_v3<{t},{b}>")
    grid, block = v3_launch_config(dev, k)
    work = np.int64(work_split(n, grid, block))
    for kk in range(n):
        if cancel is not None and kk % 256 == 0 and cancel():
            raise InterruptedError("cancelled")
        dev.launch(k, (grid,), (block,), (d, _pp(dev, p), np.int32(n), np.int32(kk), work))
    return n


def resident_config(dev, k) -> tuple[int, int]:
    """Block size from the occupancy API, grid = every block that can be resident at once
    (the grid barrier deadlocks otherwise)."""
    _grid, block = dev.potential_block(k)
    per_sm = dev.active_blocks(k, block)
    return max(1, per_sm) * dev.sms, block


def run_v45(dev, d, p, n: int, version: int = 4, coop: bool = False, cancel=None) -> int:
    """V4 (grid barrier) or V5 (plus D(i,k) in a register), one launch for all k."""
    t, b = _tp(d, p)
    file = "fw_coop.cu" if coop else "fw_paper002.cu"
    k = kernel(dev, file, f"fw_v{version}<{t},{b},{BOOL[coop]}>")
    grid, block = resident_config(dev, k)
    flags = dev.xp.zeros(grid, dtype=np.int32)
    work = np.int64(work_split(n, grid, block))
    dev.launch(k, (grid,), (block,), (d, _pp(dev, p), np.int32(n), work, flags), cooperative=coop)
    return 1


# ----------------------------------------------------------------------------- 004: iterative blocked
def run_blocked(dev, d, p, n: int, tile: int, cancel=None) -> int:
    """Three-phase blocked FW (Venkataraman et al.), 16×16 threads per tile; n a multiple of tile."""
    t, b = _tp(d, p)
    nt = n // tile
    k1, k2, k3 = (kernel(dev, "fw.cu", f"fw_phase{i}<{t},{b},{tile}>") for i in (1, 2, 3))
    pp = _pp(dev, p)
    for K in range(nt):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        args = (d, pp, np.int32(n), np.int32(K))
        dev.launch(k1, (1,), (16, 16), args)
        if nt > 1:
            dev.launch(k2, (nt, 2), (16, 16), args)
            dev.launch(k3, (nt, nt), (16, 16), args)
    return 3 * nt - (2 if nt == 1 else 0)


def run_thesis(dev, d, p, n: int, tile: int, l: int, method: str = "mm", dpx: bool = False, cancel=None) -> int:
    """Paper 004 §4.3: pivot, pivot row+column and non-pivot kernels per K (3n/t launches);
    ``method`` "mm" (matrix-multiplication based, l sub-blocks per block) or "2l" (two-level
    blocking, l tiles per block); n a multiple of 64 and of the tile."""
    t, b = _tp(d, p)
    op = 1 if (dpx and t == "int" and p is None) else 0
    hp, hr = THESIS_H_PIVOT[tile], THESIS_H_ROWCOL
    kp = kernel(dev, "fw_thesis.cu", f"fw_th_pivot<{t},{b},{tile},{hp}>")
    kr = kernel(dev, "fw_thesis.cu", f"fw_th_rowcol<{t},{b},{tile},{hr}>")
    if method == "mm":
        kn = kernel(dev, "fw_thesis.cu", f"fw_mm_nonpivot<{t},{op},{b},{tile}>")
        grid_n, block_n = (-(-n // 64 // l), n // 16 - tile // 16), (64,)
    else:
        tp = TWO_LEVEL_TP[tile]
        kn = kernel(dev, "fw_thesis.cu", f"fw_2l_nonpivot<{t},{op},{b},{tile},{tp}>")
        grid_n, block_n = (-(-(n // tile) // l), n // tile), (tile * tp,)
    nt, pp, launches = n // tile, _pp(dev, p), 0
    for K in range(nt):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        dev.launch(kp, (1,), (hp, tile), (d, pp, np.int32(n), np.int32(K * tile)))
        launches += 1
        if nt > 1:
            args = (d, pp, np.int32(n), np.int32(K))
            dev.launch(kr, (nt, 2), (hr, tile), args)
            dev.launch(kn, grid_n, block_n, args + (np.int32(l),))
            launches += 2
    return launches


# ----------------------------------------------------------------------------- min-plus products
def gemm(dev, cin, cout, a, b, m: int, nn: int, k: int, *, lda: int, ldb: int, ldci: int, ldco: int,
         pcin=None, pcout=None, pb=None, cfg=DEFAULT_GEMM, dpx: bool = False, skip_rows=(), skip_cols=(),
         dtype=None) -> int:
    """Cout = min(Cin, A ⊗ B) for A: m × k, B: k × nn (device pointers or arrays; row-major with
    the given leading dimensions).  Predecessors when ``pb`` (B's rows) is given.  ``skip_rows`` /
    ``skip_cols``: up to two (start, stop) ranges whose elements are not stored.  ``dtype``: the
    element type when the matrices are given as addresses (:func:`offset`)."""
    t = ctype(dtype if dtype is not None else cin.dtype)
    pred = pb is not None
    shape = GEMM_PRED if pred else (GEMM_CONFIGS[cfg] if isinstance(cfg, str) else tuple(cfg))
    op = 1 if (dpx and t == "int" and not pred) else 0
    kern = kernel(dev, "fw_gemm.cu", gemm_name(t, op, pred, shape))
    bm, bn, _bk, tm, tn, _mb = shape
    z = _null(dev)
    masks = [np.int32(v) for rng in (skip_rows, skip_cols) for v in ranges(rng)]
    dev.launch(kern, (-(-nn // bn), -(-m // bm)), ((bm // tm) * (bn // tn),),
               (cin, cout, z if pcin is None else pcin, z if pcout is None else pcout, np.int32(ldci),
                np.int32(ldco), a, np.int32(lda), b, z if pb is None else pb, np.int32(ldb), np.int32(m),
                np.int32(nn), np.int32(k), *masks))
    return 1


def ranges(r) -> tuple[int, int, int, int]:
    """Up to two (start, stop) ranges as four ints: ``(a, b)`` or ``((a, b), (c, d))``."""
    r = tuple(r)
    if r and not isinstance(r[0], (tuple, list)):
        r = (r,)
    flat = [int(v) for pair in r for v in pair] + [0] * (4 - 2 * len(r))
    if len(flat) != 4:
        raise ValueError("at most two skip ranges")
    return tuple(flat)


def _closure_and_panels(dev, d, p, n, kb, tile, op):
    t, b = _tp(d, p)
    args = (d, _pp(dev, p), np.int32(n), np.int32(kb))
    dev.launch(kernel(dev, "fw_gemm.cu", f"fw_fast_closure<{t},{b},{tile}>"), (1,), ((tile // 4) ** 2,), args)
    if n == tile:
        return 1
    kp = kernel(dev, "fw_gemm.cu", f"fw_fast_panels<{t},{op},{b},{tile},{tile // 16}>")
    dev.launch(kp, (n // tile, 2), (256,), args)
    return 2


def _band_product(dev, d, p, n, kb, tile, cfg, dpx, rows=None, cols=None, skip_rows=(), skip_cols=()):
    """D[rows, cols] ← min(D, D[rows, band] ⊗ D[band, cols]) for the band [kb, kb + tile); rows / cols:
    (start, stop) or None (all)."""
    r0, r1 = rows or (0, n)
    c0, c1 = cols or (0, n)
    rel = lambda rg, o: tuple((a - o, b - o) for a, b in rg)  # noqa: E731  (masks in block coordinates)
    return gemm(dev, offset(d, r0 * n + c0), offset(d, r0 * n + c0), offset(d, r0 * n + kb), offset(d, kb * n + c0),
                r1 - r0, c1 - c0, tile, lda=n, ldb=n, ldci=n, ldco=n,
                pcin=None if p is None else offset(p, r0 * n + c0), pcout=None if p is None else offset(p, r0 * n + c0),
                pb=None if p is None else offset(p, kb * n + c0), cfg=cfg, dpx=dpx,
                skip_rows=rel(skip_rows, r0), skip_cols=rel(skip_cols, c0), dtype=d.dtype)


def run_fast_step(dev, d, p, n: int, kb: int, tile: int = 64, cfg=DEFAULT_GEMM, dpx: bool = False) -> int:
    """One K step of :func:`run_fast` without look-ahead (pivot band [kb, kb + tile)); launches."""
    op = 1 if (dpx and ctype(d.dtype) == "int" and p is None) else 0
    launches = _closure_and_panels(dev, d, p, n, kb, tile, op)
    if n == tile:
        return launches
    band = ((kb, kb + tile),)
    return launches + _band_product(dev, d, p, n, kb, tile, cfg, dpx, skip_rows=band, skip_cols=band)


def run_fast(dev, d, p, n: int, tile: int = 64, cfg=DEFAULT_GEMM, dpx: bool = False, lookahead: bool = True,
             cancel=None) -> int:
    """Our three-phase FW: per K, close the pivot tile (one block), then both panels as min-plus
    products with it (one launch), then every other element as one min-plus product of depth
    ``tile`` (register-tiled GEMM, pivot bands not stored); n a multiple of 128 and of tile.

    ``lookahead``: step K first updates the next band K + 1 (two thin products), then the next
    pivot closure and panels run on a second stream while the big product of step K (which skips
    both bands) fills the GPU — the one-block closure no longer idles the other SMs."""
    op = 1 if (dpx and ctype(d.dtype) == "int" and p is None) else 0
    if not lookahead or n <= tile:
        launches = 0
        for kb in range(0, n, tile):
            if cancel is not None and cancel():
                raise InterruptedError("cancelled")
            launches += run_fast_step(dev, d, p, n, kb, tile, cfg, dpx)
        return launches
    side = dev.stream()
    launches = _closure_and_panels(dev, d, p, n, 0, tile, op)
    for kb in range(0, n, tile):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        band = (kb, kb + tile)
        nb = kb + tile
        if nb < n:
            nxt = (nb, nb + tile)
            # the next band: its rows (all columns), then its columns (rows outside both bands)
            launches += _band_product(dev, d, p, n, kb, tile, THIN_GEMM, dpx, rows=nxt, skip_cols=(band,))
            launches += _band_product(dev, d, p, n, kb, tile, THIN_GEMM, dpx, cols=nxt, skip_rows=(band, nxt))
            ready = dev.record()
            with dev.on(side):
                dev.wait(ready)
                launches += _closure_and_panels(dev, d, p, n, nb, tile, op)
                done = dev.record()
            launches += _band_product(dev, d, p, n, kb, tile, cfg, dpx, skip_rows=(band, nxt), skip_cols=(band, nxt))
            dev.wait(done)
        else:
            launches += _band_product(dev, d, p, n, kb, tile, cfg, dpx, skip_rows=(band,), skip_cols=(band,))
    return launches


#: captured CUDA graphs of run_fast, by (GPU, matrix addresses, n, type, tile, cfg, dpx, look-ahead)
GRAPHS: dict = {}
GRAPH_CACHE = 8


def run_fast_graph(dev, d, p, n: int, tile: int = 64, cfg=DEFAULT_GEMM, dpx: bool = False, lookahead: bool = False,
                   cancel=None) -> int:
    """:func:`run_fast` captured once into a CUDA graph (CuPy stream capture, relaxed mode) and replayed
    as one graph launch: the same kernels with the same arguments in the same order (bit-identical
    results), without the Python launch loop and with the driver's cheaper in-graph launches.  A
    graph is kept per matrix address (and shape, type and options; the last :data:`GRAPH_CACHE`):
    a later run on the same buffer — CuPy's memory pool hands the same block to the next solve of
    that size — launches it again without capturing.  The host device has no graphs: there this
    is run_fast.  Returns the kernel launches inside the graph."""
    if dev.emulated:
        return run_fast(dev, d, p, n, tile, cfg, dpx, lookahead, cancel)
    cp = dev.cp                      # the layer's CuPy (a CUDA device)
    key = (dev.current_id(), d.data.ptr, None if p is None else p.data.ptr, n, d.dtype.str, tile, str(cfg), dpx,
           lookahead)
    entry = GRAPHS.get(key)
    if entry is None:
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        cap = cp.cuda.Stream(non_blocking=True)
        with cap:
            # relaxed: a kernel's first use may load its module during the capture
            cap.begin_capture(cp.cuda.runtime.streamCaptureModeRelaxed)
            try:
                launches = run_fast(dev, d, p, n, tile, cfg, dpx, lookahead)
            finally:
                graph = cap.end_capture()
        while len(GRAPHS) >= GRAPH_CACHE:
            GRAPHS.pop(next(iter(GRAPHS)))
        entry = GRAPHS[key] = (graph, launches)
    graph, launches = entry
    graph.launch(cp.cuda.get_current_stream())
    return launches


def persist_tile(tile: int, pred: bool) -> int:
    """The pivot tile the persistent kernel runs for ``tile`` (predecessors: 64)."""
    return PERSIST_TILE if pred else int(tile)


def run_fast_persistent(dev, d, p, n: int, cfg=DEFAULT_GEMM, dpx: bool = False, cancel=None,
                        tile: int = PERSIST_TILE) -> int:
    """fw-fast as one persistent cooperative kernel (``cuda/fw_persist.cu``): the closure, the panels
    and the non-pivot product of every pivot band in one launch, the next band's closure beside the
    current product (look-ahead inside the kernel, a work queue per band, one grid barrier per band).
    The same arithmetic per element as :func:`run_fast` with the same tile: bit-identical results.
    n a multiple of 128; ``tile`` 64 or 128 (128: no predecessors — they run tile 64 — and ``cfg`` one
    of :data:`PERSIST_128_CONFIGS`); ``cfg`` one of :data:`PERSIST_CONFIGS` (predecessors:
    :data:`GEMM_PRED`).  Not cancellable once launched (one launch)."""
    if n % 128:
        raise ValueError(f"the persistent fw-fast needs n a multiple of 128 (got {n})")
    t = ctype(d.dtype)
    pred = p is not None
    tile = persist_tile(tile, pred)
    allowed = PERSIST_CONFIGS if tile == 64 else PERSIST_128_CONFIGS
    if tile not in PERSIST_TILES:
        raise ValueError(f"persistent tile must be one of {PERSIST_TILES} (got {tile})")
    if pred:
        shape = GEMM_PRED
    else:
        if cfg not in allowed:
            raise ValueError(f"persistent cfg at tile {tile} must be one of {', '.join(allowed)} (got {cfg!r})")
        shape = GEMM_CONFIGS[cfg]
    # DPX: the explicit intrinsic is instantiated for the default configuration only (fewer kernels to
    # compile); elsewhere op 0, which nvcc fuses into the same VIADDMNMX (RESULTS.md FW §3) — exact either way
    op = 1 if (dpx and t == "int" and not pred and cfg == DEFAULT_GEMM) else 0
    if cancel is not None and cancel():
        raise InterruptedError("cancelled")
    k = kernel(dev, "fw_persist.cu", persist_name(t, op, pred, shape, tile))
    grid = max(1, dev.active_blocks(k, 256, 0)) * dev.sms
    sync = dev.xp.zeros(3 * (n // tile), dtype=np.int32)
    dev.launch(k, (grid,), (256,), (d, _pp(dev, p), np.int32(n), sync), cooperative=True)
    return 1


def offset(a, elements: int):
    """The device address ``elements`` items into the array ``a``, as a 64-bit kernel argument (an
    integer: no array object per launch — fw-fast's launch loop is host-bound otherwise)."""
    base = a.data.ptr if hasattr(a.data, "ptr") else a.ctypes.data
    return np.uint64(base + int(elements) * a.itemsize)


def run_recursive(dev, d, p, n: int, t_r: int = 32, cfg=DEFAULT_GEMM, dpx: bool = False, cancel=None) -> int:
    """Paper 004 §4.2.2 (Fig. 4.4; Buluç et al.): R-Kleene recursion on quadrants, min-plus
    products between, the thesis's pivot kernel as the base case (n ≤ t_R).  Quadrant splits
    are multiples of t_R (n a multiple of t_R).  Products whose output is one of their inputs
    go through a scratch block (then copied back): in place they would race between blocks."""
    t = ctype(d.dtype)
    h = THESIS_H_PIVOT[t_r]
    kb = kernel(dev, "fw_thesis.cu", f"fw_th_pivot<{t},{BOOL[p is not None]},{t_r},{h}>")
    xp = dev.xp
    scratch = xp.empty((n // 2 + t_r) ** 2, dtype=d.dtype)
    pscratch = None if p is None else xp.empty((n // 2 + t_r) ** 2, dtype=np.int32)
    count = [0]

    def mp(ci, ai, bi, rows, cols, inner, alias):
        """C ← min(C, A ⊗ B) on blocks given by their (row, col) corners in d."""
        (cr, cc), (ar, ac), (br, bc) = ci, ai, bi
        out, pout, ldo = offset(d, cr * n + cc), None if p is None else offset(p, cr * n + cc), n
        if alias:
            out, pout, ldo = scratch, pscratch, cols
        count[0] += gemm(dev, offset(d, cr * n + cc), out, offset(d, ar * n + ac), offset(d, br * n + bc),
                         rows, cols, inner, lda=n, ldb=n, ldci=n, ldco=ldo,
                         pcin=None if p is None else offset(p, cr * n + cc), pcout=pout,
                         pb=None if p is None else offset(p, br * n + bc), cfg=cfg, dpx=dpx, dtype=d.dtype)
        if alias:
            view = d.reshape(n, n)[cr:cr + rows, cc:cc + cols]
            view[...] = scratch[:rows * cols].reshape(rows, cols)
            if p is not None:
                p.reshape(n, n)[cr:cr + rows, cc:cc + cols] = pscratch[:rows * cols].reshape(rows, cols)
            count[0] += 1

    def rec(o: int, s: int):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        if s <= t_r:
            dev.launch(kb, (1,), (h, t_r), (d, _pp(dev, p), np.int32(n), np.int32(o)))
            count[0] += 1
            return
        a = t_r * -(-(s // t_r) // 2)          # first half: ceil(s/t_R/2) tiles
        c = s - a
        o2 = o + a
        rec(o, a)                                                       # M11 = rec(M11)
        mp((o, o2), (o, o), (o, o2), a, c, a, alias=True)               # M12 = M11 · M12
        mp((o2, o), (o2, o), (o, o), c, a, a, alias=True)               # M21 = M21 · M11
        mp((o2, o2), (o2, o), (o, o2), c, c, a, alias=False)            # M22 = M22 + M21 · M12
        rec(o2, c)                                                      # M22 = rec(M22)
        mp((o2, o), (o2, o2), (o2, o), c, a, c, alias=True)             # M21 = M22 · M21
        mp((o, o2), (o, o2), (o2, o2), a, c, c, alias=True)             # M12 = M12 · M22
        mp((o, o), (o, o2), (o2, o), a, a, c, alias=False)              # M11 = M11 + M12 · M21

    rec(0, n)
    return count[0]
