// Kernel E's register marches (included by ch_kernels.cu after ch_stencil.cuh): the 2D warp march
// and the 3D register z-march, with the vector helpers they share.
// ---- E, 2D, warp march (ours; the default 2D E): one launch per RK2 step, no shared memory and
// no barriers.  Each warp owns a strip of 128 columns (4 adjacent columns per lane, 16-byte loads)
// and marches down `chunk` rows of it, keeping every intermediate in registers: a window of 5 φ rows,
// 3 rows of μ = μ(φ), 3 of φ* = φ + c1·F(φ) (bval outside the domain for fixed), 3 of μ* = μ(φ*),
// and the next PD φ rows in flight.  The x neighbours of a lane's first / last column come from the
// lanes beside it (one shuffle each way per quantity and row).  Lanes 0 and 31 hold the strip's
// x halo (4 columns each side): their results are wrong at the warp's edge, and only lanes 1…30
// write, so a strip produces 120 output columns.  Step j loads φ row r = y0 − 4 + j and computes
// μ(r − 1), φ*(r − 2), μ*(r − 3) and the output row r − 4 (written for j ≥ 8; earlier steps fill the
// windows).  Each φ cell is read from global memory (128/120)·(chunk + 8)/chunk times, each output
// written once.  Same arithmetic and summation order as ch_mu_at / ch_lapmu (x pair first).
// VW consecutive values (16-byte aligned in 16-byte pieces, or one 8-byte piece) to / from registers:
// global loads through the read-only path (gld), shared / global loads plainly, stores plainly.
template <class T, int VW>
struct ChPack {
    static constexpr int W = (int)sizeof(T) * VW >= 16 ? 16 / (int)sizeof(T) : VW;  // values per access
    typedef typename ChVec<T, W>::type V;
    template <bool GLD>
    static __device__ __forceinline__ void load(const T* p, T* v) {
#pragma unroll
        for (int i = 0; i < VW / W; ++i) {
            V a = GLD ? __ldg(reinterpret_cast<const V*>(p) + i) : reinterpret_cast<const V*>(p)[i];
            const T* e = reinterpret_cast<const T*>(&a);
#pragma unroll
            for (int j = 0; j < W; ++j) v[i * W + j] = e[j];
        }
    }
    static __device__ __forceinline__ void store(T* p, const T* v) {
#pragma unroll
        for (int i = 0; i < VW / W; ++i) {
            V a;
            T* e = reinterpret_cast<T*>(&a);
#pragma unroll
            for (int j = 0; j < W; ++j) e[j] = v[i * W + j];
            reinterpret_cast<V*>(p)[i] = a;
        }
    }
};

// A march's line of VW x-adjacent cells (x0 … x0+VW−1) of row y, and its loader: the setup the warp
// march, the register z-march and their temporal-blocking forms (ch_temporal.cuh) share.  cx: the
// boundary-mapped columns, xin: inside the domain, cy / yin: the row (3D; 2D passes y = 0, ny = 1),
// vl: 16-byte vector loads / stores apply.  load(p, np, stride, v): the line in plane (3D) or row (2D)
// p of np, planes `stride` values apart — bval outside the domain for fixed, else read through the
// boundary map.
template <class T, int BC, int VW>
struct ChLine {
    const T* src;
    int nx, x0, cx[VW], cy;
    bool xin[VW], yin, vl;
    T bval;
    __device__ __forceinline__ ChLine(const T* s, int nx_, int x0_, int y, int ny, int vec, T bv)
        : src(s), nx(nx_), x0(x0_), cy(ch_idx<BC>(y, ny)), yin(y >= 0 && y < ny),
          vl(vec != 0 && x0_ >= 0 && x0_ + VW <= nx_), bval(bv) {
#pragma unroll
        for (int q = 0; q < VW; ++q) {
            cx[q] = ch_idx<BC>(x0 + q, nx);
            xin[q] = x0 + q >= 0 && x0 + q < nx;
        }
    }
    __device__ __forceinline__ void load(int p, int np, size_t stride, T* v) const {
        const int pp = ch_idx<BC>(p, np);
        if (BC == CH_FIXED && (pp < 0 || cy < 0)) {
#pragma unroll
            for (int q = 0; q < VW; ++q) v[q] = bval;
            return;
        }
        const T* row = src + (size_t)pp * stride + (size_t)cy * nx;
        if (vl) {
            ChPack<T, VW>::template load<true>(row + x0, v);
        } else {
#pragma unroll
            for (int q = 0; q < VW; ++q) v[q] = (BC == CH_FIXED && cx[q] < 0) ? bval : __ldg(row + cx[q]);
        }
    }
    // the output line in plane / row p: vector store, or the cells inside the domain
    __device__ __forceinline__ void store(T* out, int p, size_t stride, int y, const T* v) const {
        T* orow = out + (size_t)p * stride + (size_t)y * nx + x0;
        if (vl) {
            ChPack<T, VW>::store(orow, v);
        } else {
#pragma unroll
            for (int q = 0; q < VW; ++q)
                if (xin[q]) orow[q] = v[q];
        }
    }
};

// μ of the centre row c (x neighbours in-lane and from the lanes beside), rows up / dn above / below.
template <class T>
__device__ __forceinline__ void ch_mu_row4(const CHCoef<T>& k, const T up[4], const T c[4], const T dn[4],
                                           T res[4]) {
    const T lft = __shfl_up_sync(0xffffffffu, c[3], 1), rgt = __shfl_down_sync(0xffffffffu, c[0], 1);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const T l = q == 0 ? lft : c[q - 1], r = q == 3 ? rgt : c[q + 1];
        res[q] = ch_mu<T>(k, c[q], (l + r) + (up[q] + dn[q]), T(4));
    }
}

// base + coef·m·L(w) of the centre row w (rows wu / wd above / below).
template <class T>
__device__ __forceinline__ void ch_stage_row4(const CHCoef<T>& k, const T wu[4], const T w[4], const T wd[4],
                                              const T base[4], T coef, T res[4]) {
    const T lft = __shfl_up_sync(0xffffffffu, w[3], 1), rgt = __shfl_down_sync(0xffffffffu, w[0], 1);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const T l = q == 0 ? lft : w[q - 1], r = q == 3 ? rgt : w[q + 1];
        res[q] = base[q] + coef * (k.mi * (((l + r) + (wu[q] + wd[q])) - T(4) * w[q]));
    }
}

// One RK2 step of the warp march: its register windows (5 φ rows, 3 of μ, φ*, μ*) and push(), which
// takes φ row r in and puts φ⁺ of row r − 4 out (μ, φ*, μ*, φ⁺ each one row behind the last).
template <class T, int BC>
struct ChWmStep {
    T f[5][4], mu[3][4], st[3][4], ms[3][4];
    __device__ __forceinline__ void clear() {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
#pragma unroll
            for (int r = 0; r < 5; ++r) f[r][q] = T(0);
#pragma unroll
            for (int r = 0; r < 3; ++r) mu[r][q] = st[r][q] = ms[r][q] = T(0);
        }
    }
    // φ row r arrives (in); out ← φ⁺ of row r − 4.  last: the kernel's output (no ghost rule).
    __device__ __forceinline__ void push(const CHCoef<T>& k, const T in[4], int r, int ny, const bool xin[4],
                                         T c1, T c2, T bval, bool last, T o[4]) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
#pragma unroll
            for (int i = 0; i < 4; ++i) f[i][q] = f[i + 1][q];
            f[4][q] = in[q];
        }
        T nm[4];
        ch_mu_row4<T>(k, f[2], f[3], f[4], nm);
#pragma unroll
        for (int q = 0; q < 4; ++q) { mu[0][q] = mu[1][q]; mu[1][q] = mu[2][q]; mu[2][q] = nm[q]; }
        T ns[4];
        ch_stage_row4<T>(k, mu[0], mu[1], mu[2], f[2], c1, ns);
        if (BC == CH_FIXED) {
            const bool yin = r - 2 >= 0 && r - 2 < ny;
#pragma unroll
            for (int q = 0; q < 4; ++q) ns[q] = (yin && xin[q]) ? ns[q] : bval;
        }
#pragma unroll
        for (int q = 0; q < 4; ++q) { st[0][q] = st[1][q]; st[1][q] = st[2][q]; st[2][q] = ns[q]; }
        T nms[4];
        ch_mu_row4<T>(k, st[0], st[1], st[2], nms);
#pragma unroll
        for (int q = 0; q < 4; ++q) { ms[0][q] = ms[1][q]; ms[1][q] = ms[2][q]; ms[2][q] = nms[q]; }
        ch_stage_row4<T>(k, ms[0], ms[1], ms[2], f[0], c2, o);
        if (BC == CH_FIXED && !last) {
            const bool yin = r - 4 >= 0 && r - 4 < ny;
#pragma unroll
            for (int q = 0; q < 4; ++q) o[q] = (yin && xin[q]) ? o[q] : bval;
        }
    }
};

// The warp march of KS RK2 steps (KS = 1: ch_fused_wmarch2d; KS > 1: ch_fused_wmarch2d_tb): step s
// takes the φˢ rows step s−1 puts out (4 rows behind its input) through its own ChWmStep windows.
template <class T, int BC, int KS, int WPB, int PD>
__device__ __forceinline__ void ch_wmarch2d_run(const T* __restrict__ src, T* __restrict__ out, int nx, int ny,
                                                int chunk, int vec, T c1, T c2, T m, T b, T u, T K, T idx2,
                                                T bval) {
    constexpr int U = 8;                 // rows per unrolled inner loop (chunk and 8·KS are multiples of 8)
    constexpr int H = 4 * KS, W = 128 - 2 * H;
    const int lane = threadIdx.x & 31;
    const int strip = blockIdx.x * WPB + (threadIdx.x >> 5);
    if (strip * W >= nx) return;         // the whole warp
    const int x0 = strip * W - H + 4 * lane;
    const int y0 = blockIdx.y * chunk;
    const CHCoef<T> k = ch_coef<T>(m, b, u, K, idx2);

    const ChLine<T, BC, 4> ln(src, nx, x0, 0, 1, vec, bval);
    const bool* xin = ln.xin;
    const bool wlane = lane >= KS && lane <= 31 - KS;
    auto load = [&](int y, T v[4]) { ln.load(y, ny, (size_t)nx, v); };

    const int steps = chunk + 2 * H;
    const int yend = min(y0 + chunk, ny);
    ChWmStep<T, BC> st[KS];
#pragma unroll
    for (int s = 0; s < KS; ++s) st[s].clear();
    T pq[PD][4];
#pragma unroll
    for (int i = 0; i < PD; ++i) load(y0 - H + i, pq[i]);

    for (int j0 = 0; j0 < steps; j0 += U) {
#pragma unroll
        for (int jj = 0; jj < U; ++jj) {
            const int j = j0 + jj;
            T row[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                row[q] = pq[0][q];
#pragma unroll
                for (int i = 0; i + 1 < PD; ++i) pq[i][q] = pq[i + 1][q];
            }
            if (j + PD < steps) load(y0 - H + j + PD, pq[PD - 1]);
#pragma unroll
            for (int s = 0; s < KS; ++s) {   // step s: input row y0 − H + j − 4s, output 4 rows behind
                T o[4];
                st[s].push(k, row, y0 - H + j - 4 * s, ny, xin, c1, c2, bval, s + 1 == KS, o);
#pragma unroll
                for (int q = 0; q < 4; ++q) row[q] = o[q];
            }
            const int yo = y0 - 2 * H + j;
            if (j >= 2 * H && yo < yend && wlane) ln.store(out, yo, (size_t)nx, 0, row);
        }
    }
}

// WPB warps (strips) per block, PD rows of φ in flight, MINB min. blocks per SM (register cap; 1: none)
template <class T, int BC, int WPB, int PD, int MINB>
__global__ void __launch_bounds__(32 * WPB, MINB)
ch_fused_wmarch2d(const T* __restrict__ src, T* __restrict__ out, int nx, int ny, int chunk, int vec,
                  T c1, T c2, T m, T b, T u, T K, T idx2, T bval) {
    ch_wmarch2d_run<T, BC, 1, WPB, PD>(src, out, nx, ny, chunk, vec, c1, c2, m, b, u, K, idx2, bval);
}

// ---- E, 3D, register z-march (ours; the default 3D E): one launch per RK2 step.  The block
// covers a frame of (TX+8)×(TY+8) cells of the xy plane (a TX×TY output tile with halo 4) and
// marches along z through `chunk` planes; each thread owns a group of VW x-adjacent frame cells
// and keeps the z windows of its group in registers — 5 φ planes, 3 of μ, 3 of φ* (bval outside
// the domain for fixed) and 3 of μ*, and the next PD φ planes in flight — so z neighbours cost nothing and only the in-plane
// neighbours go through shared memory (two VW-wide row loads and two single loads per group and
// stage).  Step t (φ plane p = m0 − 4 + t arrives) first stores the centre planes the stages need
// from shared memory — φ(p−1), μ(p−2), φ*(p−3), μ*(p−4), all computed the step before — into one
// of two buffer sets, one barrier, then computes μ(p−1), φ*(p−2), μ*(p−3) and the output plane
// p−4 from registers and that buffer set (a set is rewritten two steps later, after the next
// step's barrier).  Frame cells lose validity one cell per stage at the frame edge; only the
// inner TX×TY write.  Same arithmetic and order as ch_mu_at / ch_lapmu <3>.
// Sum of the 6 neighbours of each of the VW cells of a group: in-plane from the plane s (centre
// group at s[0 … VW−1], row length SX), z from the registers zm / zp, x between the VW from c.
template <class T, int SX, int VW>
__device__ __forceinline__ void ch_nsum3dv(const T* s, const T* c, const T* zm, const T* zp, T* ns) {
    T up[VW], dn[VW];
    ChPack<T, VW>::template load<false>(s - SX, up);
    ChPack<T, VW>::template load<false>(s + SX, dn);
    const T lft = s[-1], rgt = s[VW];
#pragma unroll
    for (int q = 0; q < VW; ++q) {
        const T l = q == 0 ? lft : c[q - 1], r = q == VW - 1 ? rgt : c[q + 1];
        ns[q] = ((l + r) + (up[q] + dn[q])) + (zm[q] + zp[q]);
    }
}

// One RK2 step of the z-march for a group of VW cells: its z windows in registers (5 φ planes, 3 of
// μ, φ*, μ*); store() puts the four centre planes into a buffer set, shift() takes the next φ plane
// in, compute() the stages of that plane from registers and the set.
template <class T, int BC, int VW>
struct ChZrStep {
    T f[5][VW], mu[3][VW], st[3][VW], ms[3][VW];
    __device__ __forceinline__ void clear() {
#pragma unroll
        for (int q = 0; q < VW; ++q) {
#pragma unroll
            for (int r = 0; r < 5; ++r) f[r][q] = T(0);
#pragma unroll
            for (int r = 0; r < 3; ++r) mu[r][q] = st[r][q] = ms[r][q] = T(0);
        }
    }
    __device__ __forceinline__ void store(T* s, int PS) const {   // centre planes of the last march step
#pragma unroll
        for (int q = 0; q < VW; ++q) {
            s[q] = f[4][q];
            s[PS + q] = mu[2][q];
            s[2 * PS + q] = st[2][q];
            s[3 * PS + q] = ms[2][q];
        }
    }
    __device__ __forceinline__ void shift(const T in[VW]) {
#pragma unroll
        for (int q = 0; q < VW; ++q) {
#pragma unroll
            for (int r = 0; r < 4; ++r) f[r][q] = f[r + 1][q];
            f[4][q] = in[q];
        }
    }
    // the stages of input plane p (already shifted in) from the planes s (this step's 4 in the set);
    // o ← φ⁺ of plane p − 4 (ghost rule for fixed unless last; for the last step only if want)
    template <int SX>
    __device__ __forceinline__ void compute(const CHCoef<T>& k, const T* s, int PS, int p, int nz, bool yin,
                                            const bool xin[VW], T c1, T c2, T bval, bool last, bool want,
                                            T o[VW]) {
        T ns[VW], v[VW];
        ch_nsum3dv<T, SX, VW>(s, f[3], f[2], f[4], ns);
#pragma unroll
        for (int q = 0; q < VW; ++q) v[q] = ch_mu<T>(k, f[3][q], ns[q], T(6));
#pragma unroll
        for (int q = 0; q < VW; ++q) { mu[0][q] = mu[1][q]; mu[1][q] = mu[2][q]; mu[2][q] = v[q]; }
        ch_nsum3dv<T, SX, VW>(s + PS, mu[1], mu[0], mu[2], ns);
        const bool zin = p - 2 >= 0 && p - 2 < nz;
#pragma unroll
        for (int q = 0; q < VW; ++q) {
            v[q] = f[2][q] + c1 * (k.mi * (ns[q] - T(6) * mu[1][q]));
            if (BC == CH_FIXED && !(zin && yin && xin[q])) v[q] = bval;
        }
#pragma unroll
        for (int q = 0; q < VW; ++q) { st[0][q] = st[1][q]; st[1][q] = st[2][q]; st[2][q] = v[q]; }
        ch_nsum3dv<T, SX, VW>(s + 2 * PS, st[1], st[0], st[2], ns);
#pragma unroll
        for (int q = 0; q < VW; ++q) v[q] = ch_mu<T>(k, st[1][q], ns[q], T(6));
#pragma unroll
        for (int q = 0; q < VW; ++q) { ms[0][q] = ms[1][q]; ms[1][q] = ms[2][q]; ms[2][q] = v[q]; }
        if (last && !want) return;          // the kernel's output, not written by this thread
        ch_nsum3dv<T, SX, VW>(s + 3 * PS, ms[1], ms[0], ms[2], ns);
        const bool oin = p - 4 >= 0 && p - 4 < nz;
#pragma unroll
        for (int q = 0; q < VW; ++q) {
            o[q] = f[0][q] + c2 * (k.mi * (ns[q] - T(6) * ms[1][q]));
            if (BC == CH_FIXED && !last && !(oin && yin && xin[q])) o[q] = bval;
        }
    }
};

// The register z-march of KS RK2 steps (KS = 1: ch_fused_zreg3d; KS > 1: ch_fused_zreg3d_tb) through the
// buffer sm of 2·4·KS planes of PS values (static shared memory for KS = 1, dynamic for the KS form).
template <class T, int BC, int KS, int TX, int TY, int NT, int PD, int VW>
__device__ __forceinline__ void ch_zreg3d_run(T* sm, const T* __restrict__ src, T* __restrict__ out, int nx, int ny,
                                              int nz, int chunk, int vec, T c1, T c2, T m, T b, T u, T K, T idx2,
                                              T bval) {
    constexpr int H = 4 * KS;
    constexpr int SX = TX + 2 * H, SY = TY + 2 * H, GX = SX / VW, G = GX * SY;
    constexpr int PS = (SY + 2) * SX + 8;
    static_assert(TX % 4 == 0 && (VW == 2 || VW == 4) && NT >= G, "TX a multiple of 4; one thread per group");

    const int tid = threadIdx.x;
    const bool act = tid < G;
    const int gx = tid % GX, gy = tid / GX;
    const int ox = blockIdx.x * TX, oy = blockIdx.y * TY;
    const int m0 = blockIdx.z * chunk;
    const int L = min(chunk, nz - m0);
    const int x0 = ox - H + VW * gx, y = oy - H + gy;
    const CHCoef<T> k = ch_coef<T>(m, b, u, K, idx2);
    const size_t plane = (size_t)nx * ny;
    const int soff = 4 + (gy + 1) * SX + VW * gx;

    const ChLine<T, BC, VW> ln(src, nx, x0, y, ny, vec, bval);
    const bool* xin = ln.xin;
    const bool yin = ln.yin;
    auto load = [&](int pz, T* v) { ln.load(pz, nz, plane, v); };
    const bool wr = act && gx >= H / VW && gx < (TX + H) / VW && gy >= H && gy < TY + H && y < ny;

    ChZrStep<T, BC, VW> zs[KS];
#pragma unroll
    for (int s = 0; s < KS; ++s) zs[s].clear();
    T pq[PD][VW];
    const int steps = L + 2 * H;
#pragma unroll
    for (int i = 0; i < PD; ++i)
        if (act) load(m0 - H + i, pq[i]);
    for (int t = 0; t < steps; ++t) {
        const int p = m0 - H + t;
        T* sb = sm + (t & 1) * 4 * KS * PS + soff;
        if (act) {
#pragma unroll
            for (int s = 0; s < KS; ++s) zs[s].store(sb + 4 * s * PS, PS);
            zs[0].shift(pq[0]);
#pragma unroll
            for (int q = 0; q < VW; ++q) {
#pragma unroll
                for (int i = 0; i + 1 < PD; ++i) pq[i][q] = pq[i + 1][q];
            }
            if (t + PD < steps) load(p + PD, pq[PD - 1]);
        }
        __syncthreads();
        if (!act) continue;
        T o[VW];
#pragma unroll
        const bool put = t >= 2 * H && wr;
        for (int s = 0; s < KS; ++s) {
            if (s > 0) zs[s].shift(o);
            zs[s].template compute<SX>(k, sb + 4 * s * PS, PS, p - 4 * s, nz, yin, xin, c1, c2, bval, s + 1 == KS,
                                       put, o);
        }
        if (put) {
            ln.store(out, p - H, plane, y, o);
        }
    }
}

// NT threads (≥ one per group), MINB min. blocks per SM (register cap), PD φ planes in flight,
// VW cells per group (2 or 4)
template <class T, int BC, int TX, int TY, int NT, int MINB, int PD, int VW>
__global__ void __launch_bounds__(NT, MINB)
ch_fused_zreg3d(const T* __restrict__ src, T* __restrict__ out, int nx, int ny, int nz, int chunk, int vec,
                T c1, T c2, T m, T b, T u, T K, T idx2, T bval) {
    constexpr int PS = (TY + 8 + 2) * (TX + 8) + 8;  // a plane with one spare row above / below, 4 cells each end
    __shared__ __align__(16) T sm[2 * 4 * PS];
    ch_zreg3d_run<T, BC, 1, TX, TY, NT, PD, VW>(sm, src, out, nx, ny, nz, chunk, vec, c1, c2, m, b, u, K, idx2, bval);
}
