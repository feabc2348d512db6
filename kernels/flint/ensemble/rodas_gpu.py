"""Launcher of the stiff ensemble kernel ``ensemble_rodas.cu`` (Rodas4; NumPy twin
:mod:`kernels.flint.ensemble.rosenbrock`) on the GPU (``cuda``) or on the host CPU (``host``: the same
CUDA source compiled by the host C++ compiler, :mod:`kernels.gpu.host` — the engines ``c`` / ``c-is``).

The source is the Dormand–Prince kernel's (``gpu.cuda_source``: tables, ``model_rhs`` / ``model_aux``,
the event machinery of ``ensemble_rk.cu``), then the Jacobian as a device function ``model_jac`` —
the Jacobian program of :mod:`.jacobian` printed by the same expression printer
(``runtimes.expr_code`` "c", translator TS) — and ``ensemble_rodas.cu``.  One thread a member.
With ``is`` the Jacobian program runs through the interpreter too and the model's tables are a kernel
argument (:func:`jac_source_is`): the source depends only on the size class, so one compiled kernel
serves every model of it (the thesis's interpreter: one binary, the model as data).
"""
from __future__ import annotations

from importlib.resources import files

import numpy as np

from ... import gpu
from ...errors import BackendUnavailable, InvalidParameter, SimulationBlowUp, Unsupported
from ..runtimes.codegen import NVRTC_OPTIONS, expr_code
from . import gpu as dp_gpu
from .history import HCAP, step_bound
from .rk import run_settings
from .rosenbrock import MAX_STEPS, StiffProblem
from ... import backend as bk
from ..sbml.core import lower_system

RODAS_SOURCE = files(__package__) / "ensemble_rodas.cu"
DEVICES = ("cuda", "host")


def jac_source(pb: StiffProblem) -> str:
    """``model_jac``: the non-zero entries of ∂f/∂y (row-major J[r·NS + c]) and ∂f/∂t, generated C."""
    p = pb.jac_prog
    used = sorted({v for (op, a, v) in p.nodes if op == "state"})
    body = [f"    for (int q = 0; q < {pb.ns * pb.ns}; ++q) J[q] = 0.0;", f"    for (int q = 0; q < {pb.ns}; ++q) T[q] = 0.0;"]
    body += [f"    const double s{s} = y[{s}];" for s in used]
    body += [f"    const double {v} = {e};" for v, e in expr_code(p, "c")]
    body += [f"    J[{r * pb.ns + c}] = v{p.slots[nm]};" for r, c, nm in pb.jac]
    body += [f"    T[{r}] = v{p.slots[nm]};" for r, nm in pb.dfdt]
    alg = list(pb.algebraic)
    mass = ", ".join(repr(float(v)) for v in pb.mass)
    dl = list(getattr(pb.core, "delayed", []))
    tab = lambda name, vals: f"static __device__ const int {name}[{max(len(vals), 1)}] = {{{', '.join(map(str, vals or [0]))}}};\n"  # noqa: E731
    delays = (f"#define RO_ND {len(dl)}\n#define RO_ND_CAP {max(len(dl), 1)}\n#define RO_HCAP {HCAP}\n"
              + tab("RO_DQ", [q for q, *_ in dl]) + tab("RO_DX", [pb.aux_index[d[1]] for d in dl])
              + tab("RO_DD", [pb.aux_index[d[2]] for d in dl]) + tab("RO_DXP", [pb.aux_index[d[3]] for d in dl]))
    return (delays + f"#define RO_MAX_STEPS {MAX_STEPS}\n#define RO_NALG {len(alg)}\n#define RO_NALG_CAP {max(len(alg), 1)}\n"
            f"static __device__ const double RO_MASS[{pb.ns}] = {{{mass}}};\n"
            f"static __device__ const int RO_ALG[{max(len(alg), 1)}] = {{{', '.join(map(str, alg or [0]))}}};\n"
            "struct JacCtx { const double* K; const double* P; int n; int i; };\n"
            "#define JAC_ARGS , const double* __restrict__ JK, const double* __restrict__ JP\n"
            "#define JAC_CTX JacCtx jc{JK, JP, n, i}\n"
            "__device__ __noinline__ void model_jac(const JacCtx& jc, double t, const double* y, double* J, double* T) {\n"
            "    const double* K = jc.K; const double* P = jc.P; const int n = jc.n, i = jc.i;"
            " (void)K; (void)P; (void)n; (void)i; (void)t;\n" + "\n".join(body) + "\n}\n")


#: IS: the tables of :func:`rodas_tables`, in this order, after the head of :func:`rodas_table`
RO_TABLES = ("RO_DQ", "RO_DX", "RO_DD", "RO_DXP", "RO_ALG", "RO_MASS", "RO_JPOS", "RO_JSLOT", "RO_TROW", "RO_TSLOT")
RO_HEAD = 5          # RO_ND, RO_NALG, the Jacobian's entries, ∂f/∂t's entries, NS


def rodas_tables(pb: StiffProblem) -> dict[str, list[int]]:
    """What the TS source prints as static arrays, as ints: the delays' indices, the algebraic rows, the
    mass (1, or 0 on algebraic rows), and where each Jacobian / ∂f/∂t entry goes and which interpreter
    slot holds it."""
    dl = list(getattr(pb.core, "delayed", []))
    p = pb.jac_prog
    return {"RO_DQ": [q for q, *_ in dl], "RO_DX": [pb.aux_index[d[1]] for d in dl],
            "RO_DD": [pb.aux_index[d[2]] for d in dl], "RO_DXP": [pb.aux_index[d[3]] for d in dl],
            "RO_ALG": list(pb.algebraic), "RO_MASS": [int(m) for m in pb.mass],
            "RO_JPOS": [r * pb.ns + c for r, c, _ in pb.jac], "RO_JSLOT": [p.slots[nm] for _, _, nm in pb.jac],
            "RO_TROW": [r for r, _ in pb.dfdt], "RO_TSLOT": [p.slots[nm] for _, nm in pb.dfdt]}


def rodas_table(pb: StiffProblem) -> np.ndarray:
    """IS: the model's Rodas4 tables as one int array (the kernel's ``c.xt``): RO_ND, RO_NALG, the number
    of Jacobian and ∂f/∂t entries, NS; then each table's offset; then the tables (:data:`RO_TABLES`)."""
    tabs = rodas_tables(pb)
    head = [len(tabs["RO_DQ"]), len(tabs["RO_ALG"]), len(tabs["RO_JPOS"]), len(tabs["RO_TROW"]), pb.ns]
    offs, body = [], []
    for k in RO_TABLES:
        offs.append(RO_HEAD + len(RO_TABLES) + len(body))
        body += tabs[k] or [0]
    return np.array(head + offs + body, dtype=np.int32)


def jac_source_is(pb: StiffProblem) -> str:
    """IS: ``model_jac`` through the bytecode interpreter, and the RO_* names read from the model's
    table (:func:`rodas_table`), so that the source depends only on capacities: one compiled kernel
    serves every model of a size class, as the interpreter's Dormand–Prince kernel does."""
    nd, nalg = len(getattr(pb.core, "delayed", [])), len(pb.algebraic)
    defs = [f"#define RO_MAX_STEPS {MAX_STEPS}", f"#define RO_HCAP {HCAP}",
            f"#define RO_ND_CAP {dp_gpu.is_cap(nd, 4)}", f"#define RO_NALG_CAP {dp_gpu.is_cap(nalg, 4)}",
            "#define RO_ND (c.xt[0])", "#define RO_NALG (c.xt[1])"]
    defs += [f"#define {k} (c.xt + c.xt[{RO_HEAD + j}])" for j, k in enumerate(RO_TABLES)]
    return "\n".join(defs) + f"""
struct JacCtx {{ const int* code; const double* K; const double* P; double* Y; const int* xt; int n; int i; }};
#define JAC_ARGS , const int* __restrict__ JC, const double* __restrict__ JK, const double* __restrict__ JP
#define JAC_CTX JacCtx jc{{JC, JK, JP, c.Y, c.xt, n, i}}
__device__ __noinline__ void model_jac(const JacCtx& jc, double t, const double* y, double* J, double* T) {{
    const int* xt = jc.xt;
    const int ns = xt[4];
    for (int q = 0; q < ns * ns; ++q) J[q] = 0.0;
    for (int q = 0; q < ns; ++q) T[q] = 0.0;
    for (int j = 0; j < ns; ++j) jc.Y[(size_t)j * jc.n + jc.i] = y[j];
    REAL slot[NSLOT];
    flint_exec(jc.code, 0, LocalSlots{{slot}}, jc.K, jc.P, jc.Y, (const REAL*)0, 0.0, t, jc.n, 0, jc.i, (const int*)0, 0);
    const int* jpos = xt + xt[{RO_HEAD + RO_TABLES.index("RO_JPOS")}];
    const int* jslot = xt + xt[{RO_HEAD + RO_TABLES.index("RO_JSLOT")}];
    const int* trow = xt + xt[{RO_HEAD + RO_TABLES.index("RO_TROW")}];
    const int* tslot = xt + xt[{RO_HEAD + RO_TABLES.index("RO_TSLOT")}];
    for (int e = 0; e < xt[2]; ++e) J[jpos[e]] = slot[jslot[e]];
    for (int e = 0; e < xt[3]; ++e) T[trow[e]] = slot[tslot[e]];
}}
"""


def cuda_source(pb: StiffProblem, flavour: str = "ts") -> str:
    """The whole source of ``flint_rodas`` for ``flavour`` ("ts" generated C, "is" interpreter)."""
    if flavour not in dp_gpu.FLAVOURS:
        raise InvalidParameter(f"flavour must be one of {', '.join(dp_gpu.FLAVOURS)}, got {flavour!r}")
    jac = jac_source(pb) if flavour == "ts" else jac_source_is(pb)
    return ("#define FLINT_NO_DOPRI_KERNEL\n" + dp_gpu.cuda_source(pb, flavour) + "\n" + jac + "\n"
            + RODAS_SOURCE.read_text(encoding="utf-8"))


def kernel_args(pb: StiffProblem, flavour: str) -> list:
    """Host arrays after ``n``: the DP kernel's model arguments (IS: with :func:`rodas_table` after its
    tables), then the Jacobian's K and P (IS: its bytecode first)."""
    p = pb.jac_prog
    JK = np.ascontiguousarray(p.consts if p.consts.size else np.zeros(1), np.float64)
    JP = np.ascontiguousarray(p.pvar_values if p.pvar_values.size else np.zeros((1, pb.n)), np.float64)
    if flavour == "ts":
        return dp_gpu.kernel_args(pb, flavour) + [JK, JP]
    return dp_gpu.kernel_args(pb, flavour, rodas_table(pb)) + [np.ascontiguousarray(p.code, np.int32), JK, JP]


LOG_CAP = 64      # event executions logged per member for ``fired``


def integrate_device(pb: StiffProblem, times, flavour: str = "ts", device: str = "cuda", rtol: float = 1e-8,
                     atol=None, hmax=None, block: int = 64, seed: int = 0, fired: list | None = None):
    """Integrate every member with ``flint_rodas`` on ``device`` ("cuda" or "host"); observables at
    ``times`` as (nt, nobs, n), as the twin :func:`~.rosenbrock.integrate`.  ``seed``: the random order
    of equal-priority events; ``fired``: a list that gets (member, t, event index) of each member's
    first LOG_CAP event executions (a member that executed more gets its first LOG_CAP)."""
    if device not in DEVICES:
        raise InvalidParameter(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "cuda":
        ok, why = bk.gpu_available()
        if not ok:
            raise BackendUnavailable(f"the Rosenbrock GPU kernel needs a GPU: {why}")
    times, atol, hmax = run_settings(times, pb.y0, atol, hmax)
    hmax = min(hmax, step_bound(pb.core)) if getattr(pb.core, "delayed", None) else hmax
    dev = gpu.device(device)
    xp = dev.xp
    kern = dev.module(cuda_source(pb, flavour), options=NVRTC_OPTIONS, system="flint", prefix="Flint").function(
        "flint_rodas", block=block, label=f"flint_rodas ({flavour.upper()})")
    n, nt, nobs = pb.n, len(times), max(len(pb.core.obs_names), 1)
    d_out = xp.full((nt, nobs, n), np.nan)
    d_status = xp.zeros(n, dtype=np.int32)
    cap = LOG_CAP if fired is not None else 0
    d_lt, d_le = xp.zeros(max(n * cap, 1)), xp.zeros(max(n * cap, 1), dtype=np.int32)
    d_ln = xp.zeros(n, dtype=np.int32)
    args = [xp.asarray(np.ascontiguousarray(pb.y0)), xp.asarray(times), np.int32(nt), np.float64(rtol),
            np.float64(atol), np.float64(hmax), d_out, d_status, np.int32(n), np.uint64(seed), np.int32(cap),
            d_lt, d_le, d_ln, xp.zeros(n * HCAP * (2 + 4 * pb.ns) if getattr(pb.core, "delayed", None) else 1)]
    args += [xp.asarray(a) for a in kernel_args(pb, flavour)]
    dev.launch(kern, ((n + block - 1) // block,), (block,), tuple(args))
    dev.synchronize()
    to_host = (lambda a: a) if device == "host" else (lambda a: a.get())
    status = np.asarray(to_host(d_status))
    src = pb.core.source
    if fired is not None:
        lt, le, ln = (np.asarray(to_host(a)) for a in (d_lt, d_le, d_ln))
        for m in range(n):
            for q in range(min(int(ln[m]), cap)):
                fired.append((m, float(lt[m * cap + q]), int(le[m * cap + q])))
    if np.any(status == 1):
        raise Unsupported(f"{src}: more than {MAX_STEPS} Rosenbrock steps")
    if np.any(status == 2):
        raise SimulationBlowUp(f"{src}: step size underflow")
    if np.any(status == 3):
        raise SimulationBlowUp(f"{src}: events keep firing")
    if np.any(status == 5):
        raise Unsupported(f"{src}: too many event instances pending at once (the kernel's queue is full)")
    if np.any(status == 7):
        raise Unsupported(f"{src}: a delay reaches further back than the last {HCAP} steps kept")
    if np.any(status == 6):
        raise InvalidParameter(f"{src}: an event delay is negative or undefined")
    return np.asarray(to_host(d_out))[:, :len(pb.core.obs_names), :]


def stiff_problem(core, n: int = 1, member_params=None) -> StiffProblem:
    """A StiffProblem whose aux has at least one watch entry (as ``gpu.gpu_problem``)."""
    dp_gpu.gpu_problem(core, 1)          # adds the dummy watch entry and checks the event count
    return StiffProblem(core, n, member_params)


def _simulate(path, times, variables, amount, concentration, flavour, device):
    core = lower_system(str(path), list(variables), set(amount), set(concentration), dae=True, delays=True)
    res = integrate_device(stiff_problem(core), np.asarray(times, dtype=float), flavour, device)
    return {v: res[:, j, 0] for j, v in enumerate(core.observables)}


def simulate_file_ts(path, times, variables, amount, concentration) -> dict:
    """Suite runtime: Rodas4 on the GPU, the model as generated CUDA C."""
    return _simulate(path, times, variables, amount, concentration, "ts", "cuda")


def simulate_file_is(path, times, variables, amount, concentration) -> dict:
    """Suite runtime: Rodas4 on the GPU, the model through the bytecode interpreter."""
    return _simulate(path, times, variables, amount, concentration, "is", "cuda")


def simulate_file_c(path, times, variables, amount, concentration) -> dict:
    """Suite runtime: the TS source of Rodas4 compiled for the host CPU (engine c)."""
    return _simulate(path, times, variables, amount, concentration, "ts", "host")


def simulate_file_c_is(path, times, variables, amount, concentration) -> dict:
    """Suite runtime: the IS source of Rodas4 compiled for the host CPU (engine c-is)."""
    return _simulate(path, times, variables, amount, concentration, "is", "host")
