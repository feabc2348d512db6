"""Paper 003's case study on the GPU: the CUDA kernels of both versions (the paper's original
mapping, Algorithm 1, and the occupancy-improved one, Algorithm 2), their compilation, the
cells-per-block choice and theoretical occupancy (Eqs. 7–10), and :class:`GPUSolver`, which runs
one version on a :class:`~kernels.occupancy.unstructured_mesh.Problem`.  The scheme and the
versions are described in :mod:`kernels.occupancy.unstructured`, which re-exports these names.
"""
from __future__ import annotations

import numpy as np

from .. import gpu
from ..errors import BackendUnavailable, InvalidParameter
from ..gpu.calculator import occupancy
from ..gpu.occupancy import device_spec, kernel_occupancy, kernel_resources
from ..gpu.specs import get_spec
from .unstructured_mesh import Problem, solution_points

#: registers per thread assumed for the T10 (CC 1.3) analysis — paper 003 Eq. 7 only says the
#: ~90 words per thread available are "enough", i.e. registers do not limit; nvcc for sm_13
#: is not available any more, so this is an assumption (any value ≤ 32 gives the same result)
T10_ASSUMED_REGS = 16


# --------------------------------------------------------------------------------- CUDA source

CUDA_SRC = r"""
// Paper 003 case study. Solution point i of cell c has global id c*SP + i; face points first
// (face f, point j at f*MF + j), then the inner points. real = float or double.
// AoS (original, Fig. 6a): u[gp*NPAR + p].  SoA (improved, Fig. 6b): u[p*npts + gp].

__device__ __forceinline__ void res_max(RESBITS* res, real m)
{   // residual max |rate| via the integer max of the bit patterns (valid for m >= 0)
    atomicMax(res, (RESBITS)REAL_AS_BITS(m));
}

// ---------------------------------------------------------------- original (Algorithm 1)
// Cell-oriented stage: one cell per block, one thread per solution point (paper §6.1).
extern "C" __global__ void cell_orig(const real* __restrict__ u, real* __restrict__ ccoef, real lam)
{
    __shared__ real su[SP * NPAR];
    const int c = blockIdx.x, i = threadIdx.x;
    const real* uc = u + (unsigned long long)c * SP * NPAR;      // Ptr = #SolPts * #Params * (#Cell - 1)
    for (int p = 0; p < NPAR; ++p) su[i * NPAR + p] = uc[i * NPAR + p];
    __syncthreads();
    for (int p = 0; p < NPAR; ++p) {
        real s = su[p];
        for (int j = 1; j < SP; ++j) s += su[j * NPAR + p];
        const real mean = s / (real)SP;
        ccoef[((unsigned long long)c * SP + i) * NPAR + p] = lam * (mean - su[i * NPAR + p]);
    }
}

// Edge-oriented stage: one edge per block, one thread per point on the edge (k-1 threads).
// ept: the left/right point pointers of each edge point (Fig. 5, step 2); -1 = boundary.
extern "C" __global__ void edge_orig(const real* __restrict__ u, real* __restrict__ ecoef,
                                     const int* __restrict__ ept, const real* __restrict__ g,
                                     const real* __restrict__ s_cell)
{
    const int q = blockIdx.x * MF + threadIdx.x;
    const int L = ept[2 * q], R = ept[2 * q + 1];
    const real gq = g[q];
    const real sL = s_cell[L / SP];
    const real sR = R >= 0 ? s_cell[R / SP] : (real)0;
    for (int p = 0; p < NPAR; ++p) {
        const real uL = u[(unsigned long long)L * NPAR + p];
        const real uR = R >= 0 ? u[(unsigned long long)R * NPAR + p] : (real)0;
        const real F = gq > 0 ? gq * uL : gq * uR;
        ecoef[(unsigned long long)L * NPAR + p] = -F * sL;
        if (R >= 0) ecoef[(unsigned long long)R * NPAR + p] = F * sR;
    }
}

// Update stage: one cell per block, one thread per solution point.
extern "C" __global__ void update_orig(real* __restrict__ u, const real* __restrict__ ccoef,
                                       const real* __restrict__ ecoef, real dt, RESBITS* res)
{
    __shared__ real red[SP];
    const unsigned long long base = ((unsigned long long)blockIdx.x * SP + threadIdx.x) * NPAR;
    real m = 0;
    for (int p = 0; p < NPAR; ++p) {
        const real r = ccoef[base + p] + ecoef[base + p];
        u[base + p] = u[base + p] + dt * r;
        m = fmax(m, fabs(r));
    }
    red[threadIdx.x] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int j = 1; j < SP; ++j) m = fmax(m, red[j]);
        res_max(res, m);
    }
}

// ---------------------------------------------------------------- improved (Algorithm 2)
// Cell and edge stages fused, several cells per block (blockDim.x = cells_per_block * SP),
// one thread per solution point, parameter-major data; the neighbour pointer array is read
// sequentially (Fig. 7b).  Dynamic shared memory: NPAR * blockDim.x reals.
extern "C" __global__ void celledge_impr(const real* __restrict__ u, real* __restrict__ rate,
                                         const int* __restrict__ nbr, const real* __restrict__ gpt,
                                         const real* __restrict__ s_cell, real lam, int ncells)
{
    extern __shared__ unsigned char shraw[];
    real* sh = reinterpret_cast<real*>(shraw);
    const int t = threadIdx.x, bd = blockDim.x;
    const int cpb = bd / SP;
    const int lc = t / SP, i = t - lc * SP;
    const int c = blockIdx.x * cpb + lc;
    const bool ok = lc < cpb && c < ncells;
    const unsigned long long npts = (unsigned long long)ncells * SP;
    const unsigned long long gp = (unsigned long long)c * SP + i;
    for (int p = 0; p < NPAR; ++p) sh[p * bd + t] = ok ? u[p * npts + gp] : (real)0;
    __syncthreads();
    if (!ok) return;
    const int first = t - i;
    const bool face = i < 3 * MF;
    const int nb = face ? nbr[gp] : -1;
    const real g = face ? gpt[gp] : (real)0;
    const real sc = s_cell[c];
    for (int p = 0; p < NPAR; ++p) {
        real s = sh[p * bd + first];
        for (int j = 1; j < SP; ++j) s += sh[p * bd + first + j];
        const real mean = s / (real)SP;
        const real ui = sh[p * bd + t];
        const real cc = lam * (mean - ui);
        real ce = 0;
        if (face) {
            const real un = nb >= 0 ? u[p * npts + nb] : (real)0;
            const real F = g > 0 ? g * ui : g * un;
            ce = -F * sc;
        }
        rate[p * npts + gp] = cc + ce;
    }
}

// Update: streaming over all NPAR * npts values, grid-stride, warp-reduced residual.
extern "C" __global__ void update_impr(real* __restrict__ u, const real* __restrict__ rate, real dt,
                                       long long n, RESBITS* res)
{
    real m = 0;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += (long long)gridDim.x * blockDim.x) {
        const real r = rate[k];
        u[k] = u[k] + dt * r;
        m = fmax(m, fabs(r));
    }
    for (int o = 16; o > 0; o >>= 1) m = fmax(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) res_max(res, m);
}
"""


def cuda_source(dtype, P: int, m: int, n_params: int) -> str:
    """The kernels' CUDA source for one configuration (self-contained, for NVRTC or nvcc)."""
    dbl = np.dtype(dtype) == np.dtype(np.float64)
    head = (f"#define SP {int(P)}\n#define MF {int(m)}\n#define NPAR {int(n_params)}\n"
            + ("typedef double real;\ntypedef unsigned long long RESBITS;\n"
               "#define REAL_AS_BITS(x) __double_as_longlong(x)\n" if dbl else
               "typedef float real;\ntypedef unsigned int RESBITS;\n#define REAL_AS_BITS(x) __float_as_uint(x)\n"))
    return head + CUDA_SRC


#: NVRTC options: no FMA contraction, so that a*b+c rounds as NumPy does
NVRTC_OPTIONS = ("--fmad=false",)
ORIGINAL_KERNELS = ("cell_orig", "edge_orig", "update_orig")
IMPROVED_KERNELS = ("celledge_impr", "update_impr")
UPDATE_BLOCK = 256

def _cupy():
    try:
        return gpu.device("cuda").cp
    except BackendUnavailable as exc:
        raise BackendUnavailable("the GPU versions of the case study need CuPy and a CUDA GPU "
                                 f"({exc}); the CPU reference runs anywhere") from exc


def get_module(dtype, P: int, m: int, n_params: int):
    """The GPU layer's module of one configuration (compiled once per device)."""
    _cupy()
    return gpu.device("cuda").module(cuda_source(dtype, P, m, n_params), options=NVRTC_OPTIONS,
                                     system="occupancy", prefix="UG")


# --------------------------------------------------------------------- cells per block (occupancy)

def paper_cells_per_block(P: int, warps: int = 2, warp_size: int = 32) -> int:
    """Paper 003's occupancy improvement on the T10: pack cells into blocks of ``warps`` warps
    (two warps → 16 of 32 warps active, i.e. the occupancy doubled from 25 % to 50 %)."""
    return max(1, (warps * warp_size) // int(P))


def best_cells_per_block(spec, P: int, regs: int, smem_per_cell: int = 0, max_threads: int | None = None) -> int:
    """Cells per block giving the most active solution-point threads per SM (Eqs. 9–10 with the
    full calculator), the smallest such block on ties.  ``spec``: a CC or ArchSpec."""
    spec = get_spec(spec)
    top = min(spec.max_threads_per_block, max_threads or spec.max_threads_per_block)
    best, best_cpb = -1, 1
    for cpb in range(1, top // int(P) + 1):
        r = occupancy(spec, cpb * P, regs, 0, cpb * smem_per_cell, strict=False)
        useful = r.active_blocks_per_sm * cpb * P
        if useful > best:
            best, best_cpb = useful, cpb
    return best_cpb


def case_study_occupancy(cc, k_minus_1: int = 2, inner: int = 1, n_params: int = 4, itemsize: int = 8,
                         regs: dict | int | None = None, cells_per_block: int | None = None) -> dict:
    """Theoretical occupancy of both versions' kernels on ``cc`` (a CC or ArchSpec).

    ``regs``: registers per thread, one number for all kernels or {kernel: regs} (from
    :func:`kernels.occupancy.gpu.kernel_resources` on a GPU); default :data:`T10_ASSUMED_REGS`.
    ``cells_per_block``: the improved version's packing (default: the paper's two warps).
    Returns {"original": {kernel: OccupancyResult}, "improved": {...}, "cells_per_block": n,
    "P": points per cell, "occupancy": {"original": …, "improved": …}} — the latter for the
    stage the paper analyses, the cell-oriented one (fused with the edge stage in Algorithm 2)."""
    m = int(k_minus_1)
    P = solution_points(m, int(inner))
    cpb = int(cells_per_block or paper_cells_per_block(P))

    def r_of(name):
        if isinstance(regs, dict):
            return int(regs.get(name, T10_ASSUMED_REGS))
        return int(regs if regs is not None else T10_ASSUMED_REGS)

    # launch shapes: (threads per block, static smem, dynamic smem), as GPUSolver launches them
    shapes = {
        "original": {"cell_orig": (P, P * n_params * itemsize, 0),
                     "edge_orig": (m, 0, 0),
                     "update_orig": (P, P * itemsize, 0)},
        "improved": {"celledge_impr": (cpb * P, 0, n_params * cpb * P * itemsize),
                     "update_impr": (UPDATE_BLOCK, 0, 0)},
    }
    out: dict = {"cells_per_block": cpb, "P": P}
    for version, ks in shapes.items():
        out[version] = {name: occupancy(cc, threads, r_of(name), st, dyn, strict=False)
                        for name, (threads, st, dyn) in ks.items()}
    out["occupancy"] = {"original": out["original"]["cell_orig"].occupancy,
                        "improved": out["improved"]["celledge_impr"].occupancy}
    return out


# ---------------------------------------------------------------------------------- GPU versions

class GPUSolver:
    """One GPU version (``"original"`` or ``"improved"``) of the case study on a :class:`Problem`."""

    def __init__(self, pb: Problem, version: str = "improved", cells_per_block: int | str | None = None):
        if version not in ("original", "improved"):
            raise InvalidParameter(f"unknown GPU version {version!r}: use original or improved")
        cp = _cupy()
        self.cp, self.pb, self.version = cp, pb, version
        self.mod = get_module(pb.dtype, pb.P, pb.m, pb.n_params)
        C, P, NP = pb.n_cells, pb.P, pb.n_params
        label = f"<{pb.dtype.name}, P={P}, k-1={pb.m}, NP={NP}>"
        self.kernels = {fn: self.mod.function(fn, label=fn + label)
                        for fn in (ORIGINAL_KERNELS if version == "original" else IMPROVED_KERNELS)}
        self.npts = C * P
        dbl = pb.dtype == np.dtype(np.float64)
        self.res = cp.zeros(1, dtype=np.uint64 if dbl else np.uint32)
        self.s_cell = cp.asarray(pb.s_cell)
        if version == "original":
            self.ept = cp.asarray(np.ascontiguousarray(pb.edge_pts.reshape(-1)))
            self.g = cp.asarray(pb.g_edge)
            self.ccoef = cp.zeros((self.npts * NP,), dtype=pb.dtype)
            self.ecoef = cp.zeros((self.npts * NP,), dtype=pb.dtype)    # inner points stay 0
            self.cells_per_block = 1
        else:
            self.nbr = cp.asarray(pb.nbr)
            self.gpt = cp.asarray(pb.g_pt)
            self.rate = cp.zeros((self.npts * NP,), dtype=pb.dtype)
            if cells_per_block in (None, "auto", "best"):
                regs = kernel_resources(self.kernels["celledge_impr"])["registers"]
                cells_per_block = best_cells_per_block(device_spec(), P, regs, NP * P * pb.dtype.itemsize,
                                                       max_threads=1024)
            elif cells_per_block == "paper":
                cells_per_block = paper_cells_per_block(P)
            cpb = int(cells_per_block)
            if not 1 <= cpb * P <= 1024:
                raise InvalidParameter(f"{cpb} cells × {P} points = {cpb * P} threads per block: must be 1 … 1024")
            self.cells_per_block = cpb
            dyn = NP * cpb * P * pb.dtype.itemsize
            if dyn > 48 * 1024:                  # opt in to more than 48 KB of dynamic shared memory
                self.kernels["celledge_impr"].max_dynamic_shared_size_bytes = dyn
            self.update_grid = int(min(-(-self.npts * NP // UPDATE_BLOCK), 65535 * 4))
        for ln in self.launches():            # the launch shapes in the registry ("My kernels" reads it)
            self.mod.function(ln["kernel"], block=ln["block"], shared_mem=ln["dyn_smem"])
        self.u = None
        self.reset()

    # ---------------------------------------------------------------- layout
    def to_device(self, u: np.ndarray):
        if self.version == "original":                                  # AoS, as (C, P, NP)
            return self.cp.asarray(np.ascontiguousarray(u).reshape(-1))
        return self.cp.asarray(np.ascontiguousarray(np.moveaxis(u, 2, 0)).reshape(-1))   # SoA

    def to_host(self, d=None) -> np.ndarray:
        d = self.u if d is None else d
        pb = self.pb
        h = self.cp.asnumpy(d)
        if self.version == "original":
            return h.reshape(pb.n_cells, pb.P, pb.n_params)
        return np.moveaxis(h.reshape(pb.n_params, pb.n_cells, pb.P), 0, 2).copy()

    def reset(self, u: np.ndarray | None = None) -> None:
        self.u = self.to_device(self.pb.u0 if u is None else u)

    # ---------------------------------------------------------------- launches
    def launches(self) -> list[dict]:
        """Each kernel's launch: name, grid, block, dynamic shared memory."""
        pb = self.pb
        if self.version == "original":
            return [{"kernel": "cell_orig", "grid": pb.n_cells, "block": pb.P, "dyn_smem": 0},
                    {"kernel": "edge_orig", "grid": pb.mesh.n_edges, "block": pb.m, "dyn_smem": 0},
                    {"kernel": "update_orig", "grid": pb.n_cells, "block": pb.P, "dyn_smem": 0}]
        bd = self.cells_per_block * pb.P
        return [{"kernel": "celledge_impr", "grid": -(-pb.n_cells // self.cells_per_block), "block": bd,
                 "dyn_smem": pb.n_params * bd * pb.dtype.itemsize},
                {"kernel": "update_impr", "grid": self.update_grid, "block": UPDATE_BLOCK, "dyn_smem": 0}]

    def step(self) -> None:
        """One iteration (no host synchronisation)."""
        pb, k = self.pb, self.kernels
        T = pb.dtype.type
        if self.version == "original":
            k["cell_orig"]((pb.n_cells,), (pb.P,), (self.u, self.ccoef, T(pb.lam)))
            k["edge_orig"]((pb.mesh.n_edges,), (pb.m,), (self.u, self.ecoef, self.ept, self.g, self.s_cell))
            k["update_orig"]((pb.n_cells,), (pb.P,), (self.u, self.ccoef, self.ecoef, T(pb.dt), self.res))
        else:
            bd = self.cells_per_block * pb.P
            k["celledge_impr"]((-(-pb.n_cells // self.cells_per_block),), (bd,),
                               (self.u, self.rate, self.nbr, self.gpt, self.s_cell, T(pb.lam),
                                np.int32(pb.n_cells)),
                               shared_mem=pb.n_params * bd * pb.dtype.itemsize)
            k["update_impr"]((self.update_grid,), (UPDATE_BLOCK,),
                             (self.u, self.rate, T(pb.dt), np.int64(self.npts * pb.n_params), self.res))

    def residual(self) -> float:
        """max |rate| of the iterations since the last call (reads the device, resets it)."""
        bits = self.cp.asnumpy(self.res)
        self.res.fill(0)
        return float(bits.view(np.float64 if bits.dtype == np.uint64 else np.float32)[0])

    def run(self, steps: int, tol: float = 0.0, check_every: int = 1) -> tuple[np.ndarray, list[float]]:
        """``steps`` iterations from the current state (the residual read every ``check_every``);
        returns (u on the host as (C, P, NP), residual history)."""
        hist = []
        for s in range(int(steps)):
            self.step()
            if (s + 1) % check_every == 0 or s == steps - 1:
                r = self.residual()
                hist.append(r)
                if r < tol:
                    break
        return self.to_host(), hist

    def time_per_step(self, steps: int = 20) -> float:
        """Seconds per iteration (CUDA events, after a warm-up; residual not read back)."""
        self.step()
        with gpu.timing.Stopwatch("cuda") as sw:
            for _ in range(int(steps)):
                self.step()
        return sw.seconds / int(steps)

    def occupancy(self, spec=None) -> dict:
        """{kernel: dict} with registers, smem and theoretical + driver occupancy on this GPU."""
        spec = spec or device_spec()
        out = {}
        for ln in self.launches():
            out[ln["kernel"]] = kernel_occupancy(self.kernels[ln["kernel"]], ln["block"], ln["dyn_smem"], spec)
        return out
