"""Floyd–Warshall family benchmark (run on a CUDA machine), every version and its peers side by side.

Sections (``--sections``, comma list; default all):
  ceiling   the plain register-tiled min-plus product of two n × n matrices (FW's n³ updates without
            its dependencies) per GEMM configuration, float32 / int32 / DPX
  fastparts fw-fast's three phases timed apart per tile (float32, int32)
  fw        n = 4096 float32: every GPU version (paper 004's at their tiles, ours per tile and
            configuration), the torch k-loop on the GPU, scipy's floyd_warshall on the CPU (measured at
            1024, n³-extrapolated, marked ~)
  int       the same graph in float32, int32 and explicit DPX for the versions that have int kernels
  table2    paper 002 Table II: n = 2048, V1 (CPU), V3, V4, V4 coop, V5; the V3 → V4 → V5 steps
  thesis    paper 004 Table 4.6 layout (MM-based / two-level t = 16, 32, 64, recursive t_R = 16, 32, 64)
  breakdown paper 004 Tables 4.7–4.8 layout at n = 8192 (per-kernel times, non-pivot share of peak)
  big       n = 16384 float32 with the best version (and int32)
  launch    issue 38, fw-fast's per-band launch overhead: the launch sequence (tile 64 with and without the
            stream look-ahead) beside the same sequence as one CUDA graph (graph=1) and the persistent
            cooperative kernel (persistent=1, every product configuration it has), float32 and int32 at
            --n, with the plain min-plus product (the floor) and the torch k-loop in the same run, and
            whether each variant equals fw-fast bit for bit; ``launch16k`` adds n = 16384 int32.
            Without a GPU the section runs on the host device at --host-n (no graphs, no torch)
  host      no GPU needed: every GPU version's CUDA source run on the CPU (kernels.gpu.host) at a
            lecture size (--host-n, default 512; int32), ns per min-plus update, the size guard's
            limit n, and the CPU implementation beside it where one exists
Times: computation only (matrix resident on the GPU, no copies), CUDA-synchronised, median of the
repeats after one untimed run.  Usage: python benchmarks/fw.py [--quick] [--sections …] [--n 4096]
(markdown also to $OUT/fw_bench.md, rows to $OUT/fw_bench.json).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

from kernels.backend import select  # noqa: E402
from kernels.graphs.apsp import fw_gpu  # noqa: E402
from kernels.graphs.experiments import fw_sweep as S  # noqa: E402
from kernels.graphs.apsp.fw_core import floyd_warshall  # noqa: E402

LINES: list[str] = []
DATA: dict = {}


def out(s=""):
    print(s, flush=True)
    LINES.append(s)


def save():
    """Markdown and data so far to $OUT (after every section: a run cut short keeps what it measured)."""
    save_markdown("fw_bench.md", "\n".join(LINES))
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "fw_bench.json"), "w") as fh:
            json.dump(DATA, fh, indent=1, default=str)


def events_time(cp, fn, repeats=5) -> float:
    """Median seconds of ``repeats`` calls after one untimed call (CUDA events: the GPU layer's timer)."""
    from kernels import gpu
    return float(gpu.timing.time_calls(fn, repeat=repeats, warmup=1, device=gpu.device("cuda")).median)


def pct(n, sec, peak):
    return 100.0 * n ** 3 / sec / peak


def fw_time(m, spec, be, arith="float32", repeats=3, opts=None):
    """Median computation time of one spec on matrix m (one untimed run first); result of the last run.
    ``opts``: the options instead of the spec's."""
    name, parsed = S.parse_spec(spec)
    opts = parsed if opts is None else opts
    floyd_warshall(m, name, be, arith=arith, pred=False, **opts)
    ts, res = [], None
    for _ in range(repeats):
        res = floyd_warshall(m, name, be, arith=arith, pred=False, **opts)
        ts.append(res.kernel_seconds)
    return float(np.median(ts)), res


def section_ceiling(be, n, quick):
    cp = be.xp
    peak, formula = S.peak_updates(be)
    out(f"### Ceiling: plain min-plus product C = min(C, A ⊗ B), {n}³ (peak: {formula})\n")
    out("| configuration | float32 ms | % peak | int32 ms | % peak | DPX ms | % peak |")
    out("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    dev = fw_gpu.device(be)
    res = {}
    for cfg in fw_gpu.GEMM_CONFIGS:
        cells = []
        for t in ("float", "int", "dpx"):
            dt = np.float32 if t == "float" else np.int32
            a = cp.asarray(rng.integers(1, 1000, (n, n)).astype(dt))
            b = cp.asarray(rng.integers(1, 1000, (n, n)).astype(dt))
            c = cp.asarray(rng.integers(1000, 3000, (n, n)).astype(dt))
            sec = events_time(cp, lambda: fw_gpu.gemm(dev, c, c, a, b, n, n, n, lda=n, ldb=n, ldci=n, ldco=n,
                                                      cfg=cfg, dpx=t == "dpx"), 3 if quick else 5)
            res[(cfg, t)] = sec
            cells += [f"{sec * 1e3:.2f}", f"{pct(n, sec, peak):.0f} %"]
        out(f"| {cfg} | " + " | ".join(cells) + " |")
    DATA["ceiling"] = {f"{k[0]}|{k[1]}": v for k, v in res.items()}
    out()
    return res


def section_fw(be, n, quick):
    peak, formula = S.peak_updates(be)
    m = S.paper_graph(n, 7)
    m[np.isfinite(m)] = np.random.default_rng(1).uniform(1, 100, int(np.isfinite(m).sum()))   # float weights
    np.fill_diagonal(m, 0)
    specs = [f"fw-fast:tile={t},cfg={c}" for t in fw_gpu.FAST_TILES for c in fw_gpu.GEMM_CONFIGS]
    specs += [f"fw-fast:tile={t},lookahead=0,cfg={c}" for t in fw_gpu.FAST_TILES
              for c in ("128x128/8x8", "128x128/8x8/2")]
    if quick:
        specs = specs[:len(fw_gpu.GEMM_CONFIGS) * 2]
    specs += ["fw-blocked:tile=32", "fw-blocked:tile=64", "fw-mm:tile=16,l=auto", "fw-mm:tile=32,l=auto",
              "fw-mm:tile=64,l=auto", "fw-2level:tile=16", "fw-2level:tile=32", "fw-2level:tile=64",
              "fw-recursive:t_r=16", "fw-recursive:t_r=32", "fw-recursive:t_r=64", "fw"]
    out(f"### Floyd–Warshall, n = {n}, float32 (random graph m = 4n, float weights; computation only)\n")
    out(f"Peak: {formula}; n³ at peak = {n ** 3 / peak * 1e3:.2f} ms.\n")
    out("| version | ms | % of min-plus peak | launches | parameters | equals fw-fast |")
    out("|---|---|---|---|---|---|")
    rows, ref = {}, None
    for spec in specs:
        try:
            sec, res = fw_time(m, spec, be, "float32", 1 if spec == "fw" else (2 if quick else 3))
        except Exception as exc:  # noqa: BLE001 - report and go on
            out(f"| {spec} | failed: {exc} | | | | |")
            continue
        ref = ref if ref is not None else res
        same = S.same_distances(res, ref)
        rows[spec] = sec
        par = ", ".join(f"{k}={v}" for k, v in res.params.items() if k not in ("tuned",))
        out(f"| {spec} | {sec * 1e3:.2f} | {pct(n, sec, peak):.1f} % | {res.launches} | {par} | {same} |")
    # peers
    try:
        sec, version = torch_kloop(m)
        rows["torch k-loop"] = sec
        out(f"| torch k-loop (GPU, {version}) | {sec * 1e3:.1f} | {pct(n, sec, peak):.1f} % | {n} | | |")
    except Exception as exc:  # noqa: BLE001
        out(f"| torch k-loop | unavailable: {exc} | | | | |")
    from scipy.sparse.csgraph import floyd_warshall as sfw
    small = 1024
    ms = m[:small, :small].astype(np.float64)
    t0 = time.perf_counter()
    sfw(ms, directed=True)
    sec = (time.perf_counter() - t0) * (n / small) ** 3
    rows["scipy floyd_warshall (CPU)"] = sec
    out(f"| scipy floyd_warshall (CPU, measured at {small}) | ~{sec * 1e3:.0f} | | | | |")
    best = min((v, k) for k, v in rows.items())
    out(f"\nBest: **{best[1]}** {best[0] * 1e3:.2f} ms = {pct(n, best[0], peak):.1f} % of peak.\n")
    DATA["fw"] = rows
    return rows


def torch_kloop(m) -> tuple[float, str]:
    """Seconds of the naive torch k-loop FW on the GPU (one run after an untimed one), torch's version."""
    import torch
    n = m.shape[0]
    D = torch.tensor(m, device="cuda")

    def tk():
        X = D.clone()
        for k in range(n):
            torch.minimum(X, X[:, k, None] + X[None, k, :], out=X)
    torch.cuda.synchronize()
    tk()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tk()
    torch.cuda.synchronize()
    return time.perf_counter() - t0, torch.__version__


#: issue 38's rows: per pivot tile, the launch sequence first (the reference the other rows of that tile
#: must equal bit for bit)
LAUNCH_SPECS = (["fw-fast:tile=64,lookahead=0", "fw-fast:tile=64,lookahead=1",
                 "fw-fast:tile=64,lookahead=0,graph=1", "fw-fast:tile=64,lookahead=1,graph=1",
                 "fw-fast:tile=128,lookahead=1", "fw-fast:tile=128,lookahead=1,graph=1"]
                + [f"fw-fast:persistent=1,cfg={c}" for c in fw_gpu.PERSIST_CONFIGS]
                + [f"fw-fast:persistent=1,tile=128,cfg={c}" for c in fw_gpu.PERSIST_128_CONFIGS])


def section_launch(be, n, ariths=("float32", "int32"), specs=LAUNCH_SPECS, repeats=3):
    """Issue 38: fw-fast's launch sequence vs one CUDA graph vs one persistent kernel (GPU; ``be`` None:
    the host device, CUDA source on the CPU, where graph=1 is the plain sequence)."""
    host = be is None
    cpu = select("cpu") if host else None
    peak, formula = S.peak_updates(be) if not host else (None, "")
    m = S.paper_graph(n, 13)
    where = "host device (CUDA source on the CPU)" if host else be.device_name
    out(f"### Issue 38: fw-fast launch overhead, n = {n} ({where}; computation only, median of {repeats})\n")
    if peak:
        out(f"Peak: {formula}; n³ at peak = {n ** 3 / peak * 1e3:.2f} ms.\n")
    out("| arith | variant | ms | % of peak | × product | launches | graph captures | equals the first row of its tile bit for bit |")
    out("|---|---|---|---|---|---|---|---|")
    for ar in ariths:
        mm = m if ar == "int32" else m + np.random.default_rng(2).uniform(0, 1, m.shape).astype(np.float32)
        prod = None
        if not host:
            dev, cp = fw_gpu.device(be), be.xp
            dt = np.float32 if ar == "float32" else np.int32
            rng = np.random.default_rng(0)
            a, b, c = (cp.asarray(rng.integers(lo, lo + 1000, (n, n)).astype(dt)) for lo in (1, 1, 1000))
            prod = events_time(cp, lambda: fw_gpu.gemm(dev, c, c, a, b, n, n, n, lda=n, ldb=n, ldci=n, ldco=n,
                                                        cfg=fw_gpu.DEFAULT_GEMM), 5)
            out(f"| {ar} | min-plus product {n}³, {fw_gpu.DEFAULT_GEMM} (the floor) | {prod * 1e3:.2f} | "
                f"{pct(n, prod, peak):.1f} % | 1.00 | 1 | | |")
            DATA[f"launch|{n}|{ar}|product"] = prod
        refs = {}
        for spec in specs:
            name, opts = S.parse_spec(spec)
            if host:
                opts = dict(opts, emulate=1)
            before = len(fw_gpu.GRAPHS)
            try:
                sec, res = fw_time(mm, f"{name}", cpu if host else be, ar, repeats, opts)
            except Exception as exc:  # noqa: BLE001 - report and go on
                out(f"| {ar} | {spec} | failed: {exc} | | | | | |")
                continue
            ref = refs.setdefault(res.params.get("tile"), res)    # the first row of each tile: the sequence
            same = res.dist.dtype == ref.dist.dtype and np.array_equal(res.dist.view(np.uint32),
                                                                        ref.dist.view(np.uint32))
            caps = len(fw_gpu.GRAPHS) - before if "graph=1" in spec and not host else ""
            out(f"| {ar} | {spec} | {sec * 1e3:.2f} | {'' if not peak else f'{pct(n, sec, peak):.1f} %'} | "
                f"{'' if not prod else f'{sec / prod:.2f}'} | {res.launches} | {caps} | {same} |")
            DATA[f"launch|{n}|{ar}|{spec}"] = sec
        if ar == "float32" and not host:
            try:
                sec, version = torch_kloop(mm)
                out(f"| {ar} | torch k-loop (GPU, {version}) | {sec * 1e3:.1f} | {pct(n, sec, peak):.1f} % | "
                    f"{sec / prod:.1f} | {n} | | |")
                DATA[f"launch|{n}|{ar}|torch"] = sec
            except Exception as exc:  # noqa: BLE001
                out(f"| {ar} | torch k-loop | unavailable: {exc} | | | | | |")
        save()
    out()


def best_fast(rows, default="fw-fast"):
    """The fastest fw-fast spec of the fw section (its options carry into the later sections)."""
    fast = {k: v for k, v in (rows or {}).items() if k.startswith("fw-fast")}
    return min(fast, key=fast.get) if fast else default


def section_fastparts(be, n):
    """fw-fast's phases timed apart (no look-ahead): closure, panels, non-pivot product, per tile."""
    cp = be.xp
    dev = fw_gpu.device(be)
    peak, _ = S.peak_updates(be)
    from kernels.graphs.apsp.fw_core import working_matrix
    m = S.paper_graph(n, 9)
    out(f"### fw-fast phases, n = {n} (CUDA events per launch, summed over the run; no look-ahead)\n")
    out("| tile | arith | closure ms | panels ms | non-pivot product ms | product % of peak | sum ms |")
    out("|---|---|---|---|---|---|---|")
    for tile in fw_gpu.FAST_TILES:
        for ar in ("float32", "int32"):
            d = cp.asarray(working_matrix(m, ar, 128))
            acc = [0.0, 0.0, 0.0]
            t, b = fw_gpu.ctype(d.dtype), "false"
            kc = fw_gpu.kernel(dev, "fw_gemm.cu", f"fw_fast_closure<{t},{b},{tile}>")
            kp = fw_gpu.kernel(dev, "fw_gemm.cu", f"fw_fast_panels<{t},0,{b},{tile},{tile // 16}>")
            ev = [cp.cuda.Event() for _ in range(4)]
            z = np.uintp(0)
            for kb in range(0, n, tile):
                args = (d, z, np.int32(n), np.int32(kb))
                ev[0].record()
                dev.launch(kc, (1,), ((tile // 4) ** 2,), args)
                ev[1].record()
                dev.launch(kp, (n // tile, 2), (256,), args)
                ev[2].record()
                band = ((kb, kb + tile),)
                fw_gpu.gemm(dev, d, d, fw_gpu.offset(d, kb), fw_gpu.offset(d, kb * n), n, n, tile, lda=n, ldb=n,
                            ldci=n, ldco=n, skip_rows=band, skip_cols=band, dtype=d.dtype)
                ev[3].record()
                ev[3].synchronize()
                for i in range(3):
                    acc[i] += cp.cuda.get_elapsed_time(ev[i], ev[i + 1]) * 1e-3
            upd = float(n - tile) ** 2 * n
            out(f"| {tile} | {ar} | {acc[0] * 1e3:.2f} | {acc[1] * 1e3:.2f} | {acc[2] * 1e3:.2f} | "
                f"{100 * upd / acc[2] / peak:.1f} % | {sum(acc) * 1e3:.2f} |")
            DATA[f"fastparts|{tile}|{ar}"] = acc
    out()


def section_int(be, n, specs):
    peak, _ = S.peak_updates(be)
    m = S.paper_graph(n, 11)
    out(f"### Integer weights, n = {n}: float32 vs int32 vs DPX on the same graph (weights 1 … n−1)\n")
    out("| version | float32 ms | int32 ms | DPX ms | int32 = DPX = float32 |")
    out("|---|---|---|---|---|")
    rows = {}
    for spec in specs:
        cells, results = [], []
        for ar in ("float32", "int32", "dpx"):
            sec, res = fw_time(m, spec, be, ar, 3)
            rows[(spec, ar)] = sec
            cells.append(f"{sec * 1e3:.2f} ({pct(n, sec, peak):.0f} %)")
            results.append(res)
        same = np.array_equal(results[1].dist, results[2].dist) and S.same_distances(results[0], results[1])
        out(f"| {spec} | " + " | ".join(cells) + f" | {same} |")
    DATA["int"] = {f"{k[0]}|{k[1]}": v for k, v in rows.items()}
    out()


def section_table2(be, quick):
    n = S.PAPER_002_N
    out(f"### Paper 002 Table II on this machine (n = {n}, seconds; V1 on the host CPU)\n")
    specs = ["fw-v1", "fw-v3", "fw-v4", "fw-v4-coop", "fw-v5"]
    reps = {"fw-v1": 1 if quick else 2, "fw-v3": 2 if quick else 10, "fw-v4": 2 if quick else 10,
            "fw-v4-coop": 2 if quick else 10, "fw-v5": 2 if quick else 10}
    rows = list(S.run_sweep(specs, [n], be, "int32", reps, seed=2))
    t2 = S.table_ii(rows)
    out("| version | paper mean | our runs | our mean | equals V1 | parameters |")
    out("|---|---|---|---|---|---|")
    for r in rows:
        paper = t2["versions"].get(r.version, {}).get("paper_mean")
        out(f"| {r.label} ({r.version}) | {'' if paper is None else f'{paper:.3f}'} | "
            f"{', '.join(f'{x:.4f}' for x in r.times)} | {r.seconds:.4f} | {r.agrees} | {r.params} |")
    for k, v in t2["steps"].items():
        ours = "n/a" if v["ours"] is None else f"{v['ours']:.1f} %"
        out(f"\nStep {k}: paper claims −{v['paper_claim']} % (its table: −{v['paper_table']:.1f} %), ours {ours} "
            "less time.")
    DATA["table2"] = {"rows": [r.to_dict() for r in rows], "table": t2}
    out()


def section_thesis(be, sizes):
    out("### Paper 004 Table 4.6 layout: computation time (ms), ours (H100) vs the thesis's GTX 280\n")
    rows = list(S.run_sweep(S.THESIS_SPECS, sizes, be, "int32", 2, seed=3))
    tab = S.table_4_6(rows)
    out("| n | " + " | ".join(S.THESIS_HEADERS) + " |")
    out("|---|" + "---|" * len(S.THESIS_HEADERS))
    for row in tab:
        cells = []
        for o, p in zip(row["ours_ms"], row["paper_ms"]):
            cells.append(("—" if o is None else f"{o:.3g}") + ("" if p is None else f" ({p:g})"))
        out(f"| {row['n']} | " + " | ".join(cells) + " |")
    bad = [r for r in rows if not r.agrees]
    out(f"\nAll specs agree per n: {not bad}. Tuned l (MM): " +
        "; ".join(f"{r.label} n={r.n}: {r.params}" for r in rows if r.version == "fw-mm"))
    DATA["thesis"] = [r.to_dict() for r in rows]
    out()


def section_breakdown(be, n):
    out(f"### Paper 004 Tables 4.7–4.8 layout, n = {n}, int32, l = 1 (ms per kernel over a whole run)\n")
    br = S.kernel_breakdown(be, n, "int32")
    out("| kernel | " + " | ".join(br) + " |")
    out("|---|" + "---|" * len(br))
    for k in ("pivot", "pivot row+column", "non-pivot"):
        out(f"| {k} | " + " | ".join(f"{v[k] * 1e3:.2f}" for v in br.values()) + " |")
    out("| non-pivot % of min-plus peak | " + " | ".join(f"{v['nonpivot_pct_peak']:.1f} %" for v in br.values()) + " |")
    out("| thesis non-pivot ms (GTX 280) | " + " | ".join(f"{x:g}" for x in S.THESIS_TABLE_4_7["non-pivot"]) + " |")
    out("| thesis instruction throughput | " + " | ".join(f"{x:g}" for x in S.THESIS_TABLE_4_8) + " |")
    DATA["breakdown"] = br
    out()


def section_big(be, n, specs):
    peak, _ = S.peak_updates(be)
    out(f"### n = {n}\n")
    m = S.paper_graph(n, 5)
    for spec in dict.fromkeys(specs):
        for ar in ("float32", "int32"):
            sec, res = fw_time(m, spec, be, ar, 1)
            out(f"- {spec} {ar}: {sec:.3f} s ({pct(n, sec, peak):.1f} % of peak), {res.launches} launches, "
                f"{res.params}")
            DATA[f"big|{spec}|{ar}"] = sec
            save()
    out()


HOST_SPECS = ("fw-v2", "fw-v3", "fw-v4", "fw-v4-coop", "fw-v5", "fw", "fw-blocked:tile=32", "fw-blocked:tile=64",
              "fw-mm:tile=32", "fw-2level:tile=32", "fw-recursive:t_r=32", "fw-fast:tile=64",
              "fw-fast:persistent=1")


def section_host(n, repeats=2):
    """The host device's table: each version's CUDA kernels run on the CPU (emulate=1)."""
    from kernels.graphs.apsp.fw_core import fw_versions
    cpu = select("cpu")
    m = S.paper_graph(n, 1 + n)
    out(f"## CUDA source run on the CPU (host device), n = {n}, int32, {os.cpu_count()} cores\n")
    out("| version | host s | ns / update | size limit n (30 s) | CPU implementation s |")
    out("|---|---|---|---|---|")
    ref = None
    for spec in HOST_SPECS:
        name, opts = S.parse_spec(spec)
        cls = fw_versions()[name]
        kw = dict(opts, emulate=1) if cls.cpu else dict(opts)
        floyd_warshall(m, name, cpu, arith="int32", pred=False, **kw)          # compile, warm
        ts = []
        for _ in range(repeats):
            r = floyd_warshall(m, name, cpu, arith="int32", pred=False, **kw)
            ts.append(r.kernel_seconds)
        ref = r.dist if ref is None else ref
        assert np.array_equal(r.dist, ref), spec
        sec = float(np.median(ts))
        native = ""
        if cls.cpu:
            t0 = time.perf_counter()
            floyd_warshall(m, name, cpu, arith="int32", pred=False, **opts)
            native = f"{time.perf_counter() - t0:.3g}"
        out(f"| {spec} | {sec:.3g} | {sec / n ** 3 * 1e9:.3g} | {cls.host_limit()} | {native} |")
        DATA[f"host|{spec}|{n}"] = sec
        save()
    out()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sections", default="ceiling,fw,int,table2,thesis,breakdown,big")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--thesis-sizes", default="128,256,512,1024,2048,4096,8192")
    ap.add_argument("--best", default="fw-fast")
    ap.add_argument("--host-n", type=int, default=512)
    a = ap.parse_args()
    sec = set(a.sections.split(","))
    if "host" in sec:
        section_host(a.host_n)
        save()
        if sec == {"host"}:
            return
    try:
        be = select("gpu")
    except Exception as exc:  # noqa: BLE001 - no GPU: the sections that run on the host device
        if "launch" not in sec:
            raise
        out(f"No GPU ({exc}): the launch section on the host device at n = {a.host_n}.\n")
        section_launch(None, a.host_n, repeats=1)
        save()
        return
    out(f"Device: {be.device_name} (CC {be.compute_capability}); {time.strftime('%Y-%m-%d')}\n")
    if "ceiling" in sec:
        section_ceiling(be, a.n, a.quick)
        save()
    best = a.best
    if "fw" in sec:
        best = best_fast(section_fw(be, a.n, a.quick), a.best)
        out(f"Best fw-fast configuration, used below: {best}\n")
        save()
    if "launch" in sec:
        section_launch(be, a.n)
    if "launch16k" in sec:
        section_launch(be, 16384, ("int32",), ["fw-fast", "fw-fast:persistent=1,tile=128",
                                                "fw-fast:persistent=1,tile=128,cfg=128x128/8x8", "fw-fast:persistent=1",
                                                "fw-fast:graph=1"], repeats=1)
    if "fastparts" in sec:
        section_fastparts(be, a.n)
    if "int" in sec:
        section_int(be, a.n, [best, "fw-mm:tile=32,l=auto", "fw-2level:tile=32", "fw-recursive:t_r=64"])
        save()
    if "table2" in sec:
        section_table2(be, a.quick)
        save()
    if "thesis" in sec:
        section_thesis(be, [int(x) for x in a.thesis_sizes.split(",")])
        save()
    if "breakdown" in sec:
        section_breakdown(be, 8192)
        save()
    if "big" in sec:
        section_big(be, 16384, [best, "fw-fast:tile=128,cfg=128x128/8x8/2"])
    save()


if __name__ == "__main__":
    main()
