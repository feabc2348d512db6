// Flint interpreter (IS), many steps a launch (issue 23): one thread a cell of an ensemble (no
// neighbour coupling), its states held by the thread across a whole chunk of steps, the recorded
// states written by the kernel.  Appended to flint_is.cu (opcodes, FLINT_UNARY / FLINT_BINARY) by
// runtimes/is_loop.py, which packs the program for it (is_loop.pack):
//   code[pc]  one word an instruction, op | arg << 8 (fixed width: the next word is fetched while the
//             current one runs); besides the bytecode's opcodes, OPX_ADD2 / OPX_MUL2 (ADD 2 / MUL 2) and
//             the fused "binary operation with a leaf operand" OPX_<op>_<leaf> (op SUB DIV ADD2 MUL2,
//             leaf CONST VAR STATE): the leaf is the right operand, so tos = tos op leaf;
//   imm[pc]   the value of a CONST (the constant table's entry, in REAL), else 0.
// The stack's top two entries live in registers (tos, nos); below them st[] — a pop's load is issued
// long before its value is needed.  Every operation is the one of
// flint_exec on the same operands in the same order (n-ary sums and products left to right), the
// integrator that of flint_integrate — so the states equal IS one-launch-a-step bit for bit (NVRTC
// --fmad=false).  Defines prepended by the runtime: FLINT_LOOP_NSLOT (slots of the packed program),
// STACK, NSTATE, RK4 (0/1), and the storage
// choices FLINT_LOOP_SLOTS_SHARED / FLINT_LOOP_STACK_SHARED (per-thread columns of dynamic shared
// memory instead of local arrays).

#ifndef FLINT_LOOP_SLOTS_SHARED
#define FLINT_LOOP_SLOTS_SHARED 0
#endif
#ifndef FLINT_LOOP_STACK_SHARED
#define FLINT_LOOP_STACK_SHARED 0
#endif
#ifndef FLINT_LOOP_REGS
#define FLINT_LOOP_REGS 0
#endif

#define FLINT_LEAVES(X, OP, E) X(OP, CONST, E, cur) X(OP, VAR, E, SLOT(arg)) X(OP, STATE, E, STATEV(arg))
#define FLINT_FUSED(X) FLINT_LEAVES(X, SUB, a - b) FLINT_LEAVES(X, DIV, a / b) FLINT_LEAVES(X, ADD2, a + b) \
    FLINT_LEAVES(X, MUL2, a * b)
// a constant and a leaf, then a binary operation: push (K op leaf) or (leaf op K)
#define FLINT_PAIR(X, OP, E) X(OP, KVAR, E, cur, SLOT(arg)) X(OP, KSTATE, E, cur, STATEV(arg)) \
    X(OP, VARK, E, SLOT(arg), cur) X(OP, STATEK, E, STATEV(arg), cur)
#define FLINT_PAIRS(X) FLINT_PAIR(X, SUB, a - b) FLINT_PAIR(X, DIV, a / b) FLINT_PAIR(X, ADD2, a + b) \
    FLINT_PAIR(X, MUL2, a * b)

#if !defined(__CUDA_ARCH__)
static REAL* flint_host_cols = nullptr;         // host build: (FLINT_LOOP_NSLOT + STACK) × blockDim.x REALs
#endif

#if defined(__CUDA_ARCH__)
// the packed program in constant memory (filled by the runtime): every thread reads the same word, so
// the instruction, its operand and the stack pointer are warp-uniform values to the compiler
__constant__ int flint_ccode[FLINT_LOOP_CODE];
__constant__ REAL flint_cimm[FLINT_LOOP_CODE];
#endif

// CODE: where the packed program is read from — 0 global memory, 1 shared memory (copied by each
// block at its start), 2 constant memory
template <int CODE>
__device__ __forceinline__ void flint_is_loop_body(
    const int* __restrict__ gcode, const REAL* __restrict__ gimm, int ncode,
    const REAL* __restrict__ P, REAL* __restrict__ y, long long step0, int k, double dt, int n,
    long long every, const int* __restrict__ rec, int n_rec, const int* __restrict__ col, int n_col,
    REAL* __restrict__ out, const int* __restrict__ dslot, int ns)
{
#if defined(__CUDA_ARCH__)
    extern __shared__ double flint_shared[];
    REAL* sh_imm = (REAL*)flint_shared;
    int* sh_code = (int*)(sh_imm + ncode);
    int shared_words = 0;                       // REALs of shared memory before the per-thread columns
    if (CODE == 1) {
        for (int q = threadIdx.x; q < ncode; q += blockDim.x) { sh_code[q] = gcode[q]; sh_imm[q] = gimm[q]; }
        __syncthreads();
        shared_words = ncode + (ncode * (int)sizeof(int) + (int)sizeof(REAL) - 1) / (int)sizeof(REAL);
    }
    const int* __restrict__ code = CODE == 1 ? sh_code : (CODE == 2 ? flint_ccode : gcode);
    const REAL* __restrict__ imm = CODE == 1 ? sh_imm : (CODE == 2 ? flint_cimm : gimm);
    REAL* cols = (REAL*)flint_shared + shared_words;
    (void)cols;
#else
    const int* __restrict__ code = gcode;
    const REAL* __restrict__ imm = gimm;
    REAL* cols = flint_host_cols;               // the host build's stand-in for the shared columns
    (void)cols;
#endif
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#if FLINT_LOOP_SLOTS_SHARED
#define SLOT(q) cols[(size_t)(q) * blockDim.x + threadIdx.x]
#else
    REAL slot[FLINT_LOOP_NSLOT];
#define SLOT(q) slot[q]
#endif
#if FLINT_LOOP_STACK_SHARED
#define STK(q) cols[(size_t)(FLINT_LOOP_NSLOT * FLINT_LOOP_SLOTS_SHARED + (q)) * blockDim.x + threadIdx.x]
#else
    REAL st[STACK];
#define STK(q) st[q]
#endif
    REAL ys[NSTATE];
    for (int s = 0; s < ns; ++s) ys[s] = y[(size_t)s * n + i];
#if RK4
    REAL kq[NSTATE], acc[NSTATE];
    const double C[4] = {0.0, 0.5, 0.5, 1.0}, W[4] = {1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0};
#define STATEV(s) (kin ? ys[s] + (REAL)cdt * kq[s] : ys[s])
#else
#define STATEV(s) ys[s]
#endif
    const int c = col[i];
    long long until = every - step0 % every;    // steps to the next sample
    size_t row = 0;                             // its row in out
    for (int j = 0; j < k; ++j) {
        const long long step = step0 + j;
#if RK4
        const double t0 = (double)step * dt;
        for (int stage = 0; stage < 4; ++stage) {
            const double cdt = C[stage] * dt, t = t0 + cdt;
            const bool kin = stage > 0;
#else
        {
            const double t = (double)step * dt;
#endif
#if FLINT_LOOP_REGS
            // --- the interpreter, register form (is_regs.py): R = the slots, states first ---
            for (int s = 0; s < ns; ++s) SLOT(s) = STATEV(s);
            int pc = 0, w0 = code[0], w1 = code[1];
            REAL im = imm[0];
            for (;;) {
                const int op = w0 & 255, d = w0 >> 8, s1 = w1 & 0xFFFF, s2 = (int)((unsigned)w1 >> 16);
                const REAL cur = im;
                ++pc;
                w0 = code[2 * pc];              // the next instruction, fetched ahead (END is doubled)
                w1 = code[2 * pc + 1];
                im = imm[pc];
                const REAL a = s1 == FLINT_IMM ? cur : (s1 == FLINT_TIME ? (REAL)t : SLOT(s1 & (FLINT_LOOP_NSLOT - 1)));
                const REAL b = s2 == FLINT_IMM ? cur : (s2 == FLINT_TIME ? (REAL)t : SLOT(s2 & (FLINT_LOOP_NSLOT - 1)));
                REAL r;
                switch (op) {
                case OPR_MOV: r = a; break;
                case OPR_LOADP: r = P[(size_t)s1 * n + i]; break;
                case OP_ADD: r = a + b; break;
                case OP_MUL: r = a * b; break;
                case OP_SELECT: r = a != 0 ? b : SLOT(d); break;
#define FLINT_RCASE(OP, E) case OP_##OP: r = (E); break;
                FLINT_BINARY(FLINT_RCASE)
                FLINT_UNARY(FLINT_RCASE)
#undef FLINT_RCASE
                default: goto done;             // OP_END
                }
                SLOT(d) = r;
            }
#else
            // --- the interpreter: one pass over the packed bytecode ---
            REAL tos = 0, nos = 0;              // the stack's top two; below them STK(0 .. sp)
            int sp = 0, pc = 0;
            int w = code[0];
            REAL im = imm[0];
            for (;;) {
                const int op = w & 255, arg = w >> 8;
                const REAL cur = im;
                ++pc;
                w = code[pc];                   // the next instruction, fetched ahead (END is doubled)
                im = imm[pc];
#define FLINT_PUSH(x) { STK(sp) = nos; ++sp; nos = tos; tos = (x); }
#define FLINT_POP_NOS { --sp; nos = STK(sp); }
                switch (op) {
                case OP_CONST: FLINT_PUSH(cur) break;
                case OP_CONST_IND: FLINT_PUSH(P[(size_t)arg * n + i]) break;
                case OP_STATE: FLINT_PUSH(STATEV(arg)) break;
                case OP_TIME: FLINT_PUSH((REAL)t) break;
                case OP_VAR: FLINT_PUSH(SLOT(arg)) break;
                case OP_ASSIGN: { SLOT(arg) = tos; tos = nos; FLINT_POP_NOS break; }
                case OPX_ADD2: { tos = nos + tos; FLINT_POP_NOS break; }
                case OPX_MUL2: { tos = nos * tos; FLINT_POP_NOS break; }
                // n-ary (arg ≥ 3 operands: x0 … at STK(sp − arg + 2 …), then nos, tos), left to right
                case OP_ADD: { const int b0 = sp - arg + 2; REAL r = STK(b0);
                    for (int q = b0 + 1; q < sp; ++q) r = r + STK(q);
                    r = r + nos; tos = r + tos; sp = b0; FLINT_POP_NOS break; }
                case OP_MUL: { const int b0 = sp - arg + 2; REAL r = STK(b0);
                    for (int q = b0 + 1; q < sp; ++q) r = r * STK(q);
                    r = r * nos; tos = r * tos; sp = b0; FLINT_POP_NOS break; }
                case OP_SELECT: { const REAL cnd = STK(sp - 1); tos = cnd != 0 ? nos : tos; --sp; FLINT_POP_NOS
                    break; }
#define FLINT_LCASE2(OP, E) case OP_##OP: { const REAL a = nos, b = tos; tos = (E); FLINT_POP_NOS break; }
#define FLINT_LCASE1(OP, E) case OP_##OP: { const REAL a = tos; tos = (E); break; }
#define FLINT_LCASEF(OP, LEAF, E, V) case OPX_##OP##_##LEAF: { const REAL a = tos, b = (V); tos = (E); break; }
                FLINT_BINARY(FLINT_LCASE2)
                FLINT_UNARY(FLINT_LCASE1)
                FLINT_FUSED(FLINT_LCASEF)
#define FLINT_LCASEP(OP, KIND, E, A, B) case OPX_##OP##_##KIND: { const REAL a = (A), b = (B); FLINT_PUSH(E) break; }
                FLINT_PAIRS(FLINT_LCASEP)
#undef FLINT_LCASEP
#undef FLINT_LCASE2
#undef FLINT_LCASE1
#undef FLINT_LCASEF
                default: goto done;             // OP_END
                }
            }
#endif
        done:
            // --- the integrator, as flint_integrate: Euler, or RK4 stage `stage` ---
#if RK4
            const REAL wq = (REAL)W[stage];
            for (int s = 0; s < ns; ++s) {
                const REAL d = SLOT(dslot[s]);
                if (stage == 0) { kq[s] = d; acc[s] = wq * d; }
                else if (stage < 3) { kq[s] = d; acc[s] = acc[s] + wq * d; }
                else ys[s] = ys[s] + (REAL)dt * (acc[s] + wq * d);
            }
#else
            for (int s = 0; s < ns; ++s) ys[s] = ys[s] + (REAL)dt * SLOT(dslot[s]);
#endif
        }
        if (--until == 0) {
            until = every;
            if (c >= 0) for (int r = 0; r < n_rec; ++r) out[(row * n_rec + r) * n_col + c] = ys[rec[r]];
            ++row;
        }
    }
    for (int s = 0; s < ns; ++s) y[(size_t)s * n + i] = ys[s];
#undef SLOT
#undef STK
#undef STATEV
}

#define FLINT_LOOP_PARAMS \
    const int* __restrict__ code, const REAL* __restrict__ imm, int ncode, \
    const REAL* __restrict__ P, REAL* __restrict__ y, long long step0, int k, double dt, int n, \
    long long every, const int* __restrict__ rec, int n_rec, const int* __restrict__ col, int n_col, \
    REAL* __restrict__ out, const int* __restrict__ dslot, int ns
#define FLINT_LOOP_ARGS code, imm, ncode, P, y, step0, k, dt, n, every, rec, n_rec, col, n_col, out, dslot, ns

// the packed program in shared memory, global memory or constant memory (code/imm then unused)
extern "C" __global__ void flint_is_loop(FLINT_LOOP_PARAMS) { flint_is_loop_body<1>(FLINT_LOOP_ARGS); }
extern "C" __global__ void flint_is_loop_global(FLINT_LOOP_PARAMS) { flint_is_loop_body<0>(FLINT_LOOP_ARGS); }
extern "C" __global__ void flint_is_loop_const(FLINT_LOOP_PARAMS) { flint_is_loop_body<2>(FLINT_LOOP_ARGS); }
