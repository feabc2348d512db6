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
        case OP_SUB: sp--; st[sp - 1] = st[sp - 1] - st[sp]; break;
        case OP_DIV: sp--; st[sp - 1] = st[sp - 1] / st[sp]; break;
        case OP_POW: sp--; st[sp - 1] = pow(st[sp - 1], st[sp]); break;
        case OP_MIN: sp--; st[sp - 1] = fmin(st[sp - 1], st[sp]); break;
        case OP_MAX: sp--; st[sp - 1] = fmax(st[sp - 1], st[sp]); break;
        case OP_LT: sp--; st[sp - 1] = st[sp - 1] < st[sp] ? 1.0 : 0.0; break;
        case OP_LE: sp--; st[sp - 1] = st[sp - 1] <= st[sp] ? 1.0 : 0.0; break;
        case OP_GT: sp--; st[sp - 1] = st[sp - 1] > st[sp] ? 1.0 : 0.0; break;
        case OP_GE: sp--; st[sp - 1] = st[sp - 1] >= st[sp] ? 1.0 : 0.0; break;
        case OP_EQ: sp--; st[sp - 1] = st[sp - 1] == st[sp] ? 1.0 : 0.0; break;
        case OP_NE: sp--; st[sp - 1] = st[sp - 1] != st[sp] ? 1.0 : 0.0; break;
        case OP_AND: sp--; st[sp - 1] = (st[sp - 1] != 0 && st[sp] != 0) ? 1.0 : 0.0; break;
        case OP_OR: sp--; st[sp - 1] = (st[sp - 1] != 0 || st[sp] != 0) ? 1.0 : 0.0; break;
        case OP_NOT: st[sp - 1] = st[sp - 1] == 0 ? 1.0 : 0.0; break;
        case OP_SELECT: sp -= 2; st[sp - 1] = st[sp - 1] != 0 ? st[sp] : st[sp + 1]; break;
        case OP_WARP_SUM: {                   // butterfly: after 5 rounds every lane holds the total
            st[sp - 1] = flint_warp_sum(st[sp - 1]); break; }
        case OP_NEG: st[sp - 1] = -st[sp - 1]; break;
        case OP_EXP: st[sp - 1] = exp(st[sp - 1]); break;
        case OP_LOG: st[sp - 1] = log(st[sp - 1]); break;
        case OP_LOG10: st[sp - 1] = log10(st[sp - 1]); break;
        case OP_SQRT: st[sp - 1] = sqrt(st[sp - 1]); break;
        case OP_ABS: st[sp - 1] = fabs(st[sp - 1]); break;
        case OP_FLOOR: st[sp - 1] = floor(st[sp - 1]); break;
        case OP_CEIL: st[sp - 1] = ceil(st[sp - 1]); break;
        case OP_SIN: st[sp - 1] = sin(st[sp - 1]); break;
        case OP_COS: st[sp - 1] = cos(st[sp - 1]); break;
        case OP_TAN: st[sp - 1] = tan(st[sp - 1]); break;
        case OP_TANH: st[sp - 1] = tanh(st[sp - 1]); break;
        case OP_SINH: st[sp - 1] = sinh(st[sp - 1]); break;
        case OP_COSH: st[sp - 1] = cosh(st[sp - 1]); break;
        case OP_ASIN: st[sp - 1] = asin(st[sp - 1]); break;
        case OP_ACOS: st[sp - 1] = acos(st[sp - 1]); break;
        case OP_ATAN: st[sp - 1] = atan(st[sp - 1]); break;
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

