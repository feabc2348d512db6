"""Timing sweeps of the Floyd–Warshall family: chosen versions × sizes n, papers 002 and 004 re-run.

A *spec* names a version and its options: ``fw-mm:tile=32,l=auto``, ``fw-recursive:t_r=64``,
``fw-fast``.  :func:`run_sweep` times each spec on one random graph per n (paper 004 §4.5.1:
directed, m = 4n edges, integer weights 1 … n − 1; float32 or int32 arithmetic), one untimed
run per spec first (compilation), then ``repeats`` timed runs of the computation alone (matrix
on the device, no copies: paper 004's "computation time"; paper 002 does not say, we use the
same).  Every row says whether its distances equal the first spec's on that graph.

Rows carry the share of the GPU's min-plus peak (:func:`peak_updates`): a min-plus update is two
instructions (add, min), so 128 lanes per SM at the boost clock give SMs × 128 × f / 2 updates/s
(H100: 132 × 128 × 1.98 GHz / 2 ≈ 16.7·10¹²), and FW does n³ updates.

Layouts: paper 002's Table II (n = 2048, ten runs each of V1, V3, V4, V5, next to the paper's
seconds; the steps V3 → V4 → V5 against its −43 % and −16.5 %), paper 004's Table 4.6 (time per
n for MM-based / two-level t = 16, 32, 64 and recursive t_R = 16, 32, 64, ms, next to the GTX 280),
Table 4.7 (per-kernel times, :func:`kernel_breakdown`) and Table 4.8 (the non-pivot kernel's
share of peak here, the GTX 280's instruction throughput there).  CSV / JSON through
kernels.fileio.  Qt-free: the GUI tab and ``main.py graph-fw`` use it.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Iterator

import numpy as np

from ...errors import InvalidParameter
from ...experiments import Claim, Experiment
from ..apsp.fw_core import NO_PATH_INT, FWResult, fw_versions, solve
from ..apsp import fw_gpu
from ..apsp.fw_core import working_matrix

#: paper 002 Table II: n = 2048, ten runs (seconds; the table's decimal comma)
PAPER_002_N = 2048
PAPER_002_TABLE_II = {
    "fw-v1": (40.289, 40.211, 40.215, 40.222, 40.219, 40.889, 40.892, 40.199, 40.221, 40.224),
    "fw-v3": (5.626, 5.622, 5.639, 5.625, 5.614, 5.617, 5.613, 5.627, 5.649, 5.617),
    "fw-v4": (3.179, 3.198, 3.207, 3.229, 3.226, 3.205, 3.231, 3.205, 3.207, 3.159),
    "fw-v5": (2.541, 2.729, 2.793, 2.819, 2.749, 2.752, 2.549, 2.543, 2.551, 2.731),
}
PAPER_002_HEADERS = {"fw-v1": "CPU Sequential", "fw-v3": "GPU Parallel", "fw-v4": "Atomic GPU",
                     "fw-v5": "Memory Atomic GPU"}
#: paper 002 §IV-C: V3 → V4 "around 43 %", V4 → V5 "around 16.5 %" less time
PAPER_002_STEPS = {("fw-v3", "fw-v4"): 43.0, ("fw-v4", "fw-v5"): 16.5}

#: paper 004 Table 4.6 columns (our specs) and its GTX 280 times (ms)
THESIS_SPECS = ("fw-mm:tile=16,l=auto", "fw-mm:tile=32,l=auto", "fw-mm:tile=64,l=auto",
                "fw-2level:tile=16", "fw-2level:tile=32", "fw-2level:tile=64",
                "fw-recursive:t_r=16", "fw-recursive:t_r=32", "fw-recursive:t_r=64")
THESIS_HEADERS = ("MM t=16", "MM t=32", "MM t=64", "2L t=16", "2L t=32", "2L t=64", "Rec t_R=16", "Rec t_R=32",
                  "Rec t_R=64")
THESIS_TABLE_4_6 = {
    128: (0.425, 0.404, 0.638, 0.696, 0.569, 0.793, 0.783, 0.561, 0.533),
    256: (0.866, 0.818, 1.295, 1.555, 1.197, 1.609, 2.028, 1.585, 1.498),
    512: (3.096, 2.555, 3.705, 4.987, 3.405, 3.934, 5.645, 4.738, 4.415),
    1024: (16.40, 13.75, 15.38, 20.54, 16.24, 15.72, 19.03, 17.21, 16.58),
    2048: (95.61, 86.70, 104.4, 122.1, 97.63, 100.8, 95.64, 91.97, 91.97),
    4096: (669.5, 633.8, 715.2, 877.6, 701.0, 714.9, 639.0, 631.5, 631.5),
    8192: (5116, 4861, 5526, 6731, 5403, 5483, 4883, 4866, 4867),
    9216: (7170, 6966, 7650, 9512, 7654, 7751, None, None, None),
    10240: (9885, 9504, 10490, 13020, 10480, 10580, None, None, None),
    11264: (13070, 12590, 13760, 17280, 13910, 14100, None, None, None),
}
#: paper 004 Table 4.7, n = 8192 (ms): kernel → (MM 16, 32, 64, 2L 16, 32, 64)
THESIS_TABLE_4_7 = {"pivot": (10.3, 8.71, 16.7, 18.1, 12.5, 18.7),
                    "pivot row+column": (105, 74.4, 134, 139, 85.9, 128),
                    "non-pivot": (5020, 4790, 5380, 6540, 5270, 5300)}
#: paper 004 Table 4.8: non-pivot instruction throughput (IPC per SM), n = 8192
THESIS_TABLE_4_8 = (0.854, 0.851, 0.742, 0.975, 0.879, 0.814)
MIN_N, MAX_N = 1, 65536
#: the default choice of versions and sizes, on a GPU and on the CPU
DEFAULT_SPECS = {"gpu": ("fw-v3", "fw-v5", "fw-blocked", "fw-mm", "fw-recursive", "fw-fast"),
                 "cpu": ("fw-v1", "fw-blocked", "fw-fast")}
DEFAULT_SIZES = {"gpu": (512, 1024, 2048, 4096), "cpu": (64, 128, 256)}
#: the layouts' settings: specs, sizes, repeats, arithmetic (paper 002 Table II: ten runs at n = 2048)
TABLE_SETUPS = {"ii": (tuple(PAPER_002_TABLE_II), (PAPER_002_N,), 10, "int32"),
                "4.6": (THESIS_SPECS, (128, 256, 512, 1024, 2048, 4096), 2, "int32")}


#: paper 002 Table II without a GPU (V3–V5 are their CUDA source run on the CPU): a lecture size
HOST_TABLE_II_N = 512


def table_setup(key: str, backend) -> tuple:
    """(specs, sizes, repeats, arithmetic) of layout ``key`` on ``backend``: :data:`TABLE_SETUPS`,
    except Table II without a GPU, which runs at :data:`HOST_TABLE_II_N` (within the host device's
    limit) with 3 runs."""
    specs, sizes, reps, arith = TABLE_SETUPS[key]
    if key == "ii" and not (backend is not None and backend.is_gpu):
        return specs, (HOST_TABLE_II_N,), 3, arith
    return specs, sizes, reps, arith


def default_specs(backend) -> list[str]:
    return list(DEFAULT_SPECS["gpu" if backend is not None and backend.is_gpu else "cpu"])


def default_sizes(backend) -> list[int]:
    return list(DEFAULT_SIZES["gpu" if backend is not None and backend.is_gpu else "cpu"])


def parse_spec(spec: str) -> tuple[str, dict]:
    """``"fw-mm:tile=32,l=auto"`` → ("fw-mm", {"tile": 32, "l": "auto"}); InvalidParameter on a
    name that is no FW version."""
    name, _, opts = str(spec).strip().partition(":")
    fam = fw_versions()
    if name not in fam:
        raise InvalidParameter(f"unknown Floyd–Warshall version {name!r}: use one of {', '.join(fam)}")
    out = {}
    for item in filter(None, (x.strip() for x in opts.split(","))):
        key, eq, val = item.partition("=")
        if not eq:
            raise InvalidParameter(f"{spec}: options are key=value (got {item!r})")
        out[key.strip()] = int(val) if val.strip().lstrip("-").isdigit() else val.strip()
    fam[name](**out)                         # unknown option names raise here, before any work
    return name, out


def spec_label(spec: str) -> str:
    name, opts = parse_spec(spec)
    lab = fw_versions()[name].label
    return lab + ("" if not opts else " " + " ".join(f"{k}={v}" for k, v in opts.items()))


def peak_updates(backend) -> tuple[float | None, str]:
    """(min-plus updates per second at the GPU's peak, the formula with its numbers); None on the CPU."""
    if backend is None or not backend.is_gpu:
        return None, "no peak on the CPU"
    p = backend.props or {}
    sms = int(p.get("multiProcessorCount", 132))
    clock = float(p.get("clockRate", 1_980_000)) * 1e3
    cc = tuple(backend.compute_capability or (9, 0))
    lanes = 64 if cc in ((7, 0), (8, 0)) else 128
    peak = sms * lanes * clock / 2.0
    return peak, (f"{sms} SMs × {lanes} lanes × {clock / 1e9:.2f} GHz / 2 instructions per update = "
                  f"{peak / 1e12:.1f}·10¹² updates/s")


def paper_graph(n: int, seed: int, directed: bool = True) -> np.ndarray:
    """Paper 004 §4.5.1's input: a random graph with m = 4n edges, integer weights 1 … max(1, n − 1)
    (the DIMACS generator's setting), as a float32 matrix (inf: no edge)."""
    rng = np.random.default_rng(seed)
    m = np.full((n, n), np.inf, dtype=np.float32)
    if n > 1:
        k = min(4 * n, n * (n - 1))
        codes = np.empty(0, dtype=np.int64)
        while codes.size < k:                          # distinct arcs, no loops, in draw order
            draw = rng.integers(0, n * n, 2 * k + 16, dtype=np.int64)
            draw = np.concatenate([codes, draw[draw // n != draw % n]])
            _, first = np.unique(draw, return_index=True)
            codes = draw[np.sort(first)]
        codes = codes[:k]
        w = rng.integers(1, max(2, n), k).astype(np.float32)
        m[codes // n, codes % n] = w
        if not directed:
            m = np.minimum(m, m.T)
    np.fill_diagonal(m, 0)
    return m


@dataclass
class FWRow:
    """One (spec, n) point: the timed runs, their mean / std / best, the share of peak."""

    spec: str
    version: str
    label: str
    n: int
    arith: str
    backend: str
    seconds: float
    std: float
    best: float
    repeats: int
    launches: int
    updates_per_s: float
    pct_peak: float | None
    gop_s: float                      # paper 004's efficiency: 2n(n−1)² operations / time
    agrees: bool                      # distances equal the first spec's on this graph
    params: str = ""
    times: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


CSV_COLUMNS = tuple(k for k in FWRow.__dataclass_fields__ if k != "times") + ("times",)


def check_sizes(sizes) -> list[int]:
    try:
        ns = sorted({int(n) for n in sizes})
    except (TypeError, ValueError):
        raise InvalidParameter(f"sizes n must be whole numbers (got {sizes!r})") from None
    if not ns:
        raise InvalidParameter("give at least one size n")
    if ns[0] < MIN_N or ns[-1] > MAX_N:
        raise InvalidParameter(f"sizes n must lie in {MIN_N} … {MAX_N} (got {ns[0]} … {ns[-1]})")
    return ns


def check_specs(specs, backend, sizes=()) -> list[str]:
    """The specs, refused before any work when unknown, unable to run on ``backend``, V2 above its
    size, or — CUDA source run on the CPU (no GPU) — above the host device's size limit."""
    specs = list(dict.fromkeys(str(s).strip() for s in specs if str(s).strip()))
    if not specs:
        raise InvalidParameter("choose at least one Floyd–Warshall version")
    top = max(sizes, default=0)
    for s in specs:
        name, opts = parse_spec(s)
        cls = fw_versions()[name]
        if cls.max_n is not None and top > cls.max_n:
            raise InvalidParameter(f"{name} is for teaching, n ≤ {cls.max_n} (largest n is {top})")
        method = cls(**opts)
        where = method.placement(backend)
        if where is None:
            raise InvalidParameter(f"{name} cannot run on this backend")
        if where == "host":
            method.check_host(top)
    return specs


def same_distances(a: FWResult, b: FWResult) -> bool:
    if a.dist.shape != b.dist.shape:
        return False
    if a.dist.dtype == np.int32 and b.dist.dtype == np.int32:
        return bool(np.array_equal(a.dist, b.dist))
    fa, fb = (r.dist.astype(np.float64) for r in (a, b))
    for r, f in ((a, fa), (b, fb)):
        if r.dist.dtype == np.int32:
            f[r.dist == NO_PATH_INT] = np.inf
    fin = np.isfinite(fa)
    return bool(np.array_equal(fin, np.isfinite(fb)) and np.allclose(fa[fin], fb[fin], rtol=1e-5, atol=1e-5))


def run_sweep(specs, sizes, backend=None, arith: str = "float32", repeats: int | dict = 3, seed: int = 1,
              pred: bool = False, cancel=None) -> Iterator[FWRow]:
    """Yield an FWRow per (n, spec): one graph per n from ``seed`` shared by every spec; ``repeats``
    timed runs (an int or {spec: int}) after one untimed run of each spec (per n for specs that
    tune themselves: ``auto`` options and fw-tuned; tuning is not computation time)."""
    sizes = check_sizes(sizes)
    specs = check_specs(specs, backend, sizes)
    reps = {s: int(repeats.get(s, 1) if isinstance(repeats, dict) else repeats) for s in specs}
    if min(reps.values()) < 1:
        raise InvalidParameter(f"repeats must be ≥ 1 (got {repeats})")
    peak, _ = peak_updates(backend)
    fam = fw_versions()
    warm: set = set()
    for n in sizes:
        m = paper_graph(n, seed + n)
        ref = None
        for s in specs:
            if cancel is not None and cancel():
                return
            name, opts = parse_spec(s)
            method = fam[name](pred=pred, arith=arith, **opts)
            tuned = name == "fw-tuned" or "auto" in opts.values()
            if s not in warm or tuned:                 # compilation; an auto-tuner's choice is per n
                solve(method, m, backend, arith, pred, cancel=cancel)
                warm.add(s)
            times, res = [], None
            for _ in range(reps[s]):
                if cancel is not None and cancel():
                    return
                res = solve(method, m, backend, arith, pred, cancel=cancel)
                times.append(res.kernel_seconds)
            ref = ref or res
            mean = float(np.mean(times))
            ups = float(n) ** 3 / mean if mean > 0 else float("inf")
            params = ", ".join(f"{k}={v}" for k, v in res.params.items() if k not in ("tuned", "emulated"))
            yield FWRow(s, name, spec_label(s), n, res.arith, res.backend, mean, float(np.std(times)),
                        float(np.min(times)), len(times), res.launches, ups,
                        None if (peak is None or res.backend != "gpu") else 100.0 * ups / peak,
                        2.0 * n * (n - 1) ** 2 / mean / 1e9 if mean > 0 else 0.0, same_distances(res, ref), params,
                        [float(t) for t in times])


# ------------------------------------------------------------------------------ layouts
def table_ii(rows) -> dict:
    """Paper 002 Table II from rows at n = 2048 (the paper's; without them, the largest n of the
    rows — :func:`table_setup` without a GPU): per version the runs (ours, paper's at 2048), means,
    and the V3 → V4 → V5 steps (% less time) next to the paper's."""
    ns = {r.n for r in rows if r.version in PAPER_002_TABLE_II}
    n = PAPER_002_N if PAPER_002_N in ns or not ns else max(ns)
    by = {r.version: r for r in rows if r.n == n and r.version in PAPER_002_TABLE_II}
    out = {"n": n, "paper_n": PAPER_002_N, "versions": {}, "steps": {}}
    for v, paper in PAPER_002_TABLE_II.items():
        r = by.get(v)
        out["versions"][v] = {"header": PAPER_002_HEADERS[v], "paper": list(paper), "paper_mean": float(np.mean(paper)),
                              "ours": None if r is None else list(r.times), "ours_mean": None if r is None else r.seconds}
    for (a, b), paper in PAPER_002_STEPS.items():
        pa, pb = np.mean(PAPER_002_TABLE_II[a]), np.mean(PAPER_002_TABLE_II[b])
        ours = None
        if a in by and b in by and by[a].seconds > 0:
            ours = 100.0 * (1.0 - by[b].seconds / by[a].seconds)
        out["steps"][f"{a}→{b}"] = {"paper_claim": paper, "paper_table": float(100.0 * (1.0 - pb / pa)), "ours": ours}
    return out


def table_4_6(rows) -> list[dict]:
    """Paper 004 Table 4.6 layout: per n, our ms for each thesis spec next to the GTX 280's."""
    t = {(r.spec, r.n): r.seconds * 1e3 for r in rows}
    ns = sorted({r.n for r in rows if r.spec in THESIS_SPECS})
    return [{"n": n, "ours_ms": [t.get((s, n)) for s in THESIS_SPECS],
             "paper_ms": list(THESIS_TABLE_4_6.get(n, (None,) * len(THESIS_SPECS)))} for n in ns]


def kernel_breakdown(backend, n: int = 8192, arith: str = "int32", tiles=(16, 32, 64), seed: int = 1) -> dict:
    """Paper 004 Tables 4.7–4.8 layout on this GPU: for MM-based and two-level t = 16, 32, 64, the
    total time of the pivot, pivot row+column and non-pivot kernels over one whole run (CUDA
    events around each launch, l = 1), and the non-pivot kernel's share of the min-plus peak."""
    cp = backend.xp
    dev = fw_gpu.device(backend)
    peak, _ = peak_updates(backend)
    npad = -(-n // 64) * 64
    w = working_matrix(paper_graph(n, seed), "float32" if arith == "float32" else "int32", 64)
    out = {}
    for method in ("mm", "2l"):
        for tile in tiles:
            d = cp.asarray(w)
            t, b = fw_gpu.ctype(d.dtype), "false"
            hp = fw_gpu.THESIS_H_PIVOT[tile]
            kp = fw_gpu.kernel(dev, "fw_thesis.cu", f"fw_th_pivot<{t},{b},{tile},{hp}>")
            kr = fw_gpu.kernel(dev, "fw_thesis.cu", f"fw_th_rowcol<{t},{b},{tile},{fw_gpu.THESIS_H_ROWCOL}>")
            if method == "mm":
                kn = fw_gpu.kernel(dev, "fw_thesis.cu", f"fw_mm_nonpivot<{t},0,{b},{tile}>")
                gn, bn = (npad // 64, npad // 16 - tile // 16), (64,)
            else:
                tp = fw_gpu.TWO_LEVEL_TP[tile]
                kn = fw_gpu.kernel(dev, "fw_thesis.cu", f"fw_2l_nonpivot<{t},0,{b},{tile},{tp}>")
                gn, bn = (npad // tile, npad // tile), (tile * tp,)
            acc = {"pivot": 0.0, "pivot row+column": 0.0, "non-pivot": 0.0}
            ev = [cp.cuda.Event() for _ in range(4)]
            z = np.uintp(0)
            for K in range(npad // tile):
                a = (d, z, np.int32(npad), np.int32(K))
                ev[0].record()
                dev.launch(kp, (1,), (hp, tile), (d, z, np.int32(npad), np.int32(K * tile)))
                ev[1].record()
                dev.launch(kr, (npad // tile, 2), (fw_gpu.THESIS_H_ROWCOL, tile), a)
                ev[2].record()
                dev.launch(kn, gn, bn, a + (np.int32(1),))
                ev[3].record()
                ev[3].synchronize()
                for i, k in enumerate(acc):
                    acc[k] += cp.cuda.get_elapsed_time(ev[i], ev[i + 1]) * 1e-3
            upd = float(npad - tile) ** 2 * npad
            out[f"{method.upper()} t={tile}"] = {**acc, "nonpivot_pct_peak": None if peak is None else
                                                 100.0 * upd / acc["non-pivot"] / peak}
    return out


def summary_lines(rows) -> list[str]:
    """Plain-text summary: the fastest spec per n with its share of peak, paper 002's steps where
    the rows have them, and whether every spec computed the same distances."""
    if not rows:
        return ["No points timed."]
    lines = []
    for n in sorted({r.n for r in rows}):
        b = min((r for r in rows if r.n == n), key=lambda r: r.seconds)
        share = "" if b.pct_peak is None else f", {b.pct_peak:.1f} % of the min-plus peak"
        lines.append(f"n = {n}: fastest {b.label} {b.seconds * 1e3:.3g} ms{share}")
    steps = [f"{k}: {-v['ours']:+.1f} % time (paper −{v['paper_claim']} %)" for k, v in table_ii(rows)["steps"].items()
             if v["ours"] is not None]
    if steps:
        lines.append("Paper 002 steps: " + "; ".join(steps))
    bad = [r for r in rows if not r.agrees]
    lines.append("Warning — other distances: " + ", ".join(f"{r.spec} n = {r.n}" for r in bad) if bad
                 else "All versions computed the same distances.")
    return lines


# ------------------------------------------------------------------------------ files
def rows_to_json(rows, backend=None, extra: dict | None = None) -> str:
    peak, formula = peak_updates(backend)
    doc = {"peak_updates_per_s": peak, "peak_formula": formula, "rows": [r.to_dict() for r in rows],
           "table_ii": table_ii(rows), "table_4_6": table_4_6(rows), **(extra or {})}
    return json.dumps(doc, indent=1, default=lambda o: None if isinstance(o, float) and not np.isfinite(o) else str(o))


class Timings(Experiment):
    """Paper 002 Table II and paper 004 Tables 4.6–4.8: the Floyd–Warshall family timed against n
    (:func:`run_sweep`); paper 002's V3 → V4 → V5 steps and the versions' agreement checked."""

    name = "fw-timings"
    title = "Paper 002 Table II / paper 004 Tables 4.6–4.8: Floyd–Warshall versions vs n"
    columns = CSV_COLUMNS
    row_type = FWRow
    split = ("sizes",)

    def rows(self, specs, sizes, **settings) -> Iterator[FWRow]:
        return run_sweep(specs, sizes, **settings)

    def table(self, rows):
        """The runs' times joined by ';'."""
        for r in rows:
            d = r.to_dict()
            yield [";".join(f"{t:.6g}" for t in d["times"]) if c == "times" else d[c] for c in CSV_COLUMNS]

    def problem(self, row) -> str | None:
        return None if row.agrees else f"n = {row.n}: {row.spec} computed other distances than the first spec"

    def claims(self, rows) -> list[Claim]:
        rows = list(rows)
        out = []
        for step, v in table_ii(rows)["steps"].items():
            text = f"paper 002: {step} takes {v['paper_claim']} % less time"
            out.append(Claim(text, None, "needs both versions") if v["ours"] is None else
                       Claim(text, v["ours"] > 0, f"{v['ours']:+.1f} % less at n = {table_ii(rows)['n']}"))
        if rows:
            bad = [r for r in rows if not r.agrees]
            out.append(Claim("every version computes the same distances", not bad,
                             ", ".join(f"{r.spec} n = {r.n}" for r in bad) or f"{len(rows)} points agree"))
        return out


TIMINGS = Timings()
