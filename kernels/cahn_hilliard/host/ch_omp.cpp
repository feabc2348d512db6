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

extern "C" {
void ch_stage_f32(const float* src, const float* base, float* out, float* P, float* mu, int dim, i64 n,
                  int bc, double val, double b, double u, double K, double m, double dx, double coef, int nt)
{ stage<float>(src, base, out, P, mu, dim, n, bc, val, b, u, K, m, dx, coef, nt); }

void ch_stage_f64(const double* src, const double* base, double* out, double* P, double* mu, int dim, i64 n,
                  int bc, double val, double b, double u, double K, double m, double dx, double coef, int nt)
{ stage<double>(src, base, out, P, mu, dim, n, bc, val, b, u, K, m, dx, coef, nt); }

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
