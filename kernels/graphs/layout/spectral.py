"""Spectral layout: degree-normalised Laplacian eigenvectors, per connected component.

Koren 2005 ("Drawing graphs by eigenvectors: theory and practice", Computers & Mathematics with
Applications 49: 1867–1888, §4): the coordinates are the generalised eigenvectors u₂, u₃ of
L u = μ D u with the smallest non-zero μ.  We take them as u = D^{-1/2} v from the top eigenvectors
v of the lazy normalised adjacency M = (I + D^{-1/2} A D^{-1/2}) / 2 (eigenvalues in [0, 1], the
top one D^{1/2}·1 belongs to μ = 0 and is dropped): ``scipy.sparse.linalg.eigsh`` on the CPU,
``cupyx.scipy.sparse.linalg.eigsh`` on the GPU (dense ``eigh`` for small components).

A disconnected graph has one μ = 0 per component, so each component is laid out on its own
(each axis scaled to unit RMS, the component to radius ∝ √size) and the components are packed in
rows, largest first.  Isolated vertices and pairs need no eigenvectors.  Eigenvector signs are
fixed (largest |entry| positive) and ARPACK starts from a seeded vector: the layout is reproducible.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional (GPU path only); SciPy, where used (slow; `--help` loads this).
import math

import numpy as np

from ...errors import InvalidParameter
from .base import Layout, check_cancel

#: components up to this many vertices use a dense eigensolver
DENSE_MAX = 300


def lazy_walk(A):
    """M = (I + D^{-1/2} A D^{-1/2}) / 2 and D^{-1/2} for a scipy CSR adjacency without isolated vertices."""
    import scipy.sparse as sp
    d = np.asarray(A.sum(axis=1)).ravel()
    s = 1.0 / np.sqrt(d)
    N = sp.diags(s) @ A @ sp.diags(s)
    return (0.5 * (sp.identity(A.shape[0], format="csr") + N)).tocsr(), s


def fix_signs(v: np.ndarray) -> np.ndarray:
    """Each column multiplied by the sign of its largest-magnitude entry."""
    j = np.abs(v).argmax(axis=0)
    sgn = np.sign(v[j, np.arange(v.shape[1])])
    sgn[sgn == 0] = 1.0
    return v * sgn


#: Lanczos restarts before the eigensolver gives up (then the layout is refused, naming the force layout)
MAX_RESTARTS = 2000


def top_eigenvectors(M, k: int, backend, seed, cancel=None) -> np.ndarray:
    """The k top eigenvectors (columns, descending eigenvalue) of the symmetric PSD matrix M;
    on the CPU ``cancel()`` is checked at every matrix–vector product (InterruptedError)."""
    s = M.shape[0]
    if s <= DENSE_MAX:
        _w, v = np.linalg.eigh(M.toarray())
        return v[:, ::-1][:, :k]
    v0 = np.random.default_rng(seed).random(s) + 0.5
    ncv = min(s, max(2 * k + 1, 24))
    maxiter = MAX_RESTARTS
    if backend is not None and backend.is_gpu:
        import cupy as cp
        import cupyx.scipy.sparse as csp
        from cupyx.scipy.sparse.linalg import eigsh as ceigsh
        w, v = ceigsh(csp.csr_matrix(M.astype(np.float64)), k=k, which="LA", v0=cp.asarray(v0),
                      ncv=ncv, maxiter=maxiter, tol=1e-6)
        w, v = cp.asnumpy(w), cp.asnumpy(v)
    else:
        from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

        def matvec(x):
            check_cancel(cancel)
            return M @ x
        op = LinearOperator(M.shape, matvec=matvec, dtype=np.float64)
        try:
            w, v = eigsh(op, k=k, which="LA", v0=v0, ncv=ncv, maxiter=maxiter, tol=1e-6)
        except ArpackNoConvergence:
            raise InvalidParameter(f"spectral layout: the eigensolver did not converge for a component of {s:,} "
                                   "vertices (near-degenerate spectrum, e.g. a long ring): use the force or "
                                   "generator layout") from None
    order = np.argsort(-w)
    return v[:, order]


def component_layout(M, dinv_sqrt, backend, seed, cancel=None) -> np.ndarray:
    """(s, 2) coordinates of one connected component of ≥ 3 vertices, each axis with unit RMS."""
    v = top_eigenvectors(M, 3, backend, seed, cancel)
    u = fix_signs(v[:, 1:3] * dinv_sqrt[:, None])
    u = u - u.mean(axis=0)
    rms = np.sqrt((u * u).mean(axis=0))
    return u / np.where(rms > 0, rms, 1.0)


def pack(parts: list[np.ndarray]) -> list[np.ndarray]:
    """Shift each part (its radius ∝ √size, largest first) into rows of a square-ish arrangement."""
    radii = [max(1.0, float(np.sqrt((p * p).sum(axis=1)).max()) if p.size else 1.0) for p in parts]
    width = 2.2 * math.sqrt(sum(r * r for r in radii)) + 2.0 * max(radii)
    out, x, y, row_h = [], 0.0, 0.0, 0.0
    for p, r in zip(parts, radii):
        if x > 0 and x + 2 * r > width:
            x, y, row_h = 0.0, y - row_h, 0.0
        out.append(p + np.array([x + r, y - r]))
        x += 2.2 * r
        row_h = max(row_h, 2.2 * r)
    return out


def spectral_positions(g, backend=None, seed=0, progress=None, cancel=None) -> np.ndarray:
    """The spectral layout of ``g`` (see the module docstring), (n, 2) float32."""
    from scipy.sparse.csgraph import connected_components
    A = g.csr().to_scipy(weighted=False).astype(np.float64)
    ncomp, labels = connected_components(A, directed=False)
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels, minlength=ncomp)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    comps = sorted(range(ncomp), key=lambda c: (-sizes[c], c))
    parts, members = [], []
    done = 0
    for c in comps:
        check_cancel(cancel)
        vs = order[starts[c]:starts[c + 1]]
        s = vs.size
        if s == 1:
            local = np.zeros((1, 2))
        elif s == 2:
            local = np.array([[-1.0, 0.0], [1.0, 0.0]])
        else:
            M, dis = lazy_walk(A[vs][:, vs].tocsr())
            local = component_layout(M, dis, backend, seed, cancel)
        parts.append(local * math.sqrt(s))
        members.append(vs)
        done += s
        if progress is not None and s > DENSE_MAX:
            progress(done / g.n)
    pos = np.empty((g.n, 2), dtype=np.float64)
    for vs, p in zip(members, pack(parts) if ncomp > 1 else parts):
        pos[vs] = p
    if progress is not None:
        progress(1.0)
    return pos.astype(np.float32)


class SpectralLayout(Layout):
    name = "spectral"
    help = ("spectral layout: the two smallest non-trivial degree-normalised Laplacian eigenvectors "
            "(Koren 2005), per connected component, components packed; scipy eigsh on the CPU, "
            "cupyx eigsh on the GPU")
    gpu = True

    def run(self, g, backend, iterations=None, seed=0, progress=None, cancel=None):
        return spectral_positions(g, backend, seed, progress, cancel)
