"""A stiff SBML model for tests: Robertson's chemical kinetics (Hairer & Wanner II §IV.1) as rate rules,
A' = −k1 A + k3 B C, B' = k1 A − k2 B² − k3 B C, C' = k2 B² (k1 0.04, k2 3e7, k3 1e4; A + B + C = 1)."""
from pathlib import Path

from support.sbml_docs import apply, ci, doc, math_, param

RATES = {"k1": 0.04, "k2": 3e7, "k3": 1e4}


def robertson_rules(path: Path) -> Path:
    """Write Robertson's problem to ``path`` (constant parameters k1, k2, k3; non-constant A, B, C)."""
    r1, r2, r3 = (apply("times", *map(ci, xs)) for xs in (("k1", "A"), ("k2", "B", "B"), ("k3", "B", "C")))
    rules = {"A": apply("plus", apply("minus", r1), r3), "B": apply("minus", r1, apply("plus", r2, r3)), "C": r2}
    body = ("<listOfParameters>" + "".join(param(k, v) for k, v in RATES.items())
            + "".join(param(x, v, constant=False) for x, v in (("A", 1), ("B", 0), ("C", 0)))
            + "</listOfParameters><listOfRules>"
            + "".join(f'<rateRule variable="{x}">{math_(e)}</rateRule>' for x, e in rules.items()) + "</listOfRules>")
    path.write_text(doc(body))
    return path
