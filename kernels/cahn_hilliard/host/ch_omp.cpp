// Cahn-Hilliard explicit stage out = base + coef * F(src) on the host, multi-threaded with OpenMP.
//
// F(phi) = m L(mu), mu = -b phi + u phi^3 - K L(phi), L the 5-point (2D) / 7-point (3D) Laplacian
// (paper 000 Eq. 2; paper 001 section 4 runs the same finite-differencing step on one core, with
// pThreads row bands and with TBB tiles).  Three passes, each parallel over rows (2D) or planes (3D),
// static schedule: every thread owns a contiguous band of rows, as paper 001's pThreads version:
//   1. P  = phi with 2 ghost cells per side (periodic wrap, mirror about the face, fixed value);
//   2. mu = f'(phi) - K L(phi) on the (n+2)^d cells that the second Laplacian reads;
//   3. out = base + coef * m L(mu) on the n^d interior cells.
// Every arithmetic operation is the one of kernels/cahn_hilliard/stencil.py, in the same order and
// precision (compiled with -ffp-contract=off, no fast-math), so the result equals the NumPy reference
// to the last bit, and does not depend on the thread count (each cell is computed the same way).
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef long long i64;

static inline i64 ghost(i64 i, i64 n, int bc)
{
    // source index of padded index i (i in [-2, n+1]); -1: the fixed boundary value
    if (i >= 0 && i < n) return i;
    if (bc == 0) return (i + n) % n;              // periodic (wrap)
    if (bc == 1) return i < 0 ? -1 - i : 2 * n - 1 - i;   // mirror (numpy pad "symmetric")
    return -1;                                    // fixed
}

// ---------------------------------------------------------------------------------------------- 2D
template <typename T>
static void stage2(const T* src, const T* base, T* out, T* P, T* mu, i64 n, int bc, T val,
                   T nb, T u, T K, T m, T dx2, T coef, int nt)
{
    const i64 w = n + 4, q = n + 2;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (i64 py = 0; py < w; py++) {
            T* row = P + py * w;
            const i64 y = ghost(py - 2, n, bc);
            if (y < 0) { for (i64 x = 0; x < w; x++) row[x] = val; continue; }
            const T* fr = src + y * n;
            for (i64 px = 0; px < 2; px++) { i64 x = ghost(px - 2, n, bc); row[px] = x < 0 ? val : fr[x]; }
            std::memcpy(row + 2, fr, (size_t)n * sizeof(T));
            for (i64 px = n + 2; px < w; px++) { i64 x = ghost(px - 2, n, bc); row[px] = x < 0 ? val : fr[x]; }
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (i64 my = 0; my < q; my++) {
            const T* c = P + (my + 1) * w + 1;
            const T* up = c - w;
            const T* dn = c + w;
            T* o = mu + my * q;
            for (i64 x = 0; x < q; x++) {
                const T g = c[x];
                const T acc = (up[x] + dn[x]) + (c[x - 1] + c[x + 1]);
                const T lap = (acc - T(4) * g) / dx2;
                o[x] = (nb * g + u * g * g * g) - K * lap;
            }
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (i64 y = 0; y < n; y++) {
            const T* c = mu + (y + 1) * q + 1;
            const T* up = c - q;
            const T* dn = c + q;
            const T* b = base + y * n;
            T* o = out + y * n;
            for (i64 x = 0; x < n; x++) {
                const T acc = (up[x] + dn[x]) + (c[x - 1] + c[x + 1]);
                const T r = m * ((acc - T(4) * c[x]) / dx2);
                o[x] = b[x] + coef * r;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------- 3D
template <typename T>
static void stage3(const T* src, const T* base, T* out, T* P, T* mu, i64 n, int bc, T val,
                   T nb, T u, T K, T m, T dx2, T coef, int nt)
{
    const i64 w = n + 4, w2 = w * w, q = n + 2, q2 = q * q;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (i64 pz = 0; pz < w; pz++) {
            const i64 z = ghost(pz - 2, n, bc);
            for (i64 py = 0; py < w; py++) {
                T* row = P + pz * w2 + py * w;
                const i64 y = ghost(py - 2, n, bc);
                if (z < 0 || y < 0) { for (i64 x = 0; x < w; x++) row[x] = val; continue; }
                const T* fr = src + (z * n + y) * n;
                for (i64 px = 0; px < 2; px++) { i64 x = ghost(px - 2, n, bc); row[px] = x < 0 ? val : fr[x]; }
                std::memcpy(row + 2, fr, (size_t)n * sizeof(T));
                for (i64 px = n + 2; px < w; px++) { i64 x = ghost(px - 2, n, bc); row[px] = x < 0 ? val : fr[x]; }
            }
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (i64 mz = 0; mz < q; mz++) {
            for (i64 my = 0; my < q; my++) {
                const T* c = P + (mz + 1) * w2 + (my + 1) * w + 1;
                T* o = mu + mz * q2 + my * q;
                for (i64 x = 0; x < q; x++) {
                    const T g = c[x];
                    const T acc = ((c[x - w2] + c[x + w2]) + (c[x - w] + c[x + w])) + (c[x - 1] + c[x + 1]);
                    const T lap = (acc - T(6) * g) / dx2;
                    o[x] = (nb * g + u * g * g * g) - K * lap;
                }
            }
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (i64 z = 0; z < n; z++) {
            for (i64 y = 0; y < n; y++) {
                const T* c = mu + (z + 1) * q2 + (y + 1) * q + 1;
                const T* b = base + (z * n + y) * n;
                T* o = out + (z * n + y) * n;
                for (i64 x = 0; x < n; x++) {
                    const T acc = ((c[x - q2] + c[x + q2]) + (c[x - q] + c[x + q])) + (c[x - 1] + c[x + 1]);
                    const T r = m * ((acc - T(6) * c[x]) / dx2);
                    o[x] = b[x] + coef * r;
                }
            }
        }
    }
}

template <typename T>
static void stage(const T* src, const T* base, T* out, T* P, T* mu, int dim, i64 n, int bc, double val,
                  double b, double u, double K, double m, double dx, double coef, int nt)
{
    const T d2 = T(dx * dx);                      // stencil.py: dtype(p.dx * p.dx)
    if (dim == 2)
        stage2<T>(src, base, out, P, mu, n, bc, T(val), T(-b), T(u), T(K), T(m), d2, T(coef), nt);
    else
        stage3<T>(src, base, out, P, mu, n, bc, T(val), T(-b), T(u), T(K), T(m), d2, T(coef), nt);
}


// ------------------------------------------------------------------ temporal blocking (issue #38)
// k RK2 steps (explicit midpoint: phi* = phi + c1 F(phi), phi' = phi + c2 F(phi*)) per call, each
// thread advancing bands of B slow-axis rows (2D: rows, 3D: z planes) held with 4k halo rows each side
// in its own buffers, so the field is read and written once per k steps.  Every cell does the stage
// arithmetic of stage2 / stage3 above in the same order (mu on the padded ring, then base + coef m L(mu)),
// so k fused steps equal k calls of two stages bit for bit.  Ghosts: in-plane they are refilled from the
// row itself before every stencil (as the padded copy P); along the slow axis the band's halo rows are
// the boundary-mapped field, whose later values equal their image rows' (periodic, and mirror because the
// neighbour pairs are summed as (a + b)); fixed: phi* and phi' of a ghost row are the boundary value.
// Needs 4k <= n for periodic and mirror (the mapped halo lies in [-n, 2n)).
static inline i64 ghost_far(i64 i, i64 n, int bc)
{
    if (i >= 0 && i < n) return i;
    if (bc == 0) return ((i % n) + n) % n;
    if (bc == 1) { i = i < 0 ? -1 - i : 2 * n - 1 - i; return i < 0 ? 0 : (i >= n ? n - 1 : i); }
    return -1;
}

// refill the in-plane ghost cells of one padded row (2D: w cells; 3D: a w x w plane)
template <typename T>
static void pad_row(T* row, int dim, i64 n, int bc, T val)
{
    const i64 w = n + 4;
    if (dim == 2) {
        for (i64 px = 0; px < 2; px++) { i64 x = ghost(px - 2, n, bc); row[px] = x < 0 ? val : row[x + 2]; }
        for (i64 px = n + 2; px < w; px++) { i64 x = ghost(px - 2, n, bc); row[px] = x < 0 ? val : row[x + 2]; }
        return;
    }
    for (i64 py = 2; py < n + 2; py++) {
        T* r = row + py * w;
        for (i64 px = 0; px < 2; px++) { i64 x = ghost(px - 2, n, bc); r[px] = x < 0 ? val : r[x + 2]; }
        for (i64 px = n + 2; px < w; px++) { i64 x = ghost(px - 2, n, bc); r[px] = x < 0 ? val : r[x + 2]; }
    }
    for (i64 py = 0; py < w; py++) {
        if (py >= 2 && py < n + 2) continue;
        const i64 y = ghost(py - 2, n, bc);
        T* r = row + py * w;
        if (y < 0) { for (i64 x = 0; x < w; x++) r[x] = val; }
        else std::memcpy(r, row + (y + 2) * w, (size_t)w * sizeof(T));
    }
}

// one stage on buffer rows [a, b): O = Bs + coef m L(mu(S)); rows of S in [a-2, b+2) must be valid
template <typename T>
static void stage_rows(T* S, const T* Bs, T* O, T* Mu, i64 a, i64 b, i64 gy0, int dim, i64 n, int bc, T val,
                       T nb, T u, T K, T m, T dx2, T coef)
{
    const i64 w = n + 4, PW = dim == 2 ? w : w * w;
    for (i64 r = a - 2; r < b + 2; r++) pad_row(S + r * PW, dim, n, bc, val);
    for (i64 r = a - 1; r < b + 1; r++) {
        const T* c0 = S + r * PW;
        T* o0 = Mu + r * PW;
        for (i64 my = 0; my < (dim == 2 ? 1 : n + 2); my++) {
            const i64 off = dim == 2 ? 1 : (my + 1) * w + 1;
            const T* c = c0 + off;
            T* o = o0 + off;
            for (i64 x = 0; x < n + 2; x++) {
                const T g = c[x];
                T acc;
                if (dim == 2) acc = (c[x - PW] + c[x + PW]) + (c[x - 1] + c[x + 1]);
                else acc = ((c[x - PW] + c[x + PW]) + (c[x - w] + c[x + w])) + (c[x - 1] + c[x + 1]);
                const T lap = (acc - T(2 * dim) * g) / dx2;
                o[x] = (nb * g + u * g * g * g) - K * lap;
            }
        }
    }
    for (i64 r = a; r < b; r++) {
        const i64 gy = gy0 + r;
        T* o0 = O + r * PW;
        if (bc == 2 && (gy < 0 || gy >= n)) { for (i64 i = 0; i < PW; i++) o0[i] = val; continue; }
        for (i64 y = 0; y < (dim == 2 ? 1 : n); y++) {
            const i64 off = dim == 2 ? 2 : (y + 2) * w + 2;
            const T* c = Mu + r * PW + off;
            const T* bb = Bs + r * PW + off;
            T* o = o0 + off;
            for (i64 x = 0; x < n; x++) {
                T acc;
                if (dim == 2) acc = (c[x - PW] + c[x + PW]) + (c[x - 1] + c[x + 1]);
                else acc = ((c[x - PW] + c[x + PW]) + (c[x - w] + c[x + w])) + (c[x - 1] + c[x + 1]);
                const T rr = m * ((acc - T(2 * dim) * c[x]) / dx2);
                o[x] = bb[x] + coef * rr;
            }
        }
    }
}

template <typename T>
static void rk2_tb(const T* src, T* out, int dim, i64 n, int bc, double val_, double b_, double u_, double K_,
                   double m_, double dx, double c1_, double c2_, int k, i64 B, int nt)
{
    const T val = T(val_), nb = T(-b_), u = T(u_), K = T(K_), m = T(m_), dx2 = T(dx * dx);
    const T c1 = T(c1_), c2 = T(c2_);
    const i64 w = n + 4, PW = dim == 2 ? w : w * w, IN = dim == 2 ? n : n * n;
    const i64 H = 4 * (i64)k, R = B + 2 * H, bands = (n + B - 1) / B;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        T* buf = new T[(size_t)(3 * R * PW)];
        T* Phi = buf;
        T* Star = buf + R * PW;
        T* Mu = buf + 2 * R * PW;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (i64 bi = 0; bi < bands; bi++) {
            const i64 y0 = bi * B, rows = (y0 + B <= n ? B : n - y0) + 2 * H, gy0 = y0 - H;
            for (i64 r = 0; r < rows; r++) {     // load: the band and its mapped halo rows
                T* row = Phi + r * PW;
                const i64 gy = ghost_far(gy0 + r, n, bc);
                if (gy < 0) { for (i64 i = 0; i < PW; i++) row[i] = val; continue; }
                const T* fr = src + gy * IN;
                if (dim == 2) std::memcpy(row + 2, fr, (size_t)n * sizeof(T));
                else for (i64 y = 0; y < n; y++) std::memcpy(row + (y + 2) * w + 2, fr + y * n, (size_t)n * sizeof(T));
            }
            for (int s = 0; s < k; s++) {
                const i64 lo = 4 * (i64)s, hi = rows - 4 * (i64)s;
                stage_rows<T>(Phi, Phi, Star, Mu, lo + 2, hi - 2, gy0, dim, n, bc, val, nb, u, K, m, dx2, c1);
                stage_rows<T>(Star, Phi, Phi, Mu, lo + 4, hi - 4, gy0, dim, n, bc, val, nb, u, K, m, dx2, c2);
            }
            for (i64 r = H; r < rows - H; r++) {   // store the band
                const T* row = Phi + r * PW;
                T* fr = out + (gy0 + r) * IN;
                if (dim == 2) std::memcpy(fr, row + 2, (size_t)n * sizeof(T));
                else for (i64 y = 0; y < n; y++) std::memcpy(fr + y * n, row + (y + 2) * w + 2, (size_t)n * sizeof(T));
            }
        }
        delete[] buf;
    }
}

extern "C" {
void ch_stage_f32(const float* src, const float* base, float* out, float* P, float* mu, int dim, i64 n,
                  int bc, double val, double b, double u, double K, double m, double dx, double coef, int nt)
{ stage<float>(src, base, out, P, mu, dim, n, bc, val, b, u, K, m, dx, coef, nt); }

void ch_stage_f64(const double* src, const double* base, double* out, double* P, double* mu, int dim, i64 n,
                  int bc, double val, double b, double u, double K, double m, double dx, double coef, int nt)
{ stage<double>(src, base, out, P, mu, dim, n, bc, val, b, u, K, m, dx, coef, nt); }

void ch_rk2_tb_f32(const float* src, float* out, int dim, i64 n, int bc, double val, double b, double u,
                   double K, double m, double dx, double c1, double c2, int k, i64 B, int nt)
{ rk2_tb<float>(src, out, dim, n, bc, val, b, u, K, m, dx, c1, c2, k, B, nt); }

void ch_rk2_tb_f64(const double* src, double* out, int dim, i64 n, int bc, double val, double b, double u,
                   double K, double m, double dx, double c1, double c2, int k, i64 B, int nt)
{ rk2_tb<double>(src, out, dim, n, bc, val, b, u, K, m, dx, c1, c2, k, B, nt); }

// threads an OpenMP region may use (1 when compiled without OpenMP)
int ch_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
}
