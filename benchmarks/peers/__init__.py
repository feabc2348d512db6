"""CPU peers the benchmarks time beside our kernels: the strongest method a user would write on the
CPU, so each GPU speed-up is stated against it (issue 38).  Benchmarks only: ``kernels`` never
imports this package."""
