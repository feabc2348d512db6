// Min-plus arithmetic shared by every Floyd-Warshall kernel (papers 002 and 004 ch. 4).
//
// One update of the FW family is D(i,j) <- min(D(i,j), D(i,k) + D(k,j)).  Element types:
//   float : "no path" is +inf (inf + x = inf);
//   int   : "no path" is FW_INT_INF = 2^30 - 1, so INF + INF and INF + any admissible path length
//           (|length| < 2^28, checked on the host) stay inside int32; the host maps values >= 2^29
//           back to "no path".
// OP (int only): 0 = plain min(acc, a + b) (nvcc fuses it into one VIADDMNMX on sm_90),
//                1 = Hopper's DPX intrinsic __viaddmin_s32(a, b, acc) written explicitly.
// Predecessors (PRED kernels): pred(i,j) = the vertex before j on the path; an update through k
// takes pred(k,j), and only on a strict improvement (a tie could point j at itself through k = j).
//
// The same file compiles for the host (tests: kernels/hostcc.CUDA_HOST_PRELUDE plus the
// emulation in tests/fw_cuda_emu.py), which defines the CUDA names used here.
#pragma once

#define FW_INT_INF 0x3FFFFFFF

template <typename T> struct FwInf;
template <> struct FwInf<float> {
    static __device__ __forceinline__ float get() { return __int_as_float(0x7f800000); }
};
template <> struct FwInf<int> {
    static __device__ __forceinline__ int get() { return FW_INT_INF; }
};

// acc <- min(acc, a + b)
template <typename T, int OP> struct MinPlus;
template <> struct MinPlus<float, 0> {
    static __device__ __forceinline__ float relax(float acc, float a, float b) { return fminf(acc, a + b); }
};
template <> struct MinPlus<int, 0> {
    static __device__ __forceinline__ int relax(int acc, int a, int b) { return min(acc, a + b); }
};
template <> struct MinPlus<int, 1> {
    static __device__ __forceinline__ int relax(int acc, int a, int b) { return __viaddmin_s32(a, b, acc); }
};

// acc <- a + b and p <- pb where a + b < acc (strictly)
template <typename T>
__device__ __forceinline__ void mp_relax_pred(T& acc, int& p, T a, T b, int pb)
{
    const T s = a + b;
    if (s < acc) { acc = s; p = pb; }
}

// Four consecutive elements moved as one 16-byte access.
template <typename T> struct Vec4;
template <> struct Vec4<float> { typedef float4 type; };
template <> struct Vec4<int> { typedef int4 type; };
