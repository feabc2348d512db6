// Luo–Rudy 1991 (LR-I), written by hand as one CUDA kernel: one thread a cell, every step in
// registers, explicit Euler (or classic RK4) — the floor a CUDA programmer would write for the
// ensemble benchmark of issue 23/38 (benchmarks/flint.py), beside Flint's generated TS kernel.
// Equations: Luo & Rudy, Circ Res 68 (1991) 1501, as resources/models/luo_rudy_1991.flint states
// them (same parameters, same stimulus: -25.5 µA/cm² for 2 ms every 1000 ms from t = 10 ms).
// States (structure of arrays, y[s * n + cell]): V m h j d f X Cai.
//
// The same source runs on the CPU (kernels.hostcc's CUDA prelude; __CUDACC__ undefined): the host
// entry lr91_host loops the cells, for the tests.

#define LR_C 1.0
#define LR_GNA 23.0
#define LR_GSI 0.09
#define LR_GKP 0.0183
#define LR_GB 0.03921
#define LR_EB (-59.87)
#define LR_KO 5.4

struct LR91Const { double ENa, EK, EK1, gK, gK1; };

__device__ __forceinline__ LR91Const lr91_const() {
    const double RTF = 8314.0 * 310.0 / 96484.6;
    LR91Const c;
    c.ENa = RTF * log(140.0 / 18.0);
    c.EK = RTF * log((LR_KO + 0.01833 * 140.0) / (145.0 + 0.01833 * 18.0));
    c.EK1 = RTF * log(LR_KO / 145.0);
    c.gK = 0.282 * sqrt(LR_KO / 5.4);
    c.gK1 = 0.6047 * sqrt(LR_KO / 5.4);
    return c;
}

// dy/dt at (t, s) into ds
__device__ __forceinline__ void lr91_rhs(const LR91Const& c, double t, const double* s, double* ds) {
    const double V = s[0], m = s[1], h = s[2], j = s[3], d = s[4], f = s[5], X = s[6], Cai = s[7];
    const double ts = t - 10.0;
    const double Istim = (t >= 10.0 && ts - floor(ts / 1000.0) * 1000.0 <= 2.0) ? -25.5 : 0.0;
    const double am = 0.32 * (V + 47.13) / (1.0 - exp(-0.1 * (V + 47.13)));
    const double bm = 0.08 * exp(-V / 11.0);
    double ah, bh, aj, bj;
    if (V < -40.0) {
        ah = 0.135 * exp((80.0 + V) / -6.8);
        bh = 3.56 * exp(0.079 * V) + 310000.0 * exp(0.35 * V);
        aj = (-127140.0 * exp(0.2444 * V) - 3.474e-05 * exp(-0.04391 * V)) * (V + 37.78) / (1.0 + exp(0.311 * (V + 79.23)));
        bj = 0.1212 * exp(-0.01052 * V) / (1.0 + exp(-0.1378 * (V + 40.14)));
    } else {
        ah = 0.0;
        bh = 1.0 / (0.13 * (1.0 + exp((V + 10.66) / -11.1)));
        aj = 0.0;
        bj = 0.3 * exp(-2.535e-07 * V) / (1.0 + exp(-0.1 * (V + 32.0)));
    }
    const double INa = LR_GNA * m * m * m * h * j * (V - c.ENa);
    const double Esi = 7.7 - 13.0287 * log(Cai);
    const double ad = 0.095 * exp(-0.01 * (V - 5.0)) / (1.0 + exp(-0.072 * (V - 5.0)));
    const double bd = 0.07 * exp(-0.017 * (V + 44.0)) / (1.0 + exp(0.05 * (V + 44.0)));
    const double af = 0.012 * exp(-0.008 * (V + 28.0)) / (1.0 + exp(0.15 * (V + 28.0)));
    const double bf = 0.0065 * exp(-0.02 * (V + 30.0)) / (1.0 + exp(-0.2 * (V + 30.0)));
    const double Isi = LR_GSI * d * f * (V - Esi);
    const double aX = 0.0005 * exp(0.083 * (V + 50.0)) / (1.0 + exp(0.057 * (V + 50.0)));
    const double bX = 0.0013 * exp(-0.06 * (V + 20.0)) / (1.0 + exp(-0.04 * (V + 20.0)));
    const double Xi = V > -100.0 ? 2.837 * (exp(0.04 * (V + 77.0)) - 1.0) / ((V + 77.0) * exp(0.04 * (V + 35.0))) : 1.0;
    const double IK = c.gK * X * Xi * (V - c.EK);
    const double aK1 = 1.02 / (1.0 + exp(0.2385 * (V - c.EK1 - 59.215)));
    const double bK1 = (0.49124 * exp(0.08032 * (V + 5.476 - c.EK1)) + exp(0.06175 * (V - c.EK1 - 594.31)))
                       / (1.0 + exp(-0.5143 * (V - c.EK1 + 4.753)));
    const double IK1 = c.gK1 * aK1 / (aK1 + bK1) * (V - c.EK1);
    const double IKp = LR_GKP / (1.0 + exp((7.488 - V) / 5.98)) * (V - c.EK1);
    const double Ib = LR_GB * (V - LR_EB);
    ds[0] = -(Istim + INa + Isi + IK + IK1 + IKp + Ib) / LR_C;
    ds[1] = am * (1.0 - m) - bm * m;
    ds[2] = ah * (1.0 - h) - bh * h;
    ds[3] = aj * (1.0 - j) - bj * j;
    ds[4] = ad * (1.0 - d) - bd * d;
    ds[5] = af * (1.0 - f) - bf * f;
    ds[6] = aX * (1.0 - X) - bX * X;
    ds[7] = -0.0001 * Isi + 0.07 * (0.0001 - Cai);
}

// `steps` steps of dt from step number step0 (t = step * dt) for one cell's states s (in place)
__device__ __forceinline__ void lr91_cell(double* s, long long step0, long long steps, double dt, int rk4) {
    const LR91Const c = lr91_const();
    double k[8], a[8], u[8];
    for (long long i = 0; i < steps; ++i) {
        const double t = (double)(step0 + i) * dt;
        if (!rk4) {
            lr91_rhs(c, t, s, k);
            for (int q = 0; q < 8; ++q) s[q] += dt * k[q];
            continue;
        }
        lr91_rhs(c, t, s, k);
        for (int q = 0; q < 8; ++q) { a[q] = k[q] / 6.0; u[q] = s[q] + 0.5 * dt * k[q]; }
        lr91_rhs(c, t + 0.5 * dt, u, k);
        for (int q = 0; q < 8; ++q) { a[q] += k[q] / 3.0; u[q] = s[q] + 0.5 * dt * k[q]; }
        lr91_rhs(c, t + 0.5 * dt, u, k);
        for (int q = 0; q < 8; ++q) { a[q] += k[q] / 3.0; u[q] = s[q] + dt * k[q]; }
        lr91_rhs(c, t + dt, u, k);
        for (int q = 0; q < 8; ++q) s[q] += dt * (a[q] + k[q] / 6.0);
    }
}

extern "C" __global__ void lr91(double* y, int n, long long step0, long long steps, double dt, int rk4) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double s[8];
    for (int q = 0; q < 8; ++q) s[q] = y[(size_t)q * n + i];
    lr91_cell(s, step0, steps, dt, rk4);
    for (int q = 0; q < 8; ++q) y[(size_t)q * n + i] = s[q];
}

#ifndef __CUDACC__
extern "C" void lr91_host(double* y, int n, long long step0, long long steps, double dt, int rk4) {
    for (int i = 0; i < n; ++i) {
        double s[8];
        for (int q = 0; q < 8; ++q) s[q] = y[(size_t)q * n + i];
        lr91_cell(s, step0, steps, dt, rk4);
        for (int q = 0; q < 8; ++q) y[(size_t)q * n + i] = s[q];
    }
}
#endif
