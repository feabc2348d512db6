// Flint interpreter (IS).  Paper 004 (Okuyama 2013) §5.5, Fig. 5.7: a switch over opcodes on a
// per-thread stack; states are read from the current step only, new states go to a separate array
// (the thesis's nv).  Two mappings of threads to work:
//   flint_is_step   one thread per ensemble member / cell runs the whole model's bytecode; slots in
//                   the thread's local memory.
//   flint_is_phase  the thesis's mapping: one launch a phase, one block = one warp of 32 lanes, each
//                   lane runs one bytecode (index[] per lane, −1 = idle), blockIdx.x = member/cell;
//                   slots in global memory V[slot*n + member]; WARP_SUM reduces a warp-parallel sum
//                   with __shfl_xor_sync (every lane of a sum warp reaches it); flint_update (flint_common.cuh) then
//                   applies the integrator to the derivative slots.
// Unified warp bytecode (compiler option unify, thesis Fig. 5.6): ``LANE off`` before an instruction
// makes it read its operands from ltab[off + LANE_STRIDE*lane] (lane = threadIdx.x); its own operand
// words stay in the code, so every lane steps over the same words.
// The opcode #defines (OP_*), LANE_STRIDE, REAL, NSLOT and STACK are prepended by runtimes.py.


// The operations on the stack's top, one list for every interpreter loop (flint_exec here, the
// many-steps kernel of flint_is_loop.cu): X(opcode name, value from the operands a (, b)).  The math
// functions that LR-type models rarely use are out of line (__noinline__), so the dispatch loop
// stays small in the instruction cache; the results are the same functions' either way.
#if defined(__CUDA_ARCH__)
#define FLINT_NOINLINE __noinline__
#else
#define FLINT_NOINLINE                  // a host build (runtime c-is, tests) lets its compiler choose
#endif
__device__ FLINT_NOINLINE REAL flint_pow(REAL a, REAL b) { return pow(a, b); }
__device__ FLINT_NOINLINE REAL flint_rare(int op, REAL a) {
    switch (op) {
    case OP_LOG10: return log10(a);
    case OP_SIN: return sin(a);
    case OP_COS: return cos(a);
    case OP_TAN: return tan(a);
    case OP_TANH: return tanh(a);
    case OP_SINH: return sinh(a);
    case OP_COSH: return cosh(a);
    case OP_ASIN: return asin(a);
    case OP_ACOS: return acos(a);
    default: return atan(a);
    }
}
#define FLINT_BINARY(X) X(SUB, a - b) X(DIV, a / b) X(POW, flint_pow(a, b)) X(MIN, fmin(a, b)) \
    X(MAX, fmax(a, b)) X(LT, a < b ? 1.0 : 0.0) X(LE, a <= b ? 1.0 : 0.0) X(GT, a > b ? 1.0 : 0.0) \
    X(GE, a >= b ? 1.0 : 0.0) X(EQ, a == b ? 1.0 : 0.0) X(NE, a != b ? 1.0 : 0.0) \
    X(AND, (a != 0 && b != 0) ? 1.0 : 0.0) X(OR, (a != 0 || b != 0) ? 1.0 : 0.0)
#define FLINT_UNARY(X) X(NOT, a == 0 ? 1.0 : 0.0) X(NEG, -a) X(EXP, exp(a)) X(LOG, log(a)) X(SQRT, sqrt(a)) \
    X(ABS, fabs(a)) X(FLOOR, floor(a)) X(CEIL, ceil(a)) X(LOG10, flint_rare(OP_LOG10, a)) \
    X(SIN, flint_rare(OP_SIN, a)) X(COS, flint_rare(OP_COS, a)) X(TAN, flint_rare(OP_TAN, a)) \
    X(TANH, flint_rare(OP_TANH, a)) X(SINH, flint_rare(OP_SINH, a)) X(COSH, flint_rare(OP_COSH, a)) \
    X(ASIN, flint_rare(OP_ASIN, a)) X(ACOS, flint_rare(OP_ACOS, a)) X(ATAN, flint_rare(OP_ATAN, a))

struct LocalSlots {            // thread-per-cell: the thread's own slot array
    REAL* s;
    __device__ __forceinline__ REAL& operator[](int k) const { return s[k]; }
};

struct GlobalSlots {           // thread-per-expression: slots shared by the phase's threads
    REAL* V; int n; int i;
    __device__ __forceinline__ REAL& operator[](int k) const { return V[(size_t)k * n + i]; }
};

template <class Slots>
__device__ __forceinline__ void flint_exec(
    const int* __restrict__ code, int pc, Slots slot, const REAL* __restrict__ consts,
    const REAL* __restrict__ pvar, const REAL* __restrict__ y, const REAL* __restrict__ kin,
    double cdt, double t, int n, int net, int i, const int* __restrict__ ltab, int lane)
{
    REAL st[STACK];
    int sp = 0;
    for (;;) {
        int op = code[pc++];
        const int* arg = code + pc;               // operands: the code stream, or after LANE off
        if (op == OP_LANE) {                      // this lane's row of the lane table (unified warp)
            arg = ltab + code[pc] + LANE_STRIDE * lane;
            op = code[pc + 1];
            pc += 2;
        }
        switch (op) {
        case OP_CONST: st[sp++] = consts[arg[0]]; pc += 1; break;
        case OP_CONST_IND: st[sp++] = pvar[(size_t)arg[0] * n + i]; pc += 1; break;
        case OP_STATE: st[sp++] = flint_nb(y, kin, cdt, arg[0], i, n, 0); pc += 1; break;
        case OP_STATE_NB:
            st[sp++] = flint_nb(y, kin, cdt, arg[0], i + arg[1], n, net); pc += 2; break;
        case OP_TIME: st[sp++] = (REAL)t; break;
        case OP_VAR: st[sp++] = slot[arg[0]]; pc += 1; break;
        case OP_ASSIGN: slot[arg[0]] = st[--sp]; pc += 1; break;
        case OP_ADD: { int k = arg[0]; pc += 1; REAL r = st[sp - k];
            for (int q = sp - k + 1; q < sp; ++q) r = r + st[q];
            sp -= k; st[sp++] = r; break; }
        case OP_MUL: { int k = arg[0]; pc += 1; REAL r = st[sp - k];
            for (int q = sp - k + 1; q < sp; ++q) r = r * st[q];
            sp -= k; st[sp++] = r; break; }
        case OP_SELECT: sp -= 2; st[sp - 1] = st[sp - 1] != 0 ? st[sp] : st[sp + 1]; break;
        case OP_WARP_SUM: {                   // butterfly: after 5 rounds every lane holds the total
            st[sp - 1] = flint_warp_sum(st[sp - 1]); break; }
#define FLINT_CASE2(OP, E) case OP_##OP: { sp--; const REAL a = st[sp - 1], b = st[sp]; st[sp - 1] = (E); break; }
#define FLINT_CASE1(OP, E) case OP_##OP: { const REAL a = st[sp - 1]; st[sp - 1] = (E); break; }
        FLINT_BINARY(FLINT_CASE2)
        FLINT_UNARY(FLINT_CASE1)
#undef FLINT_CASE2
#undef FLINT_CASE1
        default: return;                          // OP_END
        }
    }
}

extern "C" __global__ void flint_is_step(
    const int* __restrict__ code, const int* __restrict__ index, const REAL* __restrict__ consts,
    const REAL* __restrict__ pvar, const REAL* __restrict__ y, const REAL* __restrict__ kin,
    double cdt, double t, double dt, int mode, double w,
    REAL* __restrict__ kout, REAL* __restrict__ acc, REAL* __restrict__ yout,
    const int* __restrict__ dslot, int ns, int n, int net)      // net: 0 none, 1 line, 2 ring
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    REAL slot[NSLOT];
    flint_exec(code, index ? index[i] : 0, LocalSlots{slot}, consts, pvar, y, kin, cdt, t, n, net, i,
               (const int*)0, 0);
    for (int s = 0; s < ns; ++s)
        flint_integrate(slot[dslot[s]], (size_t)s * n + i, y, dt, mode, w, kout, acc, yout);
}

// One phase, thesis mapping: grid (n members, warps of the phase), block 32.
extern "C" __global__ void flint_is_phase(
    const int* __restrict__ code, const int* __restrict__ index, int lane0, const REAL* __restrict__ consts,
    const REAL* __restrict__ pvar, const REAL* __restrict__ y, const REAL* __restrict__ kin,
    double cdt, double t, REAL* V, int n, int net, const int* __restrict__ ltab)
{
    const int i = blockIdx.x;
    const int pc = index[lane0 + blockIdx.y * 32 + threadIdx.x];
    if (pc < 0) return;                          // idle lane: never part of a sum warp
    flint_exec(code, pc, GlobalSlots{V, n, i}, consts, pvar, y, kin, cdt, t, n, net, i, ltab, (int)threadIdx.x);
}

