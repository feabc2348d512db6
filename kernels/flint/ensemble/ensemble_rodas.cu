// Stiff ensemble integrator of the ODE core: Rodas4 (Hairer & Wanner, Solving ODEs II, §IV.7, code
// RODAS), one CUDA thread integrates one member — the CUDA twin of kernels/flint/ensemble/rosenbrock.py
// (same control flow per member; see its docstring for the method, step control, dense output, events).
// Per-thread design as DiffEqGPU's GPURodas4 (Utkarsh et al., CMAME 2024): the model, its Jacobian
// and a small dense LU with partial pivoting live in the thread.
//
// Appended by kernels/flint/ensemble/rodas_gpu.py after the Dormand–Prince source (ensemble_rk.cu, for
// its event machinery) and the Jacobian:
//   struct JacCtx, JAC_ARGS, JAC_CTX;
//   model_jac(const JacCtx&, double t, const double* y, double* J /*NS×NS, row-major*/, double* T /*∂f/∂t*/)
//   RO_MAX_STEPS, RO_MASS[NS] (0 on algebraic rows), RO_NALG, RO_NALG_CAP, RO_ALG[] (algebraic rows),
//   RO_ND, RO_ND_CAP, RO_HCAP, RO_DQ[] RO_DX[] RO_DD[] RO_DXP[] (delays: state of q_k, aux indices of x_k, d_k
//   and of x_k with rates 0, its value before t0).
// From ensemble_rk.cu: EvState, dp_events_init (empty queue, watch with the triggers' initialValue, seed, log),
// dp_process, dp_next_time (earliest pending execution time), dp_record, dp_watch_same.

#define RO_GAMMA 0.25
// The step, the LU, the event and delay helpers are out of line (__noinline__), and the Dormand–Prince
// kernel is left out of this module (FLINT_NO_DOPRI_KERNEL): inlined into the one kernel, they made
// NVRTC's compile of a model several times longer (benchmarks/RESULTS.md, compile times); each is called
// once a step or less often, against O(NS²)–O(NS³) work inside.

// In-place LU with partial pivoting (Doolittle; row k swapped with the first row of largest |pivot|).
// false when a pivot is 0 or not finite.
__device__ __noinline__ bool ro_lu(double* a, int* piv, int nd) {
    bool ok = true;
    for (int k = 0; k < nd; ++k) {
        int p = k;
        double best = fabs(a[k * nd + k]);
        for (int i = k + 1; i < nd; ++i) { double v = fabs(a[i * nd + k]); if (v > best) { best = v; p = i; } }
        piv[k] = p;
        if (p != k) for (int j = 0; j < nd; ++j) { double s = a[k * nd + j]; a[k * nd + j] = a[p * nd + j]; a[p * nd + j] = s; }
        double d = a[k * nd + k];
        if (!(d != 0.0 && DP_FINITE(d))) ok = false;
        for (int i = k + 1; i < nd; ++i) {
            double l = a[i * nd + k] / d;
            a[i * nd + k] = l;
            for (int j = k + 1; j < nd; ++j) a[i * nd + j] = a[i * nd + j] - l * a[k * nd + j];
        }
    }
    return ok;
}

__device__ __noinline__ void ro_solve(const double* a, const int* piv, double* x, int nd) {
    for (int k = 0; k < nd; ++k) { int p = piv[k]; double s = x[k]; x[k] = x[p]; x[p] = s; }
    for (int i = 0; i < nd; ++i) { double s = x[i]; for (int j = 0; j < i; ++j) s = s - a[i * nd + j] * x[j]; x[i] = s; }
    for (int i = nd - 1; i >= 0; --i) {
        double s = x[i];
        for (int j = i + 1; j < nd; ++j) s = s - a[i * nd + j] * x[j];
        x[i] = s / a[i * nd + i];
    }
}

// Rodas4 coefficients (RODAS, METH = 1)
__device__ const double RO_A[5][4] = {{0, 0, 0, 0}, {1.544, 0, 0, 0}, {0.9466785280815826, 0.2557011698983284, 0, 0},
    {3.314825187068521, 2.896124015972201, 0.9986419139977817, 0},
    {1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950}};
__device__ const double RO_C[6][5] = {{0, 0, 0, 0, 0}, {-5.6688, 0, 0, 0, 0}, {-2.430093356833875, -0.2063599157091915, 0, 0, 0},
    {-0.1073529058151375, -9.594562251023355, -20.47028614809616, 0, 0},
    {7.496443313967647, -10.24680431464352, -33.99990352819905, 11.70890893206160, 0},
    {8.083246795921522, -7.981132988064893, -31.52159432874371, 16.31930543123136, -6.058818238834054}};
__device__ const double RO_CT[6] = {0.0, 0.386, 0.21, 0.63, 1.0, 1.0};
__device__ const double RO_D[4] = {0.25, -0.1043, 0.1035, -0.0362};
__device__ const double RO_H2[5] = {10.12623508344586, -7.487995877610167, -34.80091861555747, -7.992771707568823, 1.025137723295662};
__device__ const double RO_H3[5] = {-0.6762803392801253, 6.087714651680015, 16.43084320892478, 24.76722511418386, -6.594389125716872};

// --- the delay csymbol: the member's history (kernels/flint/ensemble/history.py is its twin) ---------
// RO_ND delayed values q_k (states RO_DQ[k]) = aux RO_DX[k] at τ = t − aux RO_DD[k], read from a ring of
// the member's last RO_HCAP steps (t0, h, y_a, y_b, K1, K2).  The model functions are called through
// ro_rhs / ro_aux / ro_jac / ro_record / ro_process, which fill the q_k of a copy of y.
struct RoHist { double* base; const double* y0; int n, i, cnt, head; bool dropped, bad; };
#define RO_HSTRIDE (2 + 4 * NS)

__device__ void ro_hist_add(const Ctx& c, RoHist& H, double t0, double h, const double* ya, const double* yb,
                            const double* K1, const double* K2) {
    if (RO_ND == 0) return;
    int slot;
    if (H.cnt < RO_HCAP) { slot = (H.head + H.cnt) % RO_HCAP; H.cnt++; }
    else { slot = H.head; H.head = (H.head + 1) % RO_HCAP; H.dropped = true; }
    double* p = H.base + (size_t)slot * RO_HSTRIDE;
    p[0] = t0; p[1] = h;
    for (int j = 0; j < NS; ++j) { p[2 + j] = ya[j]; p[2 + NS + j] = yb[j]; p[2 + 2 * NS + j] = K1[j]; p[2 + 3 * NS + j] = K2[j]; }
}

__device__ const double* ro_hist_row(const Ctx& c, const RoHist& H, int k) {
    return H.base + (size_t)((H.head + k) % RO_HCAP) * RO_HSTRIDE;
}

// y(τ) of the member given its current (t, y): before 0 the initial state, a stored step's dense output,
// beyond the history linear to (t, y); H.bad when τ is older than the kept steps.
__device__ __noinline__ void ro_hist_state(const Ctx& c, RoHist& H, double tau, double t, const double* y, double* out) {
    if (tau < 0.0 || (H.cnt == 0 && tau <= 0.0)) { for (int j = 0; j < NS; ++j) out[j] = H.y0[(size_t)j * H.n + H.i]; return; }
    if (H.cnt && tau < ro_hist_row(c, H, 0)[0] && H.dropped) { H.bad = true; for (int j = 0; j < NS; ++j) out[j] = y[j]; return; }
    if (H.cnt == 0) { for (int j = 0; j < NS; ++j) out[j] = y[j]; return; }
    const double* L = ro_hist_row(c, H, H.cnt - 1);
    double te = L[0] + L[1];
    if (tau >= te) {
        if (t <= te) { for (int j = 0; j < NS; ++j) out[j] = L[2 + NS + j]; return; }
        double w = (tau - te) / (t - te);
        for (int j = 0; j < NS; ++j) out[j] = (1.0 - w) * L[2 + NS + j] + w * y[j];
        return;
    }
    int lo = 0, hi = H.cnt;
    while (lo < hi) { int mid = (lo + hi) / 2; if (ro_hist_row(c, H, mid)[0] <= tau) lo = mid + 1; else hi = mid; }
    const double* R = ro_hist_row(c, H, lo - 1 > 0 ? lo - 1 : 0);
    double th = R[1] > 0 ? (tau - R[0]) / R[1] : 1.0;
    for (int j = 0; j < NS; ++j)
        out[j] = (1.0 - th) * R[2 + j] + th * (R[2 + NS + j] + (1.0 - th) * (R[2 + 2 * NS + j] + th * R[2 + 3 * NS + j]));
}

// yf = y with the delayed values q_k at t (history.fill)
__device__ __noinline__ void ro_fill(const Ctx& c, RoHist& H, double t, const double* y, double* yf) {
    for (int j = 0; j < NS; ++j) yf[j] = y[j];
    if (RO_ND == 0) return;
    double a[NAUX_CAP], a2[NAUX_CAP], yh[NS_CAP];
    for (int pass = 0; pass < RO_ND; ++pass) {      // a delay may read another delayed value
        model_aux(c, t, yf, a);
        for (int k = 0; k < RO_ND; ++k) {
            double tau = t - a[RO_DD[k]];
            ro_hist_state(c, H, tau, t, yf, yh);
            model_aux(c, tau, yh, a2);
            yf[RO_DQ[k]] = a2[tau < 0.0 ? RO_DXP[k] : RO_DX[k]];      // before t0: x with rates 0
        }
    }
}

__device__ void ro_rhs(const Ctx& c, RoHist& H, double t, const double* y, double* f) {
    if (RO_ND == 0) { model_rhs(c, t, y, f); return; }
    double yf[NS_CAP]; ro_fill(c, H, t, y, yf); model_rhs(c, t, yf, f);
}
__device__ void ro_aux(const Ctx& c, RoHist& H, double t, const double* y, double* a) {
    if (RO_ND == 0) { model_aux(c, t, y, a); return; }
    double yf[NS_CAP]; ro_fill(c, H, t, y, yf); model_aux(c, t, yf, a);
}
// with delays ∂f/∂t also carries Σ_k ∂f/∂q_k · dq_k/dt (forward difference of the history, δ = 2^-26·max(1, |t|))
__device__ __noinline__ void ro_jac(const Ctx& c, const JacCtx& jc, RoHist& H, double t, const double* y, double* J, double* T) {
    if (RO_ND == 0) { model_jac(jc, t, y, J, T); return; }
    double yf[NS_CAP], y2[NS_CAP];
    ro_fill(c, H, t, y, yf);
    model_jac(jc, t, yf, J, T);
    double dlt = 1.4901161193847656e-08 * fmax(1.0, fabs(t));
    ro_fill(c, H, t + dlt, y, y2);
    for (int k = 0; k < RO_ND; ++k) {
        int q = RO_DQ[k];
        double dq = (y2[q] - yf[q]) / dlt;
        for (int r = 0; r < NS; ++r) T[r] = T[r] + J[r * NS + q] * dq;
    }
}
__device__ void ro_record(const Ctx& c, RoHist& H, double t, const double* y, double* out, int oi, int n, int i) {
    if (RO_ND == 0) { dp_record(c, t, y, out, oi, n, i); return; }
    double yf[NS_CAP]; ro_fill(c, H, t, y, yf); dp_record(c, t, yf, out, oi, n, i);
}
// dp_process on y with its q_k filled at t; the q_k entries of y are restored afterwards (as the twin's copy)
__device__ __noinline__ int ro_process(const Ctx& c, RoHist& H, EvState& es, double t, double* y) {
    if (RO_ND == 0) return dp_process(c, es, t, y);
    double yf[NS_CAP], q[RO_ND_CAP];
    ro_fill(c, H, t, y, yf);
    for (int k = 0; k < RO_ND; ++k) q[k] = y[RO_DQ[k]];
    for (int j = 0; j < NS; ++j) y[j] = yf[j];
    int ps = dp_process(c, es, t, y);
    for (int k = 0; k < RO_ND; ++k) y[RO_DQ[k]] = q[k];
    return ps;
}

// One Rodas4 step of size h from (t, y), f0 = f(t, y), Jacobian J and ∂f/∂t T: yn, the dense-output
// coefficients K1 K2, *ok (E regular); returns the error norm (inf when E is singular or not finite).
__device__ __noinline__ double ro_step(const Ctx& c, RoHist& H, double t, const double* y, const double* f0, const double* J, const double* T,
                          double h, double* yn, double* K1, double* K2, double rtol, double atol, bool* ok) {
    double E[NS_CAP * NS_CAP], k[6][NS_CAP], ys[NS_CAP], f[NS_CAP];
    int piv[NS_CAP];
    for (int r = 0; r < NS; ++r)
        for (int q = 0; q < NS; ++q) E[r * NS + q] = (r == q ? RO_MASS[r] / (h * RO_GAMMA) : 0.0) - J[r * NS + q];
    *ok = ro_lu(E, piv, NS);
    for (int j = 0; j < NS; ++j) k[0][j] = f0[j] + (h * RO_D[0]) * T[j];
    ro_solve(E, piv, k[0], NS);
    for (int s = 1; s < 6; ++s) {
        if (s < 5) {
            for (int j = 0; j < NS; ++j) { double v = 0.0; for (int q = 0; q < s; ++q) v = v + RO_A[s][q] * k[q][j]; ys[j] = y[j] + v; }
        } else {
            for (int j = 0; j < NS; ++j) ys[j] = ys[j] + k[4][j];
        }
        ro_rhs(c, H, t + RO_CT[s] * h, ys, f);
        for (int j = 0; j < NS; ++j) {
            double v = 0.0;
            for (int q = 0; q < s; ++q) v = v + (RO_C[s][q] / h) * k[q][j];
            double r = f[j] + RO_MASS[j] * v;
            if (s < 4) r = r + (h * RO_D[s]) * T[j];
            k[s][j] = r;
        }
        ro_solve(E, piv, k[s], NS);
    }
    double e = 0.0;
    for (int j = 0; j < NS; ++j) {
        yn[j] = ys[j] + k[5][j];
        double sc = atol + rtol * fmax(fabs(y[j]), fabs(yn[j]));
        double q = k[5][j] / sc;
        e += q * q;
        double a1 = 0.0, a2 = 0.0;
        for (int q2 = 0; q2 < 5; ++q2) { a1 = a1 + RO_H2[q2] * k[q2][j]; a2 = a2 + RO_H3[q2] * k[q2][j]; }
        K1[j] = a1; K2[j] = a2;
    }
    double err = sqrt(e / NS);
    return (DP_FINITE(err) && *ok) ? err : INFINITY;
}

// Member's algebraic components re-solved after an event (Newton on 0 = g, ∂g/∂z from model_jac,
// at most 30 iterations), as rosenbrock.consistent; false when the algebraic Jacobian is singular.
__device__ __noinline__ bool ro_consistent(const Ctx& c, const JacCtx& jc, RoHist& H, double t, double* y) {
    if (RO_NALG == 0) return true;
    double f[NS_CAP], J[NS_CAP * NS_CAP], T[NS_CAP], A[RO_NALG_CAP * RO_NALG_CAP], g[RO_NALG_CAP];
    int piv[RO_NALG_CAP];
    for (int it = 0; it < 30; ++it) {
        ro_rhs(c, H, t, y, f);
        ro_jac(c, jc, H, t, y, J, T);
        for (int p = 0; p < RO_NALG; ++p) {
            g[p] = f[RO_ALG[p]];
            for (int q = 0; q < RO_NALG; ++q) A[p * RO_NALG + q] = J[RO_ALG[p] * NS + RO_ALG[q]];
        }
        if (!ro_lu(A, piv, RO_NALG)) return false;
        ro_solve(A, piv, g, RO_NALG);
        bool small = true;
        for (int p = 0; p < RO_NALG; ++p) {
            double z = y[RO_ALG[p]] - g[p];
            y[RO_ALG[p]] = z;
            if (!(fabs(g[p]) <= 1e-13 * fmax(1.0, fabs(z)))) small = false;
        }
        if (small) break;
    }
    return true;
}

__device__ __noinline__ void ro_dense(const Ctx& c, const double* y0, const double* y1, const double* K1, const double* K2, double th, double* out) {
    for (int j = 0; j < NS; ++j) out[j] = (1.0 - th) * y0[j] + th * (y1[j] + (1.0 - th) * (K1[j] + th * K2[j]));
}

// First switching time of the watch vector in (t0, t0+h]: bisection on the dense output.
__device__ __noinline__ double ro_locate(const Ctx& c, RoHist& H, const EvState& es, double t0, double h, const double* y0, const double* y1,
                            const double* K1, const double* K2) {
    double ys[NS_CAP], a[NAUX_CAP];
    double lo = t0, hi = t0 + h;
    for (int it = 0; it < 200; ++it) {
        if (hi - lo <= 1e-14 * fmax(1.0, fabs(hi))) break;
        double m = 0.5 * (lo + hi);
        if (m <= lo || m >= hi) break;
        ro_dense(c, y0, y1, K1, K2, (m - t0) / h, ys);
        ro_aux(c, H, m, ys, a);
        if (dp_watch_same(c, a, es.prev)) lo = m; else hi = m;
    }
    return hi;
}

// A DAE's rejected step (t0, t0 + h] (rosenbrock.switch_in): when the trial end (t0 + h, yn) has the watch
// vector switched, *ts = the first time past the switch: ro_locate on the straight line from y to yn (the
// dense output with K1 = K2 = 0).  Across such a switch (a piecewise branch of an algebraic equation) the
// algebraic solution jumps and every step over it is rejected; a step to just past it passes, and the
// event machinery re-solves the algebraic variables there.
__device__ __noinline__ bool ro_switch_in(const Ctx& c, RoHist& H, const EvState& es, double t0, double h, const double* y,
                             const double* yn, double* ts) {
    double a[NAUX_CAP], zero[NS_CAP];
    ro_aux(c, H, t0 + h, yn, a);
    if (dp_watch_same(c, a, es.prev)) return false;
    for (int j = 0; j < NS; ++j) zero[j] = 0.0;
    *ts = ro_locate(c, H, es, t0, h, y, yn, zero, zero);
    return true;
}

// status[i], seed, log_* as flint_dopri: 0 ok, 1 step budget exceeded, 2 step size underflow (or a
// singular algebraic Jacobian), 3 endless event cascade, 5 too many pending event instances, 6 a
// negative or NaN event delay, 7 a delay reaching further back than the history kept
extern "C" __global__ void flint_rodas(const double* __restrict__ y0, const double* __restrict__ times, int nt,
                                       double rtol, double atol, double hmax, double* __restrict__ out,
                                       int* __restrict__ status, int n, unsigned long long seed, int log_cap,
                                       double* __restrict__ log_t, int* __restrict__ log_e, int* __restrict__ log_n, double* __restrict__ hist
                                       MODEL_ARGS JAC_ARGS)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    MODEL_CTX;
    JAC_CTX;
    double y[NS_CAP], yn[NS_CAP], ys[NS_CAP], yo[NS_CAP], f0[NS_CAP], T[NS_CAP], K1[NS_CAP], K2[NS_CAP],
           a[NAUX_CAP], J[NS_CAP * NS_CAP];
    for (int j = 0; j < NS; ++j) y[j] = y0[(size_t)j * n + i];
    EvState es;
    RoHist H{hist + (size_t)i * (RO_ND ? RO_HCAP * RO_HSTRIDE : 0), y0, n, i, 0, 0, false, false};
    double t = 0.0, t_end = times[nt - 1];
    int oi = 0;
    status[i] = 0;
    ro_fill(c, H, t, y, ys);
    dp_events_init(c, es, t, ys, i, seed, log_t, log_e, log_cap);
    int ps = ro_process(c, H, es, t, y);
    log_n[i] = es.log_n;
    double tq = dp_next_time(es);
    if (ps == 1 && !ro_consistent(c, jc, H, t, y)) ps = 2;
    if (ps != 1) { status[i] = ps; return; }
    while (oi < nt && (times[oi] <= 0.0 || t_end <= 0.0)) { ro_record(c, H, t, y, out, oi, n, i); ++oi; }
    if (t >= t_end) { while (oi < nt) { ro_record(c, H, t, y, out, oi, n, i); ++oi; } return; }
    double h = fmin(hmax, 1e-6);
    ro_rhs(c, H, t, y, f0);
    ro_jac(c, jc, H, t, y, J, T);
    long steps = 0;
    bool rejected = false, okm;
    while (t < t_end) {
        double tstop = fmin(t_end, tq);
        double hh = fmin(h, tstop - t);
        bool last = hh >= tstop - t;
        double err = ro_step(c, H, t, y, f0, J, T, hh, yn, K1, K2, rtol, atol, &okm);
        if (++steps > RO_MAX_STEPS) { status[i] = 1; return; }
        double fac = fmin(fmax(pow(err, 0.25) / 0.9, 1.0 / 6.0), 5.0);
        double hnew = okm ? hh / fac : 0.5 * hh;
        if (rejected) hnew = fmin(hnew, hh);
        if (!(err <= 1.0)) {
            h = hnew;
            rejected = true;
            double tsw;
            if (RO_NALG > 0 && ro_switch_in(c, H, es, t, hh, y, yn, &tsw)) h = tsw - t;
            if (h <= 1e-14 * fmax(1.0, fabs(t))) { status[i] = 2; return; }
            continue;
        }
        rejected = false;
        double tn = last ? tstop : t + hh;
        ro_aux(c, H, tn, yn, a);
        if (dp_watch_same(c, a, es.prev)) {
            ro_hist_add(c, H, t, hh, y, yn, K1, K2);
            while (oi < nt && times[oi] < tn) {
                ro_dense(c, y, yn, K1, K2, (times[oi] - t) / hh, ys);
                { ro_record(c, H, times[oi], ys, out, oi, n, i); ++oi; }
            }
            t = tn;
            for (int j = 0; j < NS; ++j) y[j] = yn[j];
            if (last && tq <= tn) {                 // the step ended at a pending event time
                int ps = ro_process(c, H, es, t, y);
                log_n[i] = es.log_n;
                if (ps == 1 && !ro_consistent(c, jc, H, t, y)) ps = 2;
                if (ps != 1) { status[i] = ps; return; }
                while (oi < nt && times[oi] <= t) { ro_record(c, H, t, y, out, oi, n, i); ++oi; }
            }
        } else {
            double ts = ro_locate(c, H, es, t, hh, y, yn, K1, K2);
            double hs = ts - t;
            if (hs > 0) {
                ro_step(c, H, t, y, f0, J, T, hs, yn, K1, K2, rtol, atol, &okm);
                ro_hist_add(c, H, t, hs, y, yn, K1, K2);
                for (int j = 0; j < NS; ++j) yo[j] = y[j];
                while (oi < nt && times[oi] < ts) {
                    ro_dense(c, yo, yn, K1, K2, (times[oi] - t) / hs, ys);
                    { ro_record(c, H, times[oi], ys, out, oi, n, i); ++oi; }
                }
                for (int j = 0; j < NS; ++j) y[j] = yn[j];
            }
            t = ts;
            int ps = ro_process(c, H, es, t, y);
            log_n[i] = es.log_n;
            if (ps == 1 && !ro_consistent(c, jc, H, t, y)) ps = 2;
            if (ps != 1) { status[i] = ps; return; }
            while (oi < nt && times[oi] <= t) { ro_record(c, H, t, y, out, oi, n, i); ++oi; }
        }
        tq = dp_next_time(es);
        ro_rhs(c, H, t, y, f0);
        ro_jac(c, jc, H, t, y, J, T);
        if (H.bad) { status[i] = 7; return; }
        h = fmin(hnew, hmax);
    }
    while (oi < nt) { ro_record(c, H, t, y, out, oi, n, i); ++oi; }
}
