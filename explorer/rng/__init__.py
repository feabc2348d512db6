"""The RNG panel: paper 001's Marsaglia generators — Table 1 re-run and quality checks (Qt only;
compute in kernels.rng)."""
