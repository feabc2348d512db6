"""Where things are, for every test module: the project root, the third-party inputs beside it
(``../shared``: real models and the SBML Test Suite) and the tests' own data.

The SBML Test Suite is found as the CLI finds it (:func:`cli.flint_suite.suite_dir`:
``GSE_SBML_SUITE``, else ``../shared/sbml-test-suite``)."""
from pathlib import Path

from cli.flint_suite import suite_dir

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
DATA = TESTS / "data"
SHARED = ROOT.parent / "shared"
MODELS = SHARED / "models"
SUITE = suite_dir()
