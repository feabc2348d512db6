// Adaptive ensemble integrator of the ODE core: Dormand–Prince 5(4), dense output, events by root
// finding — one CUDA thread integrates one ensemble member to every output time.  The CUDA twin of
// kernels/flint/ensemble/rk.py (same control flow per member; see its docstring for the algorithm:
// Hairer, Nørsett & Wanner, Solving ODEs I, §II.4–II.6, DOPRI5).
//
// Prepended by kernels/flint/ensemble/gpu.py:
//   sizes NS NW NE NE1 NAUX NOBS MAXA HW (NE the number of events, the others ≥ 1; HW 0 when the only watch
//   entry is the constant-false stand-in) and the array
//   capacities NS_CAP NW_CAP NE1_CAP NAUX_CAP MAXA_CAP MAXV_CAP (≥ the sizes; MAXV_CAP ≥ the assignments
//   of a useValuesFromTriggerTime event), MAX_STEPS, MAX_EVENTS_AT_ONCE, MAXP;
//   index tables  W_IDX[NW] G_IDX[NW] O_IDX[NOBS] EV_NA[NE] EV_VAL[NE*MAXA] EV_CONC[NE*MAXA]
//                 EV_TGT[NE*MAXA] EV_PRIO[NE] EV_PERS[NE] EV_INIT[NE] EV_UVFTT[NE] EV_DELAY[NE]
//                 (aux indices, −1 = none);
//   TS: sizes are constants, capacities equal them and the tables are static arrays;
//   IS: sizes and tables are read through the Ctx ``c`` from one int array (the kernel source depends
//       only on the capacities, so one compiled kernel serves every model of a size class);
//   struct Ctx, MODEL_ARGS, MODEL_CTX, and the model:
//     model_rhs(const Ctx&, double t, const double* y, double* dy)   dy/dt
//     model_aux(const Ctx&, double t, const double* y, double* a)    NAUX named outputs
//   TS: generated C code (runtimes.expr_code "c");  IS: the bytecode interpreter flint_exec (flint_is.cu).

#ifndef INFINITY                   // NVRTC has no <math.h>
#define INFINITY __longlong_as_double(0x7ff0000000000000ULL)
#endif
#define DP_FINITE(x) ((x) - (x) == 0.0)   // false for ±inf and NaN (no fast-math)
#define NSAMPLE 4                          // watch samples per step (theta = 1/4, 1/2, 3/4 and the end)

#define DP_C2 (1.0 / 5.0)
#define DP_C3 (3.0 / 10.0)
#define DP_C4 (4.0 / 5.0)
#define DP_C5 (8.0 / 9.0)

__device__ __forceinline__ double dp_norm_err(const Ctx& c, const double* y, const double* yn, const double* e, double rtol, double atol) {
    double s = 0.0;
    for (int j = 0; j < NS; ++j) {
        double sc = atol + rtol * fmax(fabs(y[j]), fabs(yn[j]));
        double q = e[j] / sc;
        s += q * q;
    }
    double err = sqrt(s / NS);
    return DP_FINITE(err) ? err : INFINITY;
}

// DOPRI5's stiffness test (Hairer & Wanner II §IV.2, dopri5.f): h·λ ≈ h·‖k7 − k6‖ / ‖y1 − y6‖ (k6, k7 the
// derivatives at the stage-6 state y6 and at y1, both at t + h; y1 − y6 = h·Σ DP_Sj·kj) tested every
// DP_NSTIFF accepted steps and after each positive test; 15 positive tests in a row: stiff (status 1).
#define DP_NSTIFF 1000
#define DP_S0 (35.0 / 384.0 - 9017.0 / 3168.0)
#define DP_S1 (355.0 / 33.0)
#define DP_S2 (500.0 / 1113.0 - 46732.0 / 5247.0)
#define DP_S3 (125.0 / 192.0 - 49.0 / 176.0)
#define DP_S4 (-2187.0 / 6784.0 + 5103.0 / 18656.0)
#define DP_S5 (11.0 / 84.0)

// One DOPRI5 step: k[0] holds f(t, y) on entry (FSAL); k[1..6] and yn are filled; returns the error norm.
__device__ double dp_step(const Ctx& c, double t, const double* y, double k[7][NS_CAP], double h, double* yn,
                          double rtol, double atol) {
    double yi[NS_CAP], e[NS_CAP];
    for (int j = 0; j < NS; ++j) yi[j] = y[j] + h * (1.0 / 5.0) * k[0][j];
    model_rhs(c, t + DP_C2 * h, yi, k[1]);
    for (int j = 0; j < NS; ++j) yi[j] = y[j] + h * ((3.0 / 40.0) * k[0][j] + (9.0 / 40.0) * k[1][j]);
    model_rhs(c, t + DP_C3 * h, yi, k[2]);
    for (int j = 0; j < NS; ++j)
        yi[j] = y[j] + h * ((44.0 / 45.0) * k[0][j] + (-56.0 / 15.0) * k[1][j] + (32.0 / 9.0) * k[2][j]);
    model_rhs(c, t + DP_C4 * h, yi, k[3]);
    for (int j = 0; j < NS; ++j)
        yi[j] = y[j] + h * ((19372.0 / 6561.0) * k[0][j] + (-25360.0 / 2187.0) * k[1][j] + (64448.0 / 6561.0) * k[2][j]
                            + (-212.0 / 729.0) * k[3][j]);
    model_rhs(c, t + DP_C5 * h, yi, k[4]);
    for (int j = 0; j < NS; ++j)
        yi[j] = y[j] + h * ((9017.0 / 3168.0) * k[0][j] + (-355.0 / 33.0) * k[1][j] + (46732.0 / 5247.0) * k[2][j]
                            + (49.0 / 176.0) * k[3][j] + (-5103.0 / 18656.0) * k[4][j]);
    model_rhs(c, t + h, yi, k[5]);
    for (int j = 0; j < NS; ++j)
        yn[j] = y[j] + h * ((35.0 / 384.0) * k[0][j] + (500.0 / 1113.0) * k[2][j] + (125.0 / 192.0) * k[3][j]
                            + (-2187.0 / 6784.0) * k[4][j] + (11.0 / 84.0) * k[5][j]);
    model_rhs(c, t + h, yn, k[6]);
    for (int j = 0; j < NS; ++j)
        e[j] = h * ((71.0 / 57600.0) * k[0][j] + (-71.0 / 16695.0) * k[2][j] + (71.0 / 1920.0) * k[3][j]
                    + (-17253.0 / 339200.0) * k[4][j] + (22.0 / 525.0) * k[5][j] + (-1.0 / 40.0) * k[6][j]);
    return dp_norm_err(c, y, yn, e, rtol, atol);
}

// DOPRI5 continuous extension at theta in [0, 1].
__device__ void dp_dense(const Ctx& c, const double* y0, const double* y1, double k[7][NS_CAP], double h, double theta, double* out) {
    const double d1 = -12715105075.0 / 11282082432.0, d3 = 87487479700.0 / 32700410799.0,
                 d4 = -10690763975.0 / 1880347072.0, d5 = 701980252875.0 / 199316789632.0,
                 d6 = -1453857185.0 / 822651844.0, d7 = 69997945.0 / 29380423.0;
    double th1 = 1.0 - theta;
    for (int j = 0; j < NS; ++j) {
        double r2 = y1[j] - y0[j];
        double r3 = h * k[0][j] - r2;
        double r4 = r2 - h * k[6][j] - r3;
        double r5 = h * (d1 * k[0][j] + d3 * k[2][j] + d4 * k[3][j] + d5 * k[4][j] + d6 * k[5][j] + d7 * k[6][j]);
        out[j] = y0[j] + theta * (r2 + th1 * (r3 + theta * (r4 + th1 * r5)));
    }
}

// SplitMix64's finaliser (rk.mix64): member i's k-th draw is dp_mix64(key + k), key = dp_mix64(dp_mix64(seed) + i)
__device__ __forceinline__ unsigned long long dp_mix64(unsigned long long z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Per member: the pending event instances in scheduling order (execution time, event, sequence number,
// values of useValuesFromTriggerTime), the previous watch vector, the random stream and the firing log.
struct EvState {
    bool prev[NW_CAP];
    int np;
    double pt[MAXP];
    int pe[MAXP];
    long long ps[MAXP];
    double pv[MAXP * MAXV_CAP];
    long long seq, draws;
    unsigned long long key;
    int err;                        // 0, or 5 (queue full) / 6 (negative or NaN delay): the kernel's status
    double* log_t; int* log_e; int log_cap, log_n;
};

__device__ bool dp_watch_same(const Ctx& c, const double* a, const bool* prev) {
    for (int w = 0; w < NW; ++w) if ((a[W_IDX[w]] != 0.0) != prev[w]) return false;
    return true;
}

__device__ void dp_drop(EvState& es, int q) {          // remove instance q, keeping the order of the others
    for (int r = q + 1; r < es.np; ++r) {
        es.pt[r - 1] = es.pt[r]; es.pe[r - 1] = es.pe[r]; es.ps[r - 1] = es.ps[r];
        for (int j = 0; j < MAXV_CAP; ++j) es.pv[(r - 1) * MAXV_CAP + j] = es.pv[r * MAXV_CAP + j];
    }
    es.np--;
}

// Rising triggers schedule an instance at t + delay (delay and trigger-time values read now); falling
// triggers cancel the pending instances of non-persistent events (SBML L3V2 §4.11.2–4.11.4).
__device__ void dp_update(const Ctx& c, EvState& es, const double* a, double t) {
    for (int k = 0; k < NE; ++k) {
        bool w = a[W_IDX[k]] != 0.0;
        if (w && !es.prev[k]) {
            double d = EV_DELAY[k] >= 0 ? a[EV_DELAY[k]] : 0.0;
            if (!(d >= 0.0)) { es.err = 6; continue; }
            if (es.np >= MAXP) { es.err = 5; continue; }
            int q = es.np++;
            es.pt[q] = t + d; es.pe[q] = k; es.ps[q] = ++es.seq;
            if (EV_UVFTT[k]) for (int j = 0; j < EV_NA[k]; ++j) es.pv[q * MAXV_CAP + j] = a[EV_VAL[k * MAXA + j]];
        } else if (es.prev[k] && !w && !EV_PERS[k]) {
            for (int q = es.np - 1; q >= 0; --q) if (es.pe[q] == k) dp_drop(es, q);
        }
    }
    for (int w = 0; w < NW; ++w) es.prev[w] = a[W_IDX[w]] != 0.0;
}

__device__ double dp_next_time(const EvState& es) {
    double m = INFINITY;
    for (int q = 0; q < es.np; ++q) m = fmin(m, es.pt[q]);
    return m;
}

// The member's event state at t0: triggers start at their initialValue (a trigger true at t0 with
// initialValue false fires then), the other watch entries at their value; log: this member's rows.
__device__ void dp_events_init(const Ctx& c, EvState& es, double t, const double* y, int i, unsigned long long seed,
                               double* log_t, int* log_e, int log_cap) {
    double a[NAUX_CAP];
    model_aux(c, t, y, a);
    for (int w = 0; w < NW; ++w) es.prev[w] = a[W_IDX[w]] != 0.0;
    for (int q = 0; q < NE; ++q) es.prev[q] = EV_INIT[q] != 0;
    es.np = 0; es.seq = 0; es.draws = 0; es.err = 0;
    es.key = dp_mix64(dp_mix64(seed) + (unsigned long long)i);
    es.log_cap = log_cap; es.log_n = 0;
    es.log_t = log_t + (size_t)i * log_cap; es.log_e = log_e + (size_t)i * log_cap;
}

__device__ __forceinline__ double dp_prio(const Ctx& c, const double* a, int k) {
    double v = EV_PRIO[k] >= 0 ? a[EV_PRIO[k]] : -INFINITY;
    return v == v ? v : -INFINITY;
}

// Execute the instances due at time t (SBML L3V2 §4.11.5–4.11.7): highest priority first; equal finite
// priorities in random order; otherwise by (time, event, sequence).  1 done, 3 endless cascade, 5, 6 (err).
__device__ int dp_process(const Ctx& c, EvState& es, double t, double* y) {
    double a[NAUX_CAP];
    model_aux(c, t, y, a);
    dp_update(c, es, a, t);
    for (int it = 0; it < MAX_EVENTS_AT_ONCE; ++it) {
        if (es.err) return es.err;
        int nready = 0, pick = -1;
        double bp = -INFINITY;
        for (int q = 0; q < es.np; ++q)
            if (es.pt[q] <= t) { double v = dp_prio(c, a, es.pe[q]); if (nready++ == 0 || v > bp) bp = v; pick = q; }
        if (nready == 0) return 1;
        if (nready > 1) {
            int ntop = 0;
            for (int q = 0; q < es.np; ++q) if (es.pt[q] <= t && dp_prio(c, a, es.pe[q]) == bp) ++ntop;
            pick = -1;
            if (ntop > 1 && DP_FINITE(bp)) {
                int r = (int)((dp_mix64(es.key + (unsigned long long)(++es.draws)) >> 11) % (unsigned long long)ntop);
                for (int q = 0; q < es.np && pick < 0; ++q)
                    if (es.pt[q] <= t && dp_prio(c, a, es.pe[q]) == bp && r-- == 0) pick = q;
            } else {
                for (int q = 0; q < es.np; ++q) {
                    if (!(es.pt[q] <= t && dp_prio(c, a, es.pe[q]) == bp)) continue;
                    if (pick < 0 || es.pt[q] < es.pt[pick] || (es.pt[q] == es.pt[pick] && (es.pe[q] < es.pe[pick]
                        || (es.pe[q] == es.pe[pick] && es.ps[q] < es.ps[pick])))) pick = q;
                }
            }
        }
        int k = es.pe[pick];
        double v[MAXA_CAP];
        for (int j = 0; j < EV_NA[k]; ++j) {
            double x = EV_UVFTT[k] ? es.pv[pick * MAXV_CAP + j] : a[EV_VAL[k * MAXA + j]];
            int cv = EV_CONC[k * MAXA + j];
            v[j] = cv >= 0 ? x * a[cv] : x;           // concentration target: amount = value × size (before)
        }
        dp_drop(es, pick);
        for (int j = 0; j < EV_NA[k]; ++j) y[EV_TGT[k * MAXA + j]] = v[j];
        if (es.log_n < es.log_cap) { es.log_t[es.log_n] = t; es.log_e[es.log_n] = k; }
        es.log_n++;
        model_aux(c, t, y, a);
        dp_update(c, es, a, t);
    }
    return 3;
}

// First switching time in (t0, t0+h]: Illinois on the changed gaps (each distinct gap once; the trial
// point kept tol/2 off the bracket's ends so that it shrinks), then bisection on the watch vector.
// The bracket is (t0, t0 + hx] inside the step (t0, t0 + h]; wnew: the watch at t0 + hx.
__device__ double dp_locate(const Ctx& c, const EvState& es, double t0, const double* y0, const double* y1,
                            double k[7][NS_CAP], double h, double hx, const bool* wnew) {
    double ys[NS_CAP], a[NAUX_CAP], alo[NAUX_CAP], ahi[NAUX_CAP];
    double lo = t0, hi = t0 + hx, blo = 0.0, bhi = 0.0;
    bool have = false;
    dp_dense(c, y0, y1, k, h, 0.0, ys); model_aux(c, lo, ys, alo);
    dp_dense(c, y0, y1, k, h, hx == h ? 1.0 : hx / h, ys); model_aux(c, hi, ys, ahi);
    for (int w = 0; w < NW; ++w) {
        int g = G_IDX[w];
        if (g < 0 || wnew[w] == es.prev[w]) continue;
        bool dup = false;
        for (int v = 0; v < w && !dup; ++v) dup = G_IDX[v] == g && wnew[v] != es.prev[v];
        if (dup) continue;
        double aa = lo, bb = hi, ga = alo[g], gb = ahi[g];
        if (!(DP_FINITE(ga) && DP_FINITE(gb)) || ga * gb > 0) continue;
        int side = 0;
        double tol = 4e-15 * fmax(1.0, fabs(hi));
        for (int it = 0; it < 60; ++it) {
            if (bb - aa <= tol || ga == gb) break;
            double m = bb - gb * (bb - aa) / (gb - ga);
            if (m != m) m = 0.5 * (aa + bb);
            m = fmin(fmax(m, aa + 0.5 * tol), bb - 0.5 * tol);
            dp_dense(c, y0, y1, k, h, (m - t0) / h, ys); model_aux(c, m, ys, a); double gm = a[g];
            if (gm == 0) { aa = bb = m; break; }
            if (gm * gb > 0) { bb = m; gb = gm; if (side == -1) ga *= 0.5; side = -1; }
            else { aa = m; ga = gm; if (side == 1) gb *= 0.5; side = 1; }
        }
        double eps = 1e-13 * fmax(1.0, fabs(bb));
        double a2 = fmax(lo, aa - eps), b2 = fmin(hi, bb + eps);
        if (!have || b2 < bhi) { blo = a2; bhi = b2; have = true; }
    }
    if (have && blo < bhi) {
        dp_dense(c, y0, y1, k, h, (blo - t0) / h, ys); model_aux(c, blo, ys, a); bool s1 = dp_watch_same(c, a, es.prev);
        dp_dense(c, y0, y1, k, h, (bhi - t0) / h, ys); model_aux(c, bhi, ys, a); bool s2 = dp_watch_same(c, a, es.prev);
        if (s1 && !s2) { lo = blo; hi = bhi; }
    }
    for (int it = 0; it < 200; ++it) {
        if (hi - lo <= 1e-14 * fmax(1.0, fabs(hi))) break;
        double m = 0.5 * (lo + hi);
        if (m <= lo || m >= hi) break;
        dp_dense(c, y0, y1, k, h, (m - t0) / h, ys); model_aux(c, m, ys, a);
        if (dp_watch_same(c, a, es.prev)) lo = m; else hi = m;
    }
    return hi;
}

__device__ void dp_record(const Ctx& c, double t, const double* y, double* out, int oi, int n, int i) {
    double a[NAUX_CAP];
    model_aux(c, t, y, a);
    for (int j = 0; j < NOBS; ++j) out[((size_t)oi * NOBS + j) * n + i] = a[O_IDX[j]];
}

// status[i]: 0 ok, 1 step budget exceeded (stiff), 2 step size underflow, 3 endless event cascade,
// 5 more than MAXP pending event instances, 6 a negative or NaN event delay.  seed: the random order of
// equal priorities; log_t / log_e (n × log_cap): the member's first log_cap event executions (time,
// event), log_n[i] how many it executed.
#ifndef FLINT_NO_DOPRI_KERNEL     // the Rodas4 module includes this file for its event machinery only
extern "C" __global__ void flint_dopri(const double* __restrict__ y0, const double* __restrict__ times, int nt,
                                       double rtol, double atol, double hmax, double* __restrict__ out,
                                       int* __restrict__ status, int n, unsigned long long seed, int log_cap,
                                       double* __restrict__ log_t, int* __restrict__ log_e, int* __restrict__ log_n,
                                       int stiff_test MODEL_ARGS)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    MODEL_CTX;
    double y[NS_CAP], yn[NS_CAP], ys[NS_CAP], k[7][NS_CAP], ks[7][NS_CAP], a[NAUX_CAP];
    for (int j = 0; j < NS; ++j) y[j] = y0[(size_t)j * n + i];
    EvState es;
    double t = 0.0, t_end = times[nt - 1];
    int oi = 0;
    status[i] = 0;
    dp_events_init(c, es, t, y, i, seed, log_t, log_e, log_cap);
    int ps = dp_process(c, es, t, y);
    log_n[i] = es.log_n;
    if (ps != 1) { status[i] = ps; return; }
    double tq = dp_next_time(es);
    while (oi < nt && times[oi] <= t) dp_record(c, t, y, out, oi++, n, i);
    if (t >= t_end) { while (oi < nt) dp_record(c, t, y, out, oi++, n, i); return; }
    model_rhs(c, t, y, k[0]);
    // initial step (Hairer's hinit, order 5)
    double h;
    {
        double d0 = 0, d1 = 0, d2 = 0;
        for (int j = 0; j < NS; ++j) { double sc = atol + rtol * fabs(y[j]); d0 += (y[j] / sc) * (y[j] / sc);
                                       d1 += (k[0][j] / sc) * (k[0][j] / sc); }
        d0 = sqrt(d0 / NS); d1 = sqrt(d1 / NS);
        double h0 = (d0 < 1e-10 || d1 < 1e-10) ? 1e-6 : 0.01 * d0 / d1;
        h0 = fmin(h0, hmax);
        for (int j = 0; j < NS; ++j) ys[j] = y[j] + h0 * k[0][j];
        model_rhs(c, t + h0, ys, k[1]);
        for (int j = 0; j < NS; ++j) { double sc = atol + rtol * fabs(y[j]); double q = (k[1][j] - k[0][j]) / sc; d2 += q * q; }
        d2 = sqrt(d2 / NS) / h0;
        double dm = fmax(d1, d2);
        double h1 = dm <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dm, 0.2);
        h = fmin(fmin(100 * h0, h1), hmax);
        if (!(DP_FINITE(h) && h > 0)) h = 1e-6;
    }
    double facold = 1e-4;
    long steps = 0, naccpt = 0;
    int iasti = 0, nonsti = 0;             // DOPRI5's stiffness test (stiff_test != 0)
    bool wnew[NW_CAP];
    while (t < t_end) {
        double tstop = fmin(t_end, tq);
        double hh = fmin(h, tstop - t);
        bool last = hh >= tstop - t;
        double err = dp_step(c, t, y, k, hh, yn, rtol, atol);
        if (++steps > MAX_STEPS) { status[i] = 1; return; }
        double fac11 = err > 0 ? pow(err, 0.2 - 0.04 * 0.75) : 0.0;
        if (!(err <= 1.0)) {
            h = hh / fmin(1.0 / 0.2, fac11 / 0.9);
            if (h <= 1e-14 * fmax(1.0, fabs(t))) { status[i] = 2; return; }
            continue;
        }
        double fac = fmin(fmax(fac11 / pow(facold, 0.04) / 0.9, 1.0 / 10.0), 1.0 / 0.2);
        double hnew = fmin(hh / fac, hmax);
        facold = fmax(err, 1e-4);
        if (stiff_test && (++naccpt % DP_NSTIFF == 0 || iasti > 0)) {
            double stnum = 0.0, stden = 0.0;
            for (int j = 0; j < NS; ++j) {
                double dk = k[6][j] - k[5][j];
                double dy = hh * (DP_S0 * k[0][j] + DP_S1 * k[1][j] + DP_S2 * k[2][j] + DP_S3 * k[3][j]
                                  + DP_S4 * k[4][j] + DP_S5 * k[5][j]);
                stnum = stnum + dk * dk;
                stden = stden + dy * dy;
            }
            if (stden > 0.0 && hh * sqrt(stnum / stden) > 3.25) {
                nonsti = 0;
                if (++iasti == 15) { status[i] = 1; return; }
            } else if (++nonsti == 6) {
                iasti = 0;
            }
        }
        double tn = last ? tstop : t + hh;
        model_aux(c, tn, yn, a);
        bool changed = false;
        for (int w = 0; w < NW; ++w) { wnew[w] = a[W_IDX[w]] != 0.0; changed |= wnew[w] != es.prev[w]; }
        double hx = hh;                    // the end of the bracket of the first change
        for (int q = 1; q < NSAMPLE && !changed && HW; ++q) {   // a trigger that rises and falls
            double th = (double)q / NSAMPLE;                           // inside the step: sampled
            dp_dense(c, y, yn, k, hh, th, ys); model_aux(c, t + th * hh, ys, a);
            for (int w = 0; w < NW; ++w) { wnew[w] = a[W_IDX[w]] != 0.0; changed |= wnew[w] != es.prev[w]; }
            if (changed) hx = th * hh;
        }
        bool fire;
        if (!changed) {
            while (oi < nt && times[oi] < tn) {
                dp_dense(c, y, yn, k, hh, (times[oi] - t) / hh, ys);
                dp_record(c, times[oi], ys, out, oi, n, i); ++oi;
            }
            t = tn;
            for (int j = 0; j < NS; ++j) { y[j] = yn[j]; k[0][j] = k[6][j]; }
            for (int w = 0; w < NW; ++w) es.prev[w] = wnew[w];
            h = hnew;
            fire = last && tq <= tn;               // the step ended at a pending event time
        } else {
            double ts = dp_locate(c, es, t, y, yn, k, hh, hx, wnew);
            double hs = ts - t;
            if (hs > 0) {
                for (int j = 0; j < NS; ++j) ks[0][j] = k[0][j];
                dp_step(c, t, y, ks, hs, yn, rtol, atol);
                while (oi < nt && times[oi] < ts) {
                    dp_dense(c, y, yn, ks, hs, (times[oi] - t) / hs, ys);
                    dp_record(c, times[oi], ys, out, oi, n, i); ++oi;
                }
                for (int j = 0; j < NS; ++j) y[j] = yn[j];
            }
            t = ts;
            fire = true;
        }
        if (fire) {                                // events at t; integration restarts (k1 recomputed)
            int ps = dp_process(c, es, t, y);
            log_n[i] = es.log_n;
            if (ps != 1) { status[i] = ps; return; }
            tq = dp_next_time(es);
            while (oi < nt && times[oi] <= t) dp_record(c, t, y, out, oi++, n, i);
            model_rhs(c, t, y, k[0]);
            h = fmax(fmin(hnew, hmax), 1e-12 * fmax(1.0, fabs(t)));
        }
    }
    while (oi < nt) dp_record(c, t, y, out, oi++, n, i);
}
#endif
