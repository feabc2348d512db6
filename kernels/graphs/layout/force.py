"""ForceAtlas2-style force layout with particle-mesh repulsion, streamed (CPU: NumPy/SciPy; GPU: CuPy).

Forces on vertex i (Jacomy, Venturini, Heymann & Bastian 2014, "ForceAtlas2, a continuous graph
layout algorithm for handy network visualization", PLoS ONE 9(6): e98679, §"Forces"), with masses
M_i = (deg_i + 1)^β (``mass_exponent`` β: the paper's degree-weighted repulsion is β = 1; our default
β = 0, uniform masses, draws hub-and-spoke graphs such as Barabási–Albert with shorter edges
relative to the drawing, i.e. a lower edge ratio, :func:`~kernels.graphs.layout.layout_quality`):

* attraction along each edge, linear in the distance: F_a(i) = Σ_{j ∈ N(i)} (x_j − x_i)
  (edge weights are ignored: in this project they are distances, not affinities);
* repulsion between every pair: F_r(i) = k_r M_i Σ_{j ≠ i} M_j (x_i − x_j) / |x_i − x_j|²
  (k_r = ``scaling``), computed in O(n + G² log G) by a particle-mesh scheme (Hockney & Eastwood,
  "Computer Simulation Using Particles", 1988, ch. 5): the masses are deposited on a G × G grid
  spanning the layout's bounding square (cloud-in-cell), convolved with the 2D kernel Δ/(|Δ|² + ε²)
  (ε = ``softening`` cells) by FFT on a zero-padded 2G × 2G grid (no periodic images), and the field
  is interpolated back with the same cloud-in-cell weights.  Pairs closer than about a cell feel a
  softened repulsion; the grid follows the layout as it grows or shrinks;
* gravity toward the origin: F_g(i) = −k_g M_i x_i / |x_i| (k_g = ``gravity``).

Each vertex moves by F_i · s / (1 + √(s · swing_i)) with FA2's adaptive global speed s (swing and
traction, the jitter-tolerance estimate of Gephi's implementation, also used by networkx's
``forceatlas2_layout``).  Pinned vertices (:meth:`ForceLayout.pin`) feel no force and do not move.

Reproducible: the same seed gives the same layout on the same backend.  On the CPU every step is
deterministic NumPy; on the GPU the deposit uses 64-bit fixed-point atomics (integer addition is
order-independent), the attraction a prefix sum over the CSR arcs, and the reductions and FFTs are
deterministic, so two runs on the same device agree bit for bit.
"""
from __future__ import annotations

# Imports inside functions: SciPy's FFT, where used; slow to import, and `main.py --help` loads this module.
import functools
import math

import numpy as np

from ...errors import InvalidParameter
from .base import Layout, check_cancel, host_positions
from .force_gpu import GpuOps
from ...backend import current

#: FA2 parameters (networkx forceatlas2_layout's defaults for scaling, gravity and tolerance)
DEFAULTS = dict(scaling=2.0, gravity=1.0, jitter_tolerance=1.0, softening=1.0, mass_exponent=0.0)
#: the repulsion energy is summed over all pairs exactly up to this many vertices, by the grid above
EXACT_ENERGY_N = 5000


def grid_size(n: int, gpu: bool = False) -> int:
    """Default mesh size G.  CPU: the power of two ≥ √n, between 64 and 256 (the FFTs dominate an
    iteration there); GPU: the power of two ≥ 2√n, between 64 and 1024 (FFTs are cheap there, and a
    finer mesh resolves more of the near field)."""
    per = 2.0 if gpu else 1.0
    hi = 1024 if gpu else 256
    return int(min(hi, max(64, 2 ** math.ceil(math.log2(max(2.0, per * math.sqrt(n)))))))


@functools.lru_cache(maxsize=8)
def kernel_grids(G: int, softening: float):
    """The repulsion kernel Δ/(|Δ|² + ε²) (x and y parts) and the energy kernel ½ ln(|Δ|² + ε²) on
    the padded 2G × 2G grid in wrap-around order (offset a at index a mod 2G), as float32 host arrays
    (cached: callers must not modify them)."""
    P = 2 * G
    a = np.arange(P, dtype=np.float64)
    a[a >= G] -= P
    dy, dx = np.meshgrid(a, a, indexing="ij")
    r2 = dx * dx + dy * dy + float(softening) ** 2
    kx, ky = dx / r2, dy / r2
    kx[0, 0] = ky[0, 0] = 0.0
    kl = 0.5 * np.log(r2)
    return kx.astype(np.float32), ky.astype(np.float32), kl.astype(np.float32)


def cic_mesh(xp, G: int, x):
    """Cloud-in-cell indices (4, n) into the padded 2G × 2G grid (row = y), weights (4, n) and the cell
    size h of a G × G grid whose square spans the bounding box of ``x`` with one cell to spare."""
    P = 2 * G
    lo, hi = x.min(axis=0), x.max(axis=0)
    L = (hi - lo).max() * (G / (G - 2.0)) + 1e-6
    h = L / G
    origin = 0.5 * (lo + hi) - 0.5 * L
    u = (x - origin) / h - 0.5
    i0 = xp.clip(xp.floor(u), 0, G - 2)
    f = xp.clip(u - i0, 0.0, 1.0)
    i0 = i0.astype(np.int64)
    base = i0[:, 1] * P + i0[:, 0]
    idx = xp.stack([base, base + 1, base + P, base + P + 1])
    fx, fy = f[:, 0], f[:, 1]
    gx, gy = 1.0 - fx, 1.0 - fy
    w = xp.stack([gx * gy, fx * gy, gx * fy, fx * fy])
    return idx, w, h


class CpuOps:
    """NumPy/SciPy parts of an iteration: the edge sums, the mass deposit and the FFTs."""

    xp = np
    fused = False            # no fused forces()/iterate(): ForceLayout's array code runs

    def __init__(self, g):
        import scipy.fft
        csr = g.csr()
        self.A = csr.to_scipy(weighted=False).astype(np.float32)
        self.deg = g.degrees().astype(np.float32)[:, None]
        self.fft = scipy.fft

    def rfft2(self, a):
        return self.fft.rfft2(a, workers=-1)

    def irfft2(self, a, s):
        return self.fft.irfft2(a, s=s, workers=-1)

    def attraction(self, x):
        """Σ_{j ∈ N(i)} (x_j − x_i) for every vertex (A x − deg · x, float32: the layout is centred on
        the origin, so the two terms are of the size of the drawing)."""
        out = np.empty_like(x)
        for c in range(2):                     # two matvecs beat one (n, 2) matmul in scipy
            xc = np.ascontiguousarray(x[:, c])
            out[:, c] = self.A @ xc - self.deg[:, 0] * xc
        return out

    @staticmethod
    def deposit(idx, w, size):
        return np.bincount(idx, weights=w, minlength=size).astype(np.float32)

    @staticmethod
    def scalar(v):
        return np.float64(v)


def make_ops(g, backend, total_mass: float):
    if backend.is_gpu:
        return GpuOps(g, backend, total_mass)
    return CpuOps(g)


class ForceLayout:
    """A ForceAtlas2-style layout advanced in steps (the GUI streams it; see the module docstring).

    ``backend``: a :class:`kernels.backend.Backend` (None: the selected one); ``seed`` fixes the
    initial positions (uniform in a disc) unless ``pos0`` (n, 2) is given; keyword parameters:
    ``scaling`` (k_r), ``gravity`` (k_g), ``jitter_tolerance``, ``softening`` (cells),
    ``mass_exponent`` (β, 0 … 2) and ``grid`` (G; default :func:`grid_size`).

    One iteration costs O(n + m + G² log G); :meth:`step` does no host synchronisation on the GPU,
    so a caller streaming the layout (the Graphs workspace's worker thread) calls it in small
    chunks (``step(1)`` … ``step(10)``), checks for pause/cancel between them and reads
    :meth:`positions` (on the device) or :meth:`positions_host`.  :meth:`pin` holds a dragged
    vertex; the others follow it.
    """

    def __init__(self, g, *, backend=None, seed=0, pos0=None, **params):
        unknown = set(params) - set(DEFAULTS) - {"grid"}
        if unknown:
            raise InvalidParameter(f"unknown force-layout parameter(s) {', '.join(sorted(unknown))}: "
                                   f"use {', '.join(list(DEFAULTS) + ['grid'])}")
        self.params = {**DEFAULTS, **{k: float(v) for k, v in params.items() if k != "grid"}}
        for k in ("scaling", "jitter_tolerance", "softening"):
            if not self.params[k] > 0:
                raise InvalidParameter(f"force layout: {k} must be > 0 (got {self.params[k]})")
        if not 0 <= self.params["mass_exponent"] <= 2:
            raise InvalidParameter(f"force layout: mass_exponent must be 0 … 2 (got {self.params['mass_exponent']})")
        if not self.params["gravity"] >= 0:
            raise InvalidParameter(f"force layout: gravity must be ≥ 0 (got {self.params['gravity']})")
        self.g = g
        self.backend = backend if backend is not None else current()
        self.G = int(params.get("grid") or grid_size(g.n, self.backend.is_gpu))
        if not 8 <= self.G <= 4096:
            raise InvalidParameter(f"force layout: grid must be 8 … 4096 cells (got {self.G})")
        n = g.n
        mass = self.masses()
        self.total_mass = float(mass.sum())
        self.ops = make_ops(g, self.backend, self.total_mass)
        xp = self.xp = self.ops.xp
        self.mass = xp.asarray(mass.astype(np.float32))
        kx, ky, kl = kernel_grids(self.G, self.params["softening"])
        self.khat_x = self.ops.rfft2(xp.asarray(kx))
        self.khat_y = self.ops.rfft2(xp.asarray(ky))
        self._kl = kl
        if pos0 is None:
            rng = np.random.default_rng(seed)
            r = math.sqrt(max(n, 1)) * np.sqrt(rng.random(n))
            t = 2.0 * np.pi * rng.random(n)
            pos0 = np.stack([r * np.cos(t), r * np.sin(t)], axis=1)
        else:
            pos0 = np.asarray(pos0, dtype=np.float64)
            if pos0.shape != (n, 2) or not np.isfinite(pos0).all():
                raise InvalidParameter(f"force layout: pos0 must be finite, shape ({n}, 2) (got {pos0.shape})")
        self.x = xp.asarray(pos0.astype(np.float32))
        self.f_prev = xp.zeros((n, 2), dtype=np.float32)
        self.free = xp.ones((n, 1), dtype=np.float32)       # 0 for pinned vertices
        self.speed = self.ops.scalar(1.0)
        self.speed_eff = self.ops.scalar(1.0)
        self.iteration = 0

    def masses(self) -> np.ndarray:
        """M_i = (deg_i + 1)^β, float64 on the host."""
        return (self.g.degrees() + 1).astype(np.float64) ** self.params["mass_exponent"]

    # ------------------------------------------------------------------ the grid
    def _density_hat(self, idx, w):
        P = 2 * self.G
        rho = self.ops.deposit(idx.ravel(), (w * self.mass[None, :]).ravel(), P * P).reshape(P, P)
        return self.ops.rfft2(rho)

    def _interpolate(self, field, idx, w):
        fr = field.ravel()
        return fr[idx[0]] * w[0] + fr[idx[1]] * w[1] + fr[idx[2]] * w[2] + fr[idx[3]] * w[3]

    def forces(self, x=None):
        """The total force (n, 2) float32 on every vertex at positions ``x`` (default: current)."""
        x = self.x if x is None else x
        if self.ops.fused:
            return self.ops.forces(self, x)
        xp, P, p = self.xp, 2 * self.G, self.params
        idx, w, h = cic_mesh(xp, self.G, x)
        rh = self._density_hat(idx, w)
        ex = self._interpolate(self.ops.irfft2(rh * self.khat_x, s=(P, P)), idx, w)
        ey = self._interpolate(self.ops.irfft2(rh * self.khat_y, s=(P, P)), idx, w)
        coef = (p["scaling"] / h) * self.mass
        f = self.ops.attraction(x)
        f += xp.stack([coef * ex, coef * ey], axis=1).astype(np.float32)
        if p["gravity"] > 0:
            r = xp.sqrt(x[:, 0] * x[:, 0] + x[:, 1] * x[:, 1])
            gcoef = -p["gravity"] * self.mass / xp.maximum(r, 1e-12)
            f += (gcoef[:, None] * x).astype(np.float32)
        return f * self.free

    # ------------------------------------------------------------------ iterations
    def _iterate(self):
        if self.ops.fused:
            self.ops.iterate(self)
            self.iteration += 1
            return
        xp, n = self.xp, self.g.n
        f = self.forces()
        d, s = f - self.f_prev, f + self.f_prev
        swing_i = xp.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
        traction_i = 0.5 * xp.sqrt(s[:, 0] * s[:, 0] + s[:, 1] * s[:, 1])
        swing = (self.mass * swing_i).sum(dtype=np.float64)
        traction = (self.mass * traction_i).sum(dtype=np.float64)
        # adaptive speed (FA2 paper's swing/traction rule; Gephi's jitter-tolerance estimate)
        tol = self.params["jitter_tolerance"]
        est = 0.05 * math.sqrt(n)
        jt = tol * xp.maximum(math.sqrt(est), xp.minimum(10.0, est * traction / float(n) ** 2))
        eff = self.speed_eff
        jumpy = (traction > 0) & (swing > 2.0 * traction)
        eff = xp.where(jumpy & (eff > 0.05), 0.5 * eff, eff)
        jt = xp.where(jumpy, xp.maximum(jt, tol), jt)
        target = xp.where(swing > 0, jt * eff * traction / xp.maximum(swing, 1e-300), 1e30)
        over = swing > jt * traction
        eff = xp.where(over, xp.where(eff > 0.05, 0.7 * eff, eff),
                       xp.where(self.speed < 1000.0, 1.3 * eff, eff))
        self.speed_eff = eff
        self.speed = self.speed + xp.minimum(target - self.speed, 0.5 * self.speed)
        factor = (self.speed / (1.0 + xp.sqrt(self.speed * swing_i))).astype(np.float32)
        self.x += f * factor[:, None]
        self.f_prev = f
        self.iteration += 1

    def step(self, iterations: int = 1) -> None:
        """Advance ``iterations`` FA2 iterations (no host synchronisation on the GPU)."""
        for _ in range(int(iterations)):
            self._iterate()

    def run(self, iterations: int, progress=None, cancel=None, chunk: int | None = None) -> None:
        """Advance ``iterations`` in chunks, calling ``progress(fraction)`` and checking ``cancel()``
        between them (InterruptedError); on the GPU each chunk ends with a synchronisation so that
        cancelling acts within one chunk."""
        if chunk is None:
            work = self.g.n + self.g.m
            chunk = 25 if self.backend.is_gpu else max(1, min(50, 400_000 // max(1, work)))
        done = 0
        while done < iterations:
            check_cancel(cancel)
            k = min(chunk, iterations - done)
            self.step(k)
            if self.backend.is_gpu:
                self.backend.synchronize()
            done += k
            if progress is not None:
                progress(done / iterations)
        check_cancel(cancel)

    # ------------------------------------------------------------------ access and dragging
    def positions(self):
        """The current positions (n, 2) float32 on the backend (no copy; updated in place by step)."""
        return self.x

    def positions_host(self) -> np.ndarray:
        """A host copy of the current positions, (n, 2) float32 (synchronises the GPU)."""
        return host_positions(self.x).copy() if not self.backend.is_gpu else host_positions(self.x)

    def _check_vertex(self, i) -> int:
        i = int(i)
        if not 0 <= i < self.g.n:
            raise InvalidParameter(f"vertex {i} is outside the graph (vertices 0 … {self.g.n - 1})")
        return i

    def pin(self, i: int, xy) -> None:
        """Put vertex ``i`` at ``xy`` and keep it there (it feels no force) until :meth:`unpin`."""
        i = self._check_vertex(i)
        x, y = (float(v) for v in xy)
        if not (math.isfinite(x) and math.isfinite(y)):
            raise InvalidParameter(f"pin: position ({x}, {y}) is not finite")
        self.x[i, 0], self.x[i, 1] = x, y
        self.free[i, 0] = 0.0
        self.f_prev[i] = 0.0

    def unpin(self, i: int) -> None:
        """Let vertex ``i`` move again."""
        self.free[self._check_vertex(i), 0] = 1.0

    # ------------------------------------------------------------------ energy
    def energy(self) -> float:
        """FA2's total potential at the current positions (the forces are its negative gradient):

        E = Σ_edges |x_u − x_v|² / 2  −  k_r Σ_{i<j} M_i M_j ln |x_i − x_j|  +  k_g Σ_i M_i |x_i|.

        The pair sum is exact (O(n²), in blocks) up to :data:`EXACT_ENERGY_N` vertices; above, it is
        the particle-mesh estimate (½ Σ_i M_i φ(x_i) with the softened log kernel on the grid, own
        cell included).  Synchronises the GPU (a float is returned)."""
        x = self.positions_host().astype(np.float64)
        m = self.masses()
        p = self.params
        e = self.g.edges
        d = x[e[:, 0]] - x[e[:, 1]]
        att = 0.5 * float((d * d).sum())
        grav = p["gravity"] * float((m * np.sqrt((x * x).sum(axis=1))).sum())
        return att - p["scaling"] * self._log_pairs(x, m) + grav

    def _log_pairs(self, x, m) -> float:
        """Σ_{i<j} M_i M_j ln |x_i − x_j|."""
        n = x.shape[0]
        if n <= EXACT_ENERGY_N:
            total = 0.0
            for s in range(0, n, 512):
                xs = x[s:s + 512]
                d2 = ((xs[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
                rows = np.arange(s, s + xs.shape[0])
                upper = np.arange(n)[None, :] > rows[:, None]
                lg = 0.5 * np.log(np.where(upper, np.maximum(d2, 1e-300), 1.0))
                total += float((m[s:s + 512, None] * m[None, :] * lg).sum())
            return total
        idx, w, h = cic_mesh(np, self.G, x)
        P = 2 * self.G
        import scipy.fft
        rho = np.bincount(idx.ravel(), weights=(w * m[None, :]).ravel(), minlength=P * P).reshape(P, P)
        phi = scipy.fft.irfft2(scipy.fft.rfft2(rho) * scipy.fft.rfft2(self._kl.astype(np.float64)), s=(P, P))
        self_pot = (m * m).sum() * 0.5 * math.log(self.params["softening"] ** 2)
        grid_sum = 0.5 * (float((m * (phi.ravel()[idx] * w).sum(axis=0)).sum()) - self_pot)
        return grid_sum + math.log(h) * 0.5 * (m.sum() ** 2 - (m * m).sum())


class ForceMethod(Layout):
    name = "force"
    help = ("ForceAtlas2-style force layout (Jacomy et al. 2014): linear attraction along edges, 1/d "
            "repulsion between all pairs by a particle-mesh FFT, gravity, adaptive speed; seeded; GPU (CuPy) "
            "or CPU (NumPy/SciPy)")
    iterative = True
    gpu = True
    default_iterations = 500

    def run(self, g, backend, iterations=None, seed=0, progress=None, cancel=None, **params):
        check_cancel(cancel)
        lay = ForceLayout(g, backend=backend, seed=seed, **params)
        it = self.default_iterations if iterations is None else int(iterations)
        if it < 0:
            raise InvalidParameter(f"layout iterations must be ≥ 0 (got {it})")
        lay.run(it, progress, cancel)
        return lay.positions_host()
