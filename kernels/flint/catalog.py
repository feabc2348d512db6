"""Flattened benchmark models of paper 004 (Okuyama 2013) Table 5.1, built from the published equations.

"Flattened": every cell's equations are written out in one :class:`Model` (names suffixed ``_i``),
as the thesis's compiler sees them — not one cell replicated by ``Network`` (one thread per cell).

* :func:`wang_buzsaki` — Wang X-J & Buzsáki G (1996) J Neurosci 16:6402–6413, N interneurons
  (V, h, n, s each), all-to-all GABA_A inhibition:
      C dV_i/dt = −g_Na m∞³ h (V−E_Na) − g_K n⁴ (V−E_K) − g_L (V−E_L) − I_syn,i + I_app,i
      dh/dt = φ(α_h(1−h) − β_h h),  dn/dt = φ(α_n(1−n) − β_n n),  m∞ = α_m/(α_m+β_m)
      ds_i/dt = α F(V_i)(1−s_i) − β s_i,  F(V) = 1/(1+exp(−(V−θ_syn)/2))
      I_syn,i = (g_syn/N) (Σ_j s_j)(V_i − E_syn)   — one N-term sum (the thesis's ≥32-term sums)
  φ = 5, g_Na = 35, E_Na = 55, g_K = 9, E_K = −90, g_L = 0.1, E_L = −65, α = 12, β = 0.1,
  E_syn = −75 mV, g_syn = 0.1 mS/cm² (total); I_app,i ~ N(I_mean, I_sd) (heterogeneity, seeded).
* :func:`rybak` — spinal locomotor CPG after Rybak, Shevtsova, Lafreniere-Roula & McCrea (2006)
  J Physiol 577:617 (two-level RG/PF network, 14 populations); simplifications in its docstring.
* :func:`lr_network` — Luo–Rudy 1991 cells (resources/models/luo_rudy_1991.flint) in a line or ring,
  coupled on V exactly like ``Network``: dV_i/dt = f_i + D((V_{i−1} + V_{i+1}) − 2V_i), a missing
  neighbour of a line end is the cell itself; stimulus only in the first 5 cells.
* :func:`mix` — Wang + Rybak + LR-100 concatenated (prefixes ``wang_``, ``rybak_``, ``lr_``).

Sizes (``functions`` = named assignments, ``ODEs`` = states) vs thesis Table 5.1:

=========  ===============  ===============  ===================================================
model      ours fn / ODE    thesis fn / ODE  note
=========  ===============  ===============  ===================================================
Wang       1,200 / 400      1,200 / 400      12 functions, 4 ODEs a neuron
Rybak      1,980 / 474      1,362 / 480      14 pops × 10 neurons; ODE-only synapses (rybak())
LR-Ring    2,640 / 640      2,647 / 640      33 functions a cell (32 LR + 1 gap-junction term)
LR-100     3,300 / 800      3,298 / 800
Mix        6,480 / 1,674    5,860 / 1,680    the three above
LR-1000    33,000 / 8,000   32,998 / 8,000   LR-N: 33N / 8N (thesis 33N − 2 / 8N)
=========  ===============  ===============  ===================================================
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidParameter
from .expr import Expr, parse, sym
from .model import Model, parse_text
from .shipped import MODELS_DIR

__all__ = ["wang_buzsaki", "rybak", "lr_network", "mix", "CATALOG", "build", "synchrony"]


# --- helpers ------------------------------------------------------------------------------------
def _rename(e: Expr, mapping: dict) -> Expr:
    """Rename symbols (mapping name → new name); unmapped names stay."""
    if e.op == "sym":
        n = mapping.get(e.value)
        return e if n is None else Expr("sym", (), n)
    if not e.args:
        return e
    return Expr(e.op, tuple(_rename(a, mapping) for a in e.args), e.value)


def _nsum(names) -> Expr:
    """One n-ary sum Σ names (a single ADD node, as the thesis's parallel-sum optimisation needs)."""
    names = list(names)
    return Expr("add", tuple(sym(n) for n in names)) if len(names) > 1 else sym(names[0])


def _prefixed(m: Model, prefix: str) -> Model:
    """All names of ``m`` (not the time) with ``prefix``."""
    ren = {n: prefix + n for n in list(m.states) + list(m.params) + list(m.assigns)}
    out = Model(name=prefix + m.name, time=m.time, time_units=m.time_units)
    out.params = {ren[k]: v for k, v in m.params.items()}
    out.states = {ren[k]: v for k, v in m.states.items()}
    out.assigns = {ren[k]: _rename(e, ren) for k, e in m.assigns.items()}
    out.odes = {ren[k]: _rename(e, ren) for k, e in m.odes.items()}
    out.units = {ren.get(k, k): u for k, u in m.units.items()}
    return out


def _r(v: float) -> float:
    """12 significant digits: random draws that survive text formats (libsbml writes 15) unchanged."""
    return float(f"{float(v):.12g}")


def synchrony(V: np.ndarray) -> float:
    """Golomb–Rinzel coherence χ ∈ [0, 1] of traces V (k samples × N cells), used by Wang & Buzsáki 1996:
    χ² = var_t(mean_i V_i) / mean_i var_t(V_i)."""
    V = np.asarray(V, dtype=float)
    pop = V.mean(axis=1).var()
    ind = V.var(axis=0).mean()
    return float(math.sqrt(pop / ind)) if ind > 0 else 1.0


# --- Wang & Buzsaki 1996 ------------------------------------------------------------------------
_WB_CELL = {
    "alpha_m": "0.1*(V + 35.0)/(1.0 - exp(-(V + 35.0)/10.0))",
    "beta_m": "4.0*exp(-(V + 60.0)/18.0)",
    "m_inf": "alpha_m/(alpha_m + beta_m)",
    "alpha_h": "0.07*exp(-(V + 58.0)/20.0)",
    "beta_h": "1.0/(exp(-(V + 28.0)/10.0) + 1.0)",
    "alpha_n": "0.01*(V + 34.0)/(1.0 - exp(-(V + 34.0)/10.0))",
    "beta_n": "0.125*exp(-(V + 44.0)/80.0)",
    "I_Na": "g_Na*m_inf**3.0*h*(V - E_Na)",
    "I_K": "g_K*n**4.0*(V - E_K)",
    "I_L": "g_L*(V - E_L)",
    "F_syn": "1.0/(1.0 + exp(-(V - theta_syn)/2.0))",
}
_WB_ODE = {
    "V": "(I_app - I_Na - I_K - I_L - I_syn)/C",
    "h": "phi*(alpha_h*(1.0 - h) - beta_h*h)",
    "n": "phi*(alpha_n*(1.0 - n) - beta_n*n)",
    "s": "alpha_syn*F_syn*(1.0 - s) - beta_syn*s",
}
_WB_PARAMS = {"C": (1.0, "uF/cm^2"), "g_Na": (35.0, "mS/cm^2"), "E_Na": (55.0, "mV"), "g_K": (9.0, "mS/cm^2"),
              "E_K": (-90.0, "mV"), "g_L": (0.1, "mS/cm^2"), "E_L": (-65.0, "mV"), "phi": (5.0, "1"),
              "alpha_syn": (12.0, "1/ms"), "beta_syn": (0.1, "1/ms"), "theta_syn": (0.0, "mV"),
              "E_syn": (-75.0, "mV"), "g_syn": (0.1, "mS/cm^2")}
_WB_UNITS = {"alpha_m": "1/ms", "beta_m": "1/ms", "m_inf": "1", "alpha_h": "1/ms", "beta_h": "1/ms",
             "alpha_n": "1/ms", "beta_n": "1/ms", "I_Na": "uA/cm^2", "I_K": "uA/cm^2", "I_L": "uA/cm^2",
             "F_syn": "1", "I_syn": "uA/cm^2", "V": "mV", "h": "1", "n": "1", "s": "1", "I_app": "uA/cm^2"}


def _wb_rates(V):
    am = 0.1 * (V + 35) / (1 - math.exp(-(V + 35) / 10))
    bm = 4 * math.exp(-(V + 60) / 18)
    ah, bh = 0.07 * math.exp(-(V + 58) / 20), 1 / (math.exp(-(V + 28) / 10) + 1)
    an, bn = 0.01 * (V + 34) / (1 - math.exp(-(V + 34) / 10)), 0.125 * math.exp(-(V + 44) / 80)
    return am, bm, ah, bh, an, bn


def wang_buzsaki(n: int = 100, g_syn: float = 0.1, I_mean: float = 1.0, I_sd: float = 0.03,
                 seed: int = 1, V0: tuple = (-70.0, -50.0)) -> Model:
    """Wang–Buzsaki 1996 network of ``n`` interneurons, all-to-all inhibition (module docstring).

    I_app,i ~ Normal(I_mean, I_sd) µA/cm² and V_i(0) ~ Uniform(V0) mV (h, n at steady state, s = 0),
    both from ``numpy.random.default_rng(seed)``: the paper's heterogeneous drive and random starts.
    g_syn is the total synaptic conductance; each synapse has g_syn/n."""
    if n < 1:
        raise InvalidParameter("wang_buzsaki: n must be ≥ 1")
    rng = np.random.default_rng(seed)
    I_app = rng.normal(I_mean, I_sd, n) if I_sd > 0 else np.full(n, float(I_mean))
    V_init = rng.uniform(V0[0], V0[1], n) if V0[1] > V0[0] else np.full(n, float(V0[0]))
    m = Model(name=f"wang_buzsaki_{n}", time="t", time_units="ms",
              source=(f"Wang X-J & Buzsaki G (1996) J Neurosci 16:6402-6413: {n} interneurons, all-to-all "
                      f"GABA_A inhibition, I_syn,i = g_syn/N * (sum_j s_j) * (V_i - E_syn).\n"
                      f"Generated by kernels/flint/catalog.py wang_buzsaki(n={n}, g_syn={g_syn}, I_mean={I_mean}, "
                      f"I_sd={I_sd}, seed={seed}); I_app_i ~ N(I_mean, I_sd), V_i(0) ~ U{tuple(V0)}."))
    for p, (v, u) in _WB_PARAMS.items():
        m.params[p] = float(g_syn) if p == "g_syn" else v
        m.units[p] = u
    m.params["N_syn"] = float(n)
    m.units["N_syn"] = "1"
    cell = {k: parse(v) for k, v in _WB_CELL.items()}
    odes = {k: parse(v) for k, v in _WB_ODE.items()}
    local = list(_WB_CELL) + ["V", "h", "n", "s", "I_app", "I_syn"]
    s_all = _nsum(f"s_{j}" for j in range(n))
    for i in range(n):
        ren = {k: f"{k}_{i}" for k in local}
        m.params[f"I_app_{i}"] = _r(I_app[i])
        V = _r(V_init[i])
        am, bm, ah, bh, an, bn = _wb_rates(V)
        m.states.update({f"V_{i}": V, f"h_{i}": _r(ah / (ah + bh)), f"n_{i}": _r(an / (an + bn)), f"s_{i}": 0.0})
        for k, e in cell.items():
            m.assigns[ren[k]] = _rename(e, ren)
        m.assigns[f"I_syn_{i}"] = Expr("mul", (Expr("div", (sym("g_syn"), sym("N_syn"))), s_all,
                                               Expr("sub", (sym(f"V_{i}"), sym("E_syn")))))
        for k, e in odes.items():
            m.odes[ren[k]] = _rename(e, ren)
        for k in local:
            m.units[ren[k]] = _WB_UNITS[k]
    return m.validate()


# --- Rybak et al. 2006 ----------------------------------------------------------------------------
#: populations of the reduced (one-limb, flexor/extensor) CPG of Rybak et al. 2006a, Fig. 2A
RYBAK_POPS = ("RG_F", "RG_E", "InRG_F", "InRG_E", "PF_F", "PF_E", "InPF_F", "InPF_E", "Ia_F", "Ia_E",
              "R_F", "R_E", "Mn_F", "Mn_E")
#: (source, target, weight): excitatory > 0, inhibitory < 0 (Rybak et al. 2006a, Table 2)
RYBAK_SYNAPSES = (
    ("RG_E", "RG_E", 0.0125), ("RG_E", "RG_F", 0.0125), ("RG_F", "RG_E", 0.0125), ("RG_F", "RG_F", 0.0125),
    ("RG_F", "InRG_E", 0.45), ("InRG_E", "RG_E", -0.115), ("RG_E", "InRG_F", 0.45), ("InRG_F", "RG_F", -0.115),
    ("RG_E", "PF_E", 0.0075), ("InRG_E", "PF_E", -0.05), ("InPF_E", "PF_E", -0.35),
    ("RG_F", "PF_F", 0.0075), ("InRG_F", "PF_F", -0.05), ("InPF_F", "PF_F", -0.35),
    ("PF_F", "InPF_E", 0.2), ("PF_E", "InPF_F", 0.2),
    ("PF_E", "Ia_E", 0.4), ("Ia_F", "Ia_E", -0.1), ("R_E", "Ia_E", -0.1),
    ("PF_F", "Ia_F", 0.4), ("Ia_E", "Ia_F", -0.1), ("R_F", "Ia_F", -0.1),
    ("Mn_E", "R_E", 0.25), ("R_F", "R_E", -0.1), ("Mn_F", "R_F", 0.25), ("R_E", "R_F", -0.1),
    ("PF_E", "Mn_E", 0.5), ("Ia_F", "Mn_E", -0.6), ("R_E", "Mn_E", -0.2),
    ("PF_F", "Mn_F", 0.5), ("Ia_E", "Mn_F", -0.6), ("R_F", "Mn_F", -0.2),
)
#: tonic (MLR) drive d to populations (Rybak et al. 2006a, Fig. 2 legend values for the E-dominant case)
RYBAK_DRIVE = {"RG_E": 0.5, "RG_F": 0.43, "PF_E": 0.5, "PF_F": 0.5}
_RY_NAP = ("RG_F", "RG_E", "PF_F", "PF_E")

_RY_CELL = {
    "m_Na_inf": "1.0/(1.0 + exp(-(V + 35.0)/7.8))",
    "h_Na_inf": "1.0/(1.0 + exp((V + 55.0)/7.0))",
    "tau_h_Na": "30.0/(exp((V + 50.0)/15.0) + exp(-(V + 50.0)/16.0))",
    "m_K_inf": "1.0/(1.0 + exp(-(V + 28.0)/15.0))",
    "tau_m_K": "7.0/(exp((V + 40.0)/40.0) + exp(-(V + 40.0)/50.0))",
    "I_Na": "g_Na*m_Na_inf**3.0*h_Na*(V - E_Na)",
    "I_K": "g_K*m_K**4.0*(V - E_K)",
    "I_L": "g_L*(V - E_L)",
    "F_out": "1.0/(1.0 + exp(-(V - theta_out)/k_out))",
}
_RY_NAP_CELL = {
    "m_NaP_inf": "1.0/(1.0 + exp(-(V + 47.1)/3.1))",
    "h_NaP_inf": "1.0/(1.0 + exp((V + 59.0)/8.0))",
    "tau_h_NaP": "tau_h_NaP_max/cosh((V + 59.0)/16.0)",
    "I_NaP": "g_NaP*m_NaP_inf*h_NaP*(V - E_Na)",
}
_RY_PARAMS = {"C": (1.0, "uF/cm^2"), "g_Na": (30.0, "mS/cm^2"), "g_K": (5.0, "mS/cm^2"), "g_L": (0.1, "mS/cm^2"),
              "E_Na": (55.0, "mV"), "E_K": (-80.0, "mV"), "E_SynE": (-10.0, "mV"), "E_SynI": (-70.0, "mV"),
              "g_E": (0.05, "mS/cm^2"), "g_I": (0.05, "mS/cm^2"), "g_Ed": (0.05, "mS/cm^2"),
              "tau_syn": (5.0, "ms"), "spike_width": (1.0, "ms"), "theta_out": (0.0, "mV"), "k_out": (2.0, "mV"),
              "tau_h_NaP_max": (600.0, "ms")}
_RY_GNAP = {"RG": 0.25, "PF": 0.1}
#: Overrides of the paper's values with which this simplified (ODE-only) network shows the
#: flexor–extensor alternation (found 2026-11-23 by a random search over g_K, g_NaP_RG, drives, E_L
#: and the RG↔RG / RG→InRG / InRG→RG weights at 5 neurons a population, confirmed at 10): stronger
#: reciprocal inhibition between the half-centres, weaker mutual excitation, less tonic drive, more
#: I_NaP.  RG-F/RG-E activity correlation −0.98, period ≈ 1.2 s, extensor-dominant (duty 0.62 vs 0.35).
RYBAK_RHYTHM = {"g_K": 4.5, "g_NaP_RG": 0.4, "d_RG_F": 0.25, "d_RG_E": 0.24, "d_PF_F": 0.25, "d_PF_E": 0.25,
                "w_RG_E_RG_E": 0.0075, "w_RG_E_RG_F": 0.0075, "w_RG_F_RG_E": 0.0075, "w_RG_F_RG_F": 0.0075,
                "w_RG_F_InRG_E": 1.5, "w_RG_E_InRG_F": 1.5, "w_InRG_E_RG_E": 0.28, "w_InRG_F_RG_F": 0.28}
RYBAK_RHYTHM_E_L = (-63.0, 1.3)        # E_L mean and spread (mV) of the rhythm set (paper set: −64, 0.64)


def rybak(n_per_pop: int = 10, seed: int = 1, E_L_mean: float | None = None, E_L_sd: float | None = None,
          drive: dict | None = None, tuning: str = "rhythm") -> Model:
    """Spinal locomotor CPG after Rybak, Shevtsova, Lafreniere-Roula & McCrea (2006) J Physiol 577:617.

    Populations (Fig. 2A): rhythm generator RG-F/E, their inhibitory interneurons InRG-F/E, pattern
    formation PF-F/E, InPF-F/E, Ia interneurons Ia-F/E, Renshaw cells R-F/E, motoneurons Mn-F/E;
    connection weights w from Table 2 (:data:`RYBAK_SYNAPSES`), tonic drive d (:data:`RYBAK_DRIVE`).
    Each neuron (single compartment, Hodgkin–Huxley type, 2006a Appendix):

        C dV/dt = −I_Na − I_NaP − I_K − I_L − g_SynE (V − E_SynE) − g_SynI (V − E_SynI)
        I_Na = g_Na m∞³ h (V−E_Na),  I_NaP = g_NaP m_NaP∞ h_NaP (V−E_Na),  I_K = g_K m_K⁴ (V−E_K)
        τ_x(V) dx/dt = x∞(V) − x  for x = h (Na), m_K, h_NaP (τ_hNaP = τ_max / cosh((V+59)/16))
        g_SynE,i = g_E Σ_P w_{P→i} S_P + g_Ed d_i,   g_SynI,i = g_I Σ_P |w_{P→i}| S_P

    I_NaP only in RG (g_NaP = 0.25) and PF (0.1) neurons; E_L,i ~ N(E_L_mean, E_L_sd) (heterogeneity,
    seeded).  What is simplified (the paper integrates spike times; this is an ODE-only model):

    * synapses: the paper's g = ḡ Σ_spikes exp(−(t−t_k)/τ_syn) of every presynaptic neuron becomes one
      trace per source population, dS_P/dt = Σ_{j∈P} F(V_j)/spike_width − S_P/τ_syn with the spike
      detector F(V) = 1/(1+exp(−V/2)) (≈ 1 ms above 0 mV a spike, so each spike adds ≈ 1 to S_P).
      With the paper's uniform population-to-population weights this is the same linear filter;
      the thesis's PHML version uses post-step "special functions" (spike detection) instead;
    * motoneurons are one compartment with the interneuron currents (paper: two compartments with
      CaN, CaL and K(Ca) currents, Booth et al. 1997) — no Ca dynamics;
    * m_Na is instantaneous; the MLR drive is a constant conductance; no afferent inputs (2006b).

    * g_K = 5 mS/cm² (with 1 the I_NaP neurons sit in depolarisation block in this simplified
      neuron).  ``tuning="paper"`` keeps the paper's Table 2 weights and drives: with these
      simplifications every population then fires tonically, no rhythm.  ``tuning="rhythm"`` (the
      default) applies :data:`RYBAK_RHYTHM` and :data:`RYBAK_RHYTHM_E_L`, with which the network
      alternates flexor and extensor bursts (RG, PF and Mn; period ≈ 1.2 s) as in the paper's Fig. 3
      — the rhythm comes from the network (reciprocal inhibition + slow I_NaP inactivation); a
      single RG neuron spikes tonically.  tests/test_flint_models.py checks the alternation.

    Size: 14 populations × n_per_pop neurons; 3 ODEs a neuron (V, h_Na, m_K) + h_NaP in RG/PF + 14
    population traces = 46·n_per_pop + 14 ODEs (n_per_pop = 10: 474, thesis 480; the paper's
    populations have 20 neurons: rybak(20) has 934)."""
    if n_per_pop < 1:
        raise InvalidParameter("rybak: n_per_pop must be ≥ 1")
    if tuning not in ("rhythm", "paper"):
        raise InvalidParameter(f"rybak: tuning must be 'rhythm' or 'paper', got {tuning!r}")
    rhythm = tuning == "rhythm"
    E_L_mean = E_L_mean if E_L_mean is not None else (RYBAK_RHYTHM_E_L[0] if rhythm else -64.0)
    E_L_sd = E_L_sd if E_L_sd is not None else (RYBAK_RHYTHM_E_L[1] if rhythm else 0.64)
    user_drive = drive is not None
    drive = dict(RYBAK_DRIVE if drive is None else drive)
    rng = np.random.default_rng(seed)
    m = Model(name=f"rybak_2006_{n_per_pop}", time="t", time_units="ms",
              source=("After Rybak IA, Shevtsova NA, Lafreniere-Roula M & McCrea DA (2006) J Physiol 577:617-639: "
                      "two-level locomotor CPG, 14 populations.\nGenerated by kernels/flint/catalog.py "
                      f"rybak(n_per_pop={n_per_pop}, seed={seed}, tuning={tuning!r}); ODE-only synapses "
                      "(population traces S_P), "
                      "single-compartment motoneurons (see the docstring)."))
    for p, (v, u) in _RY_PARAMS.items():
        m.params[p] = v
        m.units[p] = u
    for g, v in _RY_GNAP.items():
        m.params[f"g_NaP_{g}"] = v
        m.units[f"g_NaP_{g}"] = "mS/cm^2"
    for pop, d in drive.items():
        m.params[f"d_{pop}"] = float(d)
        m.units[f"d_{pop}"] = "1"
    for src, dst, w in RYBAK_SYNAPSES:
        m.params[f"w_{src}_{dst}"] = float(abs(w))
        m.units[f"w_{src}_{dst}"] = "1"
    cell = {k: parse(v) for k, v in _RY_CELL.items()}
    napc = {k: parse(v) for k, v in _RY_NAP_CELL.items()}
    inputs = {p: [(s, w) for s, d, w in RYBAK_SYNAPSES if d == p] for p in RYBAK_POPS}
    names = {p: [f"{p}_{k}" for k in range(n_per_pop)] for p in RYBAK_POPS}
    units = {"m_Na_inf": "1", "h_Na_inf": "1", "tau_h_Na": "ms", "m_K_inf": "1", "tau_m_K": "ms",
             "I_Na": "uA/cm^2", "I_K": "uA/cm^2", "I_L": "uA/cm^2", "F_out": "1", "m_NaP_inf": "1",
             "h_NaP_inf": "1", "tau_h_NaP": "ms", "I_NaP": "uA/cm^2", "g_SynE": "mS/cm^2",
             "g_SynI": "mS/cm^2", "I_SynE": "uA/cm^2", "I_SynI": "uA/cm^2"}
    for pop in RYBAK_POPS:
        nap = pop in _RY_NAP
        exc = [(s, w) for s, w in inputs[pop] if w > 0]
        inh = [(s, w) for s, w in inputs[pop] if w < 0]
        for nm in names[pop]:
            local = list(_RY_CELL) + (list(_RY_NAP_CELL) if nap else []) + ["V", "h_Na", "m_K", "h_NaP", "E_L"]
            ren = {k: f"{k}_{nm}" for k in local}
            if nap:
                ren["g_NaP"] = f"g_NaP_{pop[:2]}"
            V0 = _r(-60.0 + float(rng.uniform(-5.0, 5.0)))
            m.params[ren["E_L"]] = _r(rng.normal(E_L_mean, E_L_sd))
            m.units[ren["E_L"]] = "mV"
            for k, e in cell.items():
                m.assigns[ren[k]] = _rename(e, ren)
            if nap:
                for k, e in napc.items():
                    m.assigns[ren[k]] = _rename(e, ren)
            ge = [Expr("mul", (sym(f"w_{s}_{pop}"), sym(f"S_{s}"))) for s, _w in exc]
            if pop in drive:
                ge.append(Expr("mul", (sym("g_Ed"), sym(f"d_{pop}"))))
                ge_expr = Expr("add", (Expr("mul", (sym("g_E"), Expr("add", tuple(ge[:-1])))), ge[-1])) \
                    if len(ge) > 1 else ge[-1]
            else:
                ge_expr = Expr("mul", (sym("g_E"), Expr("add", tuple(ge)) if len(ge) > 1 else ge[0])) if ge \
                    else Expr("const", (), 0.0)
            gi = [Expr("mul", (sym(f"w_{s}_{pop}"), sym(f"S_{s}"))) for s, _w in inh]
            gi_expr = Expr("mul", (sym("g_I"), Expr("add", tuple(gi)) if len(gi) > 1 else gi[0])) if gi \
                else Expr("const", (), 0.0)
            m.assigns[f"g_SynE_{nm}"] = ge_expr
            m.assigns[f"g_SynI_{nm}"] = gi_expr
            V = sym(ren["V"])
            m.assigns[f"I_SynE_{nm}"] = Expr("mul", (sym(f"g_SynE_{nm}"), Expr("sub", (V, sym("E_SynE")))))
            m.assigns[f"I_SynI_{nm}"] = Expr("mul", (sym(f"g_SynI_{nm}"), Expr("sub", (V, sym("E_SynI")))))
            cur = [ren["I_Na"]] + ([ren["I_NaP"]] if nap else []) + [ren["I_K"], ren["I_L"], f"I_SynE_{nm}",
                                                                    f"I_SynI_{nm}"]
            m.states[ren["V"]] = V0
            m.states[ren["h_Na"]] = _r(1.0 / (1.0 + math.exp((V0 + 55.0) / 7.0)))
            m.states[ren["m_K"]] = _r(1.0 / (1.0 + math.exp(-(V0 + 28.0) / 15.0)))
            m.odes[ren["V"]] = Expr("div", (Expr("neg", (_nsum(cur),)), sym("C")))
            m.odes[ren["h_Na"]] = parse(f"(h_Na_inf_{nm} - h_Na_{nm})/tau_h_Na_{nm}")
            m.odes[ren["m_K"]] = parse(f"(m_K_inf_{nm} - m_K_{nm})/tau_m_K_{nm}")
            if nap:
                m.states[ren["h_NaP"]] = _r(rng.uniform(0.3, 0.7))
                m.odes[ren["h_NaP"]] = parse(f"(h_NaP_inf_{nm} - h_NaP_{nm})/tau_h_NaP_{nm}")
            for k in local:
                if k in units:
                    m.units[ren[k]] = units[k]
            for k in ("g_SynE", "g_SynI", "I_SynE", "I_SynI"):
                m.units[f"{k}_{nm}"] = units[k]
            m.units.update({ren["V"]: "mV", ren["h_Na"]: "1", ren["m_K"]: "1"})
            if nap:
                m.units[ren["h_NaP"]] = "1"
    for pop in RYBAK_POPS:
        m.states[f"S_{pop}"] = 0.0
        m.units[f"S_{pop}"] = "1"
        m.odes[f"S_{pop}"] = Expr("sub", (Expr("div", (_nsum(f"F_out_{nm}" for nm in names[pop]), sym("spike_width"))),
                                         Expr("div", (sym(f"S_{pop}"), sym("tau_syn")))))
    if rhythm:                                   # an explicit ``drive`` argument wins over the set's drives
        m.params.update({k: v for k, v in RYBAK_RHYTHM.items() if not (k.startswith("d_") and user_drive)})
    return m.validate()


# --- Luo-Rudy lines and rings ------------------------------------------------------------------------
_LR_FILE = MODELS_DIR / "luo_rudy_1991.flint"


def _lr_cell() -> Model:
    return parse_text(_LR_FILE.read_text(encoding="utf-8"))


def lr_network(n: int = 100, kind: str = "line", D: float = 1.0, stim_cells: int = 5) -> Model:
    """``n`` Luo–Rudy 1991 cells, flattened, coupled on V (the project's ``Network`` semantics):
    dV_i/dt = −(I_stim,i + I_ion,i)/C + dV_gap_i,  dV_gap_i = D((V_{i−1} + V_{i+1}) − 2 V_i)  [1/ms · mV];
    a line's end cell is its own missing neighbour (zero flux), a ring wraps.  Per-cell parameter
    stim_amplitude_i = −25.5 µA/cm² in the first ``stim_cells`` cells, 0 elsewhere (as
    ``runtimes.network_stimulus``); every other parameter is shared."""
    if kind not in ("line", "ring"):
        raise InvalidParameter(f"lr_network: kind must be line or ring, got {kind!r}")
    if n < 2:
        raise InvalidParameter("lr_network: n must be ≥ 2")
    cell = _lr_cell()
    m = Model(name=f"lr_{kind}_{n}", time=cell.time, time_units=cell.time_units,
              source=(f"{n} Luo-Rudy 1991 cells (Luo CH & Rudy Y, Circ Res 68:1501-1526) in a {kind}, coupled on V: "
                      f"dV_i/dt += D*((V_(i-1) + V_(i+1)) - 2*V_i), D = {D} 1/ms; stimulus in the first "
                      f"{stim_cells} cells.\nGenerated by kernels/flint/catalog.py lr_network(n={n}, kind={kind!r}, "
                      f"D={D}); paper 004 (Okuyama 2013) Table 5.1 LR-Ring / LR-N."))
    for p, v in cell.params.items():
        if p != "stim_amplitude":
            m.params[p] = v
            if p in cell.units:
                m.units[p] = cell.units[p]
    m.params["D"] = float(D)
    m.units["D"] = "1/ms"
    local = list(cell.states) + list(cell.assigns) + ["stim_amplitude"]
    amp = cell.params["stim_amplitude"]
    for i in range(n):
        ren = {k: f"{k}_{i}" for k in local}
        m.params[f"stim_amplitude_{i}"] = amp if i < stim_cells else 0.0
        m.units[f"stim_amplitude_{i}"] = cell.units.get("stim_amplitude", "")
        for s, v in cell.states.items():
            m.states[ren[s]] = v
        for k, e in cell.assigns.items():
            m.assigns[ren[k]] = _rename(e, ren)
        if kind == "ring":
            lo, hi = (i - 1) % n, (i + 1) % n
        else:
            lo, hi = max(i - 1, 0), min(i + 1, n - 1)
        m.assigns[f"dV_gap_{i}"] = Expr("mul", (sym("D"), Expr("sub", (
            Expr("add", (sym(f"V_{lo}"), sym(f"V_{hi}"))), Expr("mul", (Expr("const", (), 2.0), sym(f"V_{i}")))))))
        for s, e in cell.odes.items():
            e = _rename(e, ren)
            m.odes[ren[s]] = Expr("add", (e, sym(f"dV_gap_{i}"))) if s == "V" else e
        for k in local:
            if k in cell.units:
                m.units[ren[k]] = cell.units[k]
        m.units[f"dV_gap_{i}"] = "mV/ms"
    return m.validate()


# --- Mix -------------------------------------------------------------------------------------------
def mix() -> Model:
    """Wang (100 neurons) + Rybak + LR-100 in one model, names prefixed wang_/rybak_/lr_ (Table 5.1 Mix)."""
    parts = [_prefixed(wang_buzsaki(), "wang_"), _prefixed(rybak(), "rybak_"), _prefixed(lr_network(100), "lr_")]
    m = Model(name="mix", time="t", time_units="ms",
              source="Paper 004 Table 5.1 Mix: Wang-Buzsaki 100 + Rybak 2006 CPG + LR-100 line, concatenated "
                     "(independent sub-models sharing the time t).\nGenerated by kernels/flint/catalog.py mix().")
    for p in parts:
        for attr in ("params", "states", "assigns", "odes", "units"):
            getattr(m, attr).update(getattr(p, attr))
    return m.validate()


#: name → builder (no arguments); load_model(name) builds these
CATALOG = {
    "wang": wang_buzsaki,
    "rybak": rybak,
    "lr-ring": lambda: lr_network(80, "ring"),
    "lr-100": lambda: lr_network(100, "line"),
    "mix": mix,
    **{f"lr-{k}000": (lambda k=k: lr_network(1000 * k, "line")) for k in range(1, 6)},
}

#: thesis Table 5.1 sizes (functions, ODEs); LR-2000..5000 from functions = 33N − 2, ODEs = 8N
THESIS_SIZES = {"luo-rudy": (31, 8), "wang": (1200, 400), "rybak": (1362, 480), "lr-ring": (2647, 640),
                "lr-100": (3298, 800), "mix": (5860, 1680),
                **{f"lr-{k}000": (33 * 1000 * k - 2, 8000 * k) for k in range(1, 6)}}


def build(name: str) -> Model:
    """Build a catalog model by name (case-insensitive; "_" accepted for "-")."""
    key = str(name).lower().replace("_", "-")
    if key not in CATALOG:
        raise InvalidParameter(f"no catalog model {name!r} (have {', '.join(CATALOG)})")
    return CATALOG[key]()
