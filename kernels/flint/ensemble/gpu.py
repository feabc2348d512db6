"""GPU runtimes IS and TS of the adaptive ensemble integrator (``ensemble_rk.cu``; NumPy twin
:mod:`kernels.flint.ensemble.rk`).

One CUDA thread integrates one ensemble member with Dormand–Prince 5(4), dense output and events
by root finding; each member keeps its own queue of pending event instances (delays, persistence,
priorities, seeded random order of equal priorities, t0 firing, trigger-time values: the rules of
:mod:`.rk`).  The model enters as two device functions, ``model_rhs`` and ``model_aux``:
  * TS (translator): the compiled programs printed as C statements by ``runtimes.expr_code`` —
    the same printer as the fixed-step TS kernels;
  * IS (interpreter): the project's bytecode interpreter ``flint_exec`` (``flint_is.cu``), run on the
    right-hand-side program and on the aux program (watch, gaps, event values, observables).
Sources are built here and compiled with NVRTC through CuPy (``--fmad=false``) on the GPU, or by the
host C++ compiler through :mod:`kernels.gpu.host` (engines ``c`` = TS, ``c-is`` = IS: the same
source run on the CPU, :func:`integrate_host`, :func:`simulate_file_c`, :func:`simulate_file_c_is`).
"""
from __future__ import annotations

from importlib.resources import files

import numpy as np

from ... import gpu
from ...errors import BackendUnavailable, InvalidParameter, SimulationBlowUp, Unsupported
from .rk import M64, MAX_EVENTS_AT_ONCE, MAX_STEPS, Problem, queue_capacity, run_settings
from ..runtimes.codegen import NVRTC_OPTIONS, expr_code, interpreter_source
from ... import backend as bk
from ..expr import const
from ..sbml.core import lower_system

DOPRI_SOURCE = files(__package__) / "ensemble_rk.cu"     # package data (importlib.resources)
FLAVOURS = ("ts", "is")
MAX_GPU_EVENTS = 256     # the kernel's event tables and loops are sized at compile time
FIRED_LOG = 64           # event executions kept per member when integrate_gpu(fired=...) asks for them


def _arr(name: str, vals) -> str:
    vals = list(vals) or [-1]
    return f"static __device__ const int {name}[{len(vals)}] = {{{', '.join(str(int(v)) for v in vals)}}};"


CONSTS = f"#define MAX_STEPS {MAX_STEPS}\n#define MAX_EVENTS_AT_ONCE {MAX_EVENTS_AT_ONCE}"
SIZES = ("NS", "NW", "NE", "NE1", "NAUX", "NOBS", "MAXA", "HW")
TABLES = ("W_IDX", "G_IDX", "O_IDX", "EV_NA", "EV_VAL", "EV_CONC", "EV_TGT", "EV_PRIO", "EV_PERS", "EV_INIT",
          "EV_UVFTT", "EV_DELAY")


def layout(pb: Problem) -> tuple[dict, dict]:
    """(sizes, tables): the kernel's sizes (``SIZES``) and index tables (``TABLES``; aux output
    indices of watch, gaps, observables and event parts, −1 = none), as plain ints."""
    core, ix = pb.core, pb.aux_index
    if not core.watch:        # no watch entries: one constant-false entry (aux index NAUX_FALSE)
        raise Unsupported("internal: a model without watch entries needs the dummy entry from gpu_problem()")
    ev = core.events
    maxa = max([len(e.values) for e in ev] + [1])
    sizes = dict(NS=pb.ns, NW=max(len(core.watch), 1), NE=len(ev), NE1=max(len(ev), 1), NAUX=max(len(ix), 1),
                 NOBS=max(len(core.obs_names), 1), MAXA=maxa, HW=int(core.watch != ["w_none"]))
    pad = lambda rows: [x for r in rows for x in (list(r) + [-1] * (maxa - len(r)))] or [-1] * maxa  # noqa: E731
    tabs = dict(W_IDX=[ix[w] for w in core.watch], G_IDX=[ix[g] if g else -1 for g in core.gaps],
                O_IDX=[ix[o] for o in core.obs_names], EV_NA=[len(e.values) for e in ev],
                EV_VAL=pad([[ix[v] for v in e.values] for e in ev]),
                EV_CONC=pad([[ix[v] if v else -1 for v in e.conc] for e in ev]),
                EV_TGT=pad([e.targets for e in ev]), EV_PRIO=[ix[e.priority] if e.priority else -1 for e in ev],
                EV_PERS=[int(e.persistent) for e in ev], EV_INIT=[int(e.initial_value) for e in ev],
                EV_UVFTT=[int(e.use_trigger_time_values) for e in ev],
                EV_DELAY=[ix[e.delay] if e.delay else -1 for e in ev])
    return sizes, {k: [int(v) for v in (tabs[k] or [-1])] for k in TABLES}


def max_values(pb: Problem) -> int:
    """The most assignments of an event with useValuesFromTriggerTime (≥ 1): the values a pending
    instance keeps (the kernel's MAXV_CAP)."""
    return max([len(e.values) for e in pb.core.events if e.use_trigger_time_values] + [1])


def tables(pb: Problem) -> str:
    """TS: sizes as constants (capacities equal to them) and the index tables as static arrays."""
    sizes, tabs = layout(pb)
    lines = [f"#define {k} {v}" for k, v in sizes.items()]
    lines += [f"#define {k}_CAP {k}" for k in ("NS", "NW", "NE1", "NAUX", "MAXA")]
    lines.append(f"#define MAXV_CAP {max_values(pb)}\n#define MAXP {queue_capacity(pb.core)}")
    lines += [CONSTS] + [_arr(k, v) for k, v in tabs.items()]
    return "\n".join(lines)


def is_cap(x: int, lo: int = 4) -> int:
    """The next power of two ≥ x (at least ``lo``): the IS kernel's size classes."""
    return max(lo, 1 << (max(int(x), 1) - 1).bit_length())


def is_caps(pb: Problem) -> dict:
    """The IS kernel's compile-time capacities for ``pb`` (powers of two, so that models share kernels)."""
    sizes, _ = layout(pb)
    progs = [pb.prog, pb.aux_prog] + ([pb.jac_prog] if getattr(pb, "jac_prog", None) is not None else [])
    caps = {f"{k}_CAP": is_cap(sizes[k], lo) for k, lo in (("NS", 8), ("NW", 8), ("NE1", 8), ("NAUX", 16))}
    caps["MAXA_CAP"] = is_cap(sizes["MAXA"], 4)
    caps["MAXV_CAP"] = is_cap(max_values(pb), 4)
    caps["MAXP"] = is_cap(queue_capacity(pb.core), 64)
    caps["NSLOT"] = is_cap(max([g.n_slots for g in progs] + [1]), 32)
    caps["STACK"] = is_cap(max([g.stack_depth for g in progs] + [2]), 16)
    return caps


def is_table(pb: Problem) -> np.ndarray:
    """IS: one int32 array — the sizes (in ``SIZES`` order), then every table (in ``TABLES`` order)."""
    sizes, tabs = layout(pb)
    return np.array([sizes[k] for k in SIZES] + [x for k in TABLES for x in tabs[k]], dtype=np.int32)


def _c_body(prog, outs: list[str], target: str) -> str:
    used = sorted({v for (op, a, v) in prog.nodes if op == "state"})
    body = [f"    const double s{s} = y[{s}];" for s in used]
    body += [f"    const double {v} = {e};" for v, e in expr_code(prog, "c")]
    body += [f"    {target}[{j}] = {o};" for j, o in enumerate(outs)]
    return "\n".join(body)


def ts_model_source(pb: Problem) -> str:
    """model_rhs / model_aux as generated C (translator TS)."""
    p, q = pb.prog, pb.aux_prog
    return f"""struct Ctx {{ const double* K; const double* P; const double* AK; const double* AP; int n; int i; }};
#define MODEL_ARGS , const double* __restrict__ K, const double* __restrict__ P, const double* __restrict__ AK, const double* __restrict__ AP
#define MODEL_CTX Ctx c{{K, P, AK, AP, n, i}}
__device__ __noinline__ void model_rhs(const Ctx& c, double t, const double* y, double* dy) {{
    const double* K = c.K; const double* P = c.P; const int n = c.n, i = c.i; (void)K; (void)P; (void)n; (void)i; (void)t;
{_c_body(p, [f"v{d}" for d in p.deriv_slots], "dy")}
}}
__device__ __noinline__ void model_aux(const Ctx& c, double t, const double* y, double* a) {{
    const double* K = c.AK; const double* P = c.AP; const int n = c.n, i = c.i; (void)K; (void)P; (void)n; (void)i; (void)t;
{_c_body(q, [f"v{q.slots[nm]}" for nm in pb.aux_index], "a")}
}}
"""


def is_model_source(pb: Problem) -> str:
    """model_rhs / model_aux through the bytecode interpreter flint_exec (interpreter IS).  The source
    depends only on :func:`is_caps` — sizes, tables, bytecode and constants are kernel arguments — so
    one compiled kernel serves every model of a size class (the thesis's interpreter: one binary,
    the model as data).  The interpreter comes from ``runtimes.interpreter_source``."""
    caps = is_caps(pb)
    defs = [f"#define {k} {v}" for k, v in caps.items()] + [CONSTS]
    defs += [f"#define {k} (c.{k.lower()})" for k in SIZES + TABLES]
    fields = " ".join(f"int {k.lower()};" for k in SIZES) + " " + " ".join(f"const int* {k.lower()};" for k in TABLES)
    setup = "\n".join(f"    c.{k.lower()} = tab[{j}];" for j, k in enumerate(SIZES))
    offs = {"W_IDX": "c.nw", "G_IDX": "c.nw", "O_IDX": "c.nobs", "EV_NA": "c.ne1", "EV_VAL": "c.ne1 * c.maxa",
            "EV_CONC": "c.ne1 * c.maxa", "EV_TGT": "c.ne1 * c.maxa", "EV_PRIO": "c.ne1", "EV_PERS": "c.ne1",
            "EV_INIT": "c.ne1", "EV_UVFTT": "c.ne1", "EV_DELAY": "c.ne1"}
    setup += f"\n    const int* p = tab + {len(SIZES)};"
    setup += "".join(f"\n    c.{k.lower()} = p; p += {offs[k]};" for k in TABLES)
    setup += "\n    c.xt = p;      // what follows the tables: a launcher's own table (the Rodas4 kernel's)"
    return interpreter_source("double", defs) + f"""
struct Ctx {{ const int* code; const double* K; const double* P; const int* dslot;
             const int* acode; const double* AK; const double* AP; const int* aslot; double* Y; int n; int i;
             {fields} const int* xt; }};
__device__ Ctx is_ctx(const int* code, const double* K, const double* P, const int* dslot, const int* acode,
                      const double* AK, const double* AP, const int* aslot, double* Y, const int* tab, int n, int i) {{
    Ctx c{{code, K, P, dslot, acode, AK, AP, aslot, Y, n, i}};
{setup}
    return c;
}}
#define MODEL_ARGS , const int* __restrict__ code, const double* __restrict__ K, const double* __restrict__ P, \\
    const int* __restrict__ dslot, const int* __restrict__ acode, const double* __restrict__ AK, \\
    const double* __restrict__ AP, const int* __restrict__ aslot, double* __restrict__ Y, const int* __restrict__ tab
#define MODEL_CTX Ctx c = is_ctx(code, K, P, dslot, acode, AK, AP, aslot, Y, tab, n, i)
// the interpreter reads states as y[s*n + i]: the thread's stage state goes to its column of Y
__device__ __noinline__ void model_rhs(const Ctx& c, double t, const double* y, double* dy) {{
    for (int j = 0; j < NS; ++j) c.Y[(size_t)j * c.n + c.i] = y[j];
    REAL slot[NSLOT];
    flint_exec(c.code, 0, LocalSlots{{slot}}, c.K, c.P, c.Y, (const REAL*)0, 0.0, t, c.n, 0, c.i, (const int*)0, 0);
    for (int j = 0; j < NS; ++j) dy[j] = slot[c.dslot[j]];
}}
__device__ __noinline__ void model_aux(const Ctx& c, double t, const double* y, double* a) {{
    for (int j = 0; j < NS; ++j) c.Y[(size_t)j * c.n + c.i] = y[j];
    REAL slot[NSLOT];
    flint_exec(c.acode, 0, LocalSlots{{slot}}, c.AK, c.AP, c.Y, (const REAL*)0, 0.0, t, c.n, 0, c.i, (const int*)0, 0);
    for (int j = 0; j < NAUX; ++j) a[j] = slot[c.aslot[j]];
}}
"""


def cuda_source(pb: Problem, flavour: str) -> str:
    """The whole kernel source for ``flavour`` ("ts": model-specific; "is": per size class)."""
    head = tables(pb) if flavour == "ts" else ""
    model = ts_model_source(pb) if flavour == "ts" else is_model_source(pb)
    return "// generated by kernels/flint/ensemble/gpu.py\n" + head + "\n" + model + "\n" + DOPRI_SOURCE.read_text(encoding="utf-8")


def kernel_args(pb: Problem, flavour: str, extra_table=()) -> list:
    """Host arrays of the model arguments (after ``n``), in MODEL_ARGS order; IS: ``extra_table`` (ints)
    follows the tables in ``tab`` (the kernel's ``c.xt``)."""
    p, q = pb.prog, pb.aux_prog
    n = pb.n

    def pv(prog):
        return np.ascontiguousarray(prog.pvar_values if prog.pvar_values.size else np.zeros((1, n)), dtype=np.float64)
    K, AK = np.ascontiguousarray(p.consts, np.float64), np.ascontiguousarray(q.consts, np.float64)
    if K.size == 0:
        K = np.zeros(1)
    if AK.size == 0:
        AK = np.zeros(1)
    if flavour == "ts":
        return [K, pv(p), AK, pv(q)]
    return [np.ascontiguousarray(p.code, np.int32), K, pv(p), np.array(p.deriv_slots, np.int32),
            np.ascontiguousarray(q.code, np.int32), AK, pv(q),
            np.array([q.slots[nm] for nm in pb.aux_index], np.int32), np.zeros((pb.ns, n)),
            np.concatenate([is_table(pb), np.asarray(extra_table, dtype=np.int32)])]


def _to_host(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)      # CuPy array → NumPy; NumPy unchanged


def integrate_gpu(pb: Problem, times, flavour: str = "ts", rtol: float = 1e-8, atol=None, hmax=None,
                  block: int = 64, seed: int = 0, fired: list | None = None, device: str = "cuda",
                  threads: int | None = None, stiff_test: bool = False):
    """Integrate every member with the kernel; observables at ``times`` as (nt, nobs, n) (as the twin).

    ``device``: "cuda" (the GPU, through CuPy) or "host" (the same source compiled for the CPU by
    :mod:`kernels.gpu.host`, ``threads`` OS threads, default the cores: engines ``c`` / ``c-is``).
    ``seed``: the random order of events of equal priority (member m's stream, as the twin's).
    ``fired``: a list to which the event executions are appended as (member, t, event index), member
    by member in execution order — at most FIRED_LOG per member (the kernel's log; later ones are
    counted, not kept).  ``stiff_test``: DOPRI5's stiffness test as the twin's
    (:func:`kernels.flint.ensemble.rk.integrate`): a stiff member stops the run with Unsupported."""
    times, atol, hmax = run_settings(times, pb.y0, atol, hmax)
    if device == "cuda":
        ok, why = bk.gpu_available()
        if not ok:
            raise BackendUnavailable(f"runtime {flavour} needs a GPU: {why}")
        dev = gpu.device("cuda")
    else:
        dev = gpu.device("host") if threads is None else gpu.device_class("host")(workers=threads)
    xp = dev.xp
    kern = dev.module(cuda_source(pb, flavour), options=NVRTC_OPTIONS, system="flint", prefix="Flint").function(
        "flint_dopri", block=block, label=f"flint_dopri ({flavour.upper()})")
    n, nt, nobs = pb.n, len(times), max(len(pb.core.obs_names), 1)
    cap = FIRED_LOG if fired is not None else 0
    d_out = xp.full((nt, nobs, n), np.nan)
    d_status = xp.zeros(n, dtype=np.int32)
    logs = [xp.zeros(max(n * cap, 1)), xp.zeros(max(n * cap, 1), dtype=np.int32), xp.zeros(n, dtype=np.int32)]
    args = [xp.asarray(np.ascontiguousarray(pb.y0)), xp.asarray(times), np.int32(nt), np.float64(rtol),
            np.float64(atol), np.float64(hmax), d_out, d_status, np.int32(n), np.uint64(int(seed) & M64),
            np.int32(cap), *logs, np.int32(bool(stiff_test))]
    args += [xp.asarray(a) for a in kernel_args(pb, flavour)]
    dev.launch(kern, ((n + block - 1) // block,), (block,), args)
    status = _to_host(d_status)
    src = pb.core.source
    if np.any(status == 1):
        raise Unsupported(f"{src}: stiff (more than {MAX_STEPS} steps" + (", or DOPRI5's stiffness test" if stiff_test
                          else "") + "): the explicit Dormand–Prince integrator refuses it")
    if np.any(status == 2):
        raise SimulationBlowUp(f"{src}: step size underflow")
    if np.any(status == 5):
        q = queue_capacity(pb.core) if flavour == "ts" else is_caps(pb)["MAXP"]
        raise Unsupported(f"{src}: more than {q} event instances pending at once (the kernel's queue holds {q})")
    if np.any(status == 6):
        raise InvalidParameter(f"{src}: an event delay is negative or undefined at its trigger time")
    if np.any(status == 3):
        raise SimulationBlowUp(f"{src}: events keep firing")
    if fired is not None:
        lt, le, ln = (_to_host(a) for a in logs)
        for m in range(n):
            for j in range(min(int(ln[m]), cap)):
                fired.append((m, float(lt[m * cap + j]), int(le[m * cap + j])))
    return _to_host(d_out)[:, :len(pb.core.obs_names), :]


def integrate_host(pb: Problem, times, flavour: str = "ts", threads: int | None = None, **kw):
    """:func:`integrate_gpu` on the host build (engine ``c`` for "ts", ``c-is`` for "is")."""
    return integrate_gpu(pb, times, flavour, device="host", threads=threads, **kw)


def gpu_problem(core, n: int = 1, member_params=None) -> Problem:
    """A Problem whose aux has at least one watch entry (the kernel's arrays are never empty)."""
    if len(core.events) > MAX_GPU_EVENTS:
        raise Unsupported(f"{core.source}: {len(core.events)} events (the GPU kernel holds at most "
                          f"{MAX_GPU_EVENTS}; use runtime cpu)")
    if not core.watch:
        core.aux.assigns["w_none"] = const(0.0)
        core.watch.append("w_none")
        core.gaps.append(None)
    return Problem(core, n, member_params)


def _simulate(path, times, variables, amount, concentration, flavour, device="cuda"):
    core = lower_system(str(path), list(variables), set(amount), set(concentration))
    res = integrate_gpu(gpu_problem(core), np.asarray(times, dtype=float), flavour, device=device,
                        threads=None if device == "cuda" else 1)
    return {v: res[:, j, 0] for j, v in enumerate(core.observables)}


def simulate_file_ts(path, times, variables, amount, concentration) -> dict:
    """Suite runtime "ts": the generated-C flavour of the adaptive kernel."""
    return _simulate(path, times, variables, amount, concentration, "ts")


def simulate_file_is(path, times, variables, amount, concentration) -> dict:
    """Suite runtime "is": the bytecode-interpreter flavour of the adaptive kernel."""
    return _simulate(path, times, variables, amount, concentration, "is")


def simulate_file_c(path, times, variables, amount, concentration) -> dict:
    """Suite engine "c": the TS kernel source compiled for the host (one member, one thread)."""
    return _simulate(path, times, variables, amount, concentration, "ts", "host")


def simulate_file_c_is(path, times, variables, amount, concentration) -> dict:
    """Suite engine "c-is": the IS kernel source compiled for the host (one member, one thread)."""
    return _simulate(path, times, variables, amount, concentration, "is", "host")
