"""The GPU device of the layer: CUDA source compiled by NVRTC through CuPy (``cupy.RawModule``).

``CudaDevice()`` follows the *current* CuPy device (``cupy.cuda.Device(i)`` contexts choose it, as
for CuPy's own kernels); ``CudaDevice(i)`` is pinned to GPU ``i``: it compiles there, and ``with
dev:`` makes it current for launches.  Launches go to the current stream of the current device,
exactly as calling the ``cupy.RawKernel`` does (no device switch per launch).
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional (imported when a CUDA device is asked for).
from ..errors import BackendUnavailable
from .device import Device, ModuleSpec


def cupy_or_raise():
    """CuPy, when it imports and sees a CUDA device; else :class:`BackendUnavailable`."""
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
        return cupy
    except Exception as exc:  # noqa: BLE001 - ImportError, CUDARuntimeError, no device
        raise BackendUnavailable(f"the CUDA device needs CuPy and a CUDA GPU ({exc})") from exc


def dims(v) -> tuple:
    """A launch's grid or block as the tuple CuPy takes: an int ``n`` is ``(n,)``."""
    return tuple(int(x) for x in v) if isinstance(v, (tuple, list)) else (int(v),)


class CudaDevice(Device):
    """An NVIDIA GPU through CuPy (see the module docstring)."""

    kind = "cuda"
    emulated = False

    def __init__(self, index: int | None = None):
        super().__init__()
        self.cp = self.xp = cupy_or_raise()
        n = self.cp.cuda.runtime.getDeviceCount()
        if index is not None and not 0 <= int(index) < n:
            raise BackendUnavailable(f"there is no CUDA device {index} (this machine has {n})")
        self.index = None if index is None else int(index)
        self._props: dict[int, dict] = {}
        self._ctx: list = []

    # ------------------------------------------------------------------ device identity
    def current_id(self) -> int:
        return self.index if self.index is not None else self.cp.cuda.runtime.getDevice()

    def properties(self) -> dict:
        """``cudaGetDeviceProperties`` of this device (cached)."""
        i = self.current_id()
        p = self._props.get(i)
        if p is None:
            p = self._props[i] = self.cp.cuda.runtime.getDeviceProperties(i)
        return p

    @property
    def sms(self) -> int:
        return int(self.properties().get("multiProcessorCount", 1))

    @property
    def name(self) -> str:
        n = self.properties().get("name", b"CUDA device")
        return n.decode() if isinstance(n, bytes) else str(n)

    def __enter__(self):
        ctx = self.cp.cuda.Device(self.current_id())
        ctx.__enter__()
        self._ctx.append(ctx)
        return self

    def __exit__(self, *exc):
        self._ctx.pop().__exit__(*exc)

    # ------------------------------------------------------------------ compile and launch
    def compile(self, spec: ModuleSpec):
        return self.cp.RawModule(code=spec.source, options=spec.options,
                                 name_expressions=None if spec.name_expressions is None else list(spec.name_expressions),
                                 enable_cooperative_groups=spec.cooperative)

    def lazy_function(self, spec: ModuleSpec, name: str):
        # CuPy's RawKernel compiles at its first launch or attribute query
        return self.cp.RawKernel(spec.source, name, options=spec.options,
                                 enable_cooperative_groups=spec.cooperative)

    def function(self, spec: ModuleSpec, name: str, **kw):
        if self.index is not None and self.cp.cuda.runtime.getDevice() != self.index:
            with self.cp.cuda.Device(self.index):
                return super().function(spec, name, **kw)
        return super().function(spec, name, **kw)

    def run(self, kernel, grid, block, args, shared_mem: int = 0, cooperative: bool = False) -> None:
        # cooperative launches: CuPy launches every kernel of a module compiled with
        # enable_cooperative_groups (ModuleSpec.cooperative) cooperatively.  CuPy takes tuples only;
        # the layer takes ints too (as the host device does)
        kernel(grid if type(grid) is tuple else dims(grid), block if type(block) is tuple else dims(block), args,
               shared_mem=shared_mem)

    def attributes(self, kernel) -> dict:
        return dict(kernel.attributes)

    def potential_block(self, kernel, shared_mem: int = 0) -> tuple[int, int]:
        grid, block = self.cp.cuda.driver.occupancyMaxPotentialBlockSize(kernel.kernel.ptr, int(shared_mem), 0)
        return int(grid), int(block)

    def active_blocks(self, kernel, block: int, shared_mem: int = 0) -> int:
        return int(self.cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, int(block),
                                                                                  int(shared_mem)))

    # ------------------------------------------------------------------ streams and events
    def synchronize(self) -> None:
        self.cp.cuda.Device(self.current_id()).synchronize()

    def stream(self):
        return self.cp.cuda.Stream(non_blocking=True)

    def on(self, stream):
        return stream

    def record(self):
        ev = self.cp.cuda.Event(disable_timing=True)
        ev.record()
        return ev

    def wait(self, event) -> None:
        self.cp.cuda.get_current_stream().wait_event(event)

    def __repr__(self):
        return f"<CudaDevice {'current' if self.index is None else self.index}>"
