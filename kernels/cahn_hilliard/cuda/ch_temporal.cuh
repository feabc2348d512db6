// ---- E, temporal blocking (ours, issue #38): KS fused RK2 steps per launch.
//
// The idea of AN5D (Matsumura et al., CGO 2020) and EBISU (Zhang et al., ICS 2023): a block loads
// its output tile with a halo widened to (stencil radius) × (steps), here 4·KS (an RK2 step of the
// 13-point / 25-point stencil reaches 4 cells: μ 1, φ* 2, μ* 3, φⁿ⁺¹ 4), and advances it KS steps in
// shared memory before one write: one global read and one write per cell per KS steps.
//
// Bit-identity with KS single steps of ch_fused (and of the other E kernels, which share the
// arithmetic): every value is computed by the same device functions of ch_stencil.cuh on the same
// operands in the same order —
//     μ   = ch_mu_at<DIM>(φ view)                      (one stored μ per cell: ch_rhs computes the
//     φ*  = φ + c1 · ch_lapmu<DIM>(μ view)              same μ on the fly, ChMuOf = ch_mu_at)
//     μ*  = ch_mu_at<DIM>(φ* view)
//     φ⁺  = φ + c2 · ch_lapmu<DIM>(μ* view)
// Ghost cells: the loaded tile is the boundary-mapped field (ch_fetch), so for periodic and mirror a
// ghost cell's every later value equals its image cell's (the stencil's neighbour pairs are summed
// as (left + right): commutative, hence exact under mirror reflection); this needs the widened halo
// inside [−n, 2n) along every axis, i.e. 4·KS ≤ n (the launcher checks).  For fixed, φ* and φ⁺ of a
// ghost cell are bval, as the single step's next load would give.
//
// Three tile buffers (φ, μ, φ*) of (OX+8KS)×(OY+8KS)(×(OZ+8KS)) cells in dynamic shared memory; φ⁺
// overwrites φ in place (each cell reads only its own φ then), and the last step writes to global
// memory.  Four barriers per step.
template <int DIM, int SX, int SY, int SZ, int NT, int H, int OX, int OY, int OZ, class F>
__device__ __forceinline__ void ch_tb_region(int g, F&& f) {
    // every tile cell within g of the output box: f(flat index, lx, ly, lz) (tile coordinates)
    const int x0 = H - g, y0 = H - g, z0 = (DIM == 3) ? H - g : 0;
    const int wx = OX + 2 * g, wy = OY + 2 * g, wz = (DIM == 3) ? OZ + 2 * g : 1;
    const int n = wx * wy * wz;
    for (int i = threadIdx.x; i < n; i += NT) {
        const int lx = x0 + i % wx, t = i / wx, ly = y0 + t % wy, lz = z0 + t / wy;
        f((lz * SY + ly) * SX + lx, lx, ly, lz);
    }
}

template <class T, int BC, int DIM, int KS, int NT, int OX, int OY, int OZ>
__global__ void __launch_bounds__(NT)
ch_fused_tb(const T* __restrict__ src, T* __restrict__ out, int nx, int ny, int nz,
            T c1, T c2, T m, T b, T u, T K, T idx2, T bval) {
    constexpr int H = 4 * KS;
    constexpr int SX = OX + 2 * H, SY = OY + 2 * H, SZ = (DIM == 3) ? OZ + 2 * H : 1;
    constexpr int HZ = (DIM == 3) ? H : 0;
    constexpr int N = SX * SY * SZ;
    extern __shared__ __align__(16) unsigned char ch_smem_raw[];
    T* sp = reinterpret_cast<T*>(ch_smem_raw);   // φ (of the current step)
    T* sm = sp + N;                               // μ, then μ*
    T* ss = sm + N;                               // φ*

    const int ox = blockIdx.x * OX, oy = blockIdx.y * OY, oz = (DIM == 3) ? (int)blockIdx.z * OZ : 0;
    const GlobalRead<T> r{src, nx, ny};
    const CHCoef<T> k = ch_coef<T>(m, b, u, K, idx2);

    for (int i = threadIdx.x; i < N; i += NT) {
        const int lx = i % SX, t = i / SX, ly = t % SY, lz = t / SY;
        sp[i] = ch_fetch<T, BC, DIM>(r, ox + lx - H, oy + ly - H, oz + lz - HZ, nx, ny, nz, bval);
    }
    __syncthreads();

    // a tile cell outside the domain (fixed boundaries: its φ* and φ⁺ are bval)
    auto ghost = [&](int lx, int ly, int lz) {
        const int gx = ox + lx - H, gy = oy + ly - H, gz = oz + lz - HZ;
        return gx < 0 || gx >= nx || gy < 0 || gy >= ny || (DIM == 3 && (gz < 0 || gz >= nz));
    };

#pragma unroll 1
    for (int s = 0; s < KS; ++s) {
        const int h = H - 4 * s;   // φ of step s is valid within h of the output box
        ch_tb_region<DIM, SX, SY, SZ, NT, H, OX, OY, OZ>(h - 1, [&](int i, int, int, int) {
            const SmemView<T, SX, SY> v{sp, i};
            sm[i] = ch_mu_at<DIM>(v, k, 0, 0, 0);
        });
        __syncthreads();
        ch_tb_region<DIM, SX, SY, SZ, NT, H, OX, OY, OZ>(h - 2, [&](int i, int lx, int ly, int lz) {
            if (BC == CH_FIXED && ghost(lx, ly, lz)) { ss[i] = bval; return; }
            const SmemView<T, SX, SY> w{sm, i};
            ss[i] = sp[i] + c1 * ch_lapmu<DIM>(w, k);
        });
        __syncthreads();
        ch_tb_region<DIM, SX, SY, SZ, NT, H, OX, OY, OZ>(h - 3, [&](int i, int, int, int) {
            const SmemView<T, SX, SY> v{ss, i};
            sm[i] = ch_mu_at<DIM>(v, k, 0, 0, 0);
        });
        __syncthreads();
        if (s + 1 < KS) {
            ch_tb_region<DIM, SX, SY, SZ, NT, H, OX, OY, OZ>(h - 4, [&](int i, int lx, int ly, int lz) {
                if (BC == CH_FIXED && ghost(lx, ly, lz)) return;   // stays bval
                const SmemView<T, SX, SY> w{sm, i};
                sp[i] = sp[i] + c2 * ch_lapmu<DIM>(w, k);
            });
            __syncthreads();
        } else {
            ch_tb_region<DIM, SX, SY, SZ, NT, H, OX, OY, OZ>(0, [&](int i, int lx, int ly, int lz) {
                const int x = ox + lx - H, y = oy + ly - H, z = oz + lz - HZ;
                if (x >= nx || y >= ny || (DIM == 3 && z >= nz)) return;
                const SmemView<T, SX, SY> w{sm, i};
                out[((size_t)z * ny + y) * nx + x] = sp[i] + c2 * ch_lapmu<DIM>(w, k);
            });
        }
    }
}

// ---- E, 2D, temporal blocking of the warp march (ours): KS RK2 steps per launch.
// ch_fused_wmarch2d's row pipeline (μ, φ*, μ*, φ⁺ one row each behind the last) repeated KS times:
// step s takes the φˢ rows step s−1 puts out (4 rows behind its input) and puts out φˢ⁺¹, each with
// its own register windows (ChWmStep).  A lane still holds 4 columns (a warp 128), but the strip's x
// halo is now 4·KS columns a side (KS lanes), so lanes KS … 31−KS write 128 − 8·KS output columns;
// in y the block loads chunk + 8·KS rows for chunk outputs.  Each row is computed by ch_mu_row4 /
// ch_stage_row4 exactly as in ch_fused_wmarch2d (bit for bit KS single steps).  Fixed boundaries:
// φ* and the intermediate φˢ⁺¹ of a ghost cell are bval (what a single step's load would give).
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

// KS fused steps, WPB warps (strips) per block, PD rows of φ in flight, MINB min. blocks per SM
template <class T, int BC, int KS, int WPB, int PD, int MINB>
__global__ void __launch_bounds__(32 * WPB, MINB)
ch_fused_wmarch2d_tb(const T* __restrict__ src, T* __restrict__ out, int nx, int ny, int chunk, int vec,
                     T c1, T c2, T m, T b, T u, T K, T idx2, T bval) {
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

// ---- E, 3D, temporal blocking of the register z-march (ours): KS RK2 steps per launch.
// ch_fused_zreg3d with its per-group z windows repeated KS times (ChZrStep): step s takes the φˢ
// planes step s−1 puts out (4 planes behind its input) and puts out φˢ⁺¹.  The frame is the TX×TY
// output tile with a 4·KS halo; at the start of every march step each step stores its four centre
// planes (φ, μ, φ*, μ* computed the march step before) into one of two buffer sets of 4·KS planes in
// dynamic shared memory, one barrier, then every step computes from registers and that set, exactly
// as ch_fused_zreg3d (ch_nsum3dv, ch_mu; bit for bit KS single steps).
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
    // o ← φ⁺ of plane p − 4 (ghost rule for fixed unless last)
    template <int SX>
    __device__ __forceinline__ void compute(const CHCoef<T>& k, const T* s, int PS, int p, int nz, bool yin,
                                            const bool xin[VW], T c1, T c2, T bval, bool last, T o[VW]) {
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
        ch_nsum3dv<T, SX, VW>(s + 3 * PS, ms[1], ms[0], ms[2], ns);
        const bool oin = p - 4 >= 0 && p - 4 < nz;
#pragma unroll
        for (int q = 0; q < VW; ++q) {
            o[q] = f[0][q] + c2 * (k.mi * (ns[q] - T(6) * ms[1][q]));
            if (BC == CH_FIXED && !last && !(oin && yin && xin[q])) o[q] = bval;
        }
    }
};

// KS fused steps; TX×TY outputs per block, NT threads (≥ one per group of VW cells of the frame), MINB
// min. blocks per SM, PD φ planes in flight; dynamic shared memory 2·4·KS planes of PS values
template <class T, int BC, int KS, int TX, int TY, int NT, int MINB, int PD, int VW>
__global__ void __launch_bounds__(NT, MINB)
ch_fused_zreg3d_tb(const T* __restrict__ src, T* __restrict__ out, int nx, int ny, int nz, int chunk, int vec,
                   T c1, T c2, T m, T b, T u, T K, T idx2, T bval) {
    constexpr int H = 4 * KS;
    constexpr int SX = TX + 2 * H, SY = TY + 2 * H, GX = SX / VW, G = GX * SY;
    constexpr int PS = (SY + 2) * SX + 8;
    static_assert(TX % 4 == 0 && (VW == 2 || VW == 4) && NT >= G, "TX a multiple of 4; one thread per group");
    extern __shared__ __align__(16) unsigned char ch_smem_raw[];
    T* sm = reinterpret_cast<T*>(ch_smem_raw);

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
        for (int s = 0; s < KS; ++s) {
            if (s > 0) zs[s].shift(o);
            zs[s].template compute<SX>(k, sb + 4 * s * PS, PS, p - 4 * s, nz, yin, xin, c1, c2, bval, s + 1 == KS, o);
        }
        if (t >= 2 * H && wr) {
            ln.store(out, p - H, plane, y, o);
        }
    }
}
