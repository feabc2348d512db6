"""The one registry type (issue 37): duplicates, lookups by name or class, lazy entries, filters."""
import pytest

from kernels.errors import InvalidParameter
from kernels.registry import Registry


class Base:
    name = ""
    gpu = False
    help = ""


def make():
    reg = Registry("widget", base=Base)

    @reg.register
    class A(Base):
        name, gpu, help = "a", True, "the first\nmore text"

    @reg.register
    class B(Base):
        """Second widget."""
        name = "b"
    return reg, A, B


def test_register_order_mapping_and_duplicates():
    reg, A, B = make()
    assert list(reg) == ["a", "b"] and reg["a"] is A and "b" in reg and len(reg) == 2
    assert dict(reg.items()) == {"a": A, "b": B}
    assert reg.register(A) is A                        # the same object again: no-op
    with pytest.raises(ValueError, match="registered twice"):
        reg.register(type("A2", (Base,), {"name": "a"}))
    reg.register(B, name="a", replace=True)
    assert reg["a"] is B
    with pytest.raises(ValueError, match="non-empty name"):
        reg.register(type("N", (Base,), {}))


def test_get_accepts_names_classes_and_subclasses():
    reg, A, B = make()
    assert reg.get("a") is A and reg.get(A) is A
    Other = type("Other", (Base,), {"name": "other"})
    assert reg.get(Other) is Other                    # a subclass of the base, as solve_ivp accepts
    with pytest.raises(InvalidParameter, match="unknown widget 'zz': use one of a, b"):
        reg.get("zz")
    with pytest.raises(InvalidParameter, match="not a registered widget"):
        reg.get(object)
    assert reg.get("zz", None) is None
    assert reg.name_of(A) == "a" and reg.name_of("b") == "b"
    with pytest.raises(KeyError):
        reg["zz"]


def test_names_filters_and_help():
    reg, A, B = make()
    assert reg.names() == ["a", "b"] and reg.names(gpu=True) == ["a"] and reg.names(gpu=lambda g: not g) == ["b"]
    assert reg.help() == "a — the first\nb — Second widget."


def test_lazy_module_attribute_entries():
    reg = Registry("thing")
    reg.register("kernels.registry:Registry", name="registry")
    assert "registry" in reg and reg.get("registry") is Registry and reg["registry"] is Registry
    reg2 = Registry("thing")
    reg2.register("kernels.registry:Registry")
    assert list(reg2) == ["Registry"]
    assert reg2.register(Registry, name="Registry") is Registry   # the object a lazy entry names is the same entry
    bad = Registry("x")
    bad.register("no.such.module:X", name="x")
    with pytest.raises(ModuleNotFoundError):
        bad.get("x")


def test_house_registries_are_instances():
    from kernels.graphs.layout import LAYOUTS
    from kernels.graphs.algorithms.overlays import OVERLAYS
    from kernels.sweep import TASKS, make_task
    for reg in (LAYOUTS, OVERLAYS, TASKS):
        assert isinstance(reg, Registry)
    assert {"ch", "flint-slice", "graph-reproduce", "graph-clustering", "sbml-case"} <= set(TASKS)
    with pytest.raises(InvalidParameter, match="unknown sweep task 'nope'"):
        make_task("nope")
