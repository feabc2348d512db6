"""Halo exchange strategies for the multi-GPU Cahn–Hilliard stepper (paper 001 §4.6, Alg. 7–8).

After each pass (one kernel application) every slab sends its H first and H last interior rows,
computed by its border kernels (:meth:`Slab.top_rows` / :meth:`Slab.bottom_rows`), into the halo
rows of its neighbours' output buffer ``out``.  Three ways, all issued on the slabs' side streams
(:class:`kernels.cahn_hilliard.slabs.Slab`), through a :class:`~kernels.cahn_hilliard.slabs.DeviceOps`:

* ``host``: device → pinned host buffer → neighbour device (the paper's way),
  two cudaMemcpyAsync legs ordered by events, host buffers double-buffered;
* ``p2p``: cudaMemcpyPeerAsync straight into the neighbour's halo rows;
* ``nccl``: one ncclSend/ncclRecv group per pass (cupy.cuda.nccl).

:func:`check_nccl` and :func:`enable_peer_access` prepare the latter two.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional.
import numpy as np

EXCHANGE_NAMES = {
    "p2p": "peer-to-peer (cudaMemcpyPeerAsync)",
    "host": "staged through host memory (paper 001)",
    "nccl": "NCCL send/recv",
}


def check_nccl(backend, devices, notes: list) -> str:
    """The exchange to use when NCCL is asked for: "nccl", or the fallback (with a note)."""
    if not backend.is_gpu:
        notes.append("NCCL needs GPUs; virtual GPUs exchange through host memory")
        return "host"
    if len(set(devices)) != len(devices):
        notes.append("NCCL needs distinct GPUs; exchanging peer-to-peer instead")
        return "p2p"
    try:
        from cupy.cuda import nccl
        ok = bool(nccl.available)
    except Exception:
        ok = False
    if not ok:
        notes.append("NCCL is not available in this CuPy installation; "
                     "exchanging peer-to-peer instead")
        return "p2p"
    return "nccl"


def enable_peer_access(xp, devs, exchange: str, notes: list) -> None:
    """Enable peer access between every pair of ``devs`` that allows it (a note for p2p if not)."""
    rt = xp.cuda.runtime
    for a in devs:
        for b in devs:
            if a == b:
                continue
            if not rt.deviceCanAccessPeer(a, b):
                if exchange == "p2p":
                    notes.append(f"GPU {a} cannot access GPU {b} directly; "
                                 "peer copies are staged by the driver")
                continue
            with xp.cuda.Device(a):
                try:
                    rt.deviceEnablePeerAccess(b)
                except rt.CUDARuntimeError as exc:  # already enabled
                    if "PeerAccessAlreadyEnabled" not in str(exc):
                        raise


def exchange_p2p(ops, slabs, out) -> None:
    """Each slab pushes its border rows into its neighbours' halos (peer copies)."""
    for s in slabs:
        with ops.device(s.device):
            if s.up is not None:
                u = slabs[s.up]
                ops.copy(u.halo_below(out), s.top_rows(), s.side, (u.device, s.device))
            if s.down is not None:
                d = slabs[s.down]
                ops.copy(d.halo_above(out), s.bottom_rows(), s.side, (d.device, s.device))
            ops.record(s.ev_sent, s.side)


def exchange_host(ops, slabs, out, par: int) -> None:
    """Border rows to pinned host buffers (set ``par``), then into the neighbours' halos."""
    for s in slabs:          # device → pinned host
        if not s.host_buf:
            continue
        top, bot = s.host_buf[par]
        with ops.device(s.device):
            if s.up is not None:
                ops.copy(top, s.top_rows(), s.side)
            if s.down is not None:
                ops.copy(bot, s.bottom_rows(), s.side)
            ops.record(s.ev_sent, s.side)
    for r in slabs:          # pinned host → neighbour's halo, on the receiver's side stream
        with ops.device(r.device):
            if r.down is not None:
                d = slabs[r.down]
                ops.wait(r.side, d.ev_sent)
                ops.copy(r.halo_below(out), d.host_buf[par][0], r.side)
            if r.up is not None:
                u = slabs[r.up]
                ops.wait(r.side, u.ev_sent)
                ops.copy(r.halo_above(out), u.host_buf[par][1], r.side)


def exchange_nccl(ops, comms, slabs, out, H: int, dtype, shape) -> None:
    """One NCCL group of send/recv pairs (``comms[rank]``: the slab's communicator)."""
    from cupy.cuda import nccl
    dt = nccl.NCCL_FLOAT32 if dtype == np.float32 else nccl.NCCL_FLOAT64
    count = H * int(np.prod(shape[1:]))
    nccl.groupStart()
    try:
        for s in slabs:
            comm, sp = comms[s.rank], s.side.ptr
            with ops.device(s.device):
                if s.up is not None:
                    comm.send(s.top_rows().data.ptr, count, dt, s.up, sp)
                if s.down is not None:
                    comm.send(s.bottom_rows().data.ptr, count, dt, s.down, sp)
                if s.down is not None:
                    comm.recv(s.halo_below(out).data.ptr, count, dt, s.down, sp)
                if s.up is not None:
                    comm.recv(s.halo_above(out).data.ptr, count, dt, s.up, sp)
    finally:
        nccl.groupEnd()
