// The second half of the host backend's CUDA prelude (kernels.gpu.host; read after cuda_host.cuh):
// atomics, integer and bit intrinsics, CUDA's min/max overloads, the DPX intrinsics as plain code,
// texture objects and the floating-point intrinsics, each with CUDA's definition.
// ------------------------------------------------------------------ atomics (return the old value)
#define CUDA_EMU_ATOMIC_INT(T)                                                                         \
    inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }               \
    inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }               \
    inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); }               \
    inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }                 \
    inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); }               \
    inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); }             \
    inline T atomicCAS(T* a, T c, T v) {                                                               \
        __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return c; }  \
    inline T atomicMin(T* a, T v) {                                                                    \
        T o = __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                    \
        while (v < o && !__atomic_compare_exchange_n(a, &o, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} \
        return o; }                                                                                    \
    inline T atomicMax(T* a, T v) {                                                                    \
        T o = __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                    \
        while (v > o && !__atomic_compare_exchange_n(a, &o, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} \
        return o; }
CUDA_EMU_ATOMIC_INT(int)
CUDA_EMU_ATOMIC_INT(unsigned)
CUDA_EMU_ATOMIC_INT(long long)
CUDA_EMU_ATOMIC_INT(unsigned long long)
#undef CUDA_EMU_ATOMIC_INT
inline unsigned short atomicCAS(unsigned short* a, unsigned short c, unsigned short v) {
    __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return c;
}
inline unsigned atomicInc(unsigned* a, unsigned lim) {
    unsigned o = __atomic_load_n(a, __ATOMIC_SEQ_CST);
    while (!__atomic_compare_exchange_n(a, &o, o >= lim ? 0u : o + 1, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return o;
}
inline unsigned atomicDec(unsigned* a, unsigned lim) {
    unsigned o = __atomic_load_n(a, __ATOMIC_SEQ_CST);
    while (!__atomic_compare_exchange_n(a, &o, (o == 0 || o > lim) ? lim : o - 1, true, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST)) {}
    return o;
}
// floating point: a compare-and-swap loop on the bits
#define CUDA_EMU_ATOMIC_FP(T, U)                                                                       \
    template <class F> inline T atomic_fp(T* a, F f) {                                                 \
        U* p = reinterpret_cast<U*>(a);                                                                \
        U o = __atomic_load_n(p, __ATOMIC_SEQ_CST), n;                                                 \
        T ov, nv;                                                                                      \
        do { std::memcpy(&ov, &o, sizeof(T)); nv = f(ov); std::memcpy(&n, &nv, sizeof(T)); }           \
        while (!__atomic_compare_exchange_n(p, &o, n, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));       \
        return ov; }                                                                                   \
    inline T atomicAdd(T* a, T v) { return atomic_fp(a, [v](T x) { return x + v; }); }                \
    inline T atomicSub(T* a, T v) { return atomic_fp(a, [v](T x) { return x - v; }); }                \
    inline T atomicMin(T* a, T v) { return atomic_fp(a, [v](T x) { return v < x ? v : x; }); }         \
    inline T atomicMax(T* a, T v) { return atomic_fp(a, [v](T x) { return v > x ? v : x; }); }         \
    inline T atomicExch(T* a, T v) {                                                                   \
        U n; std::memcpy(&n, &v, sizeof(T));                                                           \
        U o = __atomic_exchange_n(reinterpret_cast<U*>(a), n, __ATOMIC_SEQ_CST);                       \
        T r; std::memcpy(&r, &o, sizeof(T)); return r; }
CUDA_EMU_ATOMIC_FP(float, unsigned)
CUDA_EMU_ATOMIC_FP(double, unsigned long long)
#undef CUDA_EMU_ATOMIC_FP
#define CUDA_EMU_SCOPED(NAME)                                                                          \
    template <class... A> inline auto NAME##_block(A... a) -> decltype(NAME(a...)) { return NAME(a...); } \
    template <class... A> inline auto NAME##_system(A... a) -> decltype(NAME(a...)) { return NAME(a...); }
CUDA_EMU_SCOPED(atomicAdd)
CUDA_EMU_SCOPED(atomicMin)
CUDA_EMU_SCOPED(atomicMax)
CUDA_EMU_SCOPED(atomicCAS)
CUDA_EMU_SCOPED(atomicExch)
CUDA_EMU_SCOPED(atomicOr)
CUDA_EMU_SCOPED(atomicAnd)
#undef CUDA_EMU_SCOPED

// ------------------------------------------------------------------ integer and bit intrinsics
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
inline int __mul24(int a, int b) { return (int)(((long long)(a << 8 >> 8)) * (b << 8 >> 8)); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    s &= 31; return s ? (hi << s) | (lo >> (32 - s)) : hi;
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    s &= 31; return s ? (lo >> s) | (hi << (32 - s)) : lo;
}
inline unsigned __sad(int a, int b, unsigned c) { return c + (unsigned)(a > b ? a - b : b - a); }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }

// CUDA's min / max overloads for the integer and floating types (mixed signedness: unsigned)
#define CUDA_EMU_MINMAX(A, B, R)                                                                       \
    inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; }                                       \
    inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
CUDA_EMU_MINMAX(int, int, int)
CUDA_EMU_MINMAX(unsigned, unsigned, unsigned)
CUDA_EMU_MINMAX(int, unsigned, unsigned)
CUDA_EMU_MINMAX(unsigned, int, unsigned)
CUDA_EMU_MINMAX(long long, long long, long long)
CUDA_EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
CUDA_EMU_MINMAX(long long, unsigned long long, unsigned long long)
CUDA_EMU_MINMAX(unsigned long long, long long, unsigned long long)
CUDA_EMU_MINMAX(int, long long, long long)
CUDA_EMU_MINMAX(long long, int, long long)
CUDA_EMU_MINMAX(long, long, long)
CUDA_EMU_MINMAX(unsigned long, unsigned long, unsigned long)
#undef CUDA_EMU_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

// ------------------------------------------------------------------ DPX (sm_90) as plain code
namespace cuda_emu {
inline int add32(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
inline int mn(int a, int b) { return a < b ? a : b; }
inline int mx(int a, int b) { return a > b ? a : b; }
inline unsigned umn(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umx(unsigned a, unsigned b) { return a > b ? a : b; }
inline int relu(int a) { return a > 0 ? a : 0; }
// packed 16-bit halves
template <class H, class F> inline unsigned pack2(unsigned a, unsigned b, unsigned c, F f) {
    unsigned r = 0;
    for (int h = 0; h < 2; ++h) {
        H x = (H)(a >> (16 * h)), y = (H)(b >> (16 * h)), z = (H)(c >> (16 * h));
        r |= ((unsigned)(unsigned short)f(x, y, z)) << (16 * h);
    }
    return r;
}
}  // namespace cuda_emu
inline int __viaddmin_s32(int a, int b, int c) { return cuda_emu::mn(cuda_emu::add32(a, b), c); }
inline int __viaddmax_s32(int a, int b, int c) { return cuda_emu::mx(cuda_emu::add32(a, b), c); }
inline int __viaddmin_s32_relu(int a, int b, int c) { return cuda_emu::relu(__viaddmin_s32(a, b, c)); }
inline int __viaddmax_s32_relu(int a, int b, int c) { return cuda_emu::relu(__viaddmax_s32(a, b, c)); }
inline unsigned __viaddmin_u32(unsigned a, unsigned b, unsigned c) { return cuda_emu::umn(a + b, c); }
inline unsigned __viaddmax_u32(unsigned a, unsigned b, unsigned c) { return cuda_emu::umx(a + b, c); }
inline int __vimin3_s32(int a, int b, int c) { return cuda_emu::mn(cuda_emu::mn(a, b), c); }
inline int __vimax3_s32(int a, int b, int c) { return cuda_emu::mx(cuda_emu::mx(a, b), c); }
inline int __vimin3_s32_relu(int a, int b, int c) { return cuda_emu::relu(__vimin3_s32(a, b, c)); }
inline int __vimax3_s32_relu(int a, int b, int c) { return cuda_emu::relu(__vimax3_s32(a, b, c)); }
inline unsigned __vimin3_u32(unsigned a, unsigned b, unsigned c) { return cuda_emu::umn(cuda_emu::umn(a, b), c); }
inline unsigned __vimax3_u32(unsigned a, unsigned b, unsigned c) { return cuda_emu::umx(cuda_emu::umx(a, b), c); }
inline int __vimin_s32_relu(int a, int b) { return cuda_emu::relu(cuda_emu::mn(a, b)); }
inline int __vimax_s32_relu(int a, int b) { return cuda_emu::relu(cuda_emu::mx(a, b)); }
inline int __vibmin_s32(int a, int b, bool* pred) { *pred = a <= b; return cuda_emu::mn(a, b); }
inline int __vibmax_s32(int a, int b, bool* pred) { *pred = a >= b; return cuda_emu::mx(a, b); }
inline unsigned __vibmin_u32(unsigned a, unsigned b, bool* pred) { *pred = a <= b; return cuda_emu::umn(a, b); }
inline unsigned __vibmax_u32(unsigned a, unsigned b, bool* pred) { *pred = a >= b; return cuda_emu::umx(a, b); }
inline unsigned __viaddmin_s16x2(unsigned a, unsigned b, unsigned c) {
    return cuda_emu::pack2<short>(a, b, c, [](short x, short y, short z) { short s = (short)(x + y); return s < z ? s : z; });
}
inline unsigned __viaddmax_s16x2(unsigned a, unsigned b, unsigned c) {
    return cuda_emu::pack2<short>(a, b, c, [](short x, short y, short z) { short s = (short)(x + y); return s > z ? s : z; });
}
inline unsigned __viaddmin_u16x2(unsigned a, unsigned b, unsigned c) {
    return cuda_emu::pack2<unsigned short>(a, b, c, [](unsigned short x, unsigned short y, unsigned short z) {
        unsigned short s = (unsigned short)(x + y); return s < z ? s : z; });
}
inline unsigned __vimin3_s16x2(unsigned a, unsigned b, unsigned c) {
    return cuda_emu::pack2<short>(a, b, c, [](short x, short y, short z) { short m = x < y ? x : y; return m < z ? m : z; });
}
inline unsigned __vimax3_s16x2(unsigned a, unsigned b, unsigned c) {
    return cuda_emu::pack2<short>(a, b, c, [](short x, short y, short z) { short m = x > y ? x : y; return m > z ? m : z; });
}

// ------------------------------------------------------------------ texture objects (point reads)
// A host texture object is the address of a Texture the loader fills (HostDevice.texture):
// tex1Dfetch over linear memory (0 outside), tex2D over a pitched 2-D array (clamped, unnormalized
// coordinates, point filtering).
typedef unsigned long long cudaTextureObject_t;
namespace cuda_emu {
struct Texture { const char* base; long long width, height, pitch, elem; };
}
template <class T> inline T tex1Dfetch(cudaTextureObject_t t, int i) {
    const cuda_emu::Texture* x = (const cuda_emu::Texture*)t;
    T r;
    if (i < 0 || (long long)i * (long long)sizeof(T) >= x->width * x->height * x->elem) { memset(&r, 0, sizeof r); return r; }
    memcpy(&r, x->base + (long long)i * sizeof(T), sizeof(T));
    return r;
}
template <class T> inline T tex2D(cudaTextureObject_t t, float fx, float fy) {
    const cuda_emu::Texture* x = (const cuda_emu::Texture*)t;
    long long ix = (long long)floorf(fx), iy = (long long)floorf(fy);
    ix = ix < 0 ? 0 : (ix >= x->width ? x->width - 1 : ix);
    iy = iy < 0 ? 0 : (iy >= x->height ? x->height - 1 : iy);
    T r;
    memcpy(&r, x->base + iy * x->pitch + ix * (long long)sizeof(T), sizeof(T));
    return r;
}
template <class T> inline T tex1D(cudaTextureObject_t t, float fx) { return tex2D<T>(t, fx, 0.5f); }

// ------------------------------------------------------------------ floating point
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
inline double __longlong_as_double(long long i) { double f; std::memcpy(&f, &i, 8); return f; }
inline long long __double_as_longlong(double f) { long long i; std::memcpy(&i, &f, 8); return i; }
inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo));
}
inline int __double2hiint(double d) { return (int)((unsigned long long)__double_as_longlong(d) >> 32); }
inline int __double2loint(double d) { return (int)(unsigned)__double_as_longlong(d); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline double __drcp_rn(double a) { return 1.0 / a; }
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __expf(float a) { return expf(a); }
inline float __exp10f(float a) { return powf(10.0f, a); }
inline float __logf(float a) { return logf(a); }
inline float __log2f(float a) { return log2f(a); }
inline float __log10f(float a) { return log10f(a); }
inline float __sinf(float a) { return sinf(a); }
inline float __cosf(float a) { return cosf(a); }
inline float __tanf(float a) { return tanf(a); }
inline float __powf(float a, float b) { return powf(a, b); }
inline void __sincosf(float a, float* s, float* c) { *s = sinf(a); *c = cosf(a); }
inline float rsqrtf(float a) { return 1.0f / sqrtf(a); }
inline double rsqrt(double a) { return 1.0 / sqrt(a); }
inline float rcbrtf(float a) { return 1.0f / cbrtf(a); }
inline float exp10f(float a) { return powf(10.0f, a); }
inline float __saturatef(float a) { return a < 0.0f ? 0.0f : (a > 1.0f ? 1.0f : a); }
inline float saturate(float a) { return __saturatef(a); }
inline float norm3df(float a, float b, float c) { return sqrtf(a * a + b * b + c * c); }
inline float rhypotf(float a, float b) { return 1.0f / hypotf(a, b); }
inline int __float2int_rn(float a) { return (int)nearbyintf(a); }
inline int __float2int_rz(float a) { return (int)a; }
inline int __float2int_rd(float a) { return (int)floorf(a); }
inline int __float2int_ru(float a) { return (int)ceilf(a); }
inline unsigned __float2uint_rn(float a) { return (unsigned)nearbyintf(a); }
inline unsigned __float2uint_rz(float a) { return (unsigned)a; }
inline int __double2int_rn(double a) { return (int)nearbyint(a); }
inline int __double2int_rz(double a) { return (int)a; }
inline float __double2float_rn(double a) { return (float)a; }
inline float __int2float_rn(int a) { return (float)a; }
inline float __uint2float_rn(unsigned a) { return (float)a; }
inline double __int2double_rn(int a) { return (double)a; }
inline float __ll2float_rn(long long a) { return (float)a; }
inline double __ll2double_rn(long long a) { return (double)a; }
inline double __ull2double_rn(unsigned long long a) { return (double)a; }
inline float __ull2float_rn(unsigned long long a) { return (float)a; }
inline long long __float2ll_rz(float a) { return (long long)a; }
inline long long __double2ll_rz(double a) { return (long long)a; }
inline unsigned long long __double2ull_rz(double a) { return (unsigned long long)a; }
inline long long clock64() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
