"""Occupancy of a compiled kernel on the live GPU: the calculator's answer and the driver's.

* :func:`device_spec` — the current device's limits (``cudaGetDeviceProperties``) as an
  :class:`~kernels.gpu.specs.ArchSpec`, so the calculator runs on exactly this GPU.
* :func:`kernel_resources` — registers, static/local shared memory, max threads per block of a
  compiled ``cupy.RawKernel`` (``cuFuncGetAttribute``).
* :func:`max_active_blocks` — ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` (runtime API via
  ``cuda.bindings`` when it accepts the kernel handle, else the driver's
  ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` via CuPy — the function the runtime calls).
* :func:`launch_occupancy` — (theoretical occupancy, registers, limiter) of one launch.
* :func:`kernel_occupancy` — resources + calculator + driver for one launch.

Needs CuPy and a CUDA device (:class:`~kernels.errors.BackendUnavailable` otherwise).
"""
from __future__ import annotations

# Imports inside functions: CuPy's cuda-python bindings stay optional.
from .calculator import occupancy
from .cuda import cupy_or_raise
from .specs import spec_from_properties


def device_spec(device: int | None = None):
    """ArchSpec of the current (or given) CUDA device, from the driver's properties."""
    cp = cupy_or_raise()
    dev = cp.cuda.Device(device) if device is not None else cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    return spec_from_properties(props)


def kernel_resources(kernel) -> dict:
    """Resources of a compiled ``cupy.RawKernel`` (compiles it for the current device if needed)."""
    attrs = dict(kernel.attributes)
    get = lambda key: int(attrs[key]) if key in attrs else int(getattr(kernel, key))  # noqa: E731
    return {
        "registers": get("num_regs"),
        "static_smem": get("shared_size_bytes"),
        "local_bytes": get("local_size_bytes"),
        "const_bytes": get("const_size_bytes"),
        "max_threads_per_block": get("max_threads_per_block"),
        "max_dynamic_smem": get("max_dynamic_shared_size_bytes"),
        "binary_version": get("binary_version"),
    }


class _RuntimeApi:
    """Whether cuda.bindings' runtime accepts CuPy's kernel handles (found out once)."""
    ok: bool | None = None


def _runtime_occupancy(kernel, block: int, dyn: int) -> int | None:
    """cudaOccupancyMaxActiveBlocksPerMultiprocessor through cuda.bindings, or None."""
    if _RuntimeApi.ok is False:
        return None
    try:
        from cuda.bindings import runtime as rt
        err, n = rt.cudaOccupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, block, dyn)
        if int(err) != 0:
            raise RuntimeError(str(err))
        _RuntimeApi.ok = True
        return int(n)
    except Exception:  # noqa: BLE001 - older bindings / a handle the runtime does not take
        if _RuntimeApi.ok is None:
            _RuntimeApi.ok = False
        return None


def max_active_blocks(kernel, block: int, dynamic_smem: int = 0) -> tuple[int, str]:
    """(blocks per SM the CUDA occupancy API reports, which API answered)."""
    n = _runtime_occupancy(kernel, block, dynamic_smem)
    if n is not None:
        return n, "cudaOccupancyMaxActiveBlocksPerMultiprocessor"
    cp = cupy_or_raise()
    try:
        n = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, block, dynamic_smem)
    except cp.cuda.driver.CUDADriverError:
        n = 0                     # e.g. a block larger than the kernel's maximum
    return int(n), "cuOccupancyMaxActiveBlocksPerMultiprocessor"


def kernel_occupancy(kernel, block: int, dynamic_smem: int = 0, spec=None) -> dict:
    """Resources + calculator result + driver result for one kernel and launch."""
    spec = spec or device_spec()
    res = kernel_resources(kernel)
    r = occupancy(spec, block, res["registers"], res["static_smem"], dynamic_smem, strict=False)
    drv, api = max_active_blocks(kernel, block, dynamic_smem)
    return {**res, "block": block, "dynamic_smem": dynamic_smem, "active_blocks_per_sm": r.active_blocks_per_sm,
            "active_warps_per_sm": r.active_warps_per_sm, "occupancy": r.occupancy, "limiter": r.limiter,
            "driver_blocks_per_sm": drv, "api": api}


def launch_occupancy(kernel, block: int, dynamic_smem: int = 0) -> tuple[float, int, str]:
    """(theoretical occupancy 0–1, registers per thread, limiter) of ``kernel`` launched with
    ``block`` threads and ``dynamic_smem`` bytes on this GPU, from the calculator."""
    res = kernel_resources(kernel)
    r = occupancy(device_spec(), int(block), res["registers"], res["static_smem"], int(dynamic_smem),
                  strict=False)
    return float(r.occupancy), int(res["registers"]), r.limiter
