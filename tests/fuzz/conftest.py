"""Fixtures and Hypothesis profiles of the fuzz tests.

Profiles (chosen by the environment):

* default ``gse-ci``: a fixed seed (``derandomize``: the same examples on every run), the example
  counts written at each test, no example database (nothing written into the checkout);
* ``GSE_FUZZ_LONG=1``: ``gse-long``, randomly seeded, each test's count times ``GSE_FUZZ_LONG_FACTOR``
  (default 20); a failure prints the ``@reproduce_failure`` blob that replays it;
* ``GSE_FUZZ_SURVEY=FILE`` (either profile): a broken contract is appended to FILE instead of
  failing the test, so one run lists every finding rather than stopping at the first.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import LONG, Harness  # noqa: E402

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
            HealthCheck.large_base_example]
settings.register_profile("gse-ci", derandomize=True, database=None, deadline=None, print_blob=True,
                          suppress_health_check=_SLOW_OK)
settings.register_profile("gse-long", derandomize=False, database=None, deadline=None, print_blob=True,
                          suppress_health_check=_SLOW_OK)
settings.register_profile("gse-survey", derandomize=not LONG, database=None, deadline=None,
                          suppress_health_check=_SLOW_OK,
                          phases=(Phase.explicit, Phase.reuse, Phase.generate))
settings.load_profile("gse-survey" if os.environ.get("GSE_FUZZ_SURVEY") else ("gse-long" if LONG else "gse-ci"))


@pytest.fixture(scope="session")
def harness():
    """The worker that runs the command lines (one for the whole fuzz session)."""
    h = Harness()
    h.start()
    yield h
    h.close()
