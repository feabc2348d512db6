"""Marsaglia–Zaman lagged-Fibonacci ("universal", RANMAR) generator on the CPU.

Paper 001 §6.1, Algorithms 26–27 (sequential generator) and the batch idea of
Algorithms 31–32 (§6.4, "approach 2") applied to NumPy.

State (Alg. 26): lag table ``u[L]`` of 24-bit fractions, ``i = L-1``,
``j = L//3`` (96 and 32 for the classic L = 97), ``c = 362436/2^24``,
``d = 7654321/2^24``, ``m = 16777213/2^24``.  One draw (Alg. 27)::

    r = u[i] - u[j];  if r < 0: r += 1
    u[i] = r
    i -= 1 (wrap to L-1);  j -= 1 (wrap to L-1)
    c -= d;  if c < 0: c += m
    r -= c;  if r < 0: r += 1
    return r

Everything here is done *exactly* in integers in units of 2^-24
(``u_int = u * 2^24``, ``c_int`` …); a float is ``int / 2^24``, which is exact
in float32 as well as float64 (24-bit mantissa).  Hence the sequential,
vectorised and GPU paths agree bit for bit — the float rounding drift that
paper 001 warns about for approach 2 disappears (digest P1 item 19).

Table initialisation (the paper only says "initialise with s"): the standard
RANMAR initialiser of Marsaglia, Zaman & Tsang (1990) as published by
F. James (Comput. Phys. Commun. 60 (1990) 329): two seeds ``ij`` in
0..31328 and ``kl`` in 0..30081 drive a 3-lag multiplicative Fibonacci
generator mod 179 and an LCG mod 169 that produce the 24 bits (MSB first) of
each table entry.  For a general (prime) lag length L we simply continue the
same bit stream for L entries instead of 97.
"""
from __future__ import annotations

import functools

import numpy as np

#: 2^24: one in integer units.
ONE = 1 << 24
#: c0, d, m of Alg. 26 in units of 2^-24.
C0 = 362436
D = 7654321
M = 16777213
#: classic lag length of Alg. 26 and the big table of Alg. 31.
L97 = 97
L_BIG = 92153
#: seed ranges of the RANMAR initialiser.
IJ_MAX = 31328
KL_MAX = 30081
#: number of distinct single seeds ``ijkl`` (James's RMARIN convention).
N_SEEDS = (IJ_MAX + 1) * (KL_MAX + 1)


def seed_to_ijkl(seed: int) -> tuple[int, int]:
    """Map one integer seed to RANMAR's (ij, kl) pair.

    James's RMARIN convention: ``ijkl = seed mod 31329·30082``,
    ``ij = ijkl // 30082``, ``kl = ijkl % 30082``.
    """
    s = int(seed) % N_SEEDS
    return s // (KL_MAX + 1), s % (KL_MAX + 1)


def _check_seeds(ij: int, kl: int) -> None:
    if not (0 <= ij <= IJ_MAX and 0 <= kl <= KL_MAX):
        raise ValueError(f"RANMAR seeds out of range: ij={ij} (0..{IJ_MAX}), kl={kl} (0..{KL_MAX})")


def _initial_ijkl(ij: int, kl: int) -> tuple[int, int, int, int]:
    return (ij // 177) % 177 + 2, ij % 177 + 2, (kl // 169) % 178 + 1, kl % 169


# ---------------------------------------------------------------------------
# table initialisation: pure-Python reference and a vectorised equivalent
# ---------------------------------------------------------------------------

def fill_table_py(ij: int, kl: int, lag: int = L97) -> list[int]:
    """Reference RANMAR table fill (James 1990), ``lag`` entries in 2^-24 units."""
    _check_seeds(ij, kl)
    i, j, k, l = _initial_ijkl(ij, kl)
    out = []
    for _ in range(lag):
        s = 0
        for bit in range(24):
            m = ((i * j) % 179) * k % 179
            i, j, k = j, k, m
            l = (53 * l + 1) % 169
            if (l * m) % 64 >= 32:
                s += 1 << (23 - bit)
        out.append(s)
    return out


@functools.lru_cache(maxsize=None)
def _logs179():
    """Primitive root tables mod 179: EXP[a] = g^a, LOG[g^a] = a (a mod 178)."""
    for g in range(2, 179):
        seen = set()
        x = 1
        for _ in range(178):
            seen.add(x)
            x = x * g % 179
        if len(seen) == 178:
            break
    exp = np.empty(178, np.int64)
    log = np.zeros(179, np.int64)
    x = 1
    for a in range(178):
        exp[a] = x
        log[x] = a
        x = x * g % 179
    return exp, log


@functools.lru_cache(maxsize=None)
def _lcg169_cycle():
    """The LCG l -> (53 l + 1) mod 169 has full period: its cycle and positions."""
    cyc = np.empty(169, np.int64)
    pos = np.empty(169, np.int64)
    l = 0
    for n in range(169):
        cyc[n] = l
        pos[l] = n
        l = (53 * l + 1) % 169
    assert l == 0 and len(set(cyc.tolist())) == 169
    return cyc, pos


@functools.lru_cache(maxsize=8)
def _log_coeffs(nsteps: int) -> np.ndarray:
    """Coefficients f_n (n < nsteps, shape (nsteps, 3)) with
    ``a_n = f_n · (a_-3, a_-2, a_-1) mod 178`` for the additive recurrence
    ``a_n = a_{n-3} + a_{n-2} + a_{n-1} (mod 178)`` — the discrete log of
    RANMAR's ``m = i·j·k mod 179``.  Built by blocks: f_{kB+s} = f_s · G^k.
    """
    B = min(nsteps, 2048)
    f = np.zeros((B + 3, 3), np.int64)
    f[0, 0] = f[1, 1] = f[2, 2] = 1            # f_-3, f_-2, f_-1
    for n in range(3, B + 3):
        f[n] = (f[n - 3] + f[n - 2] + f[n - 1]) % 178
    head = f[3:]                              # f_0 .. f_{B-1}
    G = head[B - 3:B]                         # rows f_{B-3}, f_{B-2}, f_{B-1}
    K = -(-nsteps // B)
    mats = np.empty((K, 3, 3), np.int64)
    mats[0] = np.eye(3, dtype=np.int64)
    for k in range(1, K):
        mats[k] = (G @ mats[k - 1]) % 178
    coeffs = np.einsum("sa,kab->ksb", head, mats) % 178
    return coeffs.reshape(K * B, 3)[:nsteps].copy()


def fill_tables(ij, kl, lag: int = L97, chunk_elems: int = 1 << 22) -> np.ndarray:
    """Vectorised RANMAR table fill for many seed pairs at once.

    ``ij``, ``kl``: scalars or equal-length 1-D integer arrays.  Returns int32
    array of shape ``(n_seeds, lag)`` (or ``(lag,)`` for scalar seeds) in units
    of 2^-24, identical to :func:`fill_table_py`.
    """
    scalar = np.ndim(ij) == 0 and np.ndim(kl) == 0
    ij = np.atleast_1d(np.asarray(ij, np.int64))
    kl = np.atleast_1d(np.asarray(kl, np.int64))
    ij, kl = np.broadcast_arrays(ij, kl)
    if np.any((ij < 0) | (ij > IJ_MAX) | (kl < 0) | (kl > KL_MAX)):
        raise ValueError("RANMAR seeds out of range (ij 0..31328, kl 0..30081)")
    exp, log = _logs179()
    cyc, pos = _lcg169_cycle()
    nsteps = 24 * lag
    coeffs = _log_coeffs(nsteps)                         # (nsteps, 3)
    i0 = (ij // 177) % 177 + 2
    j0 = ij % 177 + 2
    k0 = (kl // 169) % 178 + 1
    l0 = kl % 169
    a0 = np.stack([log[i0], log[j0], log[k0]], axis=1)   # (S, 3)
    weights = (1 << (23 - np.arange(24, dtype=np.int64)))
    steps = np.arange(1, nsteps + 1, dtype=np.int64)
    out = np.empty((len(ij), lag), np.int32)
    per = max(1, chunk_elems // nsteps)
    for s0 in range(0, len(ij), per):
        sl = slice(s0, s0 + per)
        a = (a0[sl] @ coeffs.T) % 178                    # (s, nsteps)
        m = exp[a]
        l = cyc[(pos[l0[sl]][:, None] + steps[None, :]) % 169]
        bits = ((l * m) % 64) >= 32
        out[sl] = (bits.reshape(-1, lag, 24) @ weights).astype(np.int32)
    return out[0] if scalar else out


@functools.lru_cache(maxsize=16)
def _cached_table(ij: int, kl: int, lag: int) -> np.ndarray:
    t = fill_tables(ij, kl, lag)
    t.setflags(write=False)
    return t


def table_for(ij: int, kl: int, lag: int = L97) -> np.ndarray:
    """Fresh (writable) copy of the RANMAR table for (ij, kl); cached fill."""
    _check_seeds(ij, kl)
    return _cached_table(int(ij), int(kl), int(lag)).copy()


# ---------------------------------------------------------------------------
# sequential generator (Alg. 26–27)
# ---------------------------------------------------------------------------

class Ranmar:
    """Sequential Marsaglia–Zaman generator, paper 001 Alg. 26–27, exact.

    ``Ranmar(ij, kl, lag=97)``: RANMAR initialisation from two seeds;
    ``Ranmar.from_seed(seed, lag)`` uses one integer seed (see
    :func:`seed_to_ijkl`).  ``lag`` is the lag-table length L (any prime,
    e.g. 97 or 92153); ``i`` starts at L-1 and ``j`` at L//3.

    One Python-level step per number: meant as the reference and for small
    counts; :class:`RanmarVec` produces the same stream fast.
    """

    def __init__(self, ij: int = 1802, kl: int = 9373, lag: int = L97, table=None):
        self.lag = int(lag)
        if table is None:
            table = table_for(ij, kl, self.lag)
        self.u = [int(x) for x in np.asarray(table).ravel()]
        if len(self.u) != self.lag:
            raise ValueError("table length must equal lag")
        self.i = self.lag - 1
        self.j = self.lag // 3
        self.c = C0
        self.count = 0

    @classmethod
    def from_seed(cls, seed: int, lag: int = L97) -> "Ranmar":
        return cls(*seed_to_ijkl(seed), lag=lag)

    def next_int(self) -> int:
        """One draw (Alg. 27) in units of 2^-24: an int in [0, 2^24)."""
        u = self.u
        r = u[self.i] - u[self.j]
        if r < 0:
            r += ONE
        u[self.i] = r
        self.i -= 1
        if self.i < 0:
            self.i = self.lag - 1
        self.j -= 1
        if self.j < 0:
            self.j = self.lag - 1
        self.c -= D
        if self.c < 0:
            self.c += M
        r -= self.c
        if r < 0:
            r += ONE
        self.count += 1
        return r

    def next(self) -> float:
        return self.next_int() / ONE

    def integers24(self, n: int) -> np.ndarray:
        return np.fromiter((self.next_int() for _ in range(int(n))), np.int64, int(n)).astype(np.int32)

    def uniform(self, n: int, dtype=np.float64) -> np.ndarray:
        """``n`` deviates in [0, 1) (exact multiples of 2^-24)."""
        return to_float(self.integers24(n), np, dtype)


def to_float(ints, xp=np, dtype=np.float32):
    """24-bit integers -> floats in [0,1): ``int · 2^-24`` (exact for f32/f64)."""
    dtype = np.dtype(dtype)
    return ints.astype(dtype) * dtype.type(1.0 / ONE)


# ---------------------------------------------------------------------------
# batch schedule shared by the vectorised CPU path and GPU approach 2
# ---------------------------------------------------------------------------

def cycle_offsets(lag: int) -> tuple[int, int, int]:
    """Alg. 31: within each cycle of L draws, launches start at offsets
    0, L//3+1, L//3+1+round(L/3) with counts L//3+1, round(L/3), L//3
    (92153: offsets 0, 30718, 61436; counts 30718, 30718, 30717)."""
    l1 = lag // 3 + 1
    l2 = int(round(lag / 3))
    return 0, l1, l1 + l2


def batch_schedule(pos: int, n: int, lag: int):
    """Yield batch sizes for ``n`` draws starting at draw index ``pos``.

    Batches follow the 3-launch pattern of Alg. 31 (cut at the cycle
    offsets); every batch is <= L//3+1 draws, so no draw in a batch reads a
    table entry written in the same batch (i and j start L-1-L//3 apart and
    move together; a conflict needs L//3+1 steps).
    """
    _, o1, o2 = cycle_offsets(lag)
    bounds = (o1, o2, lag)
    while n > 0:
        p = pos % lag
        nxt = next(b for b in bounds if b > p)
        b = min(n, nxt - p)
        yield b
        pos += b
        n -= b


def c_sequence(c: int, count: int, xp=np):
    """c_int for the next ``count`` draws: ``(c - (k+1)·d) mod m``, k < count."""
    k = xp.arange(1, count + 1, dtype=xp.int64)
    return (c - k * D) % M


# ---------------------------------------------------------------------------
# vectorised CPU generator (Alg. 31–32 on NumPy)
# ---------------------------------------------------------------------------

class RanmarVec:
    """Vectorised NumPy Marsaglia generator, bit-identical to :class:`Ranmar`.

    Paper 001 Alg. 31–32 (approach 2) done with NumPy: draws are produced in
    batches of <= L//3+1 with fancy indexing; ``c`` is computed in closed
    form in integer units, ``c_n = (c0 - n·7654321) mod 16777213``, which
    makes the result exactly the sequential stream.

    The table may carry leading dimensions, ``table.shape == (..., L)``: then
    every row is an independent stream (all share i, j, c — they all start
    at L-1, L//3, c0), which is the NumPy reference of GPU approach 1.
    """

    def __init__(self, ij: int = 1802, kl: int = 9373, lag: int = L97, table=None):
        self.lag = int(lag)
        if table is None:
            table = table_for(ij, kl, self.lag)
        self.u = np.array(table, dtype=np.int32, copy=True)
        if self.u.shape[-1] != self.lag:
            raise ValueError("table length must equal lag")
        self.i = self.lag - 1
        self.j = self.lag // 3
        self.c = C0
        self.count = 0
        self._ar = np.arange(self.lag // 3 + 1, dtype=np.int64)

    @classmethod
    def from_seed(cls, seed: int, lag: int = L_BIG) -> "RanmarVec":
        return cls(*seed_to_ijkl(seed), lag=lag)

    def integers24(self, n: int) -> np.ndarray:
        """Next ``n`` draws as int32 in [0, 2^24): shape ``(..., n)``."""
        n = int(n)
        L = self.lag
        u = self.u
        out = np.empty(u.shape[:-1] + (n,), np.int32)
        done = 0
        for b in batch_schedule(self.count, n, L):
            ar = self._ar[:b]
            ii = self.i - ar
            ii[ii < 0] += L
            jj = self.j - ar
            jj[jj < 0] += L
            r = u[..., ii] - u[..., jj]
            r += (r < 0) * np.int32(ONE)
            u[..., ii] = r
            cc = c_sequence(self.c, b).astype(np.int32)
            r -= cc
            r += (r < 0) * np.int32(ONE)
            out[..., done:done + b] = r
            done += b
            self.i = (self.i - b) % L
            self.j = (self.j - b) % L
            self.c = int((self.c - b * D) % M)
            self.count += b
        return out

    def uniform(self, n: int, dtype=np.float64) -> np.ndarray:
        """Next ``n`` deviates in [0, 1), shape ``(..., n)``."""
        return to_float(self.integers24(n), np, dtype)
