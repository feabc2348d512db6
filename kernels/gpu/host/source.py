"""A CUDA source made into one host C++ translation unit (the host backend's loader).

:func:`translation_unit` returns the text the host compiler reads for one kernel: the CUDA prelude
(``cuda_host.cuh`` + ``cuda_intrinsics.cuh``), the source with its quoted includes inlined
(searched beside the source file, then in the ``-I`` folders of the module's options; each file once per ``#pragma once``),
CUDA toolkit headers the prelude stands in for dropped, ``extern __shared__`` arrays pointed at the
launch's dynamic shared memory, and the exported entry points of the one kernel named by a C++
name expression (``"fw_v3<int,true>"``): ``emu_launch`` (run a grid) and ``emu_signature`` (the
parameter types, for argument marshalling).  The text is complete — the compile cache keys on it.
"""
from __future__ import annotations

import os
import re
from importlib.resources import files

#: CUDA toolkit headers whose names the prelude defines (their #include lines are dropped)
PRELUDE_HEADERS = frozenset({
    "cooperative_groups.h", "cuda_runtime.h", "cuda.h", "cuda_runtime_api.h", "device_launch_parameters.h",
    "device_functions.h", "sm_60_atomic_functions.h", "math_constants.h", "cuda/std/cstdint", "cstdint",
    "cuda/std/climits", "cuda/std/cfloat",
})

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"][^\n]*$', re.M)
_ONCE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once[^\n]*$", re.M)
_EXTERN_SHARED = re.compile(
    r"extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([A-Za-z_][\w\s:<>,*]*?)\s*"
    r"(?:__align__\s*\(\s*\d+\s*\)\s*)?\b([A-Za-z_]\w*)\s*\[\s*\]\s*;")


#: the prelude's parts, in order (package data): the execution model, then the intrinsics
PRELUDE_PARTS = ("cuda_host.cuh", "cuda_intrinsics.cuh")


def prelude() -> str:
    """The CUDA prelude (:data:`PRELUDE_PARTS`, one text)."""
    return "\n".join((files(__package__) / part).read_text() for part in PRELUDE_PARTS)


def include_dirs(options) -> list[str]:
    """The ``-I`` folders of NVRTC-style options (``"-Idir"`` or ``"-I", "dir"``)."""
    out, opts = [], list(options)
    for i, o in enumerate(opts):
        if o == "-I" and i + 1 < len(opts):
            out.append(opts[i + 1])
        elif o.startswith("-I") and len(o) > 2:
            out.append(o[2:])
        elif o.startswith("--include-path="):
            out.append(o.split("=", 1)[1])
    return out


def defines(options) -> str:
    """``-DNAME[=value]`` / ``--define-macro=`` options as #define lines."""
    lines = []
    for o in options:
        d = o[2:] if o.startswith("-D") else o.split("=", 1)[1] if o.startswith("--define-macro=") else None
        if d:
            name, _, value = d.partition("=")
            lines.append(f"#define {name} {value or 1}\n")
    return "".join(lines)


def inline_includes(text: str, path: str | None, dirs: list[str], seen: set | None = None) -> str:
    """``text`` (the file ``path``, None for a source string) with its quoted includes replaced by
    the files' text (recursively)."""
    seen = set() if seen is None else seen
    here = os.path.dirname(path) if path else None

    def repl(m):
        kind, name = m.group(1), m.group(2).strip()
        if (name in PRELUDE_HEADERS or os.path.basename(name) in PRELUDE_HEADERS
                or name.startswith("cooperative_groups/")):
            return f"// {name}: defined by the host prelude"
        if kind == "<":
            return m.group(0)
        for d in ([here] if here else []) + dirs:
            path = os.path.realpath(os.path.join(d, name))
            if os.path.isfile(path):
                break
        else:
            raise FileNotFoundError(f'#include "{name}": not found beside the source or in the -I folders')
        if path in seen:
            return f"// {name}: included once"
        with open(path) as fh:
            body = fh.read()
        if _ONCE.search(body):
            seen.add(path)
            body = _ONCE.sub("", body)
        inner = inline_includes(body, path, dirs, seen)
        return f'#line 1 "{path}"\n{inner}\n#line {text.count(chr(10), 0, m.start()) + 2} "{label}"'

    label = path or "source"
    return _INCLUDE.sub(repl, text)


def rewrite_shared(text: str) -> str:
    """``extern __shared__ T name[];`` → a pointer to the launch's dynamic shared memory."""
    return _EXTERN_SHARED.sub(lambda m: f"{m.group(1).strip()}* {m.group(2)} = "
                                         f"reinterpret_cast<{m.group(1).strip()}*>(::cuda_emu::t_dyn);", text)


def body(source: str, options=(), path: str | None = None) -> str:
    """The source made host-ready (inlined includes, dynamic shared memory); includes are
    searched beside ``path`` (when given), then in the options' ``-I`` folders."""
    return rewrite_shared(inline_includes(source, path, include_dirs(options)))


#: what makes threads of a block wait for each other (the loader's fallback test where it cannot
#: read the library's symbols): without any, a block's threads may run as a plain loop
_MEETS = re.compile(r"__syncthreads|__syncwarp|_sync\s*\(|\bsync\s*\(|__activemask|cooperative_groups|grid_group|"
                    r"thread_block")
#: the prelude's marker function: in the library only when the kernel can reach a barrier
MARKER = "cuda_emu_meets"


def plain(prepared: str) -> bool:
    """True when no thread of the source can wait for another (no barrier, warp collective or grid
    group anywhere in its text)."""
    return _MEETS.search(prepared) is None


#: the prelude's file name (a precompiled copy of it may sit beside it: :func:`translation_unit`)
PRELUDE_FILE = "cuda_prelude.cuh"


def translation_unit(prepared: str, name: str, options=(), include: str | None = None) -> str:
    """The prelude + the options' macros + prepared source + the entry points of kernel ``name`` (a
    C++ name expression), the only symbols the library exports.  ``include``: the prelude's hash —
    the unit then includes :data:`PRELUDE_FILE` (found, with its precompiled header, in a
    folder named by that hash) instead of holding its text; ``-DCUDA_EMU_UCONTEXT`` (which the
    prelude reads) always inlines it."""
    macros = defines(options)
    if include and "CUDA_EMU_UCONTEXT" not in macros:
        head = f'#include "{PRELUDE_FILE}"  // prelude {include}\n' + macros
    else:
        head = macros + prelude()
    return (head + "\n" + prepared + "\n"
            f"static void emu_body(void** a) {{ ::cuda_emu::call(&{name}, a); }}\n"
            'extern "C" __attribute__((visibility("default")))\n'
            "int emu_launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,\n"
            "               unsigned smem, int workers, int plain, void** args, void* pool, char* err, int errlen)\n"
            "{ return ::cuda_emu::launch(emu_body, args, gx, gy, gz, bx, by, bz, smem, workers, plain,\n"
            "                            (::cuda_emu::PoolRun)pool, err, errlen); }\n"
            'extern "C" __attribute__((visibility("default"))) const char* emu_signature()\n'
            f"{{ return ::cuda_emu::signature(&{name}); }}\n")
