"""Frame upload to an OpenGL texture: CUDA–GL interop (device only) vs host round trip.

2D: a float32 N² frame into the Image's texture through a CUDA-registered PBO.  3D (``--volume``):
a float32 N³ frame into the Volume's 3D texture registered with CUDA (device-to-array copy) — the
target of issue 26 is ≥ 10× the host path at 256³.

Run on the GPU machine (EGL):  python benchmarks/interop.py [--sizes 1024 2048 4096]
                               python benchmarks/interop.py --volume [--sizes 64 128 256]
Prints a markdown table; writes $OUT/interop_bench.md (3D: interop3d_bench.md) when OUT is set.
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--volume", action="store_true", help="3D: N³ frames into a Volume's 3D texture")
    ap.add_argument("--quick", action="store_true", help="one small field, 3 repeats (a smoke test)")
    a = ap.parse_args()
    if a.quick:
        a.sizes, a.repeat = ([64] if a.volume else [256]), 3
    if a.volume:
        return volume(a.sizes if a.sizes != [1024, 2048, 4096] else [64, 128, 256], a.repeat)
    import cupy as cp
    from OpenGL import GL
    from explorer.gl_interop import InteropUploader
    from vispy import app, scene
    app.use_app("egl")
    rows = []
    for n in a.sizes:
        canvas = scene.SceneCanvas(size=(64, 64), show=False)
        view = canvas.central_widget.add_view()
        image = scene.visuals.Image(np.zeros((n, n), np.float32), clim=(-1, 1), texture_format="auto",
                                    parent=view.scene)
        up = InteropUploader(image, canvas)
        field = cp.random.uniform(-1, 1, (n, n), dtype=cp.float32)
        up.upload(field)
        for _ in range(3):
            canvas.render()
        canvas.set_current()
        handle = up._texture_handle()

        def interop():
            up._frame = field
            up._on_draw()
            GL.glFinish()

        def host():
            h = cp.asnumpy(field)
            GL.glBindTexture(GL.GL_TEXTURE_2D, handle)
            GL.glTexSubImage2D(GL.GL_TEXTURE_2D, 0, 0, 0, n, n, GL.GL_RED, GL.GL_FLOAT, h)
            GL.glBindTexture(GL.GL_TEXTURE_2D, 0)
            GL.glFinish()

        res = {}
        for name, fn in (("interop", interop), ("host", host)):
            for _ in range(3):
                fn()
            ts = []
            for _ in range(a.repeat):
                cp.cuda.Device().synchronize()
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
            res[name] = statistics.median(ts) * 1e3
        rows.append((n, res["interop"], res["host"], res["host"] / res["interop"]))
        up.release()
        canvas.close()
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    lines = [f"Frame upload to a GL texture (float32), {dev}, {time.strftime('%Y-%m-%d')}, median of {a.repeat}",
             "", "| N×N | CUDA–GL interop (ms) | host round trip (ms) | speed-up |", "|---|---|---|---|"]
    lines += [f"| {n}² | {i:.3f} | {h:.2f} | {s:.1f}× |" for n, i, h, s in rows]
    text = "\n".join(lines)
    print(text)
    save_markdown("interop_bench.md", text)


def _median_ms(fn, repeat):
    import cupy as cp
    for _ in range(3):
        fn()
    ts = []
    for _ in range(repeat):
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def volume(sizes, repeat):
    import cupy as cp
    from OpenGL import GL
    from OpenGL.raw.GL.VERSION.GL_1_1 import glGetTexImage
    from OpenGL.raw.GL.VERSION.GL_1_2 import glTexSubImage3D
    from explorer.gl_interop import VolumeInteropUploader
    from vispy import app, scene
    app.use_app("egl")
    rows = []
    for n in sizes:
        canvas = scene.SceneCanvas(size=(64, 64), show=False)
        view = canvas.central_widget.add_view()
        vol = scene.visuals.Volume(np.zeros((n, n, n), np.float32), clim=(-1, 1), texture_format="auto",
                                   parent=view.scene)
        view.camera = scene.TurntableCamera()
        up = VolumeInteropUploader(vol, canvas)
        field = cp.random.uniform(-1, 1, (n, n, n), dtype=cp.float32)
        up.upload(field, clim=(-1, 1))
        for _ in range(3):
            canvas.render()
        canvas.set_current()
        handle = up._texture_handle()

        def interop():
            up._frame = field
            up._on_draw()
            GL.glFinish()

        def host():
            h = cp.asnumpy(field)
            GL.glBindTexture(GL.GL_TEXTURE_3D, handle)
            glTexSubImage3D(GL.GL_TEXTURE_3D, 0, 0, 0, 0, n, n, n, GL.GL_RED, GL.GL_FLOAT,
                            ctypes.c_void_p(h.ctypes.data))
            GL.glBindTexture(GL.GL_TEXTURE_3D, 0)
            GL.glFinish()

        res = {name: _median_ms(fn, repeat) for name, fn in (("interop", interop), ("host", host))}
        # the check: after the interop write the texture holds the field
        back = np.full((n, n, n), np.nan, np.float32)
        interop()
        GL.glBindTexture(GL.GL_TEXTURE_3D, handle)
        glGetTexImage(GL.GL_TEXTURE_3D, 0, GL.GL_RED, GL.GL_FLOAT, ctypes.c_void_p(back.ctypes.data))
        GL.glBindTexture(GL.GL_TEXTURE_3D, 0)
        ok = bool(np.array_equal(back, cp.asnumpy(field)))
        rows.append((n, res["interop"], res["host"], res["host"] / res["interop"], ok))
        up.release()
        canvas.close()
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    lines = [f"Volume frame to a GL 3D texture (float32 r32f), {dev}, {time.strftime('%Y-%m-%d')}, median of {repeat}",
             "", "| N³ | CUDA–GL interop (ms) | host round trip (ms) | speed-up | texture = field |",
             "|---|---|---|---|---|"]
    lines += [f"| {n}³ | {i:.3f} | {h:.2f} | {s:.1f}× | {'yes' if ok else 'NO'} |" for n, i, h, s, ok in rows]
    text = "\n".join(lines)
    print(text)
    save_markdown("interop3d_bench.md", text)


if __name__ == "__main__":
    main()
