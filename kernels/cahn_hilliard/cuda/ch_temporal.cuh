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
// (ChWmStep and the march itself, ch_wmarch2d_run, are in ch_regmarch.cuh: the one-step kernel is KS = 1.)
template <class T, int BC, int KS, int WPB, int PD, int MINB>
__global__ void __launch_bounds__(32 * WPB, MINB)
ch_fused_wmarch2d_tb(const T* __restrict__ src, T* __restrict__ out, int nx, int ny, int chunk, int vec,
                     T c1, T c2, T m, T b, T u, T K, T idx2, T bval) {
    ch_wmarch2d_run<T, BC, KS, WPB, PD>(src, out, nx, ny, chunk, vec, c1, c2, m, b, u, K, idx2, bval);
}

// ---- E, 3D, temporal blocking of the register z-march (ours): KS RK2 steps per launch.
// ch_fused_zreg3d with its per-group z windows repeated KS times (ChZrStep): step s takes the φˢ
// planes step s−1 puts out (4 planes behind its input) and puts out φˢ⁺¹.  The frame is the TX×TY
// output tile with a 4·KS halo; at the start of every march step each step stores its four centre
// planes (φ, μ, φ*, μ* computed the march step before) into one of two buffer sets of 4·KS planes in
// dynamic shared memory, one barrier, then every step computes from registers and that set, exactly
// as ch_fused_zreg3d (ch_nsum3dv, ch_mu; bit for bit KS single steps).
// (ChZrStep and the march itself, ch_zreg3d_run, are in ch_regmarch.cuh: the one-step kernel is KS = 1.)
template <class T, int BC, int KS, int TX, int TY, int NT, int MINB, int PD, int VW>
__global__ void __launch_bounds__(NT, MINB)
ch_fused_zreg3d_tb(const T* __restrict__ src, T* __restrict__ out, int nx, int ny, int nz, int chunk, int vec,
                   T c1, T c2, T m, T b, T u, T K, T idx2, T bval) {
    extern __shared__ __align__(16) unsigned char ch_smem_raw[];
    ch_zreg3d_run<T, BC, KS, TX, TY, NT, PD, VW>(reinterpret_cast<T*>(ch_smem_raw), src, out, nx, ny, nz, chunk,
                                                 vec, c1, c2, m, b, u, K, idx2, bval);
}
