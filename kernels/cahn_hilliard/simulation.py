"""A Cahn–Hilliard run: field, stepper, diagnostics, safety checks.

Shared by the GUI workspace (explorer/cahn_hilliard) and the headless CLI.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .. import backend as backend_mod
from .. import rng
from ..errors import GridTooLarge, InvalidParameter, SimulationBlowUp
from . import diagnostics
from .adaptive import AdaptiveController
from .domains import domain_mask
from .params import NEEDS_RESET, CHParams, stability_limit
from .pfhub import initial_phi
from .steppers import make_stepper

#: |φ| beyond this is treated as a blow-up (the physical range is about ±1)
BLOWUP_LIMIT = 1.0e3


#: fields of a History point, in order
HISTORY_FIELDS = ("t", "steps", "mean", "energy", "length")


@dataclass
class History:
    """Diagnostics recorded during a run (host lists, for plots and JSON), bounded in length.

    Record k (k = 0, 1, 2 … since the last ``clear``) is kept while any of these holds:

    * it is the newest record (the curves always reach the current time);
    * ``k % stride == 0``: uniform thinning over the whole run; ``stride`` (a power of 2) doubles
      whenever more than ``capacity`` records would be kept that way, dropping every other one;
    * k < 2**log_bits or k % 2**(bit_length(k) − log_bits) == 0: a fixed number of records per
      octave of k (2**(log_bits−1)), so early times stay resolved on log-log plots of L(t).

    So a run of any length holds at most ``capacity`` + 2**(log_bits−1)·log2(k) + 2**log_bits
    points, spread over all of it: linear-time plots (E, ⟨φ⟩) and the power-law fit of L(t) over
    the later part of the run see evenly spaced samples, log-time plots see evenly spaced octaves.
    The first record (the initial state) is always kept.
    """

    t: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    mean: list = field(default_factory=list)
    energy: list = field(default_factory=list)
    length: list = field(default_factory=list)
    capacity: int = 2048
    log_bits: int = 6
    index: list = field(default_factory=list)   # record number k of each point held
    count: int = 0                              # records since the last clear
    stride: int = 1

    def __len__(self) -> int:
        return len(self.t)

    def _lists(self):
        return (self.t, self.steps, self.mean, self.energy, self.length, self.index)

    def clear(self):
        for v in self._lists():
            v.clear()
        self.count, self.stride = 0, 1

    def _wanted(self, k: int) -> bool:
        """Kept by the thinning rules (the newest record is kept besides these)."""
        if k % self.stride == 0:
            return True
        shift = k.bit_length() - self.log_bits
        return shift <= 0 or k % (1 << shift) == 0

    def append(self, t: float, steps: int, mean: float, energy: float, length: float) -> None:
        """Add the next record, dropping the previous newest one if no rule keeps it."""
        if self.index and not self._wanted(self.index[-1]):
            for v in self._lists():
                v.pop()
        for v, x in zip(self._lists(), (t, steps, mean, energy, length, self.count)):
            v.append(x)
        self.count += 1
        if self.count > self.capacity * self.stride:
            self.stride *= 2
            self._thin()

    def _thin(self) -> None:
        last = len(self.index) - 1
        keep = [i for i, k in enumerate(self.index) if i == last or self._wanted(k)]
        if len(keep) != len(self.index):
            for v in self._lists():
                v[:] = [v[i] for i in keep]

    def as_dict(self) -> dict:
        """Copies of the lists by field name (plots, sessions)."""
        return {k: list(getattr(self, k)) for k in HISTORY_FIELDS}

    def load(self, data: dict, index=None) -> None:
        """Replace the points (e.g. from a session): ``data`` maps HISTORY_FIELDS to equal-length
        sequences; ``index`` their record numbers (default 0, 1, 2 …).  Thinned to the bound."""
        cols = [list(data.get(k, ())) for k in HISTORY_FIELDS]
        n = len(cols[0])
        if any(len(c) != n for c in cols):
            raise ValueError("history columns differ in length")
        idx = [int(i) for i in (range(n) if index is None else index)]
        if len(idx) != n or any(b <= a for a, b in zip(idx, idx[1:])):
            raise ValueError("history record numbers must be increasing, one per point")
        self.clear()
        for v, c in zip(self._lists(), (*cols, idx)):
            v.extend(c)
        self.count = idx[-1] + 1 if idx else 0
        while self.count > self.capacity * self.stride:
            self.stride *= 2
        self._thin()


def estimate_bytes(p: CHParams, stepper_buffers: int = 10) -> int:
    """Device/host bytes a run needs: field + stepper buffers + last-good snapshot."""
    itemsize = 4 if p.dtype == "float32" else 8
    cells = p.cells
    # field, snapshot, stepper work arrays (padded arrays are ~ the same size)
    return int(cells * itemsize * (2 + stepper_buffers) * 1.1)


class CahnHilliard:
    """One simulation.  ``step(n)`` advances n steps and checks for blow-up."""

    def __init__(self, params: CHParams | None = None, backend=None, field0=None):
        self.backend = backend or backend_mod.current()
        self.xp = self.backend.xp
        self.params = (params or CHParams()).validate()
        self.history = History()
        self.phi = None
        self._field0 = None if field0 is None else np.asarray(field0)
        self.reset()

    # ------------------------------------------------------------------ setup
    @property
    def dtype(self):
        return np.float32 if self.params.dtype == "float32" else np.float64

    def check_memory(self, p: CHParams, buffers: int) -> None:
        need = estimate_bytes(p, buffers)
        free = self.backend.free_memory()
        if need > free:
            where = "GPU" if self.backend.is_gpu else "host"
            raise GridTooLarge(
                f"a {'×'.join(map(str, p.shape))} {p.dtype} grid needs about {need / 2**30:.2f} GiB "
                f"but only {free / 2**30:.2f} GiB of {where} memory is free: choose a smaller size")

    def reset(self, params: CHParams | None = None, field0=None) -> None:
        """(Re)build the stepper and the initial field from ``params``."""
        p = (params or self.params).validate()
        if field0 is not None:
            self._field0 = np.asarray(field0)
        if p.initial == "file":
            if self._field0 is None:
                raise InvalidParameter("initial condition 'file' needs a loaded field")
            f0 = self._field0
            if f0.ndim not in (2, 3) or len(set(f0.shape)) != 1:
                raise InvalidParameter(f"a loaded field must be square/cubic 2D or 3D, got shape {f0.shape}")
            p = p.with_changes(dim=f0.ndim, size=f0.shape[0])
        stepper = make_stepper(p, self.backend)
        self.check_memory(p, stepper.buffers)
        self.params = p
        self.stepper = stepper
        self.phi = None  # free the old field before allocating the new one
        self.phi = self.xp.asarray(self._initial_field(p))
        self._distribute()
        self._good = None
        self._adaptive = None
        self.t = 0.0
        self.step_count = 0
        self.compute_seconds = 0.0
        self.history.clear()
        self.record()

    def _initial_field(self, p: CHParams):
        if p.initial == "file":
            f = np.array(self._field0, dtype=self.dtype, copy=True)  # never alias the caller's array
            if not np.isfinite(f).all():
                raise InvalidParameter("the loaded field contains NaN or Inf values")
            return f
        f = self._generated_field(p)
        mask = domain_mask(p, self.xp)
        # a masked domain: cells outside hold φ = 0 and never change (they take no part)
        return f if mask is None else self.xp.where(mask, f, self.dtype(0)).astype(self.dtype, copy=False)

    def _generated_field(self, p: CHParams):
        if p.initial == "pfhub":
            return initial_phi(p.shape, p.dx, self.xp, self.dtype)
        if p.noise_source == "xp":          # the array library's generator (PCG64 / CuPy's default_rng)
            r = self.xp.random.default_rng(p.seed).random(p.shape, dtype=self.dtype)
        else:                               # paper 001's Marsaglia stream, identical on both backends
            r = rng.uniform_field(p.shape, p.seed, xp=self.xp, dtype=self.dtype)
        if p.initial == "droplets":
            # a quenched binary mixture (paper 000 Fig. 1b: 25/75): each cell is the
            # minority phase +1 with probability (1 + mean)/2, else −1
            q = self.dtype(0.5 * (1.0 + p.initial_mean))
            return self.xp.where(r < q, self.dtype(1), self.dtype(-1)).astype(self.dtype, copy=False)
        return (p.initial_mean + p.noise * (2 * r - 1)).astype(self.dtype, copy=False)

    def set_field(self, arr) -> None:
        """Replace φ in place (same shape), e.g. from a session file; history restarts."""
        a = np.asarray(arr)
        if a.shape != self.phi.shape:
            raise InvalidParameter(f"field shape {a.shape} does not match the grid {self.phi.shape}")
        if not np.isfinite(a).all():
            raise InvalidParameter("the field contains NaN or Inf values")
        self.phi[...] = self.xp.asarray(a, dtype=self.dtype)
        self.stepper.field_changed()
        self._adaptive = None
        self.history.clear()
        self.record()

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict:
        """The whole state of the run, enough to continue it bit for bit: ``params`` (a dict,
        :meth:`CHParams.to_dict`), ``phi`` (a host copy of the field), ``t``, ``steps``,
        ``history`` ({field: list} of :data:`HISTORY_FIELDS`) and ``history_index`` (the
        record numbers of the history points).  Plain types and NumPy arrays (sessions)."""
        h = self.history
        return {"params": self.params.to_dict(), "phi": self.field_numpy().copy(), "t": float(self.t),
                "steps": int(self.step_count), "history": h.as_dict(), "history_index": list(h.index)}

    def check_state_dict(self, state: dict) -> dict:
        """Validate a :meth:`state_dict` (e.g. read from a file) without changing anything; returns
        it normalised (``params`` a validated CHParams, ``history`` a History or None).  Raises
        InvalidParameter naming the first problem."""
        p = state["params"]
        p = (p if isinstance(p, CHParams) else CHParams.from_dict(p)).validate()
        phi = np.asarray(state["phi"])
        if phi.ndim != p.dim or phi.shape != p.shape:
            raise InvalidParameter(f"the saved field has shape {phi.shape}, the parameters say {p.shape}")
        if phi.dtype != np.dtype(p.dtype):
            raise InvalidParameter(f"the saved field is {phi.dtype}, the parameters say {p.dtype}")
        if not np.isfinite(phi).all():
            raise InvalidParameter("the saved field contains NaN or Inf values")
        t, steps = float(state.get("t", 0.0)), int(state.get("steps", 0))
        if not (np.isfinite(t) and t >= 0 and steps >= 0):
            raise InvalidParameter(f"the saved time t = {t} and step count {steps} must be finite and ≥ 0")
        hist = state.get("history")
        if hist is not None and not isinstance(hist, History):
            hist = History(capacity=self.history.capacity, log_bits=self.history.log_bits)
            try:
                hist.load(state["history"], state.get("history_index"))
            except (TypeError, ValueError) as exc:
                raise InvalidParameter(f"the saved diagnostics history is damaged ({exc})") from None
        return {**state, "params": p, "phi": phi, "t": t, "steps": steps, "history": hist}

    def load_state_dict(self, state: dict) -> None:
        """Continue from a :meth:`state_dict`: the parameters (stepper rebuilt), φ bit for bit, t,
        the step count and the history (when given; else it restarts at the loaded field).
        Everything is checked first (:meth:`check_state_dict`): on bad input nothing changes."""
        st = self.check_state_dict(state)
        p, phi = st["params"], st["phi"]
        if p.initial == "file":
            self.reset(p, field0=phi)
        else:
            self.reset(p)
            self.set_field(phi)
        self.t, self.step_count = st["t"], st["steps"]
        if st["history"] is not None:
            self.history.load(st["history"].as_dict(), st["history"].index)
        else:
            self.history.clear()
            self.record()                           # the loaded state, at its own t

    def load_field(self, arr) -> None:
        """Start from a saved field (2D square or 3D cubic array)."""
        self.reset(self.params.with_changes(initial="file"), field0=arr)

    def set_params(self, **changes) -> list[str]:
        """Apply parameter changes.  Live ones take effect at once; the returned
        list names those that need ``reset()`` (nothing is applied for those)."""
        if not changes:
            return []
        newp = self.params.with_changes(**changes)
        pending = [k for k in changes if k in NEEDS_RESET and getattr(newp, k) != getattr(self.params, k)]
        if pending:
            return pending
        rebuild = any(getattr(newp, k) != getattr(self.params, k)
                      for k in ("integrator", "variant", "gpus", "exchange"))
        if rebuild:
            stepper = make_stepper(newp, self.backend)
        self.params = newp
        self._adaptive = None
        if rebuild:
            self.stepper = stepper
            self._distribute()
        else:
            self.stepper.set_params(newp)
        return []

    def _distribute(self) -> None:
        """Multi-GPU stepper: place φ on the slabs now (memory and device notes up front)."""
        if hasattr(self.stepper, "scatter") and self.phi is not None:
            self.stepper.scatter(self.phi)

    @property
    def notes(self) -> list[str]:
        """What the stepper could not honour as asked (missing GPUs, fallbacks), for the UI."""
        return list(self.stepper.notes)

    # --------------------------------------------------------------- stepping
    @property
    def dt_max(self) -> float:
        return stability_limit(self.params)

    def step(self, n: int = 1, record: bool = True) -> None:
        """Advance n steps (``params.adaptive``: n accepted adaptive steps,
        kernels.cahn_hilliard.adaptive).  On NaN/Inf or |φ| > 1e3 the last good field is restored
        and SimulationBlowUp is raised with advice."""
        if n <= 0:
            return
        if self.params.adaptive:
            self._adaptive_steps(n, record)
            return
        xp = self.xp
        if self._good is None or self._good.shape != self.phi.shape:
            self._good = xp.empty_like(self.phi)
        self._good[...] = self.phi
        t0 = time.perf_counter()
        with np.errstate(all="ignore"):  # overflow is detected below, not warned about
            self.phi = self.stepper.step(self.phi, n)
            amax = float(xp.max(xp.abs(self.phi)))  # synchronises; NaN propagates
        self.compute_seconds += time.perf_counter() - t0
        if not np.isfinite(amax) or amax > BLOWUP_LIMIT:
            self.phi[...] = self._good
            self.stepper.field_changed()
            p = self.params
            hint = ("reduce dt below the explicit limit "
                    f"{self.dt_max:.4g}" if p.integrator != "spectral" else "reduce dt")
            if p.integrator != "spectral" and p.boundary == "periodic":
                hint += " or use the semi-implicit spectral integrator"
            raise SimulationBlowUp(
                f"the field blew up (|φ| → {'NaN/Inf' if not np.isfinite(amax) else f'{amax:.3g}'}) "
                f"within steps {self.step_count + 1}–{self.step_count + n} at dt = {p.dt:g}; "
                f"the last good field was kept. Try: {hint}.")
        self.step_count += n
        self.t += n * self.params.dt
        if record:
            self.record()

    def _adaptive_steps(self, n: int, record: bool) -> None:
        if self._adaptive is None:
            self._adaptive = AdaptiveController(self)
        t0 = time.perf_counter()
        try:
            for _ in range(n):
                self._adaptive.advance()
        finally:
            self.compute_seconds += time.perf_counter() - t0
        if record:
            self.record()

    @property
    def adaptive_log(self):
        """The accepted adaptive steps since the last reset or parameter change (a StepLog), or None."""
        return None if self._adaptive is None else self._adaptive.log

    def record(self) -> None:
        self.history.append(self.t, self.step_count, diagnostics.mean(self.phi),
                            diagnostics.free_energy(self.phi, self.params),
                            diagnostics.length_scale(self.phi, self.params.dx))

    # ------------------------------------------------------------ read access
    def field_numpy(self) -> np.ndarray:
        return self.backend.to_numpy(self.phi)

    def coarsening_exponent(self) -> float:
        return diagnostics.fit_power_law(self.history.t, self.history.length)[0]

    def summary(self) -> dict:
        h = self.history
        return {
            "backend": self.backend.name,
            "device": self.backend.device_name,
            "steps": self.step_count,
            "t": self.t,
            "dt": self.params.dt,
            "dt_max_explicit": self.dt_max,
            "mean_initial": h.mean[0],
            "mean_final": h.mean[-1],
            "free_energy_initial": h.energy[0],
            "free_energy_final": h.energy[-1],
            "length_scale_final": h.length[-1],
            "coarsening_exponent": self.coarsening_exponent(),
            **self.temporal_blocking(),
            **self.decomposition(),
        }

    def temporal_blocking(self) -> dict:
        """``{"steps_per_pass": k}``: the RK2 steps the stepper fuses per pass (issue #38; kernel E and
        cpu-threads: ``params.steps_per_pass`` resolved and fitted to the grid and device), else {}."""
        fn = getattr(self.stepper, "steps_per_pass", None)
        if fn is None or self.params.variant not in ("E", "cpu-threads"):
            return {}
        return {"steps_per_pass": int(fn())}

    def decomposition(self) -> dict:
        """How the field is split over GPUs: slabs (device, rows), exchange, notes."""
        st = self.stepper
        slabs = getattr(st, "slabs", None)
        if not slabs:
            d = {"gpus": 1, "notes": self.notes}
            if hasattr(st, "threads"):            # cpu-threads: the OpenMP thread count in use
                d["threads"] = st.threads
            return d
        return {"gpus": len(slabs), "gpu_devices": [s.device for s in slabs],
                "virtual_gpus": not self.backend.is_gpu,
                "slab_rows": [[s.y0, s.y1] for s in slabs], "exchange": st.exchange,
                "halo": st.radius, "cuda_graphs": bool(getattr(st, "graph", False)),
                "notes": self.notes}
