"""CahnHilliard.state_dict / load_state_dict: a run continues bit for bit from its saved state,
and bad states are refused before anything changes."""
import numpy as np
import pytest

from kernels.cahn_hilliard import CahnHilliard, CHParams
from kernels.errors import InvalidParameter


def _sim(cpu, rng, **kw):
    p = CHParams(size=24, seed=int(rng.integers(1 << 30)), **kw).validate()
    return CahnHilliard(p, cpu)


@pytest.mark.parametrize("initial", ["spinodal", "droplets"])
def test_state_round_trip_continues_bit_for_bit(cpu, rng, initial):
    a = _sim(cpu, rng, initial=initial)
    a.step(int(rng.integers(5, 40)))
    sd = a.state_dict()
    b = CahnHilliard(CHParams(size=16, seed=1).validate(), cpu)       # another run, other grid
    b.load_state_dict(sd)
    assert b.params == a.params and b.t == a.t and b.step_count == a.step_count
    assert np.array_equal(b.field_numpy(), a.field_numpy())
    assert b.history.as_dict() == a.history.as_dict() and b.history.index == a.history.index
    a.step(7)
    b.step(7)
    assert np.array_equal(b.field_numpy(), a.field_numpy())
    assert b.history.as_dict() == a.history.as_dict()
    sd["phi"][0, 0] += 1.0                                               # a copy, not the live field
    assert not np.array_equal(sd["phi"], a.field_numpy())


def test_state_without_history_restarts_it_at_the_saved_time(cpu, rng):
    a = _sim(cpu, rng)
    a.step(12)
    sd = {**a.state_dict(), "history": None}
    b = CahnHilliard(CHParams(size=24).validate(), cpu)
    b.load_state_dict(sd)
    assert b.history.t == [a.t] and b.history.steps == [a.step_count]


@pytest.mark.parametrize("damage, words", [
    (lambda s: s.update(phi=s["phi"][:-1]), "shape"),
    (lambda s: s.update(phi=s["phi"].astype(np.float64)), "float64"),
    (lambda s: s["phi"].__setitem__((1, 1), np.nan), "NaN"),
    (lambda s: s.update(t=-1.0), "≥ 0"),
    (lambda s: s["history"]["t"].pop(), "history"),
    (lambda s: s.update(history_index=list(reversed(s["history_index"]))), "history"),
])
def test_bad_states_change_nothing(cpu, rng, damage, words):
    a = _sim(cpu, rng)
    a.step(9)
    sd = a.state_dict()
    damage(sd)
    b = _sim(cpu, rng)
    b.step(3)
    before = (b.params, b.t, b.step_count, b.field_numpy().copy(), b.history.as_dict())
    with pytest.raises(InvalidParameter, match=words):
        b.load_state_dict(sd)
    assert (b.params, b.t, b.step_count) == before[:3]
    assert np.array_equal(b.field_numpy(), before[3]) and b.history.as_dict() == before[4]
