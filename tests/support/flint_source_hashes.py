"""SHA-256 of every source the Flint wing generates, for a fixed set of shipped models (no GPU needed).

The models printed back as native text, SBML and CellML; the NumPy code, the translator's CUDA C (thread per cell and thread per expression, with its lane
table), the interpreter's CUDA source and bytecode (thread per cell and the expression layout), the
host C translation units of runtimes ``c`` / ``c-is``, the adaptive ensemble kernel (TS and IS, with
the IS table) and its NumPy twin's code, and the SBML reference simulator's generated Python — all
are strings or arrays made on the host, so they can be hashed anywhere.  A refactor that must not
change behaviour must leave every hash as it was (``tests/flint/test_flint_source_hashes.py`` checks them
against ``tests/data/flint_source_hashes.json``).

    python tests/support/flint_source_hashes.py                 # print key  sha256
    python tests/support/flint_source_hashes.py --write FILE    # also write them as JSON

The SBML reference simulator orders some generated lines by set iteration, which follows Python's
string hashing: the script re-runs itself with ``PYTHONHASHSEED=0`` so the hashes are reproducible.
The SBML Test Suite cases are hashed when the suite is found (``GSE_SBML_SUITE`` or
../shared/sbml-test-suite).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: shipped models compiled by every fixed-step case
MODELS = ("luo_rudy_1991.flint", "luo_rudy_1991.xml", "luo_rudy_1991.cellml", "rybak_2006.flint",
          "wang_buzsaki_1996.flint", "mix.flint", "lr_ring_80.flint")
#: shipped SBML models run through the SBML reference simulator and the adaptive ensemble lowering
SBML_MODELS = ("luo_rudy_1991.xml", "rybak_2006.xml")
#: SBML Test Suite cases (hashed when ../shared/sbml-test-suite is present)
SUITE_CASES = ("00001", "00026", "00041", "00068", "00097", "00172", "00928", "00954", "00995", "01124")


_MODELS: dict = {}


def _model(name: str):
    """``load_model(name)``, parsed once per run (the fixed-step cases and the printed-back texts
    use the same seven models; parsing them again was a sizeable part of the check's time).  The hashes of
    every case are unchanged: nothing here modifies a model (``compile_model`` and the writers
    read it)."""
    if name not in _MODELS:
        from kernels.flint import load_model
        _MODELS[name] = load_model(name)
    return _MODELS[name]


def _h(x) -> str:
    if isinstance(x, np.ndarray):
        x = np.ascontiguousarray(x)
        return hashlib.sha256(str(x.dtype).encode() + str(x.shape).encode() + x.tobytes()).hexdigest()
    if isinstance(x, (list, tuple)):
        return _h(np.asarray(x))
    return hashlib.sha256(x.encode("utf-8")).hexdigest()


@contextlib.contextmanager
def _capture_exec(module, sink: list):
    """Record every source ``module`` passes to ``exec`` (its generated NumPy/Python code)."""
    import builtins

    def rec(src, *a, **k):
        sink.append(src if isinstance(src, str) else repr(src))
        return builtins.exec(src, *a, **k)
    module.exec = rec
    try:
        yield sink
    finally:
        del module.exec


def _fixed_step(out: dict) -> None:
    from kernels.flint import CompileOptions, Network, compile_model
    from kernels.flint.runtimes.codegen import is_source, loopable, numpy_source, ts_loop_source, ts_phase_build, ts_source
    from kernels.flint.runtimes.coupled import coupled_source
    from kernels.flint.runtimes.host_c import host_source
    from kernels.flint.runtimes.is_loop import is_loop_source, pack, packable
    from kernels.flint.runtimes.is_regs import pack_registers
    cases = []
    for name in MODELS:
        m = _model(name)
        cases.append((f"{name}/n1", m, 1, None, None, None))
        p = next(iter(m.params))
        cases.append((f"{name}/n4-vary", m, 4, {p: np.linspace(0.9, 1.1, 4) * (m.params[p] or 1.0)}, None, None))
        cases.append((f"{name}/n4-vary-nounify", m, 4, {p: np.linspace(0.9, 1.1, 4) * (m.params[p] or 1.0)}, None,
                      CompileOptions(unify=False)))
    lr = _model("luo_rudy_1991.flint")
    cases.append(("luo_rudy_1991.flint/ring6", lr, 6, None, Network("ring", 6, "V", 1.0), None))
    cases.append(("luo_rudy_1991.flint/line5", lr, 5, None, Network("line", 5, "V", 0.5), None))
    cases.append(("luo_rudy_1991.flint/n1-nothing", lr, 1, None, None,
                  CompileOptions(cse=False, fold=False, nary=False, merge=False, reorder=False, remap=False)))
    cases.append(("luo_rudy_1991.flint/n1-no-redundant-sum", lr, 1, None, None,
                  CompileOptions(redundant=False, sum=False, unify=False)))
    for key, m, n, member, net, opts in cases:
        prog = compile_model(m, n, member, net, opts)
        out[f"{key}/np"] = _h(numpy_source(prog))
        out[f"{key}/py"] = _h(numpy_source(prog, scalar=True))
        for real in ("double", "float"):
            ts = ts_source(prog, real)
            iss = is_source(prog, real)
            out[f"{key}/ts-{real}"] = _h(ts)
            out[f"{key}/is-{real}"] = _h(iss)
            src, lt = ts_phase_build(prog, real)
            out[f"{key}/ts-phase-{real}"] = _h(src)
            out[f"{key}/ts-phase-lt-{real}"] = _h(lt)
            out[f"{key}/c-{real}"] = _h(host_source(ts, "ts"))
            out[f"{key}/c-is-{real}"] = _h(host_source(iss, "is"))
            if loopable(prog):
                for integ in ("euler", "rk4"):
                    out[f"{key}/ts-loop-{integ}-{real}"] = _h(ts_loop_source(prog, real, integ))
            else:
                for integ in ("euler", "rk4"):
                    out[f"{key}/ts-coupled-{integ}-{real}"] = _h(coupled_source(prog, real, integ))
                    out[f"{key}/ts-coupled-nbsync-{integ}-{real}"] = _h(coupled_source(prog, real, integ, "neighbours"))
            if packable(prog):                  # the interpreter's loop kernel and its packed programs
                for form, pk in (("stack", pack(prog, np.float64 if real == "double" else np.float32)),
                                 ("regs", pack_registers(prog, np.float64 if real == "double" else np.float32))):
                    out[f"{key}/is-loop-{form}-{real}"] = _h(is_loop_source(prog, pk.n_slots, real, "rk4", True, True,
                                                                             pk.code.size, form == "regs"))
                    for part in ("code", "imm", "dslot"):
                        out[f"{key}/is-loop-{form}-{part}-{real}"] = _h(getattr(pk, part))
        out[f"{key}/code"] = _h(prog.code)
        out[f"{key}/index"] = _h(prog.index if prog.index is not None else np.zeros(0, np.int32))
        out[f"{key}/consts"] = _h(prog.consts)
        out[f"{key}/pvar"] = _h(prog.pvar_values)
        lay = prog.layout
        out[f"{key}/expr-code"] = _h(lay.code)
        out[f"{key}/expr-index"] = _h(lay.index)
        out[f"{key}/expr-lane-table"] = _h(lay.lane_table)


def _adaptive(key: str, core, out: dict) -> None:
    from kernels.flint.ensemble import gpu as ensemble_gpu, rk as ensemble_rk
    for n in (1, 3):
        member = None
        if n > 1 and core.param_ids:
            sid, name = next(iter(core.param_ids.items()))
            member = {sid: np.linspace(0.5, 1.5, n) * (core.model.params[name] or 1.0)}
        srcs: list = []
        with _capture_exec(ensemble_rk, srcs):          # the NumPy twin's code, built by Problem()
            pb = ensemble_gpu.gpu_problem(core, n, member)
        for j, s in enumerate(srcs):
            out[f"{key}/n{n}/dopri-np{j}"] = _h(s)
        out[f"{key}/n{n}/dopri-ts"] = _h(ensemble_gpu.cuda_source(pb, "ts"))
        out[f"{key}/n{n}/dopri-is"] = _h(ensemble_gpu.cuda_source(pb, "is"))
        out[f"{key}/n{n}/dopri-is-table"] = _h(ensemble_gpu.is_table(pb))
        for j, a in enumerate(ensemble_gpu.kernel_args(pb, "is")):
            out[f"{key}/n{n}/dopri-is-arg{j}"] = _h(np.asarray(a))


def _sbml(key: str, system, out: dict) -> None:
    """The SBML reference simulator's generated Python (every function it builds), and the adaptive
    lowering when the model is inside the ODE core."""
    from kernels.errors import Unsupported
    from kernels.flint.sbml import solver
    built: list = []
    orig = solver.build_namespace

    def rec(src, gen, safe, extra=None):
        built.append(src)
        return orig(src, gen, safe, extra)
    solver.build_namespace = rec
    try:
        c = solver.CompiledSbml(system)
    finally:
        solver.build_namespace = orig
    for j, s in enumerate(built):
        out[f"{key}/sbml-py{j}"] = _h(s)
    for name, s in sorted(c.sources.items()):
        out[f"{key}/sbml-fn-{name}"] = _h(s)
    from kernels.flint.sbml.core import lower_system
    try:
        core = lower_system(system, list(system.species), set(system.species), set())
    except Unsupported as exc:
        out[f"{key}/core"] = _h(f"refused: {exc}")
        return
    _adaptive(key, core, out)


def _texts(out: dict) -> None:
    """The models printed back: native text (``Model.to_text``), SBML (``write_sbml``, infix math through
    ``to_text(style="sbml")``) and CellML (``write_cellml``)."""
    from kernels.flint.cellml import write_cellml
    from kernels.flint.sbml import write_sbml
    for name in MODELS:
        m = _model(name)
        out[f"{name}/text"] = _h(m.to_text())
        out[f"{name}/sbml-out"] = _h(write_sbml(m))
        out[f"{name}/cellml-out"] = _h(write_cellml(m, validate=False))


def generate(with_suite: bool = True) -> dict[str, str]:
    """key → sha256 of every generated source (see the module docstring)."""
    from kernels.flint.loaders import shipped_models
    from kernels.flint.sbml.system import read_sbml_system
    out: dict[str, str] = {}
    _fixed_step(out)
    _texts(out)
    shipped = shipped_models()
    for name in SBML_MODELS:
        _sbml(f"sbml:{name}", read_sbml_system(str(shipped[name])), out)
    if with_suite:
        from cli.flint_suite import suite_dir
        from kernels.flint.sbml.conformance import discover
        root = suite_dir()
        if root.is_dir():
            for case in discover(root, list(SUITE_CASES)):
                _sbml(f"suite:{case.id}", read_sbml_system(str(case.model)), out)
    return out


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get("PYTHONHASHSEED") != "0":
        import subprocess
        return subprocess.call([sys.executable, __file__, *argv], env={**os.environ, "PYTHONHASHSEED": "0"})
    hashes = generate()
    for k, v in hashes.items():
        print(f"{k}  {v}")
    if argv[:1] == ["--write"]:
        Path(argv[1]).write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
