"""The ``graph`` command's APSP method options, read from the method registry.

Every option below maps to one keyword argument of the registered method classes
(:data:`kernels.graphs.apsp.METHODS`); a method *takes* a keyword when its ``__init__`` names it or
its ``options_allowed`` (the Floyd–Warshall versions' table) holds it.  An option is passed only to
the methods that take it; given to any other method it is one ``error:`` line naming the methods
that do.  The method instance is built here once with the options (each class validates its own
values in ``__init__``), so a bad value is refused before any work.

Also here: the ``--path U V`` report (:func:`path_report`, with
:func:`kernels.graphs.apsp.path_between`) and the method list for ``graph --help``.
"""
from __future__ import annotations

import inspect
import textwrap

from .common import UsageError, number, num_type, parse_list
import numpy as np
from kernels.graphs.apsp import METHODS, path_between
from kernels.graphs.apsp.fw_core import ARITHS
from kernels.errors import InvalidParameter
from kernels.graphs.apsp.paths import path_cost

#: CLI option → (argparse dest, keyword of the method classes)
OPTIONS = {"--tile": ("tile", "tile"), "--sources": ("sources", "sources"), "--batch": ("batch", "batch"),
           "--block": ("block", "block"), "--S": ("S", "S"), "--threads": ("threads", "threads"),
           "--arith": ("arith", "arith"), "--no-pred": ("no_pred", "pred"), "--gpus": ("gpus", "gpus"),
           "--rows-file": ("rows_file", "out")}
#: most --sources one command line may list
MAX_SOURCES = 1_000_000


def takes(cls) -> set[str]:
    """The keyword options method class ``cls`` accepts (its ``__init__`` parameters and, for the
    Floyd–Warshall versions, the keys of ``options_allowed``)."""
    names = {p.name for p in inspect.signature(cls.__init__).parameters.values()
             if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return names | set(getattr(cls, "options_allowed", None) or ())


def takers(key: str) -> list[str]:
    return [k for k, c in METHODS.items() if key in takes(c)]


def add_options(p) -> None:
    """The method options of ``graph`` (all default None: only what is given is passed)."""

    def applies(key):
        return "applies to: " + ", ".join(takers(key))

    p.add_argument("--tile", default=None,
                   help="tile size of a blocked Floyd–Warshall version: fw-blocked 32, 64, model (paper 004's traffic "
                        "model) or auto (timed); fw-mm / fw-2level 16, 32, 64; fw-fast 64, 128 or auto; "
                        + applies("tile"))
    p.add_argument("--fw-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option of a Floyd–Warshall version (repeatable), e.g. l=auto or l=3 (fw-mm, fw-2level), "
                        "t_r=64 (fw-recursive), cfg=128x128/8x8/2 (fw-fast, fw-recursive), lookahead=0|1 (fw-fast), "
                        "tiles=16,32 (fw-tuned); each version's options are in --help's method list")
    p.add_argument("--arith", choices=ARITHS, default=None,
                   help="arithmetic of the distance matrix: auto (int32 for non-negative integer weights, else "
                        "float32), float32, int32 or dpx (int32 through Hopper's fused add-min); " + applies("arith"))
    p.add_argument("--no-pred", action="store_true", default=None,
                   help="skip the predecessor matrix (faster; --path then walks distances) — " + applies("pred"))
    p.add_argument("--sources", default=None, metavar="LIST",
                   help="only the rows of these source vertices (comma list of ids, 0 … n−1); "
                        "mean path and diameter are then over the pairs from these sources; " + applies("sources"))
    p.add_argument("--batch", type=num_type(int, minimum=1), default=None,
                   help="sources per launch: paper 000's kernels gpu-bfs-k1 … k7 (default 1 = one source per BFS, as "
                        "in the paper), gpu-bfs (default: as many as fit), gpu-msbfs (a multiple of 64, default 4096); "
                        + applies("batch"))
    p.add_argument("--gpus", type=num_type(int, minimum=1, maximum=64), default=None,
                   help="GPUs to split the sources over (default: every visible GPU, at least 2; virtual GPUs on "
                        "the CPU backend); " + applies("gpus"))
    p.add_argument("--rows-file", default=None, metavar="NPY",
                   help="stream the distance rows into this .npy (memory-mapped) instead of host memory: a matrix "
                        "larger than one GPU or the RAM; " + applies("out"))
    p.add_argument("--block", type=num_type(int, minimum=1), default=None,
                   help="GPU threads per block (a multiple of 32; paper 000: 256); " + applies("block"))
    p.add_argument("--S", type=num_type(int, minimum=1), default=None,
                   help="SSSP problems per launch, the thesis's N (1, or a multiple of 32; paper 004: 32; sssp: "
                        "default as many as fit); " + applies("S"))
    p.add_argument("--threads", type=num_type(int, minimum=1, maximum=1024), default=None,
                   help="threads: per block for the GPU SSSP methods (a multiple of 32; paper 004: 128 = N·B, "
                        "Harish 256), CPU threads for cpu-dijkstra (default: all cores); " + applies("threads"))
    p.add_argument("--path", nargs=2, type=num_type(int, minimum=0), default=None, metavar=("U", "V"),
                   help="also print one shortest path U → V and its length (from the predecessors when the "
                        "method keeps them, else Dijkstra / breadth-first from U)")
    p.add_argument("--export-paths", metavar="NPY", help="write the predecessor matrix (.npy, int32: row i, column j = "
                                                          "the vertex before j on a shortest i → j path, −1 none); "
                                                          "methods that keep predecessors: the Floyd–Warshall "
                                                          "versions, sssp-path")


def flags_of(cls) -> list[str]:
    """The command-line options method class ``cls`` takes (its keywords as flags)."""
    flag = {key: f for f, (_d, key) in OPTIONS.items()}
    fw = set(getattr(cls, "options_allowed", None) or ())
    return sorted(flag.get(k) or f"--fw-option {k}=…" for k in takes(cls) if k in flag or k in fw)


def methods_epilog(width: int = 100) -> str:
    """The method list of ``graph --help``: name, GPU / CPU, the registry's one-line help."""
    lines = ["APSP methods (--apsp):"]
    for k, c in METHODS.items():
        where = ("GPU + CPU" if c.gpu and c.cpu else "CPU" if c.cpu else
                 "GPU; CPU: CUDA source run on the CPU" if getattr(c, "host", False) else "GPU only")
        opts = ", ".join(flags_of(c)) or "none"
        lines.append(textwrap.fill(f"{k} [{where}; options: {opts}]: {c.help}", width,
                                   initial_indent="  ", subsequent_indent="      "))
    return "\n".join(lines)


def _value(text: str):
    """A --fw-option value: int when it reads as one, a list for a comma list, else the word."""
    def one(t):
        t = t.strip()
        return int(t) if t.lstrip("-").isdigit() else t
    return [one(t) for t in text.split(",") if t.strip()] if "," in text else one(text)


def sources_value(a):
    """--sources as an int64 array of vertex ids (range checked against the graph by :func:`check_vertices`)."""
    if a.sources is None:
        return None
    items = parse_list("--sources", a.sources)
    if len(items) > MAX_SOURCES:
        raise UsageError(f"--sources lists {len(items):,} vertices; at most {MAX_SOURCES:,}")
    return np.array([number("--sources", s, int, minimum=0) for s in items], dtype=np.int64)


def method_kwargs(a, name: str, sources) -> dict:
    """The keyword options of method ``name`` from the command line, refused when the method does
    not take one; the method is built once with them (its own checks of the values)."""
    cls = METHODS[name]
    accepted = takes(cls)
    kw, flags = {}, {}
    for flag, (dest, key) in OPTIONS.items():
        v = sources if dest == "sources" else getattr(a, dest)
        if v is None:
            continue
        if dest == "tile":
            v = int(v) if str(v).strip().isdigit() else str(v).strip()
        elif dest == "no_pred":
            v = False
        kw[key], flags[key] = v, flag
    for item in a.fw_option:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key or not text.strip():
            raise UsageError(f"--fw-option {item!r}: write KEY=VALUE, e.g. l=auto")
        own = next((f for f, (_d, k) in OPTIONS.items() if k == key), None)
        if own:
            raise UsageError(f"--fw-option {key}=…: use {own}")
        if key in kw:
            raise UsageError(f"--fw-option {key} is given twice")
        kw[key], flags[key] = _value(text), f"--fw-option {key}"
    for key, flag in flags.items():
        if key not in accepted:
            who = takers(key)
            if flag.startswith("--fw-option"):
                raise UsageError(f"{flag}: --apsp {name} has no option {key!r} (its options: "
                                 f"{', '.join(sorted(accepted)) or 'none'})")
            raise UsageError(f"{flag} does not apply to --apsp {name} (it applies to {', '.join(who)})")
    arith = kw.get("arith", "auto")
    if arith != "auto" and arith not in getattr(cls, "ariths", (arith,)):
        raise UsageError(f"--arith {arith}: {name} has no {arith} kernels (use {', '.join(cls.ariths)})")
    try:
        cls(**kw)
    except InvalidParameter as exc:
        raise UsageError(f"--apsp {name}: {exc}") from None
    return kw


def keeps_predecessors(name: str, kw: dict) -> bool:
    """Whether method ``name`` with options ``kw`` records predecessors (Floyd–Warshall versions
    unless pred=False — fw-blocked only at tile 32 —, and paper 004's path-recording SSSP)."""
    runner = METHODS[name](**kw)
    return bool(getattr(runner, "pred", False) or getattr(runner, "record", False))


def check_vertices(n: int, sources, path) -> None:
    """--sources and --path vertex ids inside 0 … n−1 (before any work)."""
    for what, ids in (("--sources", () if sources is None else sources), ("--path", path or ())):
        bad = [int(v) for v in ids if not 0 <= int(v) < n]
        if bad:
            raise UsageError(f"{what}: vertex {bad[0]} is outside the graph (vertices 0 … {n - 1})")


def path_report(g, res, u: int, v: int, sources) -> dict:
    """One shortest path u → v (:func:`kernels.graphs.apsp.path_between`) and its length: the
    distance the method computed when its result holds u's row, else the path's own cost
    (weights, or hops).  ``{"path": [...] or [], "path_length": L or None}``."""

    path = path_between(g, u, v, res)
    if not path:
        return {"path": [], "path_length": None}
    row = None
    if res is not None:
        if sources is None:
            row = u
        elif u in set(int(s) for s in sources):
            row = int(np.flatnonzero(np.asarray(sources) == u)[0])
    if row is not None:
        d = res.dist[row, v]
        length = float(d) if res.dist.dtype.kind == "f" else int(d)
    else:
        c = path_cost(g.csr(), path, g.weighted)
        length = c if g.weighted else int(c)
    return {"path": [int(x) for x in path], "path_length": length}


def path_lines(u: int, v: int, rep: dict) -> str:
    p = rep["path"]
    if not p:
        return f"path {u} → {v}: {v} is not reachable from {u}"
    shown = " ".join(map(str, p)) if len(p) <= 60 else " ".join(map(str, p[:30])) + " … " + " ".join(map(str, p[-30:]))
    return f"path {u} → {v}: {shown} ({len(p) - 1} hops, length {rep['path_length']:g})"
