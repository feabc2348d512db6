// Shared Cahn–Hilliard stencil definition for every CUDA kernel variant (A–E).
//
//   F(φ) = m L(μ),  μ = −bφ + uφ³ − K L(φ),  L g = (Σ_neighbours g − 2·DIM·g) / dx²
//
// Everything here is written once and reused by the kernels in ch_kernels.cu:
//  * the boundary index mapping (ghost cells: periodic wrap, mirror = numpy pad
//    'symmetric' (−1→0, −2→1, N→N−1, N+1→N−2), fixed = ghosts hold bval),
//  * the raw readers (global memory, 1D texture over linear memory, 2D pitched
//    texture) — all take in-range (x, y, z),
//  * views: a "value at offset (a, b, c) from the centre cell" functor over a
//    reader with boundary handling, over a shared-memory tile, or over registers,
//  * ch_rhs<DIM>(view, coef): the μ / Laplacian composition on any view.
#pragma once

#define CH_PERIODIC 0
#define CH_MIRROR 1
#define CH_FIXED 2

#define CH_READ_GLOBAL 0
#define CH_READ_TEX1D 1
#define CH_READ_TEX2D 2

typedef unsigned long long ch_ull;

// ---- boundary index mapping -------------------------------------------------
// Periodic / mirror map a ghost index (|overshoot| ≤ n) into [0, n); cells that
// lie further out (only ever loaded into unused corners of a partial tile) are
// clamped so every load stays in bounds.
template <int BC>
__device__ __forceinline__ int ch_map(int i, int n) {
    if (BC == CH_PERIODIC) {
        i = (i < 0) ? i + n : i;
        i = (i >= n) ? i - n : i;
    } else {
        i = (i < 0) ? -1 - i : i;
        i = (i >= n) ? 2 * n - 1 - i : i;
    }
    return min(max(i, 0), n - 1);
}

// Like ch_map, but for CH_FIXED returns −1 for a ghost (value = bval).
template <int BC>
__device__ __forceinline__ int ch_idx(int i, int n) {
    if (BC == CH_FIXED) return (i >= 0 && i < n) ? i : -1;
    return ch_map<BC>(i, n);
}

// ---- raw readers (in-range coordinates) -------------------------------------
template <class T>
struct GlobalRead {
    const T* __restrict__ p;
    int nx, ny;
    __device__ __forceinline__ T operator()(int x, int y, int z) const {
        return __ldg(p + ((size_t)z * ny + y) * nx + x);
    }
};

template <class T> __device__ __forceinline__ T ch_tex1(cudaTextureObject_t t, int i);
template <> __device__ __forceinline__ float ch_tex1<float>(cudaTextureObject_t t, int i) {
    return tex1Dfetch<float>(t, i);
}
template <> __device__ __forceinline__ double ch_tex1<double>(cudaTextureObject_t t, int i) {
    int2 v = tex1Dfetch<int2>(t, i);
    return __hiloint2double(v.y, v.x);
}
template <class T> __device__ __forceinline__ T ch_tex2(cudaTextureObject_t t, int x, int y);
template <> __device__ __forceinline__ float ch_tex2<float>(cudaTextureObject_t t, int x, int y) {
    return tex2D<float>(t, x + 0.5f, y + 0.5f);
}
template <> __device__ __forceinline__ double ch_tex2<double>(cudaTextureObject_t t, int x, int y) {
    int2 v = tex2D<int2>(t, x + 0.5f, y + 0.5f);
    return __hiloint2double(v.y, v.x);
}

template <class T>
struct Tex1DRead {
    cudaTextureObject_t t;
    int nx, ny;
    __device__ __forceinline__ T operator()(int x, int y, int z) const {
        return ch_tex1<T>(t, (z * ny + y) * nx + x);
    }
};

template <class T>
struct Tex2DRead {  // 2D fields only (pitched texture over the array itself)
    cudaTextureObject_t t;
    int nx, ny;
    __device__ __forceinline__ T operator()(int x, int y, int) const { return ch_tex2<T>(t, x, y); }
};

template <class T, int RD> struct ChReader;
template <class T> struct ChReader<T, CH_READ_GLOBAL> {
    typedef GlobalRead<T> type;
    static __device__ __forceinline__ type make(ch_ull s, int nx, int ny) {
        return type{reinterpret_cast<const T*>(s), nx, ny};
    }
};
template <class T> struct ChReader<T, CH_READ_TEX1D> {
    typedef Tex1DRead<T> type;
    static __device__ __forceinline__ type make(ch_ull s, int nx, int ny) {
        return type{(cudaTextureObject_t)s, nx, ny};
    }
};
template <class T> struct ChReader<T, CH_READ_TEX2D> {
    typedef Tex2DRead<T> type;
    static __device__ __forceinline__ type make(ch_ull s, int nx, int ny) {
        return type{(cudaTextureObject_t)s, nx, ny};
    }
};

// One value at any (possibly ghost) coordinate through a reader.
template <class T, int BC, int DIM, class R>
__device__ __forceinline__ T ch_fetch(const R& r, int x, int y, int z, int nx, int ny, int nz, T bval) {
    if (BC == CH_FIXED) {
        bool in = x >= 0 && x < nx && y >= 0 && y < ny && (DIM == 2 || (z >= 0 && z < nz));
        if (!in) return bval;
        return r(x, y, DIM == 3 ? z : 0);
    }
    return r(ch_map<BC>(x, nx), ch_map<BC>(y, ny), DIM == 3 ? ch_map<BC>(z, nz) : 0);
}

// ---- views: value at offset (a, b, c) from a centre cell ---------------------
// Through a reader with boundary handling; indices of the ±2 neighbourhood are
// mapped once per axis (5 per axis) instead of once per stencil read.
template <class T, int BC, int DIM, class R>
struct BCView {
    R r;
    int xs[5], ys[5], zs[5];
    T bval;
    __device__ __forceinline__ BCView(const R& r_, int x, int y, int z, int nx, int ny, int nz, T bv)
        : r(r_), bval(bv) {
#pragma unroll
        for (int o = -2; o <= 2; ++o) {
            xs[o + 2] = ch_idx<BC>(x + o, nx);
            ys[o + 2] = ch_idx<BC>(y + o, ny);
            zs[o + 2] = (DIM == 3) ? ch_idx<BC>(z + o, nz) : 0;
        }
    }
    __device__ __forceinline__ T operator()(int a, int b, int c) const {
        int X = xs[a + 2], Y = ys[b + 2], Z = zs[c + 2];
        if (BC == CH_FIXED && (X < 0 || Y < 0 || Z < 0)) return bval;
        return r(X, Y, Z);
    }
};

// Over a shared-memory tile with row length SX and SY rows per plane.
template <class T, int SX, int SY>
struct SmemView {
    const T* s;
    int ctr;
    __device__ __forceinline__ T operator()(int a, int b, int c) const {
        return s[ctr + (c * SY + b) * SX + a];
    }
};

// ---- the stencil: μ / Laplacian composition ----------------------------------
template <class T>
struct CHCoef {
    T m, b, u, K, idx2;  // idx2 = 1/dx²
    T Ki, mi;            // K·idx2, m·idx2 (folded once per thread)
};

template <class T>
__device__ __forceinline__ CHCoef<T> ch_coef(T m, T b, T u, T K, T idx2) {
    return CHCoef<T>{m, b, u, K, idx2, K * idx2, m * idx2};
}

// μ = −bφ + uφ³ − K(nsum − nn·φ)/dx², evaluated as φ(uφ² − b) − (K/dx²)(nsum − nn·φ)
// (5 instructions with FMA contraction).
template <class T>
__device__ __forceinline__ T ch_mu(const CHCoef<T>& k, T p, T nsum, T nn) {
    return p * ((k.u * p) * p - k.b) - k.Ki * (nsum - nn * p);
}

// Sum of the 2·DIM nearest neighbours of offset (a, b, c).
template <int DIM, class T, class V>
__device__ __forceinline__ T ch_nsum(const V& v, int a, int b, int c) {
    T s = (v(a - 1, b, c) + v(a + 1, b, c)) + (v(a, b - 1, c) + v(a, b + 1, c));
    if (DIM == 3) s += v(a, b, c - 1) + v(a, b, c + 1);
    return s;
}

template <int DIM, class T, class V>
__device__ __forceinline__ T ch_mu_at(const V& v, const CHCoef<T>& k, int a, int b, int c) {
    return ch_mu<T>(k, v(a, b, c), ch_nsum<DIM, T>(v, a, b, c), T(2 * DIM));
}

// F = m L(μ) at the centre of a view w of μ values.
template <int DIM, class T, class W>
__device__ __forceinline__ T ch_lapmu(const W& w, const CHCoef<T>& k) {
    return k.mi * (ch_nsum<DIM, T>(w, 0, 0, 0) - T(2 * DIM) * w(0, 0, 0));
}

// A view of μ computed on the fly from a view of φ.
template <int DIM, class T, class V>
struct ChMuOf {
    const V& v;
    const CHCoef<T>& k;
    __device__ __forceinline__ T operator()(int a, int b, int c) const {
        return ch_mu_at<DIM>(v, k, a, b, c);
    }
};

// F at the view's centre: the 13-point (2D) / 25-point (3D) stencil.
template <int DIM, class T, class V>
__device__ __forceinline__ T ch_rhs(const V& v, const CHCoef<T>& k) {
    return ch_lapmu<DIM>(ChMuOf<DIM, T, V>{v, k}, k);
}

// Over a ring of march planes (rows in 2D, xy planes in 3D) in shared memory:
// the march axis is y in 2D and z in 3D; its offset −1/0/+1 selects the plane
// pointer (each already at the centre cell), the in-plane offsets index within
// a plane of row length SX.
template <class T, int DIM, int SX>
struct RingView {
    const T* pm;
    const T* p0;
    const T* pp;
    __device__ __forceinline__ T operator()(int a, int b, int c) const {
        const int m = (DIM == 3) ? c : b;
        const int off = (DIM == 3) ? b * SX + a : a;
        return (m < 0 ? pm : (m > 0 ? pp : p0))[off];
    }
};

// ---- register-sliding 2D sweep (same arithmetic as ch_rhs<2>) ----------------
// Walks one column x of a shared tile (row length SX) down R consecutive rows
// starting at centre (x, y0), keeping φ and μ of the column in registers: per
// output 5 shared loads and 3 μ evaluations instead of 13 and 5.  Calls
// op(j, φ(x, y0+j), F(x, y0+j)) for j = 0 … R−1.  Summation order matches
// ch_nsum / ch_rhs so results equal the generic stencil.
template <int R, int SX, class T, class Op>
__device__ __forceinline__ void ch_sweep2d(const T* s, int x, int y0, const CHCoef<T>& k, Op& op) {
    const T* p = s + y0 * SX + x;
    const T four = T(4);
    T c_m2 = p[-2 * SX], c_m1 = p[-SX], c_0 = p[0], c_p1 = p[SX];
    T l_m1 = p[-SX - 1], l_0 = p[-1], r_m1 = p[-SX + 1], r_0 = p[1];
    T mu_m1 = ch_mu<T>(k, c_m1, (l_m1 + r_m1) + (c_m2 + c_0), four);
    T mu_0 = ch_mu<T>(k, c_0, (l_0 + r_0) + (c_m1 + c_p1), four);
#pragma unroll
    for (int j = 0; j < R; ++j) {
        const T* q = p + j * SX;
        const T c_p2 = q[2 * SX], l_p1 = q[SX - 1], r_p1 = q[SX + 1], l2 = q[-2], r2 = q[2];
        const T mu_p1 = ch_mu<T>(k, c_p1, (l_p1 + r_p1) + (c_0 + c_p2), four);
        const T mu_l = ch_mu<T>(k, l_0, (l2 + c_0) + (l_m1 + l_p1), four);
        const T mu_r = ch_mu<T>(k, r_0, (c_0 + r2) + (r_m1 + r_p1), four);
        const T F = k.mi * (((mu_l + mu_r) + (mu_m1 + mu_p1)) - four * mu_0);
        op(j, c_0, F);
        c_m1 = c_0; c_0 = c_p1; c_p1 = c_p2;
        l_m1 = l_0; l_0 = l_p1; r_m1 = r_0; r_0 = r_p1;
        mu_m1 = mu_0; mu_0 = mu_p1;
    }
}

// ---- 2D tile load with boundary handling and an interior fast path -----------
// s (row length SX, SY rows) ← field cells (x0 … x0+SX−1, y0 … y0+SY−1).
// Interior tiles skip the index mapping; with vec (nx % 4 == 0 and a 16-byte
// aligned field, checked by the launcher) they load W-wide vectors (x0, SX
// multiples of W).
template <class T, int W> struct ChVec;
template <> struct ChVec<float, 2> { typedef float2 type; };
template <> struct ChVec<float, 4> { typedef float4 type; };
template <> struct ChVec<double, 2> { typedef double2 type; };

template <class T, int BC, int SX, int SY, int NT, int W, class R>
__device__ __forceinline__ void ch_load_tile2d(T* s, const R& r, const T* g, int x0, int y0,
                                               int nx, int ny, T bval, bool vec) {
    const bool interior = x0 >= 0 && y0 >= 0 && x0 + SX <= nx && y0 + SY <= ny;
    const int tid = threadIdx.x;
    if (interior && vec && g != nullptr) {
        typedef typename ChVec<T, W>::type V;
        constexpr int VX = SX / W;
        static_assert(SX % W == 0, "tile width must be a multiple of the vector width");
        for (int i = tid; i < VX * SY; i += NT) {
            const int lx = i % VX, ly = i / VX;
            const V v = __ldg(reinterpret_cast<const V*>(g + (size_t)(y0 + ly) * nx + x0) + lx);
            reinterpret_cast<V*>(s + ly * SX)[lx] = v;
        }
    } else if (interior) {
        for (int i = tid; i < SX * SY; i += NT) {
            const int lx = i % SX, ly = i / SX;
            s[i] = r(x0 + lx, y0 + ly, 0);
        }
    } else {
        for (int i = tid; i < SX * SY; i += NT) {
            const int lx = i % SX, ly = i / SX;
            s[i] = ch_fetch<T, BC, 2>(r, x0 + lx, y0 + ly, 0, nx, ny, 1, bval);
        }
    }
}
