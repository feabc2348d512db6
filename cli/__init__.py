"""GPU Science Explorer's command line: one module per command (like mne-python's ``mne/commands``).

    python main.py                      open the desktop app
    python main.py ch [options]         run Cahn–Hilliard headless (batch / export / JSON)
    python main.py ch-sweep --vary …    many Cahn–Hilliard runs on Dask (--scheduler)
    python main.py graph [options]      generate a graph, APSP + clustering headless
    python main.py graph-reproduce      re-run paper 000's mean-path sweep (exponents vs N)
    python main.py graph-clustering     re-run paper 001's clustering timings (slopes vs V)
    python main.py graph-fw             time Floyd–Warshall versions vs n (papers 002, 004)
    python main.py graph-bfs            paper 000's BFS kernel evolution / block sweep (GPU)
    python main.py graph-sssp EXP       paper 004's SSSP Table 3.1, Figs. 3.10–3.14, limits
    python main.py occupancy [options]  CUDA occupancy calculator (any CC, or this GPU)
    python main.py rng --approach A     Marsaglia RNG: throughput, first numbers, test vector (paper 001)
    python main.py flint MODEL [opts]   compile + integrate an SBML/CellML/native cell model (--sweep: on Dask)
    python main.py flint-suite [CASES]  SBML Test Suite conformance (per-tag table, JSON)
    python main.py --version | --info | --reset-settings   version; versions, GPU and paths; default settings

Both paths use the same compute library (kernels/).  ``--backend cpu|gpu|auto`` (before or after
the command) or the GSE_BACKEND environment variable chooses CuPy or NumPy.  Any failure prints
one line starting ``error:`` and exits with status 2 (``--debug`` prints the traceback instead);
Ctrl+C exits with status 130.

Each command module has ``NAME``, ``add_parser(sub)`` and ``run(args) -> exit status`` and is
registered in :data:`COMMANDS` below; this package imports no Qt (the GUI is started by ``main.py``); ``graph --export-view`` draws with the
Qt-free renderer :mod:`explorer.graphs.render` (VisPy, offscreen EGL).
"""
from __future__ import annotations

import argparse
import sys

from kernels import limits
from kernels.registry import Registry

from . import (ch, ch_sweep, flint, flint_suite, graph, graph_bfs, graph_clustering, graph_fw, graph_reproduce,
               graph_sssp, info, occupancy, rng)
from .common import ArgumentParser, UsageError, reset_outputs, run_guarded

#: command name → module (``add_parser``, ``run``), in the order ``--help`` lists them (a
#: :class:`~kernels.registry.Registry`: a second module under a taken name is a ValueError)
COMMANDS: Registry = Registry("command", key=lambda mod: mod.NAME)
for _mod in (ch, ch_sweep, graph, graph_reproduce, graph_clustering, graph_fw, graph_bfs, graph_sssp, occupancy, rng,
             flint, flint_suite):
    COMMANDS.register(_mod)

BACKENDS = ("auto", "gpu", "cpu")


def common_options(top: bool) -> ArgumentParser:
    """The options accepted before and after the command, defined once.  On the command's parser
    their default is SUPPRESS, so an option given before the command is not overwritten by the
    command parser's default (``main.py --backend cpu ch`` and ``main.py ch --backend cpu`` agree)."""
    p = ArgumentParser(add_help=False)
    dflt = (lambda v: v) if top else (lambda v: argparse.SUPPRESS)
    p.add_argument("--backend", choices=BACKENDS, default=dflt(None),
                   help="array backend (default: GSE_BACKEND or auto = GPU if available)")
    p.add_argument("--debug", action="store_true", default=dflt(False),
                   help="on an error, print the Python traceback instead of one 'error:' line")
    return p


def build_parser() -> ArgumentParser:
    ap = ArgumentParser(prog="gpu-science-explorer", description=_description(),
                        formatter_class=argparse.RawDescriptionHelpFormatter, parents=[common_options(True)])
    info.add_options(ap)
    ap.add_argument("--json", action="store_true", dest="top_json", help="with --info: print one JSON object")
    sub = ap.add_subparsers(dest="workspace", metavar="WORKSPACE", parser_class=ArgumentParser)
    shared = common_options(False)
    for mod in COMMANDS.values():
        mod.add_parser(sub, [shared])
    return ap


def _description() -> str:
    """The module docstring's usage table and paragraph (without its title and the developer notes)."""
    return __doc__.split("\n\nEach command")[0].split("\n", 2)[2]


def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv[: argv.index("--")] if "--" in argv else "--debug" in argv


def main(argv: list[str] | None = None, gui=None) -> int:
    """Parse ``argv`` and run the command under the error contract; without a command, call
    ``gui(backend)`` (``main.py`` passes the Qt application's launcher) or print the help."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parsed = {}

    def parse():                                 # building the parser imports kernels: guarded too
        parsed["parser"] = build_parser()
        parsed["a"] = parsed["parser"].parse_args(argv)
        return 0
    status = run_guarded(parse, _debug_requested(argv))
    if "a" not in parsed:
        return status
    a = parsed["a"]
    if info.requested(a):
        if a.workspace is not None:
            print("error: --version, --info and --reset-settings go without a command", file=sys.stderr)
            return 2
        return run_guarded(lambda: info.run(a, a.top_json), a.debug)
    if a.workspace is None:
        if gui is None:
            parsed["parser"].print_help()
            return 0
        return gui(a.backend)
    mod = COMMANDS[a.workspace]

    def command():
        reset_outputs()
        if a.backend is not None and not getattr(mod, "USES_BACKEND", True):
            raise UsageError(f"--backend does not apply to {mod.NAME} ({mod.BACKEND_HINT})")
        return mod.run(a)
    # the expansion limits a command sets (--max-solver-steps, …) hold for its run only: an in-process
    # caller (tests, the fuzzer) must not inherit them
    with limits.raised():
        return run_guarded(command, a.debug)
