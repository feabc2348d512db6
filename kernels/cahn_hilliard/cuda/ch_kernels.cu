// Cahn–Hilliard kernel variants A–E (paper 000 §3.1, kernels A–D; E is ours).
// Every kernel computes with the one stencil in ch_stencil.cuh.
//
// Common arguments: src is a device pointer (global reads) or a texture object
// handle (texture reads), passed as a 64-bit integer so all read modes share
// one signature; nx is the fastest (contiguous) axis; z is unused in 2D.
// Stage kernels compute out = base + coef·F(src).
#include "ch_stencil.cuh"

// ---- A / C: one thread per cell, every stencil value read through the reader.
template <class T, int BC, int DIM, int RD>
__global__ void ch_point(ch_ull src, const T* __restrict__ base, T* __restrict__ out,
                         int nx, int ny, int nz, T coef, T m, T b, T u, T K, T idx2, T bval) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = (DIM == 3) ? (int)(blockIdx.z * blockDim.z + threadIdx.z) : 0;
    if (x >= nx || y >= ny || (DIM == 3 && z >= nz)) return;
    typedef typename ChReader<T, RD>::type R;
    const R r = ChReader<T, RD>::make(src, nx, ny);
    const BCView<T, BC, DIM, R> v(r, x, y, z, nx, ny, nz, bval);
    const CHCoef<T> k = ch_coef<T>(m, b, u, K, idx2);
    const size_t i = ((size_t)z * ny + y) * nx + x;
    out[i] = base[i] + coef * ch_rhs<DIM>(v, k);
}

// ---- B / D: a shared-memory tile with a halo of width 2.
// The block (BX, BY, BZ threads) produces OX×OY×OZ outputs from a tile of
// (OX+4)×(OY+4)(×(OZ+4)) cells loaded through the reader (global: B,
// texture: D).  With BX = OX + 4 (paper: 16×16 threads, 12×12 writers) each
// thread loads one tile cell and the inner threads write; with BX = OX the
// threads load the tile cooperatively and each writes one cell.
template <class T, int BC, int DIM, int RD, int BX, int BY, int BZ, int OX, int OY, int OZ>
__global__ void __launch_bounds__(BX * BY * BZ)
ch_tile(ch_ull src, const T* __restrict__ base, T* __restrict__ out,
        int nx, int ny, int nz, T coef, T m, T b, T u, T K, T idx2, T bval) {
    constexpr int H = 2;
    constexpr int SX = OX + 2 * H, SY = OY + 2 * H, SZ = (DIM == 3) ? OZ + 2 * H : 1;
    constexpr int HZ = (DIM == 3) ? H : 0;
    constexpr int NT = BX * BY * BZ;
    constexpr int PX = (SX - BX) / 2, PY = (SY - BY) / 2, PZ = (DIM == 3) ? (SZ - BZ) / 2 : 0;
    __shared__ T s[SX * SY * SZ];

    const int ox = blockIdx.x * OX, oy = blockIdx.y * OY, oz = (DIM == 3) ? blockIdx.z * OZ : 0;
    typedef typename ChReader<T, RD>::type R;
    const R r = ChReader<T, RD>::make(src, nx, ny);
    const int tid = threadIdx.x + BX * (threadIdx.y + BY * threadIdx.z);
    for (int i = tid; i < SX * SY * SZ; i += NT) {
        const int lx = i % SX, t = i / SX, ly = t % SY, lz = t / SY;
        s[i] = ch_fetch<T, BC, DIM>(r, ox + lx - H, oy + ly - H, oz + lz - HZ, nx, ny, nz, bval);
    }
    __syncthreads();

    // tile position of this thread's output
    const int px = threadIdx.x + PX, py = threadIdx.y + PY, pz = (DIM == 3) ? threadIdx.z + PZ : 0;
    if (px < H || px >= OX + H || py < H || py >= OY + H) return;
    if (DIM == 3 && (pz < H || pz >= OZ + H)) return;
    const int x = ox + px - H, y = oy + py - H, z = oz + pz - HZ;
    if (x >= nx || y >= ny || (DIM == 3 && z >= nz)) return;
    const SmemView<T, SX, SY> v{s, (pz * SY + py) * SX + px};
    const CHCoef<T> k = ch_coef<T>(m, b, u, K, idx2);
    const size_t i = ((size_t)z * ny + y) * nx + x;
    out[i] = base[i] + coef * ch_rhs<DIM>(v, k);
}

// ---- E: fused RK2 (explicit midpoint), one launch per step (ours).
// Loads φ on a tile with halo 4 into shared memory (one global read per cell
// plus the halo), computes φ* = φ + (dt/2)·F(φ) on the tile with halo 2 into a
// second shared tile (ghost values of φ* follow the boundary rule: for periodic
// and mirror they are exactly the stage-1 values of the image cells because the
// halo-4 tile is the mapped field; for fixed they are bval), then writes
// φⁿ⁺¹ = φ + dt·F(φ*) for the OX×OY×OZ outputs.  Dynamic shared memory.
template <class T, int BC, int DIM, int NT, int OX, int OY, int OZ>
__global__ void __launch_bounds__(NT)
ch_fused(ch_ull src, T* __restrict__ out, int nx, int ny, int nz,
         T c1, T c2, T m, T b, T u, T K, T idx2, T bval) {
    constexpr int S0X = OX + 8, S0Y = OY + 8, S0Z = (DIM == 3) ? OZ + 8 : 1;
    constexpr int S1X = OX + 4, S1Y = OY + 4, S1Z = (DIM == 3) ? OZ + 4 : 1;
    constexpr int OZZ = (DIM == 3) ? OZ : 1;
    constexpr int Z4 = (DIM == 3) ? 4 : 0, Z2 = (DIM == 3) ? 2 : 0;
    extern __shared__ __align__(16) unsigned char ch_smem_raw[];
    T* s0 = reinterpret_cast<T*>(ch_smem_raw);
    T* s1 = s0 + S0X * S0Y * S0Z;

    const int ox = blockIdx.x * OX, oy = blockIdx.y * OY, oz = (DIM == 3) ? blockIdx.z * OZ : 0;
    const GlobalRead<T> r{reinterpret_cast<const T*>(src), nx, ny};
    const CHCoef<T> k = ch_coef<T>(m, b, u, K, idx2);
    const int tid = threadIdx.x;

    for (int i = tid; i < S0X * S0Y * S0Z; i += NT) {
        const int lx = i % S0X, t = i / S0X, ly = t % S0Y, lz = t / S0Y;
        s0[i] = ch_fetch<T, BC, DIM>(r, ox + lx - 4, oy + ly - 4, oz + lz - Z4, nx, ny, nz, bval);
    }
    __syncthreads();

    for (int i = tid; i < S1X * S1Y * S1Z; i += NT) {
        const int lx = i % S1X, t = i / S1X, ly = t % S1Y, lz = t / S1Y;
        T val;
        if (BC == CH_FIXED) {
            const int gx = ox + lx - 2, gy = oy + ly - 2, gz = oz + lz - Z2;
            const bool in = gx >= 0 && gx < nx && gy >= 0 && gy < ny && (DIM == 2 || (gz >= 0 && gz < nz));
            if (!in) { s1[i] = bval; continue; }
        }
        const int c0 = ((lz + Z2) * S0Y + ly + 2) * S0X + lx + 2;
        const SmemView<T, S0X, S0Y> v{s0, c0};
        val = s0[c0] + c1 * ch_rhs<DIM>(v, k);
        s1[i] = val;
    }
    __syncthreads();

    for (int i = tid; i < OX * OY * OZZ; i += NT) {
        const int lx = i % OX, t = i / OX, ly = t % OY, lz = t / OY;
        const int x = ox + lx, y = oy + ly, z = oz + lz;
        if (x >= nx || y >= ny || (DIM == 3 && z >= nz)) continue;
        const int c1i = ((lz + Z2) * S1Y + ly + 2) * S1X + lx + 2;
        const int c0 = ((lz + Z4) * S0Y + ly + 4) * S0X + lx + 4;
        const SmemView<T, S1X, S1Y> v{s1, c1i};
        out[((size_t)z * ny + y) * nx + x] = s0[c0] + c2 * ch_rhs<DIM>(v, k);
    }
}

// ---- E, 2D, register-sliding version (used for 2D fields).
// OX×OY outputs per block from a (OX+8)×(OY+8) φ tile and a (OX+4)×(OY+4) φ*
// tile; NT = 4·(OX+4) threads.  Stage 1: thread = (column of the halo-2
// region, one of 4 chunks of R1 = (OY+4)/4 rows); stage 2: thread = (output
// column, one of 4 chunks of R2 = OY/4 rows).  Each thread sweeps its chunk
// with ch_sweep2d (φ and μ slide through registers).
template <class T, int BC, int S1X>
struct ChStage1Op {  // φ* = φ + c1·F(φ) into s1; bval outside the domain for fixed
    T* s1; int col, row0, gx, gy0, nx, ny; T c1, bval;
    __device__ __forceinline__ void operator()(int j, T phi, T F) {
        T val = phi + c1 * F;
        if (BC == CH_FIXED) {
            const int gy = gy0 + j;
            if (gx < 0 || gx >= nx || gy < 0 || gy >= ny) val = bval;
        }
        s1[(row0 + j) * S1X + col] = val;
    }
};

template <class T, int S0X>
struct ChStage2Op {  // φⁿ⁺¹ = φ + c2·F(φ*) to global memory
    const T* s0; T* out; int s0ctr; size_t g0; int gy0, nx, ny; bool colok; T c2;
    __device__ __forceinline__ void operator()(int j, T, T F) {
        if (colok && gy0 + j < ny) out[g0 + (size_t)j * nx] = s0[s0ctr + j * S0X] + c2 * F;
    }
};

template <class T, int BC, int OX, int OY>
__global__ void __launch_bounds__(4 * (OX + 4))
ch_fused2d(ch_ull src, T* __restrict__ out, int nx, int ny, int vec,
           T c1, T c2, T m, T b, T u, T K, T idx2, T bval) {
    constexpr int S0X = OX + 8, S0Y = OY + 8, S1X = OX + 4, S1Y = OY + 4;
    constexpr int NT = 4 * S1X, R1 = S1Y / 4, R2 = OY / 4;
    static_assert(S1Y % 4 == 0 && OY % 4 == 0, "OY must be a multiple of 4");
    extern __shared__ __align__(16) unsigned char ch_smem_raw[];
    T* s0 = reinterpret_cast<T*>(ch_smem_raw);
    T* s1 = s0 + S0X * S0Y;

    const int ox = blockIdx.x * OX, oy = blockIdx.y * OY;
    const GlobalRead<T> r{reinterpret_cast<const T*>(src), nx, ny};
    const CHCoef<T> k = ch_coef<T>(m, b, u, K, idx2);
    const int tid = threadIdx.x;

    ch_load_tile2d<T, BC, S0X, S0Y, NT, (sizeof(T) == 4 ? 4 : 2)>(
        s0, r, reinterpret_cast<const T*>(src), ox - 4, oy - 4, nx, ny, bval, vec != 0);
    __syncthreads();

    {   // stage 1 on the halo-2 region: s1(col, row) = φ* at global (ox+col−2, oy+row−2)
        const int col = tid % S1X, row0 = (tid / S1X) * R1;
        ChStage1Op<T, BC, S1X> op{s1, col, row0, ox + col - 2, oy + row0 - 2, nx, ny, c1, bval};
        ch_sweep2d<R1, S0X>(s0, col + 2, row0 + 2, k, op);
    }
    __syncthreads();

    if (tid < 4 * OX) {  // stage 2 on the outputs
        const int col = tid % OX, row0 = (tid / OX) * R2;
        const int gx = ox + col, gy0 = oy + row0;
        ChStage2Op<T, S0X> op{s0, out, (row0 + 4) * S0X + col + 4,
                              (size_t)gy0 * nx + gx, gy0, nx, ny, gx < nx, c2};
        ch_sweep2d<R2, S1X>(s1, col + 2, row0 + 2, k, op);
    }
}

// ---- B / D, 2D, register-sliding two-pass stage ("sweep" layout).
// OX×OY outputs per block of 4·OX threads from a (OX+4)×(OY+4) shared tile
// loaded through the reader (global: B, texture: D); each thread sweeps one
// output column over OY/4 rows.  flags bit 0: vector loads allowed; bit 1:
// base is src (stage 1), so the centre value comes from the tile.
template <class T>
struct ChStageOutOp {
    const T* base; T* out; size_t g0; int gy0, nx, ny; bool colok, same; T coef;
    __device__ __forceinline__ void operator()(int j, T phi, T F) {
        if (colok && gy0 + j < ny) {
            const size_t g = g0 + (size_t)j * nx;
            const T bv = same ? phi : base[g];
            out[g] = bv + coef * F;
        }
    }
};

template <class T, int BC, int RD, int OX, int OY, int MINB>  // MINB: min. blocks per SM (register cap)
__global__ void __launch_bounds__(4 * OX, MINB)
ch_sweep(ch_ull src, const T* __restrict__ base, T* __restrict__ out, int nx, int ny, int flags,
         T coef, T m, T b, T u, T K, T idx2, T bval) {
    constexpr int SX = OX + 4, SY = OY + 4, NT = 4 * OX, R = OY / 4;
    static_assert(OY % 4 == 0, "OY must be a multiple of 4");
    __shared__ __align__(16) T s[SX * SY];
    const int ox = blockIdx.x * OX, oy = blockIdx.y * OY;
    typedef typename ChReader<T, RD>::type Rd;
    const Rd r = ChReader<T, RD>::make(src, nx, ny);
    const T* g = (RD == CH_READ_GLOBAL) ? reinterpret_cast<const T*>(src) : nullptr;
    ch_load_tile2d<T, BC, SX, SY, NT, 2>(s, r, g, ox - 2, oy - 2, nx, ny, bval, (flags & 1) != 0);
    __syncthreads();
    const CHCoef<T> k = ch_coef<T>(m, b, u, K, idx2);
    const int tid = threadIdx.x;
    const int col = tid % OX, row0 = (tid / OX) * R;
    const int gx = ox + col, gy0 = oy + row0;
    ChStageOutOp<T> op{base, out, (size_t)gy0 * nx + gx, gy0, nx, ny, gx < nx, (flags & 2) != 0, coef};
    ch_sweep2d<R, SX>(s, col + 2, row0 + 2, k, op);
}

// ---- B / D, march layout ("march"): the block owns a TX(×TY) column of
// outputs and marches along the last axis (y in 2D, z in 3D) over `chunk`
// planes (rows in 2D, xy planes in 3D).  Per plane: φ of the halo-2 plane is
// stored from registers into a 4-slot shared ring (and the next plane's global
// loads are issued at once, so they fly during this plane's work), μ is
// computed once per cell of the halo-1 plane into a 3-slot ring, then each
// thread writes F of its column from the μ ring.  In-plane source coordinates
// are mapped once per thread; only the march coordinate is mapped per plane.
// Two barriers per plane; ring slots are reused only after the barrier that
// follows their last read (see the step comments).  same ≠ 0: base is src, the
// centre φ comes from the ring; otherwise base is prefetched one plane ahead.
template <class T, int BC, int DIM, int RD, int TX, int TY>
__global__ void __launch_bounds__(TX * TY)
ch_march(ch_ull src, const T* __restrict__ base, T* __restrict__ out, int nx, int ny, int nz,
         int chunk, int same, T coef, T m, T b, T u, T K, T idx2, T bval) {
    static_assert(DIM == 3 || TY == 1, "2D march blocks are one row of TX threads");
    constexpr int NT = TX * TY;
    constexpr int P2X = TX + 4, P2Y = (DIM == 3) ? TY + 4 : 1, P2 = P2X * P2Y;
    constexpr int P1X = TX + 2, P1Y = (DIM == 3) ? TY + 2 : 1, P1 = P1X * P1Y;
    constexpr int NL = (P2 + NT - 1) / NT, NM = (P1 + NT - 1) / NT;
    __shared__ __align__(16) T sphi[4 * P2];
    __shared__ __align__(16) T smu[3 * P1];

    const int tid = threadIdx.x;
    const int ox = blockIdx.x * TX;
    const int oy = (DIM == 3) ? (int)(blockIdx.y * TY) : 0;
    const int nm = (DIM == 3) ? nz : ny;
    const int m0 = (int)((DIM == 3) ? blockIdx.z : blockIdx.y) * chunk;
    const int L = min(chunk, nm - m0);
    typedef typename ChReader<T, RD>::type Rd;
    const Rd r = ChReader<T, RD>::make(src, nx, ny);
    const CHCoef<T> k = ch_coef<T>(m, b, u, K, idx2);

    // in-plane source coordinates of this thread's halo-2 plane cells (−1: fixed ghost)
    int cx[NL], cy[NL];
#pragma unroll
    for (int l = 0; l < NL; ++l) {
        const int i = tid + l * NT;
        cx[l] = ch_idx<BC>(ox + i % P2X - 2, nx);
        cy[l] = (DIM == 3) ? ch_idx<BC>(oy + i / P2X - 2, ny) : 0;
    }
    T pre[NL];
    auto load = [&](int pm) {  // plane pm (may be a ghost plane) → pre
        const int mm = ch_idx<BC>(pm, nm);
#pragma unroll
        for (int l = 0; l < NL; ++l) {
            if (tid + l * NT < P2) {
                if (BC == CH_FIXED && (mm < 0 || cx[l] < 0 || cy[l] < 0)) pre[l] = bval;
                else pre[l] = (DIM == 3) ? r(cx[l], cy[l], mm) : r(cx[l], mm, 0);
            }
        }
    };
    load(m0 - 2);

    // this thread's output column
    const int lx = tid % TX, ly = tid / TX;
    const int gx = ox + lx, gy = oy + ly;
    const bool wr = gx < nx && (DIM == 2 || gy < ny);
    const size_t pstride = (DIM == 3) ? (size_t)nx * ny : (size_t)nx;
    size_t g = (DIM == 3) ? ((size_t)m0 * ny + gy) * nx + gx : (size_t)m0 * nx + gx;
    T bnext = T(0);
    if (!same && wr && L > 0) bnext = base[g];
    const int c1 = (DIM == 3) ? (ly + 1) * P1X + lx + 1 : lx + 1;  // centre in a μ plane
    const int c2 = (DIM == 3) ? (ly + 2) * P2X + lx + 2 : lx + 2;  // centre in a φ plane

    // step t: φ plane m0−2+t → slot t&3; μ plane m0−3+t → slot t%3; F on plane m0−4+t.
    for (int t = 0; t < L + 4; ++t) {
        T* ps = sphi + (t & 3) * P2;  // last read by F at step t−2 (before barrier B of t−1)
#pragma unroll
        for (int l = 0; l < NL; ++l)
            if (tid + l * NT < P2) ps[tid + l * NT] = pre[l];
        if (t + 1 < L + 4) load(m0 - 1 + t);
        __syncthreads();  // A
        if (t >= 2) {  // μ slot t%3 was last read by F at step t−1 (before A)
            const T* fm = sphi + ((t - 2) & 3) * P2;
            const T* f0 = sphi + ((t - 1) & 3) * P2;
            T* mu = smu + (t % 3) * P1;
#pragma unroll
            for (int l = 0; l < NM; ++l) {
                const int i = tid + l * NT;
                if (i < P1) {
                    const int c = (DIM == 3) ? (i / P1X + 1) * P2X + i % P1X + 1 : i + 1;
                    const RingView<T, DIM, P2X> v{fm + c, f0 + c, ps + c};
                    mu[i] = ch_mu_at<DIM>(v, k, 0, 0, 0);
                }
            }
        }
        __syncthreads();  // B
        if (t >= 4 && wr) {
            const RingView<T, DIM, P1X> w{smu + ((t - 2) % 3) * P1 + c1, smu + ((t - 1) % 3) * P1 + c1,
                                          smu + (t % 3) * P1 + c1};
            const T F = ch_lapmu<DIM>(w, k);
            T bv;
            if (same) {
                bv = sphi[((t - 2) & 3) * P2 + c2];
            } else {
                bv = bnext;
                if (t + 1 < L + 4) bnext = base[g + pstride];
            }
            out[g] = bv + coef * F;
            g += pstride;
        }
    }
}

#include "ch_regmarch.cuh"
#include "ch_temporal.cuh"

// ---- E, 3D, z-march version (ours): one launch per RK2 step, each block a TX×TY column of
// outputs marching along z through `chunk` planes.  Four rings of 3 planes in shared memory:
// φ with halo 4 in x/y, μ = μ(φ) with halo 3, φ* = φ + c1·F(φ) with halo 2 (bval outside the domain
// for fixed), μ* = μ(φ*) with halo 1; φⁿ⁺¹ = φ + c2·F(φ*) goes to global memory.  Step t loads φ
// plane p = m0 − 4 + t and computes μ(p−1), φ*(p−2), μ*(p−3) and the output plane p−4: each φ cell
// is read from global memory once per block (x/y halo overlap from L2) instead of (OZ+8)/OZ times,
// and μ, φ*, μ* are computed once per plane instead of once per 3D tile.  A plane of relative
// index r = plane − (m0 − 4) lives in slot r % 3 of its ring; four barriers per plane order the
// phases (write φ | A | μ | B | φ* | C | μ* | D | out), and each slot is rewritten only after the
// barrier that follows its last read.  Same arithmetic as ch_fused (ch_mu_at / ch_lapmu).
template <class T, int BC, int TX, int TY>
__global__ void __launch_bounds__(TX * TY)
ch_fused_march3d(const T* __restrict__ src, T* __restrict__ out, int nx, int ny, int nz, int chunk,
                 T c1, T c2, T m, T b, T u, T K, T idx2, T bval) {
    constexpr int NT = TX * TY;
    constexpr int S4X = TX + 8, P4 = S4X * (TY + 8);
    constexpr int S3X = TX + 6, P3 = S3X * (TY + 6);
    constexpr int S2X = TX + 4, P2 = S2X * (TY + 4);
    constexpr int S1X = TX + 2, P1 = S1X * (TY + 2);
    constexpr int NL = (P4 + NT - 1) / NT;
    __shared__ __align__(16) T sphi[3 * P4];
    __shared__ __align__(16) T smu[3 * P3];
    __shared__ __align__(16) T sst[3 * P2];
    __shared__ __align__(16) T smus[3 * P1];

    const int tid = threadIdx.x;
    const int ox = blockIdx.x * TX, oy = blockIdx.y * TY;
    const int m0 = blockIdx.z * chunk;
    const int L = min(chunk, nz - m0);
    const CHCoef<T> k = ch_coef<T>(m, b, u, K, idx2);
    const size_t plane = (size_t)nx * ny;

    int cx[NL], cy[NL];
#pragma unroll
    for (int l = 0; l < NL; ++l) {
        const int i = tid + l * NT;
        cx[l] = ch_idx<BC>(ox + i % S4X - 4, nx);
        cy[l] = ch_idx<BC>(oy + i / S4X - 4, ny);
    }
    T pre[NL];
    auto load = [&](int pz) {
        const int mz = ch_idx<BC>(pz, nz);
#pragma unroll
        for (int l = 0; l < NL; ++l) {
            if (tid + l * NT < P4) {
                if (BC == CH_FIXED && (mz < 0 || cx[l] < 0 || cy[l] < 0)) pre[l] = bval;
                else pre[l] = __ldg(src + (size_t)mz * plane + (size_t)cy[l] * nx + cx[l]);
            }
        }
    };
    load(m0 - 4);

    const int lx = tid % TX, ly = tid / TX;
    const int gx = ox + lx, gy = oy + ly;
    const bool wr = gx < nx && gy < ny;
    size_t g = (size_t)m0 * plane + (size_t)gy * nx + gx;
    const int c1o = (ly + 1) * S1X + lx + 1;
    const int steps = L + 8;

    for (int t = 0; t < steps; ++t) {
        const int p = m0 - 4 + t;
        {   // φ plane p → slot t % 3 (last read in step t−1 before its barrier D)
            T* ps = sphi + (t % 3) * P4;
#pragma unroll
            for (int l = 0; l < NL; ++l)
                if (tid + l * NT < P4) ps[tid + l * NT] = pre[l];
            if (t + 1 < steps) load(p + 1);
        }
        __syncthreads();  // A
        if (t >= 2) {     // μ(p − 1) from φ(p − 2 … p), halo 3
            const T* fm = sphi + ((t + 1) % 3) * P4;   // rel t − 2
            const T* f0 = sphi + ((t + 2) % 3) * P4;   // rel t − 1
            const T* fp = sphi + (t % 3) * P4;         // rel t
            T* mu = smu + ((t + 2) % 3) * P3;          // rel t − 1
            for (int i = tid; i < P3; i += NT) {
                const int c = (i / S3X + 1) * S4X + i % S3X + 1;
                const RingView<T, 3, S4X> v{fm + c, f0 + c, fp + c};
                mu[i] = ch_mu_at<3>(v, k, 0, 0, 0);
            }
        }
        __syncthreads();  // B
        if (t >= 4) {     // φ*(q), q = p − 2: μ(q − 1 … q + 1), base φ(q); halo 2
            const int q = p - 2;
            const T* mm = smu + (t % 3) * P3;          // rel t − 3
            const T* m0p = smu + ((t + 1) % 3) * P3;   // rel t − 2
            const T* mp = smu + ((t + 2) % 3) * P3;    // rel t − 1
            const T* fq = sphi + ((t + 1) % 3) * P4;   // φ(q), rel t − 2
            T* st = sst + ((t + 1) % 3) * P2;          // rel t − 2
            const bool zin = q >= 0 && q < nz;
            for (int i = tid; i < P2; i += NT) {
                const int jx = i % S2X, jy = i / S2X;
                if (BC == CH_FIXED) {
                    const int qx = ox + jx - 2, qy = oy + jy - 2;
                    if (!zin || qx < 0 || qx >= nx || qy < 0 || qy >= ny) { st[i] = bval; continue; }
                }
                const int c = (jy + 1) * S3X + jx + 1;
                const RingView<T, 3, S3X> w{mm + c, m0p + c, mp + c};
                st[i] = fq[(jy + 2) * S4X + jx + 2] + c1 * ch_lapmu<3>(w, k);
            }
        }
        __syncthreads();  // C
        if (t >= 6) {     // μ*(s), s = p − 3: φ*(s − 1 … s + 1), halo 1
            const T* sm = sst + ((t + 2) % 3) * P2;    // rel t − 4
            const T* s0 = sst + (t % 3) * P2;          // rel t − 3
            const T* sp = sst + ((t + 1) % 3) * P2;    // rel t − 2
            T* mus = smus + (t % 3) * P1;              // rel t − 3
            for (int i = tid; i < P1; i += NT) {
                const int c = (i / S1X + 1) * S2X + i % S1X + 1;
                const RingView<T, 3, S2X> v{sm + c, s0 + c, sp + c};
                mus[i] = ch_mu_at<3>(v, k, 0, 0, 0);
            }
        }
        __syncthreads();  // D
        if (t >= 8 && wr) {   // output plane p − 4: μ*(p − 5 … p − 3), base φ(p − 4) from global memory
            const RingView<T, 3, S1X> w{smus + ((t + 1) % 3) * P1 + c1o, smus + ((t + 2) % 3) * P1 + c1o,
                                        smus + (t % 3) * P1 + c1o};
            out[g] = __ldg(src + g) + c2 * ch_lapmu<3>(w, k);
            g += plane;
        }
    }
}
