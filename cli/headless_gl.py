"""An OpenGL context without a window, for ``graph --export-view`` (no Qt: VisPy's EGL app).

:func:`ensure_offscreen_gl` selects VisPy's ``egl`` application backend, which draws into an
offscreen surface, and returns a line saying which GL it got:

1. EGL as the environment has it (on an NVIDIA machine: the driver's EGL on the GPU, no display
   needed);
2. if that fails and ``EGL_PLATFORM`` is unset, Mesa's *surfaceless* platform
   (``EGL_PLATFORM=surfaceless``: llvmpipe software GL on a machine without a display or a GPU);
3. otherwise :class:`~kernels.errors.Unsupported` naming the fix (install Mesa's EGL, e.g.
   ``libegl-mesa0``, or run under ``xvfb-run -a -s "-screen 0 1600x1000x24 +extension GLX"`` as
   ``run.sh`` does, where EGL can use the X display).

The choice is made once per process and before any work of the command (a failed probe costs no
computation).  ``GSE_GL_PLATFORM`` (e.g. ``surfaceless``) forces step 2's platform.
"""
from __future__ import annotations

# Imports inside functions: VisPy loads only when an EGL context is tried (slow to import).
import os
import sys

from kernels.errors import Unsupported

_chosen: str | None = None


def _try_egl() -> str:
    """Select VisPy's egl app (a fresh import of its EGL modules) and return the GL renderer name."""
    for name in [k for k in sys.modules if k in ("vispy.ext.egl", "vispy.app.backends._egl")]:
        del sys.modules[name]                      # a failed import leaves nothing usable behind
    from vispy import app, scene
    app.use_app("egl")
    canvas = scene.SceneCanvas(size=(8, 8), show=False)
    try:
        from vispy.gloo import gl
        canvas.set_current()
        return str(gl.glGetParameter(gl.GL_RENDERER))
    finally:
        canvas.close()


def ensure_offscreen_gl() -> str:
    """Make VisPy draw offscreen through EGL (module docstring); the GL renderer's description, or
    Unsupported when no offscreen GL can be had."""
    global _chosen
    if _chosen is not None:
        return _chosen
    forced = os.environ.get("GSE_GL_PLATFORM")
    if forced:
        os.environ["EGL_PLATFORM"] = forced
    errors = []
    try:
        _chosen = f"EGL ({_try_egl()})"
        return _chosen
    except Exception as exc:                       # noqa: BLE001 - any failure: try the next way
        errors.append(f"EGL: {exc}".splitlines()[0])
    if not forced and not os.environ.get("EGL_PLATFORM"):
        os.environ["EGL_PLATFORM"] = "surfaceless"
        try:
            _chosen = f"EGL surfaceless ({_try_egl()})"
            return _chosen
        except Exception as exc:                   # noqa: BLE001
            del os.environ["EGL_PLATFORM"]
            errors.append(f"EGL surfaceless: {exc}".splitlines()[0])
    raise Unsupported("--export-view needs an offscreen OpenGL context and none could be made ("
                      + "; ".join(errors) + "): install Mesa's EGL (libegl-mesa0) or run under "
                      "xvfb-run -a -s \"-screen 0 1600x1000x24 +extension GLX\"")
